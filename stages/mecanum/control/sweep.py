"""A follower sweep gathered: one row per ``pipeline=follow`` job of a Hydra multirun.

    rows = gather_sweep("runs/follow/multirun/<stamp>")
    sweep_csv(rows), sweep_markdown(rows, title)      # summary.csv, summary.md
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from stages.mecanum.control.follow_files import format_cell
from stages.mecanum.control.metrics import METRIC_KEYS

SWEEP_COLUMNS = ("path", "follower", "accel_limit_in_s2", *METRIC_KEYS, "slip_ticks",
                 "stopped", "compute_median_us", "status", "run")


def gather_sweep(sweep_dir: Path | str) -> list[dict]:
    """One row per job folder (``<sweep_dir>/<n>/metrics.json`` of ``pipeline=follow``)."""
    rows = []
    for metrics_file in sorted(Path(sweep_dir).glob("*/metrics.json"),
                               key=lambda p: (len(p.parent.name), p.parent.name)):
        m = json.loads(metrics_file.read_text())
        status_file = metrics_file.parent / "status.json"
        status = json.loads(status_file.read_text())["status"] if status_file.exists() else "?"
        if "follow.follower" not in m:
            continue
        row = {"path": m.get("follow.path", m.get("path.name", "?")),
               "follower": m["follow.follower"], "status": status,
               "run": metrics_file.parent.name}
        for k in SWEEP_COLUMNS[2:-2]:
            row[k] = m.get(f"follow.{k}")
        rows.append(row)
    limits: dict[str, set] = {}
    for r in rows:  # one follower swept over several limits: tell them apart
        limits.setdefault(r["follower"], set()).add(r["accel_limit_in_s2"])
    for r in rows:
        if len(limits[r["follower"]]) > 1:
            r["follower"] = f"{r['follower']}@{r['accel_limit_in_s2']:g}"
    return rows


def sweep_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, SWEEP_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def sweep_markdown(rows: list[dict], title: str) -> str:
    """Markdown: one row per (path, follower), sorted; the run folder left out."""
    cols = SWEEP_COLUMNS[:-1]
    md = [f"# {title}", "", "| " + " | ".join(cols) + " |",
          "|---|---|" + "---:|" * (len(cols) - 2)]
    for r in sorted(rows, key=lambda r: (r["path"], r["follower"])):
        md.append("| " + " | ".join(format_cell(r[c]) for c in cols) + " |")
    return "\n".join(md) + "\n"
