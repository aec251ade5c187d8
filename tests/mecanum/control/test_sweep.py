"""Gathering a follower sweep from its job folders (no simulation: metrics.json written here)."""

import csv
import io
import json

from stages.mecanum.control.metrics import METRIC_KEYS
from stages.mecanum.control.sweep import SWEEP_COLUMNS, gather_sweep, sweep_csv, sweep_markdown


def job(root, n, path, follower, accel, status="ok", **metrics):
    d = root / str(n)
    d.mkdir(parents=True)
    m = {"follow.path": path, "follow.follower": follower, "follow.accel_limit_in_s2": accel,
         **{f"follow.{k}": 0.5 for k in METRIC_KEYS}, "follow.slip_ticks": 0,
         "follow.stopped": True, "follow.compute_median_us": 400.0}
    m.update({f"follow.{k}": v for k, v in metrics.items()})
    (d / "metrics.json").write_text(json.dumps(m))
    (d / "status.json").write_text(json.dumps({"status": status}))


def test_rows_in_job_order_and_one_follower_swept_over_limits_told_apart(tmp_path):
    job(tmp_path, 10, "straight", "roadrunner", 30.0)
    job(tmp_path, 2, "hairpin", "roadrunner", 50.0, max_deviation_in=1.88)
    job(tmp_path, 1, "hairpin", "skidaddle", 84.9, status="failed")
    (tmp_path / "3").mkdir()
    (tmp_path / "3" / "metrics.json").write_text(json.dumps({"path.segments": 22}))  # no follow
    rows = gather_sweep(tmp_path)
    assert [r["run"] for r in rows] == ["1", "2", "10"]
    assert [r["follower"] for r in rows] == ["skidaddle", "roadrunner@50", "roadrunner@30"]
    assert rows[1]["max_deviation_in"] == 1.88 and rows[0]["status"] == "failed"
    parsed = list(csv.DictReader(io.StringIO(sweep_csv(rows))))
    assert list(parsed[0]) == list(SWEEP_COLUMNS) and parsed[2]["run"] == "10"
    md = sweep_markdown(rows, "sweep x").splitlines()
    assert md[0] == "# sweep x" and md[4].startswith("| hairpin | roadrunner@50 | 50.00 | 1.88 |")
    assert not any("| 10 |" in line for line in md)  # the run folder is left out of the table
