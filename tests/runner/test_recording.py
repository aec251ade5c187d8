"""The run's recorder: recording.rrd written by the runner, read back with Rerun's reader."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import RecordingError
from core.recording import Mesh, Primitive, Recorder
from core.recording_read import read_recording
from core.rerun_recorder import RerunRecorder, open_recorder
from stages.graph import build_graph, run_graph
from tests.recordings import assert_recording


def test_every_recorder_method_lands_in_the_file(tmp_path):
    rec = RerunRecorder(tmp_path / "r.rrd", "test")
    t = np.arange(100) / 125.0
    rec.series("joints/j1/position", t, np.column_stack([np.sin(t), -np.ones_like(t), np.ones_like(t)]),
               names=["position_rad", "lower_rad", "upper_rad"])
    rec.transforms("world/robot/link1", t, np.zeros((100, 3)), np.tile([1.0, 0, 0, 0], (100, 1)))
    rec.shape("world/robot/link1/collision/capsule", Primitive("capsule", (0.05, 0.1), (200, 30, 30, 90)))
    rec.shape("world/scene/box", Primitive("box", (0.5, 0.4, 0.02), (0.8, 0.7, 0.6)))
    rec.shape("world/scene/ball", Primitive("sphere", (0.03,)))
    rec.shape("world/scene/can", Primitive("cylinder", (0.03, 0.05)))
    rec.shape("world/scene/mesh", Mesh(np.eye(3), np.array([[0, 1, 2]]), None, (10, 20, 30)))
    rec.transform("world/camera", (1.0, 0.0, 1.0), static=True)
    rec.pinhole("world/camera/image", np.array([[100.0, 0, 32], [0, 100.0, 24], [0, 0, 1]]), 64, 48)
    rec.set_time_s(0.25)
    rec.scalar("clearance/min_m", 0.0053)
    rec.state("clearance/closest_pair", "left_link7 – right_link7")
    rec.image("world/camera/image", np.zeros((48, 64, 3), np.uint8))
    rec.points2d("world/camera/image/corners", [[1, 2], [3, 4]], labels=["a", "b"])
    rec.line_strips2d("world/camera/image/tags", [[[0, 0], [5, 0], [5, 5]]], colors=(0, 255, 0))
    rec.points3d("world/points", np.zeros((3, 3)), colors=(255, 0, 0), radii_m=0.01)
    rec.line_strips3d("world/path", [np.zeros((4, 3))], labels=["left"])
    rec.arrows3d("world/arrow", [[0, 0, 0]], [[1, 0, 0]])
    rec.text("log", "hello", "WARN")
    rec.document("notes", "**bold**")
    rec.close()
    rec.close()   # idempotent
    c = read_recording(tmp_path / "r.rrd")
    assert c.rows["/joints/j1/position"] == 100 and c.timelines["/joints/j1/position"] == ("time",)
    assert c.rows["/world/robot/link1"] == 100 and "time" in c.timelines["/world/robot/link1"]
    for e in ("/world/scene/box", "/world/scene/mesh", "/world/camera", "/notes"):
        assert e in c.static, e
    for e in ("/clearance/min_m", "/clearance/closest_pair", "/world/camera/image", "/log",
              "/world/camera/image/corners", "/world/points", "/world/arrow"):
        assert "time" in c.timelines[e], e


def test_runs_in_one_process_never_mix(tmp_path):
    a, b = RerunRecorder(tmp_path / "a.rrd"), RerunRecorder(tmp_path / "b.rrd")
    a.scalar("only_a", 1.0)
    b.scalar("only_b", 2.0)
    a.close()
    b.close()
    assert "/only_a" in read_recording(tmp_path / "a.rrd").entity_paths
    assert "/only_a" not in read_recording(tmp_path / "b.rrd").entity_paths


def test_the_no_op_recorder_takes_every_call():
    rec = open_recorder("unused.rrd", record=False)
    assert type(rec) is Recorder and not rec.enabled
    rec.series("x", [0.0], [1.0])
    rec.shape("y", Primitive("box", (1, 1, 1)))
    rec.close()


def test_runner_writes_the_recording_and_stages_log_into_it(tmp_path):
    graph = build_graph({"trace": {"_target_": "stages.examples.Trace", "samples": 40}})
    assert run_graph(graph, tmp_path, seed=0).ok
    c = assert_recording(tmp_path, {"trace/sine": "time", "trace/log": "time"})
    assert c.rows["/trace/sine"] == 40


def test_record_false_writes_no_recording(tmp_path):
    graph = build_graph({"trace": {"_target_": "stages.examples.Trace"}})
    assert run_graph(graph, tmp_path, seed=0, record=False).ok
    assert not (tmp_path / "recording.rrd").exists()


def test_a_failed_run_keeps_its_recording(tmp_path):
    graph = build_graph({"trace": {"_target_": "stages.examples.Trace", "samples": 30},
                         "boom": {"_target_": "stages.examples.Fail"}})
    record = run_graph(graph, tmp_path, seed=0)
    assert not record.ok and record.failed_stage == "boom"
    c = assert_recording(tmp_path, {"trace/sine": "time", "runner": "log_time"})
    assert c.rows["/trace/sine"] == 30


def test_record_false_through_the_config_writes_no_recording(compose, tmp_path):
    from stages.__main__ import run_config

    run = tmp_path / "run"   # pipeline=path cut to its first stage
    cfg = compose(["pipeline=path", "record=false", "~pipeline.stages.draw", "~pipeline.stages.precompute"],
                  run_dir=run)
    assert run_config(cfg, run).ok and (run / "path" / "flat.npz").exists()
    assert not (run / "recording.rrd").exists()


def test_record_is_a_top_level_key(compose, tmp_path):
    assert compose([]).record is True
    assert compose(["record=false"]).record is False
    with pytest.raises(Exception, match="record"):
        compose(["record=maybe"])


def test_reading_a_missing_or_broken_recording_is_a_clear_error(tmp_path):
    with pytest.raises(RecordingError, match="no recording at"):
        read_recording(tmp_path / "none.rrd")
    (tmp_path / "bad.rrd").write_bytes(b"not a recording")
    with pytest.raises(RecordingError, match="not a readable Rerun recording"):
        read_recording(tmp_path / "bad.rrd")


def test_a_recording_that_cannot_be_opened_never_stops_the_run(tmp_path, caplog):
    (tmp_path / "recording.rrd").mkdir()   # the file cannot be created
    graph = build_graph({"trace": {"_target_": "stages.examples.Trace"}})
    assert run_graph(graph, tmp_path, seed=0).ok
    assert "no recording.rrd for this run" in caplog.text
