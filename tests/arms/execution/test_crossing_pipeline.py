"""The crossing benchmark end to end, and Ctrl-C during execution."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from stages.__main__ import run_config
from tests.conftest import REPO


def test_crossing_group_never_touches_where_independent_and_sequential_do(compose, tmp_path):
    run = tmp_path / "crossing"
    record = run_config(compose(["pipeline=crossing", "hardware.speed=3.0"], run_dir=run), run)
    assert record.ok, record.error
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


def test_sigint_during_execution_cancels_and_writes_status(tmp_path):
    run = tmp_path / "sigint"
    # at a tenth of real time the motion lasts ~12 s: a busy machine still signals inside it
    cmd = [sys.executable, "-m", "stages", "pipeline=plan", "hardware.speed=0.1",
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
