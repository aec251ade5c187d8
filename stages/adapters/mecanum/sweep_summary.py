"""Stage sweep_summary: one table of a follower sweep's runs."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from core.artifacts import PngFigure, TextFile
from core.errors import ConfigError
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.follow_run import SWEEP_COLUMNS, format_cell, gather_sweep


class SweepSummary(Stage):
    """Gather a ``pipeline=follow`` multirun's metrics into summary.csv, summary.md, summary.png."""

    outputs = ("rows",)

    def __init__(self, sweep_dir: str | None = None):
        if not sweep_dir:
            raise ConfigError("pipeline.params.sweep_dir must name a multirun folder, e.g. "
                              "pipeline.params.sweep_dir=runs/follow/multirun/<stamp>")
        self.sweep_dir = Path(sweep_dir)
        if not self.sweep_dir.is_dir():
            raise ConfigError(f"pipeline.params.sweep_dir={sweep_dir!r} is not a folder")

    def run(self, ctx: StageContext) -> StageResult:
        from stages.mecanum.control import plots

        rows = gather_sweep(self.sweep_dir)
        if not rows:
            raise ConfigError(f"{self.sweep_dir} holds no pipeline=follow runs "
                              "(<n>/metrics.json with follow.* keys)")
        buf = io.StringIO()
        w = csv.DictWriter(buf, SWEEP_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        cols = SWEEP_COLUMNS[:-1]
        md = [f"# sweep {self.sweep_dir}", "", "| " + " | ".join(cols) + " |",
              "|---|---|" + "---:|" * (len(cols) - 2)]
        for r in sorted(rows, key=lambda r: (r["path"], r["follower"])):
            md.append("| " + " | ".join(format_cell(r[c]) for c in cols) + " |")
        files = {"summary.csv": TextFile(buf.getvalue(), ".csv"),
                 "summary.md": TextFile("\n".join(md) + "\n", ".md"),
                 "summary.png": PngFigure(plots.sweep_figure(rows))}
        return StageResult(outputs={"rows": rows},
                           metrics={"runs": len(rows),
                                    "failed": sum(r["status"] != "ok" for r in rows)},
                           files=files)
