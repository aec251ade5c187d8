"""pipeline=perceive and pipeline=calibrate end to end (small settings), and their bad inputs."""

from __future__ import annotations

import json

import pytest

from stages.__main__ import run_config
from tests.recordings import assert_recording

SMALL_CAMERA = ["scene.cameras.scene_camera.resolution=[640,480]"]
FAST = ["scene.lights.key.castshadow=false"]   # software GL: shadow maps are most of a frame


def _metrics(run):
    return json.loads((run / "metrics.json").read_text())


def test_perceive_runs_and_scores_the_estimate(compose, tmp_path):
    run = tmp_path / "perceive"
    record = run_config(compose(["pipeline=perceive", *FAST, "seed=2"], run_dir=run), run)
    assert record.ok, record.error
    m = _metrics(run)
    for key in ("perception.position_error_m", "perception.rotation_error_deg",
                "perception.tags_seen", "perception.reprojection_px", "perception.time_s"):
        assert key in m, key
    assert m["drop.settled"] and m["perception.tags_seen"] >= 2
    assert m["perception.position_error_m"] < 0.002 and m["perception.rotation_error_deg"] < 1.0
    assert m["perception.foreign_tags"] == 4        # the two hand plates, ignored
    assert (run / "perception" / "overlay.png").stat().st_size > 10_000
    est = json.loads((run / "perception" / "estimate.json").read_text())
    assert est["foreign_ids"] == [20, 21, 22, 23]
    c = assert_recording(run, {"world/scene/table": None, "world/executed/peg": "time", "world/camera": None,
                               "world/camera/image": "time", "world/camera/image/tags": "time",
                               "world/camera/image/tag_corners": "time", "world/camera/image/peg_fit": "time",
                               "world/peg_estimate": "time", "world/peg_truth": "time",
                               "perception/log": "time"})
    assert "/world/camera/image" in c.static                                 # the pinhole, once


def test_peg_out_of_view_is_peg_not_found(compose, tmp_path):
    run = tmp_path / "lost"
    cfg = compose(["pipeline=perceive", *SMALL_CAMERA, "pipeline.params.region.x=[2.2,2.3]",
                   "pipeline.params.region.y=[0.0,0.1]"], run_dir=run)   # off the table, behind the camera
    record = run_config(cfg, run)
    assert not record.ok and record.failed_stage == "perception"
    assert record.error.startswith("PerceptionError: peg not found")
    status = json.loads((run / "status.json").read_text())
    assert status["status"] == "failed" and "peg not found" in status["error"]
    assert _metrics(run)["perception.tags_seen"] == 0
    assert (run / "perception" / "overlay.png").exists()   # the evidence is kept
    assert_recording(run, {"world/camera/image": "time", "perception/log": "time", "runner": "log_time"})


def test_perceive_needs_the_peg_scene(compose, tmp_path):
    run = tmp_path / "nopeg"
    record = run_config(compose(["pipeline=perceive", "scene=table"], run_dir=run), run)
    assert not record.ok and record.error.startswith("ConfigError")
    assert "scene=peg_table" in record.error


def test_calibrate_writes_a_calibration_that_perceive_loads(compose, tmp_path):
    from stages.arms.perception.calibration import load_calibration

    run = tmp_path / "calibrate"
    cfg = compose(["pipeline=calibrate", *FAST, "pipeline.params.views=8",
                   "pipeline.params.grid=[2,3]", "seed=1"], run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error
    m = _metrics(run)
    for key in ("intrinsics.views_used", "intrinsics.rms_px", "intrinsics.focal_error_pct",
                "extrinsics.spots", "extrinsics.residual_rms_m",
                "extrinsics.joint_offset_error_deg_max", "extrinsics.camera_position_error_m",
                "extrinsics.camera_rotation_error_deg", "extrinsics.condition_number"):
        assert key in m, key
    assert m["intrinsics.rms_px"] < 0.3 and m["intrinsics.focal_error_pct"] < 0.5
    assert m["extrinsics.spots"] >= 10          # of 12 planned (a spot may be skipped, with its reason)
    assert m["extrinsics.camera_position_error_m"] < 0.005
    assert m["extrinsics.joint_offset_error_deg_max"] < 0.5   # few spots: a coarse check only
    cal_path = run / "extrinsics" / "calibration.yaml"
    cal = load_calibration(cal_path)
    assert set(cal.joint_offsets_rad) == {"left", "right"} and cal.T_world_cam is not None
    assert cal.source_run == str(run) and cal.date
    assert load_calibration(run / "intrinsics" / "intrinsics.yaml").T_world_cam is None
    c = assert_recording(run, {   # each spot's image with its tags, the plates seen, the fitted camera
        "world/camera/image": "time", "world/camera/image/tags": "time", "world/plate_estimate": "time",
        "calibration/log": "time", "world/camera_fit": None, "calibration/fit": None})
    spots = json.loads((run / "extrinsics" / "report.json").read_text())["spots"]
    assert c.rows["/calibration/log"] == len(spots) == c.rows["/world/camera/image"]
    # later pipelines load it with calibration=<file>
    run2 = tmp_path / "perceive_calibrated"
    record = run_config(compose(["pipeline=perceive", *FAST, "seed=2",
                                 f"calibration={cal_path}"], run_dir=run2), run2)
    assert record.ok, record.error
    est = json.loads((run2 / "perception" / "estimate.json").read_text())
    assert est["camera"]["source"] == "calibration"
    assert _metrics(run2)["perception.position_error_m"] < 0.005


def test_intrinsics_only_file_is_refused_for_perception(compose, tmp_path):
    import numpy as np

    from stages.arms.perception.calibration import Calibration, save_calibration

    path = save_calibration(tmp_path / "k.yaml", Calibration(np.eye(3), np.zeros(5), (640, 480)))
    run = tmp_path / "bad_cal"
    record = run_config(compose(["pipeline=perceive", f"calibration={path}"], run_dir=run), run)
    assert not record.ok and "no camera pose" in record.error
    record = run_config(compose(["pipeline=perceive", f"calibration={tmp_path}/nope.yaml"],
                                run_dir=tmp_path / "bad2"), tmp_path / "bad2")
    assert not record.ok and "no such file" in record.error


@pytest.mark.parametrize("override,needle", [
    ("+pipeline.params.image.noise=3", "pipeline.stages.perception.image.noise: not a"),
    ("pipeline.stages.perception.detector.refine=magic", "perception.detector.refine='magic'"),
    ("pipeline.stages.perception.prior=gravity", "perception.prior='gravity'"),
    ("+pipeline.stages.perception.priors=none", "pipeline.stages.perception.priors: not a"),
    ("pipeline.params.region.height_m=[0.0,0.1]", "pipeline.stages.drop.region.height_m=[0.0, 0.1]"),
])
def test_bad_perception_config_is_named(compose, tmp_path, override, needle):
    run = tmp_path / "bad"
    record = run_config(compose(["pipeline=perceive", override], run_dir=run), run)
    assert not record.ok and needle in record.error, record.error


def test_calibrate_images_is_a_plain_override_and_a_bad_folder_is_typed(compose, tmp_path):
    """``calibrate.images=<dir>`` composes without ``+``; a missing or empty folder fails, typed."""
    run = tmp_path / "missing"
    cfg = compose(["pipeline=calibrate", f"calibrate.images={tmp_path}/nope"], run_dir=run)
    assert cfg.pipeline.stages.intrinsics.images == f"{tmp_path}/nope"
    record = run_config(cfg, run)
    assert not record.ok and record.error.startswith("ConfigError"), record.error
    assert "is not a folder" in record.error
    empty = tmp_path / "empty"
    empty.mkdir()
    run = tmp_path / "empty_run"
    record = run_config(compose(["pipeline=calibrate", f"calibrate.images={empty}"], run_dir=run), run)
    assert not record.ok and record.failed_stage == "intrinsics", record.error
    assert record.error.startswith("PerceptionError") and "no images" in record.error
