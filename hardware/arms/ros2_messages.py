"""The ROS 2 arm driver's messages: ``FollowJointTrajectory`` goals, stamps, results, joint states.

How the driver maps the protocol onto ROS 2
------------------------------------------
- **Start stamp**: the goal's ``trajectory.header.stamp`` *is* the shared start stamp (a
  ``builtin_interfaces/Time`` split from the float stamp into ``sec`` / ``nanosec``). A
  ros2_control ``joint_trajectory_controller`` starts a trajectory whose header stamp is in
  the future at that instant, so both arms start together however long each goal took to send.
- **Points**: one ``trajectory_msgs/JointTrajectoryPoint`` per 125 Hz sample, with
  ``time_from_start`` (a ``builtin_interfaces/Duration`` from the start stamp), ``positions``,
  ``velocities`` and ``accelerations``, joints in the arm's configured order.
- **Clock**: ``clock()`` is the node's ROS clock (``use_sim_time`` respected). The controller
  compares the header stamp with *its* clock: the machine running choreograph and the robot's
  controller must share time (same host, or chrony/PTP), as they must for any stamped goal.
- **Cancel**: setting the shared cancel event calls ``cancel_goal_async()`` on the goal handle
  at once (the controller then holds position); ``execute`` returns CANCELLED.
- **State**: the latest ``sensor_msgs/JointState`` on ``state_topic`` (default
  ``/joint_states``), reordered to the arm's joints.
- **Results**: goal refused or aborted as invalid → REJECTED; with an old header stamp → LATE (the
  executor sends it again on a later stamp when no arm has moved); aborted
  for tolerance violations → FAILED; canceled → CANCELLED; succeeded → SUCCEEDED; no result in
  time → TIMEOUT. ``started_s`` is estimated from the controller's feedback
  (feedback stamp − desired ``time_from_start``), else the start stamp.
- **Safety**: the driver reports ``is_real = True``, so ``pipeline=bringup`` refuses to move
  it unless every moving step is confirmed (``pipeline.stages.bringup.confirm=true``).

Every function here is pure (plain dicts shaped exactly like the ROS messages), so it is
unit-tested without ROS; only :func:`import_ros` and :func:`goal_message` import ROS, inside the
functions, and say what to install when it is missing. The driver is :mod:`hardware.arms.ros2`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.errors import ConfigError, ExecutionError
from hardware.arms.protocol import ArmTrajectory, Outcome

INSTALL_HINT = (
    "the ROS 2 driver (hardware.driver=ros2) needs the ROS 2 Python packages rclpy, control_msgs, "
    "trajectory_msgs, sensor_msgs and builtin_interfaces. They are not on PyPI: install ROS 2 "
    "(Humble or newer) and `sudo apt install ros-$ROS_DISTRO-rclpy ros-$ROS_DISTRO-control-msgs "
    "ros-$ROS_DISTRO-trajectory-msgs ros-$ROS_DISTRO-sensor-msgs`, then `source "
    "/opt/ros/$ROS_DISTRO/setup.bash` in the shell that runs choreograph"
)

# action_msgs/GoalStatus
STATUS_UNKNOWN, STATUS_ACCEPTED, STATUS_EXECUTING, STATUS_CANCELING = 0, 1, 2, 3
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6
# control_msgs/action/FollowJointTrajectory result error codes
ERROR_CODES = {0: "SUCCESSFUL", -1: "INVALID_GOAL", -2: "INVALID_JOINTS", -3: "OLD_HEADER_TIMESTAMP",
               -4: "PATH_TOLERANCE_VIOLATED", -5: "GOAL_TOLERANCE_VIOLATED"}
REFUSED_CODES = (-1, -2)   # the controller would not run the goal as sent
OLD_HEADER_TIMESTAMP = -3  # the start stamp had passed when the goal arrived: the arm did not move
INT32_MAX = 2**31 - 1


class RosUnavailableError(ConfigError):
    """ROS 2's Python packages are not importable here."""


def import_ros() -> dict[str, Any]:
    """The ROS 2 modules the driver needs, or a RosUnavailableError saying what to install."""
    try:
        import rclpy
        from builtin_interfaces.msg import Duration, Time
        from control_msgs.action import FollowJointTrajectory
        from control_msgs.msg import JointTolerance
        from rclpy.action import ActionClient
        from sensor_msgs.msg import JointState as JointStateMsg
        from trajectory_msgs.msg import JointTrajectoryPoint
    except ImportError as exc:
        raise RosUnavailableError(f"{INSTALL_HINT} (import failed: {exc})") from exc
    return {"rclpy": rclpy, "Time": Time, "Duration": Duration,
            "FollowJointTrajectory": FollowJointTrajectory, "JointTolerance": JointTolerance,
            "ActionClient": ActionClient, "JointState": JointStateMsg,
            "JointTrajectoryPoint": JointTrajectoryPoint}


# --------------------------------------------------------------------------- pure message shape
def _split_seconds(seconds: float, what: str) -> dict[str, int]:
    s = float(seconds)
    if not math.isfinite(s) or s < 0:
        raise ValueError(f"{what} must be a finite number of seconds >= 0, got {seconds!r}")
    sec = math.floor(s)
    nanosec = int(round((s - sec) * 1e9))   # s − floor(s) is exact in floating point
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    if sec > INT32_MAX:
        raise ValueError(f"{what} {seconds!r} s does not fit builtin_interfaces' int32 seconds")
    return {"sec": int(sec), "nanosec": int(nanosec)}


def stamp_to_time(stamp: float) -> dict[str, int]:
    """A float clock stamp (s) → ``builtin_interfaces/Time`` as ``{"sec", "nanosec"}``."""
    return _split_seconds(stamp, "a stamp")


def seconds_to_duration(seconds: float) -> dict[str, int]:
    """A non-negative span (s) → ``builtin_interfaces/Duration`` as ``{"sec", "nanosec"}``."""
    return _split_seconds(seconds, "a duration")


def to_seconds(msg: Mapping[str, int] | Any) -> float:
    """``builtin_interfaces/Time`` or ``Duration`` (dict or message) → float seconds."""
    if isinstance(msg, Mapping):
        return float(msg["sec"]) + float(msg["nanosec"]) * 1e-9
    return float(msg.sec) + float(msg.nanosec) * 1e-9


def joint_trajectory(trajectory: ArmTrajectory, start_stamp: float, frame_id: str = "") -> dict[str, Any]:
    """``trajectory_msgs/JointTrajectory`` as a dict; header stamp = the shared start stamp."""
    names = [str(j) for j in trajectory.joint_names]
    times = np.asarray(trajectory.times, float).reshape(-1)
    pos = np.asarray(trajectory.positions, float)
    vel = np.asarray(trajectory.velocities, float)
    acc = None if trajectory.accelerations is None else np.asarray(trajectory.accelerations, float)
    shape = (times.size, len(names))
    for what, arr in (("positions", pos), ("velocities", vel), ("accelerations", acc)):
        if arr is not None and arr.shape != shape:
            raise ValueError(f"trajectory {what} must be {shape} (samples × joints), got {arr.shape}")
    if times.size == 0 or np.any(np.diff(times) <= 0):
        raise ValueError("trajectory times must be non-empty and strictly increasing")
    points = []
    for k in range(times.size):
        points.append({"positions": pos[k].tolist(), "velocities": vel[k].tolist(),
                       "accelerations": [] if acc is None else acc[k].tolist(), "effort": [],
                       "time_from_start": seconds_to_duration(times[k])})
    return {"header": {"stamp": stamp_to_time(start_stamp), "frame_id": frame_id},
            "joint_names": names, "points": points}


def follow_joint_trajectory_goal(trajectory: ArmTrajectory, start_stamp: float,
                                 goal_time_tolerance_s: float = 0.5,
                                 goal_tolerance_rad: float | Sequence[float] | None = None
                                 ) -> dict[str, Any]:
    """``control_msgs/action/FollowJointTrajectory`` goal as a dict (path tolerances: the
    controller's defaults; goal tolerance per joint when given)."""
    tr = joint_trajectory(trajectory, start_stamp)
    goal_tol = []
    if goal_tolerance_rad is not None:
        tol = np.broadcast_to(np.asarray(goal_tolerance_rad, float), (len(tr["joint_names"]),))
        goal_tol = [{"name": j, "position": float(t), "velocity": 0.0, "acceleration": 0.0}
                    for j, t in zip(tr["joint_names"], tol, strict=True)]
    return {"trajectory": tr, "path_tolerance": [], "goal_tolerance": goal_tol,
            "goal_time_tolerance": seconds_to_duration(goal_time_tolerance_s)}


def outcome_from_result(status: int, error_code: int = 0, error_string: str = "") -> tuple[Outcome, str]:
    """A goal's final ``GoalStatus`` and the action result's error code → (Outcome, reason)."""
    code = ERROR_CODES.get(int(error_code), f"error code {int(error_code)}")
    detail = f"{code}" + (f": {error_string}" if error_string else "")
    if status == STATUS_SUCCEEDED and int(error_code) == 0:
        return Outcome.SUCCEEDED, ""
    if status == STATUS_CANCELED:
        return Outcome.CANCELLED, "goal canceled" + (f" ({detail})" if error_string else "")
    if int(error_code) == OLD_HEADER_TIMESTAMP:
        return Outcome.LATE, f"controller refused the goal: {detail}"
    if int(error_code) in REFUSED_CODES:
        return Outcome.REJECTED, f"controller refused the goal: {detail}"
    if status in (STATUS_SUCCEEDED, STATUS_ABORTED):
        return Outcome.FAILED, f"controller aborted the goal: {detail}"
    return Outcome.FAILED, f"unexpected goal status {status} ({detail})"


def start_from_feedback(feedback_stamp_s: float, desired_time_from_start_s: float) -> float:
    """When the controller started the trajectory, from one feedback message (clock seconds)."""
    return float(feedback_stamp_s) - float(desired_time_from_start_s)


def reorder_joint_state(msg_names: Sequence[str], positions: Sequence[float],
                        velocities: Sequence[float], joint_names: Sequence[str]
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities of ``joint_names`` (in that order) from a JointState message."""
    index = {str(n): i for i, n in enumerate(msg_names)}
    missing = [j for j in joint_names if j not in index]
    if missing:
        raise ExecutionError(f"joint state has no joint(s) {missing}; it has {list(msg_names)}")
    cols = [index[j] for j in joint_names]
    q = np.asarray(positions, float)[cols]
    qd = np.asarray(velocities, float)[cols] if len(velocities) else np.zeros(len(cols))
    return q, qd


def goal_message(goal: Mapping[str, Any]):
    """The goal dict of :func:`follow_joint_trajectory_goal` → a ``FollowJointTrajectory.Goal``."""
    ros = import_ros()
    msg = ros["FollowJointTrajectory"].Goal()
    tr = goal["trajectory"]
    msg.trajectory.header.stamp = ros["Time"](**tr["header"]["stamp"])
    msg.trajectory.header.frame_id = tr["header"]["frame_id"]
    msg.trajectory.joint_names = list(tr["joint_names"])
    msg.trajectory.points = [
        ros["JointTrajectoryPoint"](positions=p["positions"], velocities=p["velocities"],
                                    accelerations=p["accelerations"], effort=p["effort"],
                                    time_from_start=ros["Duration"](**p["time_from_start"]))
        for p in tr["points"]]
    msg.goal_tolerance = [ros["JointTolerance"](**t) for t in goal["goal_tolerance"]]
    msg.goal_time_tolerance = ros["Duration"](**goal["goal_time_tolerance"])
    return msg
