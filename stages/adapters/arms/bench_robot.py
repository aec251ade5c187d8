"""The robot benchmark (``pipeline=bench_robot``): what a robot file costs the planner, in one run.

The measuring is :func:`stages.arms.bench.robot.robot_benchmark`; its settings are
:class:`stages.arms.bench.settings.BenchRobotSettings` (``goal_poses``: the robot's
``robot.extra.bench_goal_poses``, ``seeds``, ``checker_states``, ``rate_hz``,
``max_deviation_rad``), with the ``planner`` group. Metrics ``bench_robot.*``; ``runs.json``
holds every seed's figures and the collision matrix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.bench.robot import robot_benchmark
from stages.arms.bench.settings import BenchRobotSettings
from stages.arms.planning.goals import planner_settings


class BenchRobot(Stage):
    outputs = ()

    def __init__(self, planner: Mapping[str, Any] | None = None, **params: Any):
        self.settings = from_config(BenchRobotSettings, params, "pipeline.stages.bench_robot")
        self.planner = planner_settings(planner)

    def run(self, ctx: StageContext, world) -> StageResult:
        result = robot_benchmark(world, self.settings, self.planner, ctx.seed, ctx.progress)
        m, speed = result.metrics, result.throughput
        ctx.log.info("%s: %d DoF, %d collision geoms (%d meshes); plan median %.3f s over %d seeds; "
                     "min clearance %.4f m over %d samples; checker %.0f states/s (%.2fx a bare loop)",
                     world.robot.name, m["dof"], m["collision_geoms"], m["mesh_geoms"],
                     m["plan_time_median_s"] if m["plans_ok"] else float("nan"), m["plans_ok"],
                     m["min_clearance_m"] if m["plans_ok"] else float("nan"), m["samples"],
                     speed["states_per_s"], speed["throughput_ratio"])
        runs = {"runs": result.runs, "collision_matrix": result.collision_matrix}
        return StageResult(metrics=m, files={"runs.json": JsonFile(runs)})
