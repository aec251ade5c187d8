"""ArmGroup: plan all member arms' joints as one configuration.

Every state and every edge is checked with the whole group present (arm against
arm, against itself, against the scene) at the robot's clearance. A single arm is
a one-arm group; there is no second planner. Arms a goal does not name hold still
at their start, as obstacles the others must clear.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.errors import PlanningError
from stages.arms.planning.batch import BatchChecker
from stages.arms.planning.cartesian import lockstep_path
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.edges import EdgeChecker, joint_radii
from stages.arms.planning.ik import ArmIK, pose_array
from stages.arms.planning.ompl_backend import plan_ompl
from stages.arms.planning.path import JointPath
from stages.arms.planning.rrt import path_length, rrt_connect
from stages.arms.planning.settings import PlannerSettings
from stages.arms.planning.smoothing import shortcut


@dataclass
class PlanResult:
    path: JointPath
    time_s: float
    checks: int
    length_rad: float
    raw_waypoints: int
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ArmLimits:
    """What the planner needs to know of one arm."""

    joints: tuple[str, ...]
    ee_site: str
    lower: np.ndarray
    upper: np.ndarray


class ArmGroup:
    """Plans the joints of ``arms`` (names → ArmLimits) together in ``model``."""

    def __init__(self, model, arms: Mapping[str, ArmLimits], clearance_m: float,
                 settings: PlannerSettings | None = None, base_qpos: np.ndarray | None = None,
                 disabled_bodies: Sequence[str] = (), allowed_pairs: Sequence[tuple[str, str]] = (),
                 held=None):
        self.model = model
        self.arms = dict(arms)
        self.settings = settings or PlannerSettings()
        self.clearance_m = float(clearance_m)
        self.joint_names = tuple(j for a in self.arms.values() for j in a.joints)
        self.lower = np.concatenate([a.lower for a in self.arms.values()])
        self.upper = np.concatenate([a.upper for a in self.arms.values()])
        self.base_qpos = np.array(model.qpos0 if base_qpos is None else base_qpos, float)
        s = self.settings
        self._disabled, self._allowed = tuple(disabled_bodies), tuple(allowed_pairs)
        self._partial: dict[frozenset, ClearanceChecker] = {}
        kw = dict(base_qpos=self.base_qpos, disabled_bodies=disabled_bodies, allowed_pairs=allowed_pairs,
                  held=held)
        self._held = held
        kw["pretest"] = s.pretest
        self.checker = ClearanceChecker(model, self.joint_names, self.clearance_m + s.padding_m, **kw)
        kw["bounds"] = self.checker.bounds   # the same pairs at other clearances: one pre-test
        self.exact_checker = ClearanceChecker(model, self.joint_names, self.clearance_m, **kw)
        self.touch_checker = ClearanceChecker(model, self.joint_names, 0.0, **kw)
        radii = joint_radii(model, self.joint_names, held=held)
        step = s.edge_step_m or self.clearance_m
        self.batch = BatchChecker(self.checker, s.threads)
        # MuJoCo alone: edges over threads in batches; else one by one with clearance bubbles (proven by
        # the compiled pre-test, or by MuJoCo's clearance queries)
        batched = not s.pretest and s.threads > 1
        self.edges = EdgeChecker(self.checker, radii, step, bubbles=s.bubbles,
                                 batch=self.batch if batched else None)
        self._touch_edges = EdgeChecker(self.touch_checker, radii, step, bubbles=s.bubbles,
                                        walk=self.edges.compiled)
        # states checked with their clearance bubble, kept by the planner for the edges they end
        self._query = (self.checker.clearance_query
                       if s.bubbles and not batched and not self.edges.compiled else None)
        self.last_timing: dict = {}   # search_s / smooth_s of the last sampling-based plan
        self._slices = {}
        i = 0
        for name, arm in self.arms.items():
            self._slices[name] = slice(i, i + len(arm.joints))
            i += len(arm.joints)
        self._ik = {name: ArmIK(model, arm.joints, arm.ee_site, arm.lower, arm.upper, self.base_qpos)
                    for name, arm in self.arms.items()}

    # ------------------------------------------------------------------ helpers
    @property
    def dof(self) -> int:
        return len(self.joint_names)

    def arm_slice(self, arm: str) -> slice:
        return self._slices[arm]

    def compose(self, parts: Mapping[str, Sequence[float]], default: np.ndarray | None = None,
                what: str = "configuration") -> np.ndarray:
        """Per-arm joint vectors → one group vector (arms missing from ``parts`` take ``default``)."""
        unknown = set(parts) - set(self.arms)
        if unknown:
            raise PlanningError("invalid_goal", f"{what} names arm(s) {sorted(unknown)}; "
                                f"the group's arms are {list(self.arms)}")
        q = np.array(default, float) if default is not None else np.full(self.dof, np.nan)
        for arm, values in parts.items():
            sl = self._slices[arm]
            try:
                v = np.asarray(values, float)
            except (TypeError, ValueError):
                v = np.full(1, np.nan)
            if v.shape != (sl.stop - sl.start,) or not np.all(np.isfinite(v)):
                raise PlanningError("invalid_goal", f"{what} for arm {arm!r} must be "
                                    f"{sl.stop - sl.start} finite numbers, got {list(values)}")
            q[sl] = v
        if np.any(np.isnan(q)):
            missing = [a for a, sl in self._slices.items() if np.isnan(q[sl]).any()]
            raise PlanningError("invalid_goal", f"{what} is missing arm(s) {missing}")
        return q

    def within_limits(self, q: np.ndarray, what: str) -> None:
        bad = np.flatnonzero((q < self.lower - 1e-9) | (q > self.upper + 1e-9))
        if bad.size:
            j = bad[0]
            raise PlanningError("invalid_goal", f"{what}: {self.joint_names[j]}={q[j]:.4f} is outside "
                                f"its limits [{self.lower[j]:.4f}, {self.upper[j]:.4f}]")

    def ee_pose(self, arm: str, q: np.ndarray) -> np.ndarray:
        return self._ik[arm].forward(q[self._slices[arm]])

    def _budget(self, t0: float) -> float:
        return t0 + self.settings.time_budget_s

    # ------------------------------------------------------------------ goals
    def plan_to_joints(self, goals: Mapping[str, Sequence[float]], start: np.ndarray,
                       rng: np.random.Generator) -> PlanResult:
        """Joint goals per arm; arms not named hold still at ``start``."""
        t0, checks0 = time.perf_counter(), self._checks()
        start = np.asarray(start, float)
        goal = self.compose(goals, start, "goal.joints")
        self.within_limits(start, "start")
        self.within_limits(goal, "goal.joints")
        moving = self._moving_mask(goals)
        path, notes = self._plan(start, goal, moving, rng, self._budget(t0))
        return self._result(path, t0, checks0, notes)

    def plan_to_poses(self, goals: Mapping[str, Sequence[float]], start: np.ndarray,
                      rng: np.random.Generator) -> PlanResult:
        """Gripper pose goals: IK solutions per arm, combined across arms, checked together."""
        t0, checks0 = time.perf_counter(), self._checks()
        start = np.asarray(start, float)
        self.compose({}, start)
        self.within_limits(start, "start")
        goals_q = self.goal_configurations(goals, start, rng)
        moving = self._moving_mask(goals)
        deadline = self._budget(t0)
        last: PlanningError | None = None
        for k, goal in enumerate(goals_q):
            try:
                path, notes = self._plan(start, goal, moving, rng, deadline)
                notes.append(f"pose goal: IK combination {k + 1} of {len(goals_q)}")
                return self._result(path, t0, checks0, notes)
            except PlanningError as exc:
                last = exc
                if exc.reason == "start_in_collision" or time.perf_counter() >= deadline:
                    raise
        raise last  # type: ignore[misc]

    def goal_configurations(self, goals: Mapping[str, Sequence[float]], start: np.ndarray,
                            rng: np.random.Generator) -> list[np.ndarray]:
        """Valid group configurations reaching every pose goal, least joint travel first."""
        self.compose({}, start)
        unknown = set(goals) - set(self.arms)
        if unknown:
            raise PlanningError("invalid_goal", f"goal.poses names arm(s) {sorted(unknown)}; "
                                f"the group's arms are {list(self.arms)}")
        s = self.settings
        per_arm: dict[str, list[np.ndarray]] = {}
        for arm, pose in goals.items():
            pose = pose_array(pose, f"goal.poses.{arm}")
            sl = self._slices[arm]

            others = [a for a in goals if a != arm]
            alone = self._checker_without(others)

            def alone_ok(q_arm, sl=sl, alone=alone):
                q = start.copy()
                q[sl] = q_arm
                return alone.is_valid(q)

            sols = self._ik[arm].solve(pose, start[sl], rng, max_solutions=s.ik_solutions,
                                       restarts=s.ik_restarts, accept=alone_ok,
                                       where=f"goal.poses.{arm}")
            per_arm[arm] = [sol.q for sol in sols]
        combos = []
        for choice in itertools.product(*per_arm.values()):
            q = start.copy()
            for arm, q_arm in zip(per_arm, choice, strict=True):
                q[self._slices[arm]] = q_arm
            combos.append(q)
        combos.sort(key=lambda q: float(np.abs(q - start).sum()))
        valid = [q for q in combos if self.checker.is_valid(q)]
        if not valid:
            raise PlanningError("goal_in_collision", f"all {len(combos)} combinations of the arms' IK "
                                "solutions put the arms closer than the clearance to each other")
        return valid[: s.goal_combinations]

    def _checker_without(self, arms: Sequence[str]) -> ClearanceChecker:
        """A checker in which the named arms are absent (their goals are checked later, together)."""
        if not arms:
            return self.checker
        key = frozenset(arms)
        if key not in self._partial:
            bodies = [b for a in arms for b in arm_bodies(self.model, self.arms[a].joints)]
            self._partial[key] = ClearanceChecker(
                self.model, self.joint_names, self.checker.clearance_m, base_qpos=self.base_qpos,
                disabled_bodies=bodies + list(self._disabled), allowed_pairs=self._allowed,
                held=self._held, pretest=self.settings.pretest)
        return self._partial[key]

    def plan_cartesian(self, goals: Mapping[str, Sequence[float]], start: np.ndarray,
                       rng: np.random.Generator) -> PlanResult:
        """Lockstep straight-line gripper paths on one shared parameter s ∈ [0, 1].

        Every step is solved by IK from the previous one and checked; every edge
        between steps is checked at the edge resolution.
        """

        t0, checks0 = time.perf_counter(), self._checks()
        start = np.asarray(start, float)
        self.compose({}, start)
        self.within_limits(start, "start")
        if not self.checker.is_valid(start):
            raise PlanningError("start_in_collision", self._why(start, "the start"))
        waypoints = lockstep_path(self, goals, start, self._budget(t0))
        return self._result(waypoints, t0, checks0, [f"lockstep cartesian: {len(waypoints)} steps"])

    # ------------------------------------------------------------------ core
    def _moving_mask(self, goals: Mapping[str, object]) -> np.ndarray:
        mask = np.zeros(self.dof, bool)
        for arm in goals:
            mask[self._slices[arm]] = True
        return mask

    def _plan(self, start, goal, moving, rng, deadline) -> tuple[list[np.ndarray], list[str]]:
        notes: list[str] = []
        prefix: list[np.ndarray] = []
        self.last_timing = {}
        if not self.checker.is_valid(start):
            escape = self._escape(start, moving, rng, deadline)
            notes.append("start within clearance: planned an escape motion first")
            prefix, start = [start], escape
        if not self.checker.is_valid(goal):
            raise PlanningError("goal_in_collision", self._why(goal, "the goal"))
        s = self.settings

        def sample():
            q = start.copy()
            q[moving] = rng.uniform(self.lower[moving], self.upper[moving])
            return q

        t_search = time.perf_counter()
        try:
            if s.backend == "ompl":

                raw, _ = plan_ompl(self, start, goal, moving, rng, deadline)
            else:
                raw, _ = rrt_connect(start, goal, sample, self.checker.is_valid, self.edges.motion_valid,
                                     s.max_step_rad, deadline, query=self._query)
        finally:
            self.last_timing = {"search_s": time.perf_counter() - t_search}
        t_smooth = time.perf_counter()
        short, rounds = shortcut(raw, self.edges, self.batch, rng, deadline + 0.5 * s.time_budget_s,
                                 s.shortcut_min_gain_rad, s.shortcut_candidates,
                                 rounds=max(1, s.shortcut_iterations // s.shortcut_candidates),
                                 patience=s.shortcut_patience)
        self.last_timing = {"search_s": t_smooth - t_search, "smooth_s": time.perf_counter() - t_smooth,
                            "raw_waypoints": len(raw)}
        search = f"ompl {s.name}" if s.backend == "ompl" else "rrt-connect"
        notes.append(f"{search}: {len(raw)} waypoints, shortcut to {len(short)} in {rounds} rounds")
        return prefix + short, notes

    def _escape(self, start, moving, rng, deadline) -> np.ndarray:
        """A nearby valid state reachable from a start that is within clearance but not touching."""
        if not self.touch_checker.is_valid(start):
            raise PlanningError("start_in_collision", self._why(start, "the start", touching=True))
        for radius in np.linspace(0.02, self.settings.escape_radius_rad, 15):
            for _ in range(40):
                if time.perf_counter() >= deadline:
                    break
                q = start.copy()
                q[moving] += rng.uniform(-radius, radius, int(moving.sum()))
                q = np.clip(q, self.lower, self.upper)
                if self.checker.is_valid(q) and self._touch_edges.motion_valid(start, q):
                    return q
        raise PlanningError("start_in_collision", self._why(start, "the start") +
                            "; no escape motion found")

    def _why(self, q: np.ndarray, what: str, touching: bool = False) -> str:
        prox = self.exact_checker.proximity(q)
        verb = "touches" if touching or prox.distance_m <= 0 else "is within clearance of"
        return (f"{what}: {prox.geom1} {verb} {prox.geom2} (distance {prox.distance_m * 1000:.1f} mm, "
                f"clearance {self.clearance_m * 1000:.1f} mm)")

    def _checks(self) -> int:
        return self.checker.checks + self.touch_checker.checks

    def _result(self, waypoints, t0, checks0, notes) -> PlanResult:
        arr = np.array(waypoints, float)
        return PlanResult(JointPath(self.joint_names, arr), time.perf_counter() - t0,
                          self._checks() - checks0, path_length(arr), len(arr), notes)


def arm_bodies(model, joints: Sequence[str]) -> list[str]:
    """Names of the bodies an arm's joints move: the subtree below its first joint's body."""
    import mujoco

    root = model.jnt_bodyid[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joints[0])]
    out = []
    for b in range(model.nbody):
        a = b
        while a not in (0, root):
            a = model.body_parentid[a]
        if a == root:
            out.append(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b))
    return out
