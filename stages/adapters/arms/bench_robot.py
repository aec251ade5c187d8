"""The robot benchmark (``pipeline=bench_robot``): what a robot file costs the planner, in one run.

For the configured robot: its size (DoF, collision geoms, meshes), the collision matrix's disabled
pairs by reason, the checker's states per second against a bare ``mj_kinematics`` +
``mj_collision`` loop over the same states on the same model (best of five, interleaved), and the
robot's goal (``robot.extra.bench_goal_poses``: the crossing for two arms) planned over
``seeds`` seeds, each plan retimed at ``rate_hz`` and every sample re-checked for clearance
(a violation is repaired as ``pipeline=plan``'s verify stage does: tighter corner blends).
Metrics ``bench_robot.*``; ``runs.json`` holds every seed's figures.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.artifacts import JsonFile
from core.errors import ConfigError, PlanningError
from stages.api import Stage, StageContext, StageResult
from stages.arms.bench.planning import checker_throughput
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.goals import make_group, planner_settings
from stages.arms.planning.path import JointPath
from stages.arms.retiming.retime import retime_with_report
from stages.arms.verification.clearance import check_clearance
from stages.arms.world import limits_for


class BenchRobot(Stage):
    outputs = ()

    def __init__(self, goal_poses: Mapping[str, Sequence[float]], planner: Mapping[str, Any] | None = None,
                 seeds: int = 10, checker_states: int = 2000, rate_hz: float = 125.0,
                 max_deviation_rad: float = 0.02):
        if not goal_poses:
            raise ConfigError("pipeline.stages.bench_robot.goal_poses: give {arm: [x, y, z, qw, qx, qy, qz]} "
                              "(robot.extra.bench_goal_poses)")
        if int(seeds) < 1 or int(checker_states) < 10:
            raise ConfigError(f"pipeline.stages.bench_robot: seeds >= 1 and checker_states >= 10, got "
                              f"{seeds}, {checker_states}")
        self.goal_poses = {str(a): [float(x) for x in p] for a, p in goal_poses.items()}
        self.settings = planner_settings(planner)
        self.seeds, self.checker_states = int(seeds), int(checker_states)
        self.rate_hz, self.max_deviation_rad = float(rate_hz), float(max_deviation_rad)

    def run(self, ctx: StageContext, world) -> StageResult:
        import mujoco

        model, robot = world.model, world.robot
        geoms = np.flatnonzero((model.geom_contype != 0) | (model.geom_conaffinity != 0))
        acm = world.collision_matrix.to_json(model)
        m: dict[str, Any] = {
            "dof": len(robot.joint_names()), "arms": len(robot.arms), "collision_geoms": int(len(geoms)),
            "mesh_geoms": int(np.sum(model.geom_type[geoms] == mujoco.mjtGeom.mjGEOM_MESH)),
            "checked_pairs": acm["checked_pairs"], "matrix_samples": acm["samples"],
            **{f"disabled_{reason}": n for reason, n in acm["counts"].items()}}
        group = make_group(world, list(self.goal_poses), self.settings)
        start = robot.home(list(self.goal_poses))
        runs = [self._seed(world, group, start, s) for s in ctx.progress(range(self.seeds), desc="seeds")]
        ok = [r for r in runs if r["ok"]]
        times = [r["plan_time_s"] for r in ok]
        m.update({"seeds": self.seeds, "plans_ok": len(ok),
                  "plan_time_median_s": float(np.median(times)) if times else "n/a",
                  "plan_time_max_s": float(np.max(times)) if times else "n/a",
                  "samples": int(sum(r["samples"] for r in ok)),
                  "min_clearance_m": float(min(r["min_clearance_m"] for r in ok)) if ok else "n/a",
                  "violations": int(sum(r["violations"] for r in ok))})
        rng = np.random.default_rng(ctx.seed)
        states = np.clip(start + rng.normal(0, 0.5, (self.checker_states, group.dof)),
                         group.lower, group.upper)
        checker = ClearanceChecker.for_world(world, group.joint_names, world.clearance_m)
        speed = checker_throughput(checker, states)
        m.update({k: speed[k] for k in ("states_per_s", "bare_states_per_s", "throughput_ratio")})
        ctx.log.info("%s: %d DoF, %d collision geoms (%d meshes); plan median %.3f s over %d seeds; "
                     "min clearance %.4f m over %d samples; checker %.0f states/s (%.2fx a bare loop)",
                     robot.name, m["dof"], m["collision_geoms"], m["mesh_geoms"],
                     m["plan_time_median_s"] if times else float("nan"), len(ok),
                     m["min_clearance_m"] if ok else float("nan"), m["samples"], speed["states_per_s"],
                     speed["throughput_ratio"])
        return StageResult(metrics=m, files={"runs.json": JsonFile({"runs": runs, "collision_matrix": acm})})

    def _seed(self, world, group, start, seed: int) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        try:
            result = group.plan_to_poses(self.goal_poses, start, rng)
        except PlanningError as e:
            return {"seed": seed, "ok": False, "error": str(e)}
        plan_s = time.perf_counter() - t0
        vel, acc = limits_for(world, group.joint_names)
        path = JointPath(group.joint_names, result.path.waypoints)
        checker = ClearanceChecker.for_world(world, group.joint_names, world.clearance_m)
        # as pipeline=plan's verify stage repairs: corner blends tightened down to the checked polyline
        d = self.max_deviation_rad
        for deviation in (d, d / 4, d / 16, 0.0):
            traj = retime_with_report(path, vel, acc, self.rate_hz, max_deviation_rad=deviation).trajectory
            clear = check_clearance(checker, traj)
            if clear.violations == 0:
                break
        return {"seed": seed, "ok": True, "plan_time_s": plan_s, "samples": int(clear.distances_m.size),
                "min_clearance_m": clear.min_clearance_m, "violations": clear.violations,
                "max_deviation_rad": deviation, "worst_pair": list(clear.pairs[clear.worst_sample])}
