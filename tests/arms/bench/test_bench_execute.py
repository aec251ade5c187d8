"""pipeline=bench_execute on two runs: every metric, runs.json and the histogram."""

import json

import pytest

from stages.__main__ import run_config

METRICS = ("runs", "completed_runs", "failed_runs", "start_buffer_s", "speed", "duration_s",
           "physics_step_s", "send_latency_max_s", "send_latency_measured_median_s",
           "send_latency_measured_max_s",
           "start_skew_median_s", "start_skew_max_s", "start_offset_max_s", "naive_start_skew_median_s",
           "naive_start_skew_max_s", "cancel_latency_median_s", "cancel_latency_max_s",
           "cancel_latency_under_8ms", "colliding_states", "checked_states", "naive_colliding_states",
           "naive_checked_states", "naive_runs_touching", "sequential_colliding_states",
           "sequential_checked_states", "sequential_duration_s", "bench_wall_s")


def test_small_execution_bench_reports_every_key(compose, tmp_path):
    out = tmp_path / "run"
    record = run_config(compose(["pipeline=bench_execute", "pipeline.stages.bench_execute.runs=2"],
                                run_dir=out), out)
    assert record.ok, json.loads((out / "status.json").read_text())
    m = json.loads((out / "metrics.json").read_text())
    assert [k for k in m if k.startswith("bench_execute.") and k != "bench_execute.time_s"] == \
        [f"bench_execute.{k}" for k in METRICS]
    assert m["bench_execute.runs"] == 2 and m["bench_execute.start_buffer_s"] == pytest.approx(0.15)
    assert m["bench_execute.checked_states"] > 0
    runs = json.loads((out / "bench_execute" / "runs.json").read_text())
    assert len(runs["runs"]) + len(runs["failures"]) >= 2
    assert set(runs["runs"][0]) >= {"run", "seed", "start_skew_s", "send_latency_s", "cancel_latency_s"}
    assert (out / "bench_execute" / "histogram.png").stat().st_size > 0


def test_a_bad_execution_bench_setting_fails_before_anything_runs(compose, tmp_path):
    out = tmp_path / "run"
    bad = "pipeline.stages.bench_execute.cancel_window=[0.8,0.2]"
    record = run_config(compose(["pipeline=bench_execute", bad], run_dir=out), out)
    status = json.loads((out / "status.json").read_text())
    assert not record.ok and "pipeline.stages.bench_execute.cancel_window=[0.8, 0.2]" in status["error"]
    assert not (out / "scene").exists()
