"""The robot benchmark: what a robot file costs the planner, in one run.

For the world's robot: its size (DoF, collision geoms, meshes), the collision matrix's disabled
pairs by reason, the checker's states per second against a bare ``mj_kinematics`` +
``mj_collision`` loop over the same states on the same model (best of five, interleaved), and
the robot's goal (``goal_poses``) planned over ``seeds`` seeds, each plan retimed at ``rate_hz``
and every sample re-checked for clearance (a violation is repaired as ``pipeline=plan``'s
verify stage does: tighter corner blends).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import PlanningError
from stages.arms.bench.samples import sample_clearance
from stages.arms.bench.settings import BenchRobotSettings
from stages.arms.bench.throughput import checker_throughput
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.goals import make_group
from stages.arms.planning.settings import PlannerSettings


def _no_progress(items, **_):
    return items


@dataclass
class RobotBenchResult:
    metrics: dict[str, Any]          # bench_robot.* (see the module docstring), in report order
    runs: list[dict[str, Any]]       # one per seed: plan time, samples, clearance, or the error
    collision_matrix: dict[str, Any]
    throughput: dict[str, float]     # checker_throughput's figures


def robot_size(world) -> tuple[dict[str, Any], dict[str, Any]]:
    """The robot's size and its collision matrix's figures; and the matrix as JSON."""
    import mujoco

    model, robot = world.model, world.robot
    geoms = np.flatnonzero((model.geom_contype != 0) | (model.geom_conaffinity != 0))
    acm = world.collision_matrix.to_json(model)
    return {"dof": len(robot.joint_names()), "arms": len(robot.arms), "collision_geoms": int(len(geoms)),
            "mesh_geoms": int(np.sum(model.geom_type[geoms] == mujoco.mjtGeom.mjGEOM_MESH)),
            "checked_pairs": acm["checked_pairs"], "matrix_samples": acm["samples"],
            **{f"disabled_{reason}": n for reason, n in acm["counts"].items()}}, acm


def plan_seed(world, group, start, settings: BenchRobotSettings, seed: int) -> dict[str, Any]:
    """The goal planned with ``seed``, retimed and re-checked (blends tightened until clear)."""
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    try:
        result = group.plan_to_poses(settings.goal_poses, start, rng)
    except PlanningError as e:
        return {"seed": seed, "ok": False, "error": str(e)}
    plan_s = time.perf_counter() - t0
    checked = sample_clearance(world, group.joint_names, result.path.waypoints, settings.rate_hz,
                               settings.max_deviation_rad)
    return {"seed": seed, "ok": True, "plan_time_s": plan_s, **checked}


def robot_benchmark(world, settings: BenchRobotSettings, planner: PlannerSettings, seed: int,
                    progress: Callable = _no_progress) -> RobotBenchResult:
    """Size, plans over ``settings.seeds`` seeds, then the checker's throughput (states from ``seed``)."""
    m, acm = robot_size(world)
    arms = list(settings.goal_poses)
    group = make_group(world, arms, planner)
    start = world.robot.home(arms)
    seeds = progress(range(settings.seeds), desc="seeds")
    runs = [plan_seed(world, group, start, settings, k) for k in seeds]
    ok = [r for r in runs if r["ok"]]
    times = [r["plan_time_s"] for r in ok]
    m.update({"seeds": settings.seeds, "plans_ok": len(ok),
              "plan_time_median_s": float(np.median(times)) if times else "n/a",
              "plan_time_max_s": float(np.max(times)) if times else "n/a",
              "samples": int(sum(r["samples"] for r in ok)),
              "min_clearance_m": float(min(r["min_clearance_m"] for r in ok)) if ok else "n/a",
              "violations": int(sum(r["violations"] for r in ok))})
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 0.5, (settings.checker_states, group.dof))
    states = np.clip(start + noise, group.lower, group.upper)
    checker = ClearanceChecker.for_world(world, group.joint_names, world.clearance_m)
    speed = checker_throughput(checker, states)
    m.update({k: speed[k] for k in ("states_per_s", "bare_states_per_s", "throughput_ratio")})
    return RobotBenchResult(m, runs, acm, speed)
