"""The planning benchmark's report: flat metrics, the ratios to OMPL, table.md and runs.json.

Metrics (unprefixed; the stage adds its name): ``<goal_set>.<planner>.<summary field>``,
``<goal_set>.seeds``, ``<goal_set>.ik_median_time_s``, ``<goal_set>.{time,search_time,checks}_ratio_vs_ompl``
(choreograph's median / the reference planner's), ``checker.*``, ``retime.*``, ``ompl_available``
and ``load_average_1min``. NaN (nothing measured) is written as ``"n/a"``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from stages.arms.bench.planning import PlanBenchResult, PlannerLineup
from stages.arms.bench.settings import OURS

CHECKER_ROWS = ("states", "states_per_s", "bare_states_per_s", "throughput_ratio", "query_states_per_s",
                "threads2_speedup", "bare_threads2_speedup", "threads_agree", "batch_states",
                "batch_states_per_s", "batch_ratio_vs_bare", "batch_threads2_speedup",
                "batch_proven_fraction")


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and np.isfinite(a) and np.isfinite(b) else float("nan")


def finite(metrics: dict[str, Any]) -> dict[str, Any]:
    """metrics.json holds numbers: NaN (nothing measured) becomes a string."""
    return {k: ("n/a" if isinstance(v, float) and not np.isfinite(v) else v) for k, v in metrics.items()}


def plan_metrics(result: PlanBenchResult, reference: str) -> dict[str, Any]:
    """The flat metrics of one benchmark, in the order they are reported."""
    metrics: dict[str, Any] = {}
    for name, per in result.summaries.items():
        for p, summary in per.items():
            for key, v in asdict(summary).items():
                metrics[f"{name}.{p}.{key}"] = v
        metrics[f"{name}.seeds"] = result.seeds[name]
        ik = result.ik_times_s[name]
        metrics[f"{name}.ik_median_time_s"] = float(np.median(ik)) if ik else "n/a"
        if reference in per:
            ours, ref = per[OURS], per[reference]
            metrics[f"{name}.time_ratio_vs_ompl"] = ratio(ours.median_time_s, ref.median_time_s)
            metrics[f"{name}.search_time_ratio_vs_ompl"] = ratio(ours.search_median_time_s,
                                                                 ref.search_median_time_s)
            metrics[f"{name}.checks_ratio_vs_ompl"] = ratio(ours.checks, ref.checks)
    metrics.update({f"checker.{k}": v for k, v in result.checker.items()})
    metrics.update({f"retime.{k}": v for k, v in result.retime.items()})
    metrics["ompl_available"] = result.ompl_available
    metrics["load_average_1min"] = result.load_average_1min   # other work on the machine skews the times
    return finite(metrics)


def runs_record(result: PlanBenchResult, lineup: PlannerLineup) -> dict[str, Any]:
    """runs.json: every run (without its path), the goal sets' notes, and the planners' configs."""
    details = {n: {p: [r.record() for r in rs] for p, rs in per.items()} for n, per in result.runs.items()}
    return {"runs": details, "notes": result.notes, "planners": lineup.configs}


def _fmt(v, digits=3):
    if isinstance(v, str):
        return v
    if isinstance(v, float) and not np.isfinite(v):
        return "n/a"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def plan_table(result: PlanBenchResult, metrics: dict[str, Any]) -> str:
    """table.md: one row per goal set and planner, then the checker's and the retimer's figures."""
    lines = ["| goal set | planner | seeds | success | median s | p90 s | search median s | "
             "smooth median s | length rad | checks | 125 Hz samples: violations, min clearance mm | "
             "median ours/OMPL |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, per in result.summaries.items():
        r = metrics.get(f"{name}.time_ratio_vs_ompl", "n/a")
        for p, s in per.items():
            lines.append(f"| {name} | {p} | {result.seeds[name]} | {s.success_rate:.0%} | "
                         f"{_fmt(s.median_time_s)} | {_fmt(s.p90_time_s)} | "
                         f"{_fmt(s.search_median_time_s, 4)} | {_fmt(s.smooth_median_time_s)} | "
                         f"{_fmt(s.path_length_rad, 2)} | {_fmt(s.checks, 0)} | "
                         f"{s.violations} of {s.samples}, {_fmt(s.min_clearance_m * 1000, 1)} | "
                         f"{_fmt(r, 2) if p == OURS else ''} |")
    c = {k.split(".", 1)[1]: v for k, v in metrics.items() if k.startswith("checker.")}
    lines += ["", "| checker | value |", "|---|---|"]
    for key in CHECKER_ROWS:
        if key in c:
            lines.append(f"| {key} | {_fmt(c[key], 2)} |")
    lines += ["", "| retime vs TOPP-RA | value |", "|---|---|"]
    for key, v in metrics.items():
        if key.startswith("retime."):
            lines.append(f"| {key.split('.', 1)[1]} | {_fmt(v, 4)} |")
    return "\n".join(lines) + "\n"
