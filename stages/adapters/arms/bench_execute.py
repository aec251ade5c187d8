"""``pipeline=bench_execute``: start skew, cancel latency and colliding states under random send latency.

The benchmark is :class:`stages.arms.bench.execution.ExecutionBenchmark`; its settings are
:class:`stages.arms.bench.settings.BenchExecuteSettings` (``runs``, ``speed``,
``send_latency_max_s``, ``cancel_window``, ``check_every``, ``sequential_check_every``, ``bins``,
``start_buffer_s``), with the ``hardware`` group. Metrics ``bench_execute.*`` (every field of
:class:`~stages.arms.bench.execution.ExecutionFigures`); files runs.json and histogram.png.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile, PngFigure
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.bench.execution import ExecutionBenchmark, runs_record
from stages.arms.bench.execution_plot import histogram
from stages.arms.bench.settings import BenchExecuteSettings
from stages.arms.execution.rig import hardware_settings


class BenchExecute(Stage):
    """The execution benchmark (see :mod:`stages.arms.bench.execution`); metrics ``bench_execute.*``."""

    outputs = ()

    def __init__(self, hardware: Mapping[str, Any] | None = None, **params: Any):
        self.settings = from_config(BenchExecuteSettings, params, "pipeline.stages.bench_execute")
        self.benchmark = ExecutionBenchmark(self.settings, hardware_settings(hardware))

    def run(self, ctx: StageContext, world, trajectory) -> StageResult:
        result = self.benchmark.run(world, trajectory, ctx.rng, ctx.seed, ctx.progress, ctx.log)
        m = result.figures
        ctx.log.info("start skew median %.4f / max %.4f s (naive %.4f / %.4f s); cancel latency median "
                     "%.3f / max %.3f ms; colliding states %d (naive %d, sequential %d of %d)",
                     m.start_skew_median_s, m.start_skew_max_s, m.naive_start_skew_median_s,
                     m.naive_start_skew_max_s, m.cancel_latency_median_s * 1e3, m.cancel_latency_max_s * 1e3,
                     m.colliding_states, m.naive_colliding_states, m.sequential_colliding_states,
                     m.sequential_checked_states)
        return StageResult(metrics=dataclasses.asdict(m), files={
            "runs.json": JsonFile(runs_record(result)),
            "histogram.png": PngFigure(histogram(result, self.settings.bins)),
        })
