"""Stage follow_compare: SKIDADDLE against the Road Runner-style follower on one path."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure, TextFile
from core.errors import ConfigError
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.factory import check_follower_config
from stages.mecanum.control.follow_run import SimSettings, compare_table, run_files, simulate
from stages.mecanum.control.metrics import METRIC_KEYS
from stages.mecanum.paths.bundle import PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable


class FollowCompare(Stage):
    """Several followers on one path, one table (rows: followers; columns: metrics)."""

    outputs = ("table",)

    def __init__(self, followers: dict, animate: bool = False, max_frames: int = 30,
                 fps: float = 10.0, follower_files: bool = True, **sim):
        if not isinstance(followers, dict) or not followers:
            raise ConfigError("compare.followers must be a non-empty mapping name → follower "
                              f"config; got {followers!r}")
        self.followers = {str(k): check_follower_config({**v, "name": str(k)},
                                                        f"compare.followers.{k}")
                          for k, v in followers.items()}
        self.sim = SimSettings.from_kwargs("pipeline.stages.compare", **sim)
        self.animate, self.max_frames, self.fps = bool(animate), int(max_frames), float(fps)
        self.follower_files = bool(follower_files)

    def run(self, ctx: StageContext, path: PathBundle, table: EntrySpeedTable) -> StageResult:
        from stages.mecanum.control import plots

        runs = {}
        for name, cfg in ctx.progress(list(self.followers.items()), desc="followers"):
            runs[name] = simulate(cfg, path, table, self.sim, ctx.seed,
                                  f"compare.followers.{name}")
            ctx.log.info("%s: %s", name, {k: round(runs[name].metrics[k], 3)
                                         for k in METRIC_KEYS})
        metrics: dict[str, Any] = {}
        for name, run in runs.items():
            for key in (*METRIC_KEYS, "slip_ticks", "stopped", "duration_s",
                        "compute_median_us"):
                metrics[f"{ctx.name}.{name}.{key}"] = run.metrics[key]
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
        for name, run in runs.items() if self.follower_files else ():
            files.update(run_files(run, path, table, animate=self.animate,
                                   max_frames=self.max_frames, fps=self.fps, prefix=f"{name}/"))
        return StageResult(outputs={"table": TextFile(table_md, ".md")}, metrics=metrics,
                           files=files)
