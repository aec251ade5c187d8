import subprocess
import sys
import threading

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ExecutionError
from hardware.arms.faults import FaultyDriver
from hardware.arms.mujoco_driver import MujocoArmDriver
from hardware.arms.mujoco_sim import PhysicsSim
from hardware.arms.protocol import ArmTrajectory, CancelEvent, DriverWrapper, Outcome
from stages.arms.execution.executor import SynchronizedExecutor, check_shared_timestamps, split_trajectory
from stages.arms.planning.path import JointPath
from stages.arms.retiming.retime import retime_with_report
from stages.arms.world import build_world
from tests.conftest import CONF


@pytest.fixture(scope="module")
def world():
    return build_world(OmegaConf.to_container(OmegaConf.load(CONF / "robot/twin_panda.yaml")),
                       OmegaConf.to_container(OmegaConf.load(CONF / "scene/table.yaml")))


def move(world, delta=0.6):
    """Both arms swing joint 1 outward and back toward the torso (no contact possible)."""
    names = world.robot.joint_names()
    home = world.robot.home()
    goal = home.copy()
    goal[0] += delta   # left joint1: outward
    goal[7] -= delta   # right joint1: outward
    traj = retime_with_report(JointPath(tuple(names), np.stack([home, goal])),
                              world.robot.velocity_limits() * 0.5, world.robot.acceleration_limits() * 0.5
                              ).trajectory
    return split_trajectory(traj, {a.name: a.joints for a in world.robot.arms})


@pytest.fixture(params=["sim", "wall"])
def clock(request):
    """The synchronization tests run on virtual time and on the wall clock alike."""
    return request.param


def rig(world, speed=2.0, faults=None, clock="wall"):
    sim = PhysicsSim(world.model, world.home_qpos(), speed=speed, clock=clock)
    drivers = {}
    for arm in world.robot.arms:
        d = MujocoArmDriver(sim, arm.name, arm.joints)
        f = (faults or {}).get(arm.name)
        drivers[arm.name] = FaultyDriver(d, seed=1, **f) if f else d
    return sim, drivers


def test_mismatched_timestamps_are_refused(world):
    per_arm = move(world)
    bad = dict(per_arm)
    right = per_arm["right"]
    bad["right"] = ArmTrajectory(right.joint_names, right.times * 1.01, right.positions, right.velocities)
    with pytest.raises(ExecutionError, match="do not share timestamps"):
        check_shared_timestamps(bad)
    sim, drivers = rig(world)
    with pytest.raises(ExecutionError, match="do not share timestamps"):
        SynchronizedExecutor(drivers).run(bad)


def test_both_arms_start_on_the_shared_stamp_despite_slow_sends(world, clock):
    faults = {"left": {"send_latency_s": 0.03, "send_jitter_s": 0.02},
              "right": {"send_latency_s": 0.0, "send_jitter_s": 0.05}}
    sim, drivers = rig(world, faults=faults, clock=clock)
    with sim:
        report = SynchronizedExecutor(drivers, start_buffer_s=0.2, clock_speed=sim.speed).run(move(world))
    assert report.ok, report.failure()
    assert report.start_skew_s < 0.002
    for r in report.results.values():
        assert r.started_s == pytest.approx(report.start_stamp, abs=0.0021)


def test_a_failing_arm_cancels_the_other_mid_motion(world, clock):
    sim, drivers = rig(world, faults={"left": {"fail_at_s": 0.15}}, clock=clock)
    per_arm = move(world)
    with sim:
        report = SynchronizedExecutor(drivers, start_buffer_s=0.05, clock_speed=sim.speed).run(per_arm)
        stopped = sim.read_state("right").positions
        sim.timing.wait_for(until=sim.clock() + 0.3)
        later = sim.read_state("right")
    assert report.results["left"].outcome == Outcome.FAILED
    assert report.results["right"].outcome == Outcome.CANCELLED
    assert report.cancel_latency_s is not None and report.cancel_latency_s < 0.008
    if clock == "sim":   # on virtual time the cancel reaches the other arm on the fault's own step
        assert report.cancel_latency_s == 0.0
        assert report.results["right"].ended_s == report.results["left"].ended_s
    # mid-motion: the right arm stopped well short of its goal and holds still there
    goal = per_arm["right"].positions[-1]
    assert abs(stopped[0] - goal[0]) > 0.1
    assert np.abs(later.positions - stopped).max() < 0.02
    assert np.abs(later.velocities).max() < 0.05


@pytest.mark.parametrize("fault, outcome", [({"reject": True}, Outcome.REJECTED),
                                            ({"hang": True}, Outcome.TIMEOUT)])
def test_rejected_or_hung_goal_ends_in_a_clean_cancel(world, fault, outcome, clock):
    sim, drivers = rig(world, faults={"right": fault}, clock=clock)
    with sim:
        report = SynchronizedExecutor(drivers, start_buffer_s=0.05, ack_timeout_s=0.3,
                                      clock_speed=sim.speed).run(move(world))
    assert report.results["right"].outcome == outcome
    assert report.results["left"].outcome == Outcome.CANCELLED
    assert not report.ok and report.cancel_reason


def test_cancel_event_reaches_late_subscribers():
    ev = CancelEvent()
    ev.set("stop")
    hit = []
    ev.subscribe(lambda: hit.append(1))
    assert hit == [1] and ev.reason == "stop"


def test_concurrent_access_never_crashes_or_corrupts(world):
    """Stress: many threads read state, submit and cancel goals while the physics steps."""
    sim, drivers = rig(world, speed=4.0)
    per_arm = move(world, 0.3)
    errors = []

    def hammer(k):
        try:
            rng = np.random.default_rng(k)
            for _ in range(40):
                arm = "left" if rng.random() < 0.5 else "right"
                st = sim.read_state(arm)
                assert np.all(np.isfinite(st.positions))
                goal = sim.submit(arm, per_arm[arm], sim.clock() + 0.01)
                if rng.random() < 0.5:
                    sim.cancel(goal)
                sim.snapshot()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    with sim:
        threads = [threading.Thread(target=hammer, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    assert sim.error is None
    times, qpos = sim.recorded()
    assert np.all(np.diff(times) > 0) and np.all(np.isfinite(qpos))


def test_a_goal_started_a_hair_before_its_stamp_is_at_its_first_sample(world):
    # the step that starts a goal may sit up to 1e-12 s before its stamp: a negative time into the
    # trajectory once interpolated between its last and first samples (a one-sample trajectory: NaN)
    sim, _ = rig(world)
    arm = world.robot.arms[0]
    q = world.home_qpos()[list(arm.qpos_indices)]
    for n in (1, 3):
        still = ArmTrajectory(arm.joints, np.arange(n) * 0.008, np.tile(q, (n, 1)), np.zeros((n, len(q))),
                              np.zeros((n, len(q))))
        sim.submit(arm.name, still, sim.clock() + 5e-13)
        sim.step()
        assert np.all(np.isfinite(sim.data.ctrl)), n
        assert np.allclose(sim.data.ctrl[list(arm.joint_actuator_ids)], q, atol=1e-6), n


def test_a_stamp_that_passes_before_every_goal_is_sent_is_sent_again_with_more_lead(world, clock):
    # the left goal takes 500 ms to send; the first leads (100, 200, 400 ms) pass before it is sent. The
    # lead is checked at 3/4 of it, so a main thread that wakes late (a loaded machine: beside two busy
    # processes it once woke past a 20 ms stamp, and the right arm had started) has 25 ms of slack
    sim, drivers = rig(world, faults={"left": {"send_latency_s": 0.5}}, clock=clock)
    with sim:
        report = SynchronizedExecutor(drivers, start_buffer_s=0.1, clock_speed=sim.speed).run(move(world))
    assert report.ok, report.failure()
    assert report.stamp_retries >= 1
    speed = sim.timing.speed   # virtual time: the sends' 0.5 s are simulated seconds (1 s per second)
    assert report.leads_s == tuple(0.1 * speed * 2 ** k for k in range(len(report.leads_s)))
    if clock == "sim":   # 0.1, 0.2 and 0.4 s pass before the 0.5 s send; 0.8 s does not
        assert report.stamp_retries == 3
    assert report.start_buffer_s == report.leads_s[-1]
    assert report.start_skew_s == 0.0   # one physics step starts both


def test_a_stamp_that_keeps_passing_fails_typed_naming_the_arm_and_the_leads(world, clock):
    # leads of 50 ms and up: on the wall clock a main thread that wakes within the lead's last quarter
    # (12.5 ms) still cancels before the stamp, beside two busy processes too
    sim, drivers = rig(world, faults={"left": {"send_latency_s": 1.0}}, clock=clock)
    with sim:
        report = SynchronizedExecutor(drivers, start_buffer_s=0.05, clock_speed=sim.speed,
                                      max_start_lead_s=0.4).run(move(world))
    assert not report.ok
    assert report.results["left"].outcome == Outcome.LATE
    assert report.results["right"].outcome == Outcome.CANCELLED
    assert not np.isfinite(report.results["right"].started_s)   # nothing moved
    assert [round(x / sim.timing.speed, 3) for x in report.leads_s] == [0.05, 0.1, 0.2, 0.4]
    assert "'left'" in report.failure() and "0.05, 0.1, 0.2, 0.4 s" in report.failure()


class AcknowledgesThenArrivesLate(DriverWrapper):
    """Acknowledges at once, but its goal reaches the controller after the stamp (as a ROS 2
    controller that aborts with OLD_HEADER_TIMESTAMP once it gets to the goal)."""

    def execute(self, trajectory, start_stamp, cancel, on_sent=None):
        on_sent()
        self.timing.wait_for(until=start_stamp + 0.1)
        return self.inner.execute(trajectory, start_stamp, cancel)


def test_a_passed_stamp_with_an_arm_already_moving_cancels_all_and_is_not_sent_again(world, clock):
    sim, drivers = rig(world, clock=clock)
    drivers["left"] = AcknowledgesThenArrivesLate(drivers["left"])
    with sim:
        report = SynchronizedExecutor(drivers, start_buffer_s=0.05, clock_speed=sim.speed).run(move(world))
    assert report.stamp_retries == 0
    assert report.results["left"].outcome == Outcome.LATE
    right = report.results["right"]
    assert right.outcome == Outcome.CANCELLED and np.isfinite(right.started_s)
    assert "late" in report.failure()


def _busy(stop):
    x = 0
    while not stop.is_set():
        x = (x * 31 + 7) % 1_000_003


def test_executions_start_together_while_both_cores_are_busy(world):
    """Two GIL-hungry threads here and a busy process beside: every execution completes, both arms start
    on one physics step, and the stamps that passed before the goals were all sent were sent again."""
    stop = threading.Event()
    hogs = [threading.Thread(target=_busy, args=(stop,), daemon=True) for _ in range(2)]
    other = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    per_arm = move(world, 0.3)
    reports = []
    try:
        for t in hogs:
            t.start()
        for _ in range(4):
            # the left goal's send (110-130 ms) outlasts the first lead (80 ms) but not the next (160 ms).
            # This thread, starved by the hogs, must still look within the last quarter of the lead
            # (20 ms) to cancel before the stamp; with a 10 ms first lead (2.5 ms to look) it once woke
            # after the stamp, the other arm had started: the cancel-all path, a failed execution.
            sim, drivers = rig(world, speed=4.0, faults={"left": {"send_latency_s": 0.12,
                                                                  "send_jitter_s": 0.01}})
            with sim:
                reports.append(SynchronizedExecutor(drivers, start_buffer_s=0.08,
                                                    clock_speed=sim.speed).run(per_arm))
    finally:
        stop.set()
        other.kill()
        other.wait()
    for r in reports:
        assert r.ok, r.failure()
        assert r.start_skew_s == 0.0
    print("stamp retries per execution under load:", [r.stamp_retries for r in reports],
          "leads tried (wall ms):", [[round(x / 4.0 * 1e3) for x in r.leads_s] for r in reports])
    assert sum(r.stamp_retries for r in reports) >= 1
    for r in reports:
        assert r.leads_s == tuple(r.leads_s[0] * 2 ** k for k in range(r.stamp_retries + 1))


def test_a_passed_stamp_while_the_other_arm_only_holds_still_is_sent_again(world, clock):
    # a segment of the right arm's: the left arm's share holds still; it starting is no motion to undo
    sim, drivers = rig(world, clock=clock)
    drivers["right"] = AcknowledgesThenArrivesLate(drivers["right"])
    per_arm = move(world)
    left = per_arm["left"]
    held = np.tile(left.positions[0], (len(left.times), 1))
    still = np.zeros_like(held)
    per_arm["left"] = ArmTrajectory(left.joint_names, left.times, held, still, still)
    with sim:
        report = SynchronizedExecutor(drivers, start_buffer_s=0.05, clock_speed=sim.speed,
                                      max_start_lead_s=0.2).run(per_arm)
    assert report.stamp_retries >= 1   # sent again, though the left arm had started holding
    assert report.results["right"].outcome == Outcome.LATE and not report.ok
