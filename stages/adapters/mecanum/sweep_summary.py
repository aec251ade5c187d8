"""Stage sweep_summary: one table of a follower sweep's runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.artifacts import PngFigure, TextFile
from core.errors import ConfigError
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control import plots
from stages.mecanum.control.follow_settings import SweepSettings
from stages.mecanum.control.sweep import gather_sweep, sweep_csv, sweep_markdown


class SweepSummary(Stage):
    """Gather a ``pipeline=follow`` multirun's metrics into summary.csv, summary.md, summary.png."""

    outputs = ("rows",)

    def __init__(self, **params: Any):
        settings = from_config(SweepSettings, params, "pipeline.stages.sweep_summary")
        self.sweep_dir = Path(str(settings.sweep_dir))
        if not self.sweep_dir.is_dir():
            raise ConfigError(f"pipeline.params.sweep_dir={settings.sweep_dir!r} is not a folder")

    def run(self, ctx: StageContext) -> StageResult:

        rows = gather_sweep(self.sweep_dir)
        if not rows:
            raise ConfigError(f"{self.sweep_dir} holds no pipeline=follow runs "
                              "(<n>/metrics.json with follow.* keys)")
        files = {"summary.csv": TextFile(sweep_csv(rows), ".csv"),
                 "summary.md": TextFile(sweep_markdown(rows, f"sweep {self.sweep_dir}"), ".md"),
                 "summary.png": PngFigure(plots.sweep_figure(rows))}
        return StageResult(outputs={"rows": rows},
                           metrics={"runs": len(rows),
                                    "failed": sum(r["status"] != "ok" for r in rows)},
                           files=files)
