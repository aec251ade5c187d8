"""The named metrics of a sweep, one panel each: per pivot row and column, or per group of jobs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.plotting import pyplot
from stages.sweeps.jobs import JobRecord
from stages.sweeps.settings import PivotSettings
from stages.sweeps.tables import groups, statistic

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


def sweep_figure(jobs: Sequence[JobRecord], metrics: Sequence[str], group_by: Sequence[str],
                 pivot: PivotSettings | None = None):
    """With a pivot: bars of each cell's median (rows on the x axis, a bar per column value).
    Without: every job's value as a dot per group, the group's median as a bar."""
    plt = pyplot()
    fig, axes = plt.subplots(len(metrics), 1, figsize=(9, 2.6 * len(metrics)), squeeze=False)
    for ax, metric in zip(axes[:, 0], metrics, strict=True):
        if pivot is not None:
            _pivot_bars(ax, jobs, metric, pivot)
        else:
            _group_dots(ax, jobs, metric, group_by)
        ax.set_ylabel(metric, fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    if pivot is not None:
        axes[0, 0].legend(fontsize=8, title=pivot.columns, title_fontsize=8)
    fig.tight_layout()
    return fig


def _pivot_bars(ax, jobs, metric, pivot: PivotSettings) -> None:
    rows = list(dict.fromkeys(j.overrides.get(pivot.rows, "") for j in jobs))
    cols = list(dict.fromkeys(j.overrides.get(pivot.columns, "") for j in jobs))
    cells = groups(jobs, (pivot.rows, pivot.columns))
    width = 0.8 / max(len(cols), 1)
    for k, c in enumerate(cols):
        medians = [statistic([j.metrics.get(metric) for j in cells.get((r, c), [])], "median")
                   for r in rows]
        ax.bar(np.arange(len(rows)) + (k - (len(cols) - 1) / 2) * width,
               [np.nan if m is None else m for m in medians], width, label=c,
               color=COLORS[k % len(COLORS)])
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(rows, fontsize=8)


def _group_dots(ax, jobs, metric, group_by) -> None:
    by_group = groups(jobs, group_by)
    for x, members in enumerate(by_group.values()):
        values = [float(j.metrics[metric]) for j in members
                  if isinstance(j.metrics.get(metric), bool | int | float)]
        if values:
            ax.bar(x, float(np.median(values)), 0.6, color="#c6dbef")
            jitter = np.linspace(-0.2, 0.2, len(values)) if len(values) > 1 else [0.0]
            ax.plot(x + np.asarray(jitter), values, "o", ms=3, color=COLORS[0])
    ax.set_xticks(range(len(by_group)))
    ax.set_xticklabels([", ".join(g) or "all jobs" for g in by_group], fontsize=8)
