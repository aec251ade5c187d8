"""Gather a ``pipeline=reset`` multirun into its figures: success, attempts, time, errors, failures.

    choreograph pipeline=reset_summary pipeline.params.sweep_dir=runs/reset/multirun/<stamp>

Reads every run folder's ``metrics.json``, ``status.json`` and ``reset/attempts.json``;
writes ``reset_summary/summary.json`` and returns the figures as metrics.
"""

from __future__ import annotations

from pathlib import Path

from core.artifacts import JsonFile
from core.errors import ConfigError
from stages.api import Stage, StageContext, StageResult
from stages.arms.reset.summary import summarize_runs


class ResetSummary(Stage):
    outputs = ("summary",)

    def __init__(self, sweep_dir: str | None = None):
        if not sweep_dir:
            raise ConfigError("pipeline.params.sweep_dir is required: the multirun folder of a "
                              "pipeline=reset sweep")
        self.sweep_dir = Path(sweep_dir)
        if not self.sweep_dir.is_dir():
            raise ConfigError(f"pipeline.params.sweep_dir={sweep_dir!r} is not a folder")

    def run(self, ctx: StageContext) -> StageResult:
        summary = summarize_runs(self.sweep_dir)
        ctx.save("summary.json", JsonFile(summary))
        ctx.log.info("%d of %d resets succeeded", summary["success"], summary["runs"])
        flat = {k: v for k, v in summary.items() if isinstance(v, (int, float))}
        return StageResult(outputs={"summary": summary}, metrics=flat)
