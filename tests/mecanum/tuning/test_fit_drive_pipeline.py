"""pipeline=fit_drive end to end: logs -> fit -> tune -> check, on simulated logs and on a folder laid
out as Road Runner saves it on the robot; a bad log is a typed error naming the file and field."""

import json

import pytest
import yaml

from stages.__main__ import run_config
from stages.mecanum.tuning.ramp_sim import drive_in_per_tick, write_simulated_ramps
from tests.mecanum.tuning.helpers import FAST_SIM, TRUE_DRIVE

QUICK = ["pipeline.stages.tune.budget=2", "pipeline.stages.logs.ramp.physics_step_s=0.005",
         "~pipeline.params.train.s_curve", "~pipeline.params.train.sharp_corner"]


def test_the_fit_finds_the_simulated_robot_and_both_followers_are_tuned_and_checked(compose, tmp_path):
    run = tmp_path / "run"
    record = run_config(compose(["pipeline=fit_drive", *QUICK], run_dir=run), run)
    assert record.ok, record.error
    m = json.loads((run / "metrics.json").read_text())
    assert m["logs.simulated"] and m["fit.max_error_pct"] < 5.0          # the bound: 5 %
    assert m["fit.motor_free_speed_rpm"] == pytest.approx(435.0, rel=0.01)
    drive = yaml.safe_load((run / "fit/conf/drive/fitted.yaml").read_text())
    assert drive["name"] == "fitted" and drive["track_width_in"] == pytest.approx(15.5, rel=0.01)
    assert "# fit: forward ramp, RMS" in (run / "fit/conf/drive/fitted.yaml").read_text()
    for name in ("skidaddle", "roadrunner"):
        tuned = yaml.safe_load((run / f"tune/conf/follower/fitted_{name}.yaml").read_text())
        assert tuned["kind"] == name and tuned["name"] == f"fitted_{name}"
        assert m[f"tune.{name}.cost_after"] <= m[f"tune.{name}.cost_before"]
    assert m["check.max_model_error_deviation_in"] <= 0.5             # the fitted model costs < 0.5 in
    corner = "check.sharp_corner.{}.max_deviation_in"
    assert m[corner.format("skidaddle")] <= m[corner.format("roadrunner_a30")]
    table = (run / "check/table.md").read_text()
    assert "| sharp_corner | roadrunner_a30 |" in table
    for name in ("forward-ramp.json", "angular-ramp.json"):
        assert (run / "logs" / name).exists()
    assert (run / "fit/forward_ramp.png").stat().st_size > 10_000


def test_a_road_runner_tuning_folder_is_read_newest_first(compose, tmp_path):
    folder = tmp_path / "RoadRunner" / "tuning"
    for kind, path in write_simulated_ramps(tmp_path / "sim", TRUE_DRIVE, FAST_SIM).items():
        (folder / kind).mkdir(parents=True)
        path.rename(folder / kind / "1700000000000.json")
    (folder / "forward-ramp" / "1600000000000.json").write_text("{}")   # an older, broken one: not read
    run = tmp_path / "run"
    cfg = compose(["pipeline=fit_drive", *QUICK, f"pipeline.stages.logs.folder={folder}",
                   f"pipeline.stages.logs.in_per_tick={drive_in_per_tick(TRUE_DRIVE, FAST_SIM)}",
                   "pipeline.stages.tune.budget=1", "~pipeline.params.check.hairpin"], run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error
    m = json.loads((run / "metrics.json").read_text())
    assert not m["logs.simulated"] and "check.max_model_error_deviation_in" not in m   # no truth to compare
    # the free speed is the ramp's slope: found whatever the given mass (the torque is fitted against it)
    assert m["fit.motor_free_speed_rpm"] == pytest.approx(TRUE_DRIVE.motor_free_speed_rpm, rel=0.01)


def test_bad_logs_fail_typed_naming_the_file_and_field(compose, tmp_path):
    folder = tmp_path / "tuning"
    folder.mkdir()
    (folder / "forward-ramp.json").write_text("not json")
    (folder / "angular-ramp.json").write_text("{}")
    run = tmp_path / "run"
    cfg = compose(["pipeline=fit_drive", f"pipeline.stages.logs.folder={folder}",
                   "pipeline.stages.logs.in_per_tick=0.024"], run_dir=run)
    record = run_config(cfg, run)
    status = json.loads((run / "status.json").read_text())
    assert not record.ok and status["failed_stage"] == "logs"
    assert status["error"].startswith("DriveFitError: ") and "forward-ramp.json: not JSON" in status["error"]
    cfg = compose(["pipeline=fit_drive", f"pipeline.stages.logs.folder={folder}"], run_dir=run)
    record = run_config(cfg, run)
    assert not record.ok and "pipeline.stages.logs.in_per_tick" in record.error   # real logs need their scale
