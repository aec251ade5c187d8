"""``pipeline=bench_plan``: choreograph's planner and OMPL's side by side, on the same checks.

The benchmark is :class:`stages.arms.bench.planning.PlanBenchmark`; its settings are
:class:`stages.arms.bench.settings.BenchPlanSettings` (``goal_sets``, ``planners``, ``seeds``,
``reference``, ``time_budget_s``, ``checker_states``, ``rate_hz``, ``max_deviation_rad``,
``toppra_repeats``, ``sets``, ``profile``). Goal-set keys: ``poses`` or ``joints`` (per arm; arms
not named hold still), optionally ``cartesian`` (a lockstep straight-line move from where the first
goal ends), ``arms`` (the group; default all), ``start`` (per arm; default home), ``objects`` (extra
scene objects, e.g. the walls of a narrow gap), ``seeds`` (default the stage's ``seeds``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile, TextFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.bench.plan_report import plan_metrics, plan_table, runs_record
from stages.arms.bench.planning import PlanBenchmark, planner_lineup
from stages.arms.bench.settings import BenchPlanSettings

KEY = "pipeline.stages.bench_plan"


class BenchPlan(Stage):
    """Side-by-side planning benchmark; metrics ``<goal_set>.<planner>.*``, a table in table.md."""

    outputs = ()

    def __init__(self, planner: Mapping[str, Any] | None = None, robot: Mapping[str, Any] | None = None,
                 scene: Mapping[str, Any] | None = None, **params: Any):
        self.settings = from_config(BenchPlanSettings, params, KEY)
        self.lineup = planner_lineup(planner, self.settings, KEY)
        self.benchmark = PlanBenchmark(self.settings, self.lineup, robot, scene)

    def run(self, ctx: StageContext, world) -> StageResult:
        if self.lineup.ompl_missing:
            ctx.log.warning("OMPL planners skipped: %s", self.lineup.ompl_missing)
        result = self.benchmark.run(world, ctx.seed, ctx.progress, ctx.log)
        metrics = plan_metrics(result, self.settings.reference)
        table = plan_table(result, metrics)
        ctx.log.info("\n%s", table)
        # dotted keys are kept as they are by the runner: give them this stage's prefix
        files = {"table.md": TextFile(table, ".md"), "runs.json": JsonFile(runs_record(result, self.lineup))}
        if result.profile:
            files["profile.txt"] = TextFile(result.profile, ".txt")
        return StageResult(metrics={f"{ctx.name}.{k}": v for k, v in metrics.items()}, files=files)
