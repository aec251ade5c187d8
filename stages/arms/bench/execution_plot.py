"""The execution benchmark's histogram.png: start skew (shared stamp vs naive) and cancel latency."""

from __future__ import annotations

import numpy as np

from core.plotting import pyplot
from stages.arms.bench.execution import ExecutionBenchResult


def histogram(result: ExecutionBenchResult, bins: int):
    """A matplotlib figure: start skews of both executors, and the cancel latencies."""
    plt = pyplot()

    records, m = result.runs, result.figures
    sync = np.array([r.start_skew_s for r in records]) * 1e3
    naive = np.array([r.naive_start_skew_s for r in records]) * 1e3
    cancel = np.array([r.cancel_latency_s for r in records if r.cancel_latency_s is not None]) * 1e3
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    top = max(float(naive.max(initial=0.0)), float(sync.max(initial=0.0)), 1.0)
    edges = np.linspace(0, top * 1.05, bins + 1)
    a.hist(naive, bins=edges, color="tab:red", alpha=0.6, label="naive: start on arrival")
    a.hist(sync, bins=edges, color="tab:blue", alpha=0.8, label="shared start stamp")
    a.axvline(2.0, color="k", ls="--", lw=1, label="target 2 ms")
    a.set_xlabel("start skew between the arms (ms, robot clock)")
    a.set_ylabel("runs")
    a.set_title(f"start skew, {len(records)} runs, send latency U(0, {m.send_latency_max_s * 1e3:g} ms)")
    a.legend(fontsize=8)
    b.hist(cancel, bins=bins, color="tab:green", alpha=0.8)
    b.axvline(8.0, color="k", ls="--", lw=1, label="target 8 ms (one 125 Hz period)")
    b.set_xlabel("cancel latency after a mid-motion failure (ms, wall)")
    b.set_title(f"median {m.cancel_latency_median_s * 1e3:.3f} ms, "
                f"max {m.cancel_latency_max_s * 1e3:.3f} ms")
    b.legend(fontsize=8)
    fig.tight_layout()
    return fig
