"""Stage gather: any multirun folder as one table, a summary, a pivot and plots.

    choreograph pipeline=gather sweep_dir=runs/<pipeline>/multirun/<stamp>

Writes ``gather/runs.csv`` (one row per job: its overrides, status, error, every metric),
``gather/summary.csv`` and ``summary.md`` (the figures named in config per group of jobs, the
pivot table, the failed jobs) and ``gather/plots.png`` (the metrics named in ``plots``).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from core.artifacts import PngFigure, TextFile
from core.errors import ConfigError
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.sweeps import plots, tables
from stages.sweeps.jobs import JobRecord, read_sweep, swept_keys
from stages.sweeps.settings import GatherSettings


class Gather(Stage):
    outputs = ("summary",)

    def __init__(self, **params: Any):
        self.settings = from_config(GatherSettings, params, "pipeline.stages.gather")
        if not Path(str(self.settings.sweep_dir)).is_dir():
            raise ConfigError(f"sweep_dir={self.settings.sweep_dir!r} is not a folder "
                              "(a multirun folder: runs/<pipeline>/multirun/<stamp>)")

    def run(self, ctx: StageContext) -> StageResult:
        s = self.settings
        jobs = read_sweep(s.sweep_dir, lambda folders: ctx.progress(folders, desc="reading jobs"))
        ctx.save("runs.csv", TextFile(tables.runs_csv(jobs), ".csv"))   # kept if a name below is wrong
        _check_metric_names(jobs, [*s.figures, *s.plots, *(s.pivot.cells if s.pivot else ())])
        group_by = list(s.group_by) if s.group_by is not None else swept_keys(jobs)
        summary = tables.summarize(jobs, group_by, s.figures)
        files: dict[str, Any] = {"summary.csv": TextFile(tables.rows_csv(summary), ".csv"),
                                 "summary.md": TextFile(_markdown(jobs, summary, s), ".md")}
        if s.plots:
            files["plots.png"] = PngFigure(plots.sweep_figure(jobs, s.plots, group_by, s.pivot))
        failed = [j for j in jobs if not j.ok]
        ctx.log.info("%d jobs: %d ok, %d failed, %d without a status", len(jobs),
                     len(jobs) - len(failed), sum(j.status == "failed" for j in failed),
                     sum(j.status == "missing" for j in failed))
        metrics: dict[str, Any] = {"jobs": len(jobs), "ok": len(jobs) - len(failed),
                                   "failed": len(failed), "groups": len(summary)}
        if len(summary) == 1:  # one group: its figures are the run's metrics
            metrics.update({f"gather.{k}": v for k, v in summary[0].items()
                            if k not in ("runs", "ok", "failed") and isinstance(v, int | float)})
        return StageResult(outputs={"summary": summary}, metrics=metrics, files=files)


def _check_metric_names(jobs: list[JobRecord], names: list[str]) -> None:
    """A metric that no job has is a typo, most likely: name it and the closest ones."""
    known = tables.metric_keys(jobs)
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
            raise ConfigError(f"pipeline.stages.gather: no job has metric {name!r}"
                              + (f"; close: {close}" if close else f"; the jobs have {known[:12]}..."))


def _markdown(jobs: list[JobRecord], summary: list[dict], s: GatherSettings) -> str:
    md = [f"# {s.title or 'sweep'}", "", f"`{s.sweep_dir}`: {len(jobs)} jobs, "
          f"{sum(j.ok for j in jobs)} ok", "", tables.rows_markdown(summary, s.digits)]
    if s.pivot is not None:
        md += [f"{' / '.join(s.pivot.cells)} (median per cell):", "", tables.pivot_markdown(jobs, s.pivot)]
    failed = [j for j in jobs if not j.ok]
    if failed:
        md += ["Jobs that did not finish ok:", ""]
        md += [f"- job {j.job} ({' '.join(f'{k}={v}' for k, v in j.overrides.items())}): {j.status}"
               + (f" — {j.error.splitlines()[0][:300]}" if j.error else "") for j in failed]
    return "\n".join(md) + "\n"
