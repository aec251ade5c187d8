"""Stage follow_compare: SKIDADDLE against the Road Runner-style follower on one path."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure, TextFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.follow_files import compare_table, run_files
from stages.mecanum.control.follow_settings import CompareSettings
from stages.mecanum.control.follow_sim import simulate
from stages.mecanum.control.metrics import METRIC_KEYS
from stages.mecanum.paths.bundle import PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable
from stages.mecanum.recording import record_compare


class FollowCompare(Stage):
    """Several followers on one path, one table (rows: followers; columns: metrics)."""

    outputs = ("table",)

    def __init__(self, **params: Any):
        self.settings = from_config(CompareSettings, params, "pipeline.stages.compare")
        self.followers = self.settings.named_followers()

    def run(self, ctx: StageContext, path: PathBundle, table: EntrySpeedTable) -> StageResult:
        from stages.mecanum.control import plots

        s = self.settings
        runs = {}
        for name, follower in ctx.progress(list(self.followers.items()), desc="followers"):
            runs[name] = simulate(follower, path, table, s, ctx.seed)
            ctx.log.info("%s: %s", name, {k: round(runs[name].metrics[k], 3)
                                         for k in METRIC_KEYS})
        metrics: dict[str, Any] = {}
        for name, run in runs.items():
            for key in (*METRIC_KEYS, "slip_ticks", "stopped", "duration_s",
                        "compute_median_us"):
                metrics[f"{ctx.name}.{name}.{key}"] = run.metrics[key]
        record_compare(ctx.recorder, runs, path.drive)
        table_md = compare_table(path.name, {n: r.metrics for n, r in runs.items()})
        worst = max(runs.values(), key=lambda r: r.metrics["max_deviation_in"])
        focus = worst.log["pose"][int(np.argmax(worst.deviation)), :2]
        files: dict[str, Any] = {
            "table.md": TextFile(table_md, ".md"),
            "field.png": PngFigure(plots.compare_figure(
                table.points_in, {n: r.log["pose"] for n, r in runs.items()}, focus=focus,
                title=f"{path.name}: " + ", ".join(runs))),
            "metrics.json": JsonFile({n: r.metrics for n, r in runs.items()}),
        }
        for name, run in runs.items() if s.follower_files else ():
            files.update(run_files(run, path, table, animate=s.animate,
                                   max_frames=s.max_frames, fps=s.fps, prefix=f"{name}/"))
        return StageResult(outputs={"table": TextFile(table_md, ".md")}, metrics=metrics,
                           files=files)
