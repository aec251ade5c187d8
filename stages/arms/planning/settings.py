"""The ``planner`` config group: how an ArmGroup plans."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from core.settings import require
from stages.arms.planning.ompl_backend import check_planner_name


@dataclass(frozen=True)
class PlannerSettings:
    """How the group plans. ``padding_m`` is extra clearance kept while planning so
    that retiming's small deviation from the straight edges never eats into
    ``clearance_m`` (every 125 Hz sample is re-checked at ``clearance_m`` anyway)."""

    time_budget_s: float = 20.0
    max_step_rad: float = 0.5
    edge_step_m: float | None = None  # geometry motion between edge checks; None = clearance_m
    padding_m: float = 0.002
    shortcut_iterations: int = 300     # at most this many chords proposed, ``shortcut_candidates`` a round
    shortcut_candidates: int = 8       # chords per round, pre-tested together, checked lazily (smoothing.py)
    shortcut_patience: int = 3         # stop after this many rounds in a row that shorten the path < 0.2 %
    shortcut_min_gain_rad: float = 0.01  # shortcuts saving less joint-space length are not checked
    pretest: bool = True   # states decided by compiled lower bounds first, MuJoCo only on the pairs they
                           # leave undecided (bounds.py, kernels.py); false: MuJoCo's collision pass on all
    threads: int = 1       # threads for batches of states (the compiled pre-test releases the GIL); with
                           # pretest=false, edges in batches over this many threads (each its own MjData)
    bubbles: bool = True   # unbatched edges: states proven valid from the clearance around checked ones
                           # (edges.py)
    ik_solutions: int = 6
    ik_restarts: int = 40
    goal_combinations: int = 6  # IK combinations tried for pose goals
    cartesian_step_m: float = 0.005
    cartesian_step_rad: float = 0.05
    escape_radius_rad: float = 0.3
    backend: Literal["choreograph", "ompl"] = "choreograph"  # built-in RRT-Connect, or OMPL
    name: str = "rrt_connect"     # choreograph: rrt_connect; ompl: a geometric planner (RRTConnect, ...)
    range_rad: float | None = None  # OMPL planners' range; None = max_step_rad, 0 = OMPL's default
    ompl_motion: Literal["edge_walk", "per_state"] = "edge_walk"  # OMPL's motion check: our edge walk, or
                                    # each state at the edge resolution through the per-state callback
    seed: int | None = None         # None = derived from the run's seed

    def __post_init__(self):
        require(self.time_budget_s > 0, "time_budget_s", self.time_budget_s, "> 0 (s)")
        require(1 <= self.threads <= 64, "threads", self.threads, "1 to 64 (threads of exact checks)")
        require(self.shortcut_candidates >= 1, "shortcut_candidates", self.shortcut_candidates, ">= 1")
        require(self.shortcut_patience >= 1, "shortcut_patience", self.shortcut_patience, ">= 1")
        require(self.backend != "choreograph" or self.name == "rrt_connect", "name", self.name,
                "'rrt_connect', the choreograph back-end's one planner (OMPL's planners need "
                "planner.backend=ompl, e.g. planner=ompl)")
        require(self.backend == "ompl" or self.ompl_motion == "edge_walk", "ompl_motion", self.ompl_motion,
                "'edge_walk' with the choreograph back-end ('per_state' is OMPL's: planner=ompl)")
        if self.backend == "ompl":
            check_planner_name(self.name)


@dataclass(frozen=True)
class GoalSettings:
    """The ``goal`` group: exactly one of joint targets (rad), gripper poses ([x, y, z, qw, qx, qy, qz],
    m), a lockstep Cartesian move's end poses, per arm, or a named state of the robot's SRDF; arms
    not named hold still."""

    joints: dict[str, tuple[float, ...]] | None = None
    poses: dict[str, tuple[float, ...]] | None = None
    cartesian: dict[str, tuple[float, ...]] | None = None
    named: str | None = None   # an SRDF group_state: its joint values for every arm it sets

    @property
    def given(self) -> list[str]:
        return [f.name for f in fields(self) if getattr(self, f.name)]
