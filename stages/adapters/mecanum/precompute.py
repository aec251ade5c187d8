"""Stage precompute: the backward pass that gives every flattened segment its entry speed."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from core.artifacts import NpzFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.paths.bundle import PathBundle, min_entry_speed
from stages.mecanum.paths.precompute import benchmark_precompute
from stages.mecanum.paths.profile import forward_profile
from stages.mecanum.paths.settings import PrecomputeSettings
from stages.mecanum.recording import record_entry_speeds


class Precompute(Stage):
    """The backward pass: the entry-speed table the control loop reads, and its timing."""

    outputs = ("table",)

    def __init__(self, **params: Any):
        self.settings = from_config(PrecomputeSettings, params, "pipeline.stages.precompute")

    def run(self, ctx: StageContext, path: PathBundle) -> StageResult:
        t0 = time.perf_counter()
        table = path.entry_speeds()
        elapsed = time.perf_counter() - t0
        profile = forward_profile(table)
        record_entry_speeds(ctx.recorder, path, table, profile)
        metrics = {"time_s": elapsed, "segments": table.segments,
                   "min_entry_speed_in_s": min_entry_speed(path),
                   "stops": int(np.sum(table.corner_speed_in_s[1:-1] <= 1e-6)),
                   "planned_time_s": profile.duration_s,
                   "planned_peak_speed_in_s": float(profile.speed_in_s.max())}
        s = self.settings
        if s.benchmark_sizes:
            for n, seconds in benchmark_precompute(list(s.benchmark_sizes), path.limits,
                                                   s.benchmark_repeats).items():
                metrics[f"bench_{n}_segments_time_s"] = seconds
                ctx.log.info("precompute of %d segments: %.3g ms", n, seconds * 1e3)
        files = {"table.npz": NpzFile(table.as_arrays()),
                 "profile.npz": NpzFile({"s_in": profile.s_in, "speed_in_s": profile.speed_in_s,
                                         "time_s": profile.time_s})}
        return StageResult(outputs={"table": table}, metrics=metrics, files=files)
