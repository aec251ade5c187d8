"""A sweep's jobs as tables: every run, a summary per group, a pivot of two overrides.

    runs_csv(jobs)                                  # one row per job: overrides, status, every metric
    summarize(jobs, group_by, figures)              # one row per group: runs, ok, <metric>.<statistic>
    pivot_markdown(jobs, PivotSettings(...))        # rows x columns of two overrides, cells of metrics
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from stages.sweeps.jobs import JobRecord, override_keys
from stages.sweeps.settings import PivotSettings


def metric_keys(jobs: Sequence[JobRecord]) -> list[str]:
    keys: dict[str, None] = {}
    for job in jobs:
        keys.update(dict.fromkeys(job.metrics))
    return list(keys)


def runs_csv(jobs: Sequence[JobRecord]) -> str:
    """job, every override, status, error, seconds, every metric (first-appearance order)."""
    overrides, metrics = override_keys(jobs), metric_keys(jobs)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["job", *overrides, "status", "error", "seconds", *metrics])
    for job in jobs:
        w.writerow([job.job, *(job.overrides.get(k, "") for k in overrides), job.status,
                    job.error.splitlines()[0] if job.error else "",
                    "" if job.seconds is None else job.seconds,
                    *(job.metrics.get(k, "") for k in metrics)])
    return buf.getvalue()


def _numbers(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values
            if isinstance(v, bool | int | float) and math.isfinite(float(v))]


def statistic(values: Sequence[Any], name: str) -> Any:
    """``name`` of the values one metric took over a group of jobs (jobs without it left out).

    count, sum, mean, median, min, max and rate (the mean of a yes/no metric) take numbers and
    booleans; tally counts the items of text metrics (comma-separated), e.g. failure causes.
    """
    if name == "tally":
        items = Counter(item.strip() for v in values if isinstance(v, str) for item in v.split(",")
                        if item.strip())
        return ", ".join(f"{k}: {n}" for k, n in items.most_common())
    nums = _numbers(values)
    if name == "count":
        return len(nums)
    counts = all(type(v) in (int, bool) for v in values)   # of counts, a count
    if name == "sum":
        return int(sum(nums)) if counts else sum(nums)
    if not nums:
        return None
    if name in ("min", "max") and counts:
        return int(min(nums) if name == "min" else max(nums))
    return {"mean": np.mean, "rate": np.mean, "median": np.median, "min": np.min,
            "max": np.max}[name](nums).item()


def groups(jobs: Sequence[JobRecord], group_by: Sequence[str]) -> dict[tuple[str, ...], list[JobRecord]]:
    """Jobs by their values of the ``group_by`` overrides, groups in first-appearance order."""
    out: dict[tuple[str, ...], list[JobRecord]] = {}
    for job in jobs:
        out.setdefault(tuple(job.overrides.get(k, "") for k in group_by), []).append(job)
    return out


def summarize(jobs: Sequence[JobRecord], group_by: Sequence[str],
              figures: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """One row per group: its override values, runs, ok, failed, then ``<metric>.<statistic>``."""
    rows = []
    for values, members in groups(jobs, group_by).items():
        row: dict[str, Any] = dict(zip(group_by, values, strict=True))
        row.update(runs=len(members), ok=sum(j.ok for j in members),
                   failed=sum(not j.ok for j in members))
        for metric, stats in figures.items():
            taken = [j.metrics[metric] for j in members if metric in j.metrics]
            for stat in stats:
                row[f"{metric}.{stat}"] = statistic(taken, stat)
        rows.append(row)
    return rows


def format_cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):   # digits after the point from 1 up, significant digits below
        return f"{value:.{digits}f}" if abs(value) >= 1 else f"{value:.{digits}g}"
    return str(value)


def rows_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


def rows_markdown(rows: Sequence[Mapping[str, Any]], digits: int = 3) -> str:
    """A table of the summary; one group is shown transposed (figure | value), easier to read."""
    if not rows:
        return ""
    if len(rows) == 1:
        md = ["| figure | value |", "|---|---:|"]
        md += [f"| {k} | {format_cell(v, digits)} |" for k, v in rows[0].items()]
        return "\n".join(md) + "\n"
    cols = list(rows[0])
    md = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    md += ["| " + " | ".join(format_cell(r[c], digits) for c in cols) + " |" for r in rows]
    return "\n".join(md) + "\n"


def pivot_markdown(jobs: Sequence[JobRecord], pivot: PivotSettings) -> str:
    """Rows are the values of one override, columns of another; each cell is the median of every
    metric in ``pivot.cells`` over the cell's jobs, joined by `` / ``."""
    row_values = list(dict.fromkeys(j.overrides.get(pivot.rows, "") for j in jobs))
    col_values = list(dict.fromkeys(j.overrides.get(pivot.columns, "") for j in jobs))
    cells = groups(jobs, (pivot.rows, pivot.columns))
    md = [f"| {pivot.rows} | " + " | ".join(col_values) + " |", "|---|" + "---|" * len(col_values)]
    for r in row_values:
        line = [" / ".join(_median_cell([j.metrics.get(m) for j in cells[r, c]], pivot.digits)
                           for m in pivot.cells) if (r, c) in cells else "–" for c in col_values]
        md.append(f"| {r} | " + " | ".join(line) + " |")
    return "\n".join(md) + "\n"


def _median_cell(values: Sequence[Any], digits: int) -> str:
    """The median to ``digits`` decimals; a count (every value an int) stays whole."""
    median = statistic(values, "median")
    if median is None:
        return "–"
    counts = all(type(v) is int for v in values if v is not None)
    return str(int(median)) if counts and float(median).is_integer() else f"{median:.{digits}f}"
