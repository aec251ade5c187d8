"""The benchmarks' settings: ``pipeline.stages.bench_plan``, ``bench_execute`` and ``bench_robot``.

Each is read with :func:`core.settings.from_config` under its full key, so a wrong key, type or
value names it and what is allowed. The ``planner``, ``robot``, ``scene`` and ``hardware`` groups
the stages also take have settings of their own (planning, world, execution).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.settings import require

OURS = "choreograph"   # the planner every ratio is taken against OMPL's


@dataclass(frozen=True)
class GoalSetSettings:
    """One goal set of the planning benchmark: where the arms go, from where, among what."""

    poses: dict[str, tuple[float, ...]] | None = None    # per arm [x, y, z, qw, qx, qy, qz]; others hold
    joints: dict[str, tuple[float, ...]] | None = None   # per arm joint values (rad); or this
    cartesian: dict[str, tuple[float, ...]] | None = None  # then a lockstep straight move to these poses
    arms: tuple[str, ...] | None = None                  # the group; None = every arm
    start: dict[str, tuple[float, ...]] | None = None    # per arm; None = home
    objects: dict[str, Any] | None = None                # extra scene objects (e.g. a narrow gap's walls)
    seeds: int | None = None                             # None = the benchmark's seeds

    def __post_init__(self):
        require(bool(self.poses) != bool(self.joints), "poses", self.poses,
                "exactly one of poses or joints (per arm)")
        require(self.seeds is None or self.seeds >= 1, "seeds", self.seeds,
                ">= 1 (or null: the stage's seeds)")

    @property
    def goals(self) -> dict[str, tuple[float, ...]]:
        """The first goal, poses or joints, per arm."""
        return dict(self.poses or self.joints or {})


@dataclass(frozen=True)
class BenchPlanSettings:
    """``pipeline=bench_plan``: goal sets × seeds, each planner on the same checks."""

    goal_sets: dict[str, GoalSetSettings]
    planners: dict[str, dict[str, Any] | None]   # label → planner keys over the base ``planner`` group
    seeds: int = 10                              # per goal set without its own
    reference: str = "ompl_RRTConnect"           # time_ratio_vs_ompl = choreograph's median / this one's
    time_budget_s: float | None = None           # per plan; None = the planner's
    checker_states: int = 4000                   # states of the checker-throughput measurement
    rate_hz: float = 125.0                       # the retimer's, for the TOPP-RA comparison
    max_deviation_rad: float = 0.02
    toppra_repeats: int = 1
    sets: tuple[str, ...] | None = None          # run only these goal sets (None = all)
    profile: bool = False                        # profile.txt: where choreograph's plan time goes (cProfile)

    def __post_init__(self):
        require(bool(self.goal_sets), "goal_sets", self.goal_sets, "a mapping of goal-set names to goals")
        require(self.sets is None or (len(self.sets) > 0 and set(self.sets) <= set(self.goal_sets)), "sets",
                self.sets, f"null (all) or a list of the goal sets {sorted(self.goal_sets)}")
        require(OURS in self.planners, "planners", sorted(self.planners),
                f"a mapping of labels to planner settings that includes {OURS!r}")
        require(self.seeds >= 1, "seeds", self.seeds, ">= 1")
        require(self.checker_states >= 10, "checker_states", self.checker_states, ">= 10")
        require(self.rate_hz > 0, "rate_hz", self.rate_hz, "> 0 (Hz)")
        require(self.toppra_repeats >= 1, "toppra_repeats", self.toppra_repeats, ">= 1")

    @property
    def active_sets(self) -> dict[str, GoalSetSettings]:
        return {k: v for k, v in self.goal_sets.items() if self.sets is None or k in self.sets}

    def seeds_of(self, goal_set: str) -> int:
        return self.goal_sets[goal_set].seeds or self.seeds


@dataclass(frozen=True)
class BenchExecuteSettings:
    """``pipeline=bench_execute``: runs of one trajectory under random send latency."""

    runs: int = 50
    speed: float = 3.0                   # sim seconds per wall second
    send_latency_max_s: float = 0.05     # per arm and run: uniform in [0, this] (robot clock)
    cancel_window: tuple[float, float] = (0.3, 0.7)   # the failing arm fails at this fraction of the motion
    check_every: int = 1                 # synchronized / naive runs: check every n-th recorded state
    sequential_check_every: int = 4      # the sequential baseline: every n-th state
    bins: int = 25                       # of the histograms
    start_buffer_s: float | None = None  # lead of the shared stamp; None = max(hardware's, 3 × latency)

    def __post_init__(self):
        require(self.runs >= 1, "runs", self.runs, ">= 1")
        require(self.speed > 0, "speed", self.speed, "> 0")
        require(self.send_latency_max_s >= 0, "send_latency_max_s", self.send_latency_max_s, ">= 0 (s)")
        lo, hi = self.cancel_window
        require(0 < lo <= hi < 1, "cancel_window", list(self.cancel_window), "[lo, hi] with 0 < lo <= hi < 1")
        require(self.check_every >= 1, "check_every", self.check_every, ">= 1")
        require(self.sequential_check_every >= 1, "sequential_check_every", self.sequential_check_every,
                ">= 1")
        require(self.bins >= 1, "bins", self.bins, ">= 1")
        require(self.start_buffer_s is None or self.start_buffer_s > 0, "start_buffer_s", self.start_buffer_s,
                "> 0 (s), or null: max(hardware.start_buffer_s, 3 × send_latency_max_s)")


@dataclass(frozen=True)
class BenchRobotSettings:
    """``pipeline=bench_robot``: what a robot file costs the planner."""

    goal_poses: dict[str, tuple[float, ...]] | None = None   # per arm [x, y, z, qw, qx, qy, qz]
    seeds: int = 10
    checker_states: int = 2000
    rate_hz: float = 125.0
    max_deviation_rad: float = 0.02

    def __post_init__(self):
        require(bool(self.goal_poses), "goal_poses", self.goal_poses,
                "{arm: [x, y, z, qw, qx, qy, qz]} (robot.extra.bench_goal_poses)")
        require(self.seeds >= 1, "seeds", self.seeds, ">= 1")
        require(self.checker_states >= 10, "checker_states", self.checker_states, ">= 10")
        require(self.rate_hz > 0, "rate_hz", self.rate_hz, "> 0 (Hz)")
