"""The ROS 2 adapter's message shape and goal logic, tested without ROS."""

import importlib.util
import threading
from concurrent.futures import Future
from types import SimpleNamespace

import numpy as np
import pytest

from core.errors import ExecutionError
from hardware.arms.protocol import ArmTrajectory, CancelEvent, Outcome
from hardware.arms.ros2 import (
    STATUS_ABORTED,
    STATUS_CANCELED,
    STATUS_SUCCEEDED,
    JointStateCache,
    Ros2ArmDriver,
    RosUnavailableError,
    follow_joint_trajectory_goal,
    goal_message,
    joint_trajectory,
    outcome_from_result,
    reorder_joint_state,
    seconds_to_duration,
    stamp_to_time,
    to_seconds,
)

JOINTS = ("left_joint1", "left_joint2", "left_joint3")


def arm_trajectory(n=4, rate=125.0):
    times = np.arange(n) / rate
    pos = np.arange(n * 3, dtype=float).reshape(n, 3) / 10
    vel = pos + 100
    acc = pos + 200
    return ArmTrajectory(JOINTS, times, pos, vel, acc)


@pytest.mark.parametrize("stamp, sec, nanosec", [
    (0.0, 0, 0),
    (1.5, 1, 500_000_000),
    (1700000000.25, 1700000000, 250_000_000),
    (12.000000001, 12, 1),
    (12.9999999999, 13, 0),            # rounds up to the next second: carried, never 1e9 ns
    (0.008, 0, 8_000_000),
])
def test_stamp_splits_into_sec_and_nanosec(stamp, sec, nanosec):
    t = stamp_to_time(stamp)
    assert t == {"sec": sec, "nanosec": nanosec}
    assert isinstance(t["sec"], int) and isinstance(t["nanosec"], int)
    assert 0 <= t["nanosec"] < 1_000_000_000
    assert to_seconds(t) == pytest.approx(stamp, abs=1e-6 if stamp > 1e6 else 1e-9)


@pytest.mark.parametrize("bad", [-0.001, float("nan"), float("inf"), 2.0**31])
def test_bad_stamps_are_refused(bad):
    with pytest.raises(ValueError):
        stamp_to_time(bad)


def test_trajectory_message_shape_header_is_the_shared_start_stamp():
    tr = arm_trajectory()
    msg = joint_trajectory(tr, start_stamp=100.125)
    assert set(msg) == {"header", "joint_names", "points"}
    assert msg["header"] == {"stamp": {"sec": 100, "nanosec": 125_000_000}, "frame_id": ""}
    assert msg["joint_names"] == list(JOINTS)
    assert len(msg["points"]) == 4
    for k, p in enumerate(msg["points"]):
        assert set(p) == {"positions", "velocities", "accelerations", "effort", "time_from_start"}
        assert p["positions"] == tr.positions[k].tolist()       # joint order kept, point order kept
        assert p["velocities"] == tr.velocities[k].tolist()
        assert p["accelerations"] == tr.accelerations[k].tolist()
        assert p["time_from_start"] == seconds_to_duration(tr.times[k])
    assert [p["time_from_start"] for p in msg["points"]] == [
        {"sec": 0, "nanosec": 0}, {"sec": 0, "nanosec": 8_000_000},
        {"sec": 0, "nanosec": 16_000_000}, {"sec": 0, "nanosec": 24_000_000}]


def test_time_from_start_is_a_duration_past_one_second():
    tr = arm_trajectory(n=200)
    last = joint_trajectory(tr, 5.0)["points"][-1]["time_from_start"]
    assert last == {"sec": 1, "nanosec": 592_000_000}   # 199 / 125 s


def test_goal_carries_tolerances_per_joint():
    goal = follow_joint_trajectory_goal(arm_trajectory(), 3.0, goal_time_tolerance_s=0.25,
                                        goal_tolerance_rad=0.01)
    assert goal["trajectory"]["header"]["stamp"] == {"sec": 3, "nanosec": 0}
    assert goal["goal_time_tolerance"] == {"sec": 0, "nanosec": 250_000_000}
    assert [t["name"] for t in goal["goal_tolerance"]] == list(JOINTS)
    assert all(t["position"] == 0.01 for t in goal["goal_tolerance"])
    assert goal["path_tolerance"] == []


def test_malformed_trajectories_are_refused():
    tr = arm_trajectory()
    with pytest.raises(ValueError, match="strictly increasing"):
        joint_trajectory(ArmTrajectory(JOINTS, tr.times[::-1], tr.positions, tr.velocities), 0.0)
    with pytest.raises(ValueError, match="positions"):
        joint_trajectory(ArmTrajectory(JOINTS, tr.times, tr.positions[:, :2], tr.velocities), 0.0)


@pytest.mark.parametrize("status, code, outcome", [
    (STATUS_SUCCEEDED, 0, Outcome.SUCCEEDED),
    (STATUS_CANCELED, 0, Outcome.CANCELLED),
    (STATUS_ABORTED, -3, Outcome.LATE),          # OLD_HEADER_TIMESTAMP: the start stamp had passed
    (STATUS_ABORTED, -2, Outcome.REJECTED),
    (STATUS_ABORTED, -4, Outcome.FAILED),        # PATH_TOLERANCE_VIOLATED
    (STATUS_SUCCEEDED, -5, Outcome.FAILED),
])
def test_results_map_to_outcomes(status, code, outcome):
    got, reason = outcome_from_result(status, code, "detail")
    assert got == outcome
    if outcome in (Outcome.REJECTED, Outcome.FAILED, Outcome.LATE):
        assert "detail" in reason and "_" in reason   # names the error code


def test_joint_state_is_reordered_and_missing_joints_are_named():
    q, qd = reorder_joint_state(["b", "x", "a"], [2.0, 9.0, 1.0], [0.2, 0.9, 0.1], ["a", "b"])
    assert q.tolist() == [1.0, 2.0] and qd.tolist() == [0.1, 0.2]
    with pytest.raises(ExecutionError, match=r"\['c'\]"):
        reorder_joint_state(["a"], [1.0], [], ["a", "c"])


def test_missing_ros_says_what_to_install():
    if importlib.util.find_spec("rclpy") is not None:
        pytest.skip("ROS 2 is installed here")
    with pytest.raises(RosUnavailableError, match="rclpy.*control_msgs.*apt install"):
        goal_message(follow_joint_trajectory_goal(arm_trajectory(), 1.0))


# --------------------------------------------------------------------------- fake action server
class FakeHandle:
    def __init__(self, accepted, finish):
        self.accepted = accepted
        self.result_future = Future()
        self.cancel_calls = 0
        self._finish = finish

    def get_result_async(self):
        if self._finish is not None:
            threading.Timer(0.05, self._finish, args=(self,)).start()
        return self.result_future

    def cancel_goal_async(self):
        self.cancel_calls += 1
        self.result_future.set_result(SimpleNamespace(status=STATUS_CANCELED,
                                                      result=SimpleNamespace(error_code=0, error_string="")))


class FakeClient:
    def __init__(self, accepted=True, finish=None):
        self.goals = []
        self.handle = FakeHandle(accepted, finish)

    def wait_for_server(self, timeout_sec):
        return True

    def send_goal_async(self, goal, feedback_callback=None):
        self.goals.append(goal)
        f = Future()
        f.set_result(self.handle)
        return f


def succeed(handle):
    handle.result_future.set_result(SimpleNamespace(status=STATUS_SUCCEEDED,
                                                    result=SimpleNamespace(error_code=0, error_string="")))


def fake_driver(client, now=10.0):
    states = JointStateCache()
    states.update(list(JOINTS), [0.0, 0.1, 0.2], [], 10.0)
    return Ros2ArmDriver("left", JOINTS, client, lambda: now, states, build_goal=lambda g: g)


def test_driver_sends_the_stamped_goal_and_reports_success():
    client = FakeClient(finish=succeed)
    driver = fake_driver(client)
    assert driver.is_real
    sent = []
    result = driver.execute(arm_trajectory(), 10.5, CancelEvent(), lambda: sent.append(1))
    assert result.outcome == Outcome.SUCCEEDED and sent == [1]
    goal = client.goals[0]
    assert goal["trajectory"]["header"]["stamp"] == {"sec": 10, "nanosec": 500_000_000}
    assert driver.read_state().positions.tolist() == [0.0, 0.1, 0.2]


def test_driver_cancel_calls_cancel_goal_async():
    client = FakeClient(finish=None)          # never finishes on its own
    driver = fake_driver(client)
    cancel = CancelEvent()
    threading.Timer(0.05, cancel.set, args=("other arm failed",)).start()
    result = driver.execute(arm_trajectory(), 10.5, cancel)
    assert result.outcome == Outcome.CANCELLED and result.reason == "other arm failed"
    assert client.handle.cancel_calls == 1 and np.isfinite(result.stopped_at)


def test_driver_rejected_goal():
    result = fake_driver(FakeClient(accepted=False)).execute(arm_trajectory(), 10.5, CancelEvent())
    assert result.outcome == Outcome.REJECTED
