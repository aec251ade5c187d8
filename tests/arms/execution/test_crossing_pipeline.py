"""The crossing benchmark end to end, and Ctrl-C during execution."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hydra.core.global_hydra import GlobalHydra

from core.recording_read import read_recording
from stages.__main__ import run_config
from stages.view import find_recordings, free_port, serve_web, stop
from tests.chromium import chromium, screenshot
from tests.conftest import REPO, compose_config
from tests.recordings import assert_recording


@pytest.fixture(scope="module")
def crossing_run(tmp_path_factory):
    """One crossing run for this module's tests (the benchmark, its recording, the viewer)."""
    run = tmp_path_factory.mktemp("crossing") / "run"
    record = run_config(compose_config(["pipeline=crossing"], run), run)
    GlobalHydra.instance().clear()
    assert record.ok, record.error
    return run


def test_crossing_group_never_touches_where_independent_and_sequential_do(crossing_run):
    run = crossing_run
    m = json.loads((run / "metrics.json").read_text())
    assert m["independent.frames"] == 210 and m["independent.colliding_frames"] > 0
    assert m["group.colliding_frames"] == 0
    assert m["group.min_clearance_m"] >= 0.005
    assert m["verify.violations"] == 0 and m["verify.samples"] == m["retime.samples"]
    assert m["retime.rate_hz"] == 125
    assert m["execute.colliding_states"] == 0 and m["execute.start_skew_s"] < 0.002
    assert m["sequential.colliding_states"] > 0
    traj = json.loads((run / "retime" / "trajectory.json").read_text())
    times = np.array([p["time_from_start"] for p in traj["points"]])
    assert np.allclose(np.diff(times), 1 / 125)
    path = np.load(run / "plan" / "path.npz")
    assert path["waypoints"].shape[1] == len(path["joint_names"]) == 14
    states = np.load(run / "execute" / "states.npz")
    assert {"times", "positions", "left_start_s", "right_start_s"} <= set(states.files)
    assert (run / "execute" / "execute.mp4").stat().st_size > 10_000
    for f in ("verify/clearance.png", "verify/joint_profiles.png", "verify/report.json", "scene.xml"):
        assert (run / f).exists(), f


def test_crossing_recording_holds_the_motion_clearance_and_baseline(crossing_run):
    """recording.rrd read back with Rerun's reader: what a user scrubs through."""
    m = json.loads((crossing_run / "metrics.json").read_text())
    c = assert_recording(crossing_run, {
        "world/scene/table": None, "world/scene/*": None,                 # the scene, once
        "world/planned/left_link7": "time", "world/planned/right_hand": "time",
        "world/planned/left_link7/collision/*": None, "world/planned/left_link7/visual/*": None,
        "world/plan/gripper_path/left": None, "world/plan/gripper_path/right": None,
        "world/executed/left_link7": "time", "world/independent/right_link7": "time",
        "world/independent/colliding_grippers": None, "world/clearance/closest": "time",
        "clearance/min_m": "time", "clearance/required_m": "time", "clearance/closest_pair": "time",
        "joints/left_joint1/position": "time", "joints/right_joint7/velocity": "time",
        "joints/left_joint4/executed": "time", "independent/colliding": "time",
        "execute/colliding": "time", "sequential/colliding": "time"})
    # the 125 Hz trajectory posed at every sample; the baseline on its 210 frames
    assert c.rows["/world/planned/left_link7"] == m["retime.samples"] == c.rows["/clearance/min_m"]
    assert c.rows["/world/independent/right_link7"] == m["independent.frames"] == 210
    assert c.rows["/world/executed/left_link7"] > 0.9 * m["retime.samples"]


def _arms_drawn(png: bytes) -> bool:
    """The 3-D view (the left of the viewer) shows the arms in motion: their closest pair's label,
    green while clear, is drawn between them (none while only the static scene has arrived)."""
    import io

    import matplotlib.image as mpimg

    rgb = (mpimg.imread(io.BytesIO(png), format="png")[..., :3] * 255).astype(int)
    h, w, _ = rgb.shape
    view = rgb[int(0.1 * h):int(0.95 * h), int(0.17 * w):int(0.52 * w)]
    green = (view[..., 1] > 150) & (view[..., 0] < 130) & (view[..., 2] < 170)
    return int(green.sum()) >= 100


@pytest.mark.skipif(chromium() is None and not os.environ.get("CI"),
                    reason="no chromium (Debian: apt-get install chromium; .ci/run installs it)")
def test_view_web_draws_the_crossing_run(crossing_run, tmp_path):
    """``choreograph view --web``'s viewer, loaded by headless Chromium, draws the run: the arms in
    its 3-D view, seen from the scene's overview camera, on the motion's clock. Never skipped in CI."""
    assert chromium() is not None, "no chromium: .ci/run installs Debian's (apt-get install chromium)"
    proc = serve_web(find_recordings(crossing_run), free_port(), free_port(), out=open(tmp_path / "url", "w"))
    try:
        url = (tmp_path / "url").read_text().strip()
        colors = screenshot(url, tmp_path / "view.png", ready=_arms_drawn, timeout_s=180.0)
    finally:
        stop(proc)
    assert colors >= 1500 and _arms_drawn((tmp_path / "view.png").read_bytes())


def test_a_failed_crossing_run_keeps_its_recording(compose, tmp_path):
    run = tmp_path / "failed"
    record = run_config(compose(["pipeline=crossing", "pipeline.frames=5",
                                 "pipeline.params.goal_poses.left=[0.0,0.0,0.0,1,0,0,0]"], run_dir=run), run)
    assert not record.ok and record.failed_stage == "plan"
    c = read_recording(run / "recording.rrd")
    assert c.under("world/scene") and "/runner" in c.entity_paths   # the scene, and why it failed


def test_sigint_during_execution_cancels_and_writes_status(tmp_path):
    run = tmp_path / "sigint"
    # on the wall clock at a tenth of real time the motion lasts ~12 s: a busy machine still signals inside it
    cmd = [sys.executable, "-m", "stages", "pipeline=plan", "hardware.clock=wall", "hardware.speed=0.1",
           "goal.joints={left:[1.2,0.1,0,-2.3,0,2.4,0.7854]}", "pipeline.stages.execute.video=false",
           f"hydra.run.dir={run}"]
    # the child gets Ctrl-C's default disposition: a test runner started in the background ("pytest &"
    # in a script) ignores SIGINT, its children inherit that, and Python then never raises KeyboardInterrupt
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    log = run / "run.log"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if log.exists() and "[execute] running" in log.read_text():
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail(f"the run never reached its execute stage: {proc.communicate()[1][-2000:]}")
    time.sleep(0.8)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    status = json.loads((run / "status.json").read_text())
    assert status["status"] == "failed" and status["failed_stage"] == "execute"
    assert status["error"].startswith("KeyboardInterrupt")
    assert "Traceback" not in err


def test_the_motion_bag_reads_back_as_the_retimed_trajectory_and_the_executed_states(crossing_run):
    """``execute/motion_bag`` (rosbag2, MCAP) read with rosbags' own reader, field by field against
    ``retime/trajectory.json`` and ``execute/states.npz``."""
    from rosbags.highlevel import AnyReader

    run = crossing_run
    traj = json.loads((run / "retime" / "trajectory.json").read_text())
    states = np.load(run / "execute" / "states.npz")
    bag = run / "execute" / "motion_bag"
    assert (bag / "metadata.yaml").exists() and list(bag.glob("*.mcap"))
    column = {j: i for i, j in enumerate(traj["joint_names"])}
    with AnyReader([bag]) as reader:
        topics = {c.topic: c for c in reader.connections}
        assert {"/left/joint_trajectory", "/right/joint_trajectory", "/joint_states", "/tf"} <= set(topics)
        for arm in ("left", "right"):
            (_, t_ns, raw), = list(reader.messages(connections=[topics[f"/{arm}/joint_trajectory"]]))
            msg = reader.deserialize(raw, topics[f"/{arm}/joint_trajectory"].msgtype)
            start = float(states["start_stamp"])
            assert msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 == pytest.approx(start, abs=1e-9)
            assert t_ns == round(start * 1e9)
            cols = [column[j] for j in msg.joint_names]
            assert all(j.startswith(arm) for j in msg.joint_names) and len(msg.points) == len(traj["points"])
            for point, ref in zip(msg.points, traj["points"], strict=True):
                tfs = point.time_from_start.sec + point.time_from_start.nanosec * 1e-9
                assert tfs == pytest.approx(ref["time_from_start"], abs=1e-9)
                for field in ("positions", "velocities", "accelerations"):
                    np.testing.assert_allclose(getattr(point, field), np.asarray(ref[field])[cols], atol=0)
        executed = [reader.deserialize(raw, "sensor_msgs/msg/JointState")
                    for _, _, raw in reader.messages(connections=[topics["/joint_states"]])]
        assert len(executed) == len(states["times"])
        names = list(states["joint_names"])
        for msg, t, q in zip(executed, states["times"], states["positions"], strict=True):
            assert list(msg.name) == names and msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 == \
                pytest.approx(t, abs=1e-9)
            np.testing.assert_array_equal(msg.position, q)
        tf = [reader.deserialize(raw, "tf2_msgs/msg/TFMessage")
              for _, _, raw in reader.messages(connections=[topics["/tf"]])]
        assert len(tf) == len(executed) and {t.child_frame_id for t in tf[0].transforms} == {
            "left_grip_site", "right_grip_site"}
