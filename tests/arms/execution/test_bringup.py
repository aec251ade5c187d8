"""The bring-up protocol: passes on the clean simulator, stops at the right step for each fault,
and refuses to move a real robot without the operator's confirmation."""

import json

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from hardware.arms.mujoco_driver import MujocoArmDriver
from hardware.arms.mujoco_sim import PhysicsSim
from hardware.arms.protocol import JointState
from stages.__main__ import run_config
from stages.adapters.arms.bringup import BringUp
from stages.arms.execution.bringup import ArmLimitsSpec, BringUpProtocol, MarkedReal
from stages.arms.execution.bringup_settings import STEP_KEYS, BringUpSettings
from stages.arms.world import build_world
from tests.conftest import CONF
from tests.recordings import check_motion_bag

FAST = ["pipeline=bringup", "hardware.speed=4.0"]


def run_bringup(compose, tmp_path, *overrides):
    run = tmp_path / "bringup"
    record = run_config(compose([*FAST, *overrides], run_dir=run), run)
    metrics = json.loads((run / "metrics.json").read_text())
    status = json.loads((run / "status.json").read_text())
    return record, metrics, status, run


def statuses(metrics):
    return [metrics[f"bringup.{k}_status"] for k in STEP_KEYS]


def test_bringup_passes_on_the_clean_simulator(compose, tmp_path):
    record, m, status, run = run_bringup(compose, tmp_path)
    assert record.ok, record.error
    assert status["status"] == "ok"
    assert statuses(m) == ["pass"] * 6 and m["bringup.passed"] is True
    assert all(m[f"bringup.{k}_pass"] is True for k in STEP_KEYS)
    # measured values, with units in their names
    assert m["bringup.synchronized_start_skew_s"] < 0.002
    assert m["bringup.cancel_latency_s"] < 0.008
    for arm in ("left", "right"):
        assert 0 <= m[f"bringup.each_arm_{arm}_tracking_error_max_rad"] < 0.01
        assert m[f"bringup.cancel_{arm}_hold_drift_rad"] < 0.005
        assert m[f"bringup.full_speed_{arm}_final_error_rad"] < 0.005
    assert m["bringup.synchronized_colliding_states"] == 0
    report = (run / "bringup" / "report.md").read_text()
    assert "| step | criterion | measured | result |" in report
    assert "**PASSED**" in report and "not run" not in report
    states = np.load(run / "bringup" / "states.npz")
    moved = np.ptp(states["positions"], axis=0)
    assert moved.max() > 0.15   # the arms really moved (0.2 rad test motions)
    cfg = compose([*FAST], run_dir=run)
    check_motion_bag(run / "bringup" / "motion_bag", cfg, min_moves=4)   # each arm's 4 test motions


@pytest.mark.parametrize("overrides, step, arm, why", [
    (["hardware.faults.right.reject=true"], "each_arm", "right", "rejected"),
    (["hardware.faults.left.fail_at_s=0.1"], "each_arm", "left", "injected fault"),
    (["hardware.faults.right.hang=true", "hardware.ack_timeout_s=0.3"], "each_arm", "right", "timeout"),
    (["hardware.faults.left.send_latency_s=0.15"], "each_arm", "left", "goal send"),
    (["pipeline.stages.bringup.calibration={left:[0,0,0.03,0,0,0,0]}"], "joint_zeros", "left", "calibration"),
])
def test_a_fault_stops_the_protocol_at_the_right_step(compose, tmp_path, overrides, step, arm, why):
    record, m, status, run = run_bringup(compose, tmp_path, *overrides)
    assert not record.ok
    assert status["status"] == "failed" and status["failed_stage"] == "bringup"
    assert status["error"].startswith("ExecutionError: bring-up failed at step")
    assert why in status["error"] and arm in status["error"]
    k = STEP_KEYS.index(step)
    assert statuses(m) == ["pass"] * k + ["fail"] + ["not run"] * (len(STEP_KEYS) - k - 1)
    assert m[f"bringup.{step}_pass"] is False and m["bringup.failed_step"] == step
    report = (run / "bringup" / "report.md").read_text()   # saved before the stage failed
    assert "**FAILED**" in report and report.count("| not run |") == len(STEP_KEYS) - k - 1


def test_injected_latency_within_the_limit_still_passes_synchronized(compose, tmp_path):
    record, m, _, _ = run_bringup(compose, tmp_path, "hardware.faults.left.send_latency_s=0.03",
                                  "hardware.faults.right.send_jitter_s=0.05")
    assert record.ok, record.error
    assert m["bringup.synchronized_left_send_latency_s"] >= 0.03
    assert m["bringup.synchronized_start_skew_s"] < 0.002


def test_a_real_driver_refuses_to_move_without_confirmation(compose, tmp_path):
    record, m, status, run = run_bringup(compose, tmp_path, "pipeline.stages.bringup.treat_as_real=true")
    assert not record.ok
    assert "refusing to move" in status["error"] and "pipeline.stages.bringup.confirm=true" in status["error"]
    assert statuses(m)[:3] == ["pass", "pass", "fail"]   # the read-only steps ran
    assert m["bringup.goals_sent"] == 0
    positions = np.load(run / "bringup" / "states.npz")["positions"]
    assert np.ptp(positions, axis=0).max() < 1e-3       # nothing moved


@pytest.fixture(scope="module")
def world():
    return build_world(OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml")),
                       OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


def sim_protocol(world, wrap=None, **settings):
    sim = PhysicsSim(world.model, world.home_qpos(), speed=4.0, clock="wall")   # bring-up is wall time
    drivers = {a.name: MujocoArmDriver(sim, a.name, a.joints) for a in world.robot.arms}
    if wrap is not None:
        drivers = {a: wrap(d) for a, d in drivers.items()}
    arms = {a.name: ArmLimitsSpec.from_arm_spec(a) for a in world.robot.arms}
    cfg = BringUpSettings.from_config({"clock_speed": 4.0, "amplitude_rad": 0.1, **settings})
    return sim, BringUpProtocol(drivers, arms, cfg)


def test_per_step_confirmation_on_a_real_driver(world):
    sim, protocol = sim_protocol(world, MarkedReal, each_arm={"confirm": True})
    with sim:
        report = protocol.run()
    assert [s.status for s in report.steps] == ["pass", "pass", "pass", "fail", "not run", "not run"]
    assert "refusing to move" in report.step("synchronized").message
    assert report.goals_sent == 2          # the two confirmed single-arm goals, nothing after


class NanState:
    """A driver whose encoders report garbage for one joint."""

    is_real = False

    def __init__(self, inner):
        self.inner, self.name, self.joint_names = inner, inner.name, inner.joint_names

    def clock(self):
        return self.inner.clock()

    def read_state(self):
        st = self.inner.read_state()
        q = st.positions.copy()
        q[2] = np.nan
        return JointState(st.stamp, q, st.velocities)

    def execute(self, *a, **kw):  # pragma: no cover - must never be reached
        raise AssertionError("bring-up moved an arm whose state read failed")


def test_a_bad_state_read_stops_at_step_one(world):
    sim, protocol = sim_protocol(world, NanState)
    with sim:
        report = protocol.run()
    assert [s.status for s in report.steps] == ["fail"] + ["not run"] * 5
    assert "finite" in report.step("connection").message


def test_bad_settings_fail_at_construction_naming_the_key():
    with pytest.raises(ConfigError, match="speed_frac.*allowed.*speed_fraction"):
        BringUp(speed_frac=0.1)
    with pytest.raises(ConfigError, match=r"cancel\.max_latency.*allowed.*max_latency_s"):
        BringUp(cancel={"max_latency": 0.01})
    with pytest.raises(ConfigError, match=r"pipeline\.stages\.bringup\.speed_fraction=1\.5: allowed: in"):
        BringUp(speed_fraction=1.5)
