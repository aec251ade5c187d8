"""The planning benchmark's report from a made-up result: metric names and order, ratios, n/a, the table."""

import math

import numpy as np

from stages.arms.bench.plan_report import plan_metrics, plan_table, runs_record
from stages.arms.bench.planning import PlanBenchResult, PlannerLineup, PlanRun, summarize


def _result() -> PlanBenchResult:
    ok = PlanRun(True, 0.2, 0.1, 0.1, 100, 2.5, None, np.zeros((2, 3)), 250, 0, 0.0061)
    slow = PlanRun(True, 0.4, 0.3, 0.1, 300, 3.0, None, np.zeros((2, 3)), 300, 1, 0.0049)
    failed = PlanRun(False, 1.0, 1.0, 0.0, 50, math.nan, "timeout")
    runs = {"crossing": {"choreograph": [ok, failed], "ompl_RRTConnect": [slow, slow]}}
    summaries = {n: {p: summarize(rs) for p, rs in per.items()} for n, per in runs.items()}
    return PlanBenchResult(runs, summaries, {"crossing": 2}, {"crossing": [0.01, 0.03]}, {},
                           checker={"states": 300, "states_per_s": 1000.0, "threads_agree": True},
                           retime={"paths": 0}, ompl_available=True, load_average_1min=math.nan)


def test_metrics_keep_their_names_order_and_ratios():
    m = plan_metrics(_result(), "ompl_RRTConnect")
    keys = list(m)
    assert keys[:11] == [f"crossing.choreograph.{k}" for k in (
        "success_rate", "median_time_s", "p90_time_s", "search_median_time_s", "smooth_median_time_s",
        "path_length_rad", "checks", "runs", "samples", "violations", "min_clearance_m")]
    assert keys[22:] == ["crossing.seeds", "crossing.ik_median_time_s", "crossing.time_ratio_vs_ompl",
                         "crossing.search_time_ratio_vs_ompl", "crossing.checks_ratio_vs_ompl",
                         "checker.states", "checker.states_per_s", "checker.threads_agree", "retime.paths",
                         "ompl_available", "load_average_1min"]
    assert m["crossing.choreograph.success_rate"] == 0.5
    assert m["crossing.choreograph.path_length_rad"] == 2.5   # over the successes only
    assert m["crossing.time_ratio_vs_ompl"] == 0.6 / 0.4      # medians, failures at the time they took
    assert m["crossing.ik_median_time_s"] == 0.02
    assert m["load_average_1min"] == "n/a"
    # every 125 Hz sample of the successes re-checked: summed, and the closest over all of them
    assert (m["crossing.ompl_RRTConnect.samples"], m["crossing.ompl_RRTConnect.violations"]) == (600, 2)
    assert m["crossing.choreograph.min_clearance_m"] == 0.0061


def test_without_the_reference_there_is_no_ratio_and_the_table_says_n_a():
    result = _result()
    m = plan_metrics(result, "ompl_RRTstar")
    assert "crossing.time_ratio_vs_ompl" not in m
    table = plan_table(result, m)
    assert ("| crossing | choreograph | 2 | 50% | 0.600 | 0.920 | 0.5500 | 0.050 | 2.50 | 75 | "
            "0 of 250, 6.1 | n/a |") in table
    assert "| threads_agree | True |" in table and "| paths | 0 |" in table


def test_runs_json_leaves_the_paths_out_and_keeps_the_planner_configs():
    lineup = PlannerLineup({"choreograph": {"backend": "choreograph"}}, {})
    record = runs_record(_result(), lineup)
    row = record["runs"]["crossing"]["choreograph"][1]
    assert list(row) == ["ok", "time_s", "search_s", "smooth_s", "checks", "length_rad", "error", "samples",
                         "violations", "min_clearance_m"]
    assert row["error"] == "timeout" and record["planners"] == lineup.configs
