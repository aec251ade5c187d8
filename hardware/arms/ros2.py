"""A real-robot arm driver: a ROS 2 ``control_msgs/action/FollowJointTrajectory`` client.

It keeps the same :class:`hardware.arms.protocol.ArmDriver` protocol as the MuJoCo driver, so
the synchronized executor, the bring-up protocol and every execution stage run on it unchanged.

How it maps the protocol onto ROS 2
-----------------------------------
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

Using it on a real robot
------------------------
1. Install ROS 2 (Humble or newer) with its Python packages and source it; they come from the
   ROS apt repositories, not pip::

       sudo apt install ros-$ROS_DISTRO-rclpy ros-$ROS_DISTRO-control-msgs \\
           ros-$ROS_DISTRO-trajectory-msgs ros-$ROS_DISTRO-sensor-msgs
       source /opt/ros/$ROS_DISTRO/setup.bash

2. Run one ``joint_trajectory_controller`` per arm (e.g. ``left_arm_controller`` and
   ``right_arm_controller``) whose joints are the robot config's ``arms.<arm>.joints``.
3. Select the driver and name the action servers (defaults shown)::

       choreograph pipeline=bringup hardware.driver=ros2 \\
           hardware.ros2.action_names.left=/left_arm_controller/follow_joint_trajectory \\
           hardware.ros2.action_names.right=/right_arm_controller/follow_joint_trajectory

   and bring the robot up step by step, confirming each moving step once the workspace is
   clear (``pipeline.stages.bringup.each_arm.confirm=true`` …, or ``confirm=true`` for all).

In code: ``with Ros2Connection(robot_spec, settings) as conn: drivers = conn.drivers``.

The message building is pure (plain dicts shaped exactly like the ROS messages), so it is
unit-tested without ROS; only :func:`goal_message` and :class:`Ros2Connection` import ROS,
inside the functions, and say what to install when it is missing.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from core.errors import ConfigError, ExecutionError
from hardware.arms.protocol import ArmTrajectory, CancelEvent, GoalResult, JointState, Outcome

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


class JointStateCache:
    """The latest state of every joint seen on the state topic (thread-safe)."""

    def __init__(self, stale_after_s: float = 0.5, clock: Callable[[], float] | None = None):
        self.stale_after_s = float(stale_after_s)
        self.clock = clock
        self._lock = threading.Lock()
        self._names: list[str] = []
        self._pos: list[float] = []
        self._vel: list[float] = []
        self._stamp = float("nan")
        self._received = threading.Event()

    def update(self, names: Sequence[str], positions: Sequence[float], velocities: Sequence[float],
               stamp: float) -> None:
        with self._lock:
            merged = dict(zip(self._names, zip(self._pos, self._vel, strict=True), strict=True))
            vel = list(velocities) if len(velocities) else [0.0] * len(positions)
            merged.update(zip(names, zip(positions, vel, strict=True), strict=True))
            self._names = list(merged)
            self._pos = [v[0] for v in merged.values()]
            self._vel = [v[1] for v in merged.values()]
            self._stamp = float(stamp)
        self._received.set()

    def read(self, joint_names: Sequence[str], wait_s: float = 0.0) -> JointState:
        if not self._received.wait(wait_s):
            raise ExecutionError("no joint state received yet (is the robot's state topic published?)")
        with self._lock:
            q, qd = reorder_joint_state(self._names, self._pos, self._vel, joint_names)
            stamp = self._stamp
        if self.clock is not None and self.clock() - stamp > self.stale_after_s:
            raise ExecutionError(f"joint state is stale: last message {self.clock() - stamp:.3f} s old")
        return JointState(stamp, q, qd)


# --------------------------------------------------------------------------- the driver
def _wait(future, cancel: CancelEvent | None, timeout_s: float) -> bool:
    """Wait for a future (rclpy or concurrent.futures: ``add_done_callback``/``done``), waking
    at once on a cancel. True when the future is done."""
    wake = threading.Event()
    future.add_done_callback(lambda _f: wake.set())
    if cancel is not None:
        cancel.subscribe(wake.set)
    wake.wait(timeout_s)
    return bool(future.done())


class Ros2ArmDriver:
    """One arm behind one FollowJointTrajectory action server.

    Transport-agnostic: ``client`` is an ``rclpy.action.ActionClient`` (or anything with
    ``wait_for_server``/``send_goal_async``), ``clock`` the ROS clock in seconds, ``states`` a
    :class:`JointStateCache`; :class:`Ros2Connection` builds all three from ROS.
    """

    is_real = True

    def __init__(self, name: str, joint_names: Sequence[str], client, clock: Callable[[], float],
                 states: JointStateCache, *, build_goal: Callable[[dict], Any] | None = None,
                 server_timeout_s: float = 5.0, result_timeout_s: float = 2.0,
                 goal_time_tolerance_s: float = 0.5, goal_tolerance_rad: float | None = None):
        self.name, self.joint_names = name, tuple(joint_names)
        self.client, self._clock, self.states = client, clock, states
        self.build_goal = build_goal or goal_message
        self.server_timeout_s, self.result_timeout_s = float(server_timeout_s), float(result_timeout_s)
        self.goal_time_tolerance_s = float(goal_time_tolerance_s)
        self.goal_tolerance_rad = goal_tolerance_rad

    def clock(self) -> float:
        return self._clock()

    def read_state(self) -> JointState:
        return self.states.read(self.joint_names)

    def execute(self, trajectory: ArmTrajectory, start_stamp: float, cancel: CancelEvent,
                on_sent: Callable[[], None] | None = None) -> GoalResult:
        t0 = time.perf_counter()
        nan = float("nan")
        if tuple(trajectory.joint_names) != self.joint_names:
            return GoalResult(self.name, Outcome.REJECTED,
                              f"trajectory joints {list(trajectory.joint_names)} "
                              f"are not this arm's {list(self.joint_names)}")
        if cancel.is_set():
            return GoalResult(self.name, Outcome.CANCELLED, "cancelled before sending")
        if not self.client.wait_for_server(timeout_sec=self.server_timeout_s):
            return GoalResult(self.name, Outcome.FAILED,
                              f"action server not available within {self.server_timeout_s:g} s")
        goal = self.build_goal(follow_joint_trajectory_goal(
            trajectory, start_stamp, self.goal_time_tolerance_s, self.goal_tolerance_rad))
        starts: list[float] = []

        def on_feedback(msg) -> None:
            fb = getattr(msg, "feedback", msg)
            if not starts and to_seconds(fb.desired.time_from_start) > 0:
                starts.append(start_from_feedback(to_seconds(fb.header.stamp),
                                                  to_seconds(fb.desired.time_from_start)))

        send = self.client.send_goal_async(goal, feedback_callback=on_feedback)
        duration = float(trajectory.times[-1])
        lead_s = max(0.0, start_stamp - self.clock())
        if not _wait(send, cancel, self.server_timeout_s + lead_s):
            if cancel.is_set():   # cancel the goal as soon as it is acknowledged
                send.add_done_callback(lambda f: f.result().accepted and f.result().cancel_goal_async())
                return GoalResult(self.name, Outcome.CANCELLED, "cancelled while sending",
                                  send_latency_s=time.perf_counter() - t0)
            return GoalResult(self.name, Outcome.TIMEOUT, "goal never acknowledged by the action server",
                              send_latency_s=time.perf_counter() - t0)
        handle = send.result()
        latency = time.perf_counter() - t0
        if not handle.accepted:
            return GoalResult(self.name, Outcome.REJECTED, "goal rejected by the action server",
                              send_latency_s=latency)
        sent = self.clock()
        if on_sent is not None:
            on_sent()
        stopped: list[float] = []

        def stop() -> None:
            stopped.append(time.perf_counter())
            handle.cancel_goal_async()

        result_future = handle.get_result_async()
        cancel.subscribe(stop)
        wait_s = max(0.0, start_stamp - self.clock()) + duration + self.goal_time_tolerance_s \
            + self.result_timeout_s
        done = _wait(result_future, None, wait_s)
        if not done and cancel.is_set():   # the cancel went out; give the result a moment to arrive
            done = _wait(result_future, None, self.result_timeout_s)
        ended = self.clock()
        started = starts[0] if starts else float(start_stamp)
        stop_wall = stopped[0] if stopped else nan
        if not done:
            if not stopped:
                stop()
            return GoalResult(self.name, Outcome.TIMEOUT, f"no result within {wait_s:.2f} s", sent, started,
                              ended, latency, stopped[0])
        res = result_future.result()
        outcome, reason = outcome_from_result(int(res.status), int(res.result.error_code),
                                              str(getattr(res.result, "error_string", "")))
        if outcome == Outcome.CANCELLED and cancel.is_set() and cancel.reason:
            reason = cancel.reason
        return GoalResult(self.name, outcome, reason, sent, started, ended, latency, stop_wall)


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


ROS2_KEYS = ("node_name", "action_names", "state_topic", "server_timeout_s", "result_timeout_s",
             "goal_time_tolerance_s", "goal_tolerance_rad", "state_stale_after_s")


class Ros2Connection:
    """One ROS 2 node, spun in a background thread, with one :class:`Ros2ArmDriver` per arm.

    ``settings`` (``hardware.ros2``): ``node_name`` (choreograph_arms), ``action_names``
    ({arm: action}; default ``/<arm>_arm_controller/follow_joint_trajectory``), ``state_topic``
    (/joint_states), ``server_timeout_s`` (5), ``result_timeout_s`` (2),
    ``goal_time_tolerance_s`` (0.5), ``goal_tolerance_rad`` (null: the controller's),
    ``state_stale_after_s`` (0.5). Use as a context manager (like the physics simulation).
    """

    def __init__(self, robot, settings: Mapping[str, Any] | None = None):
        cfg = dict(settings or {})
        unknown = sorted(set(cfg) - set(ROS2_KEYS))
        if unknown:
            raise ConfigError(f"hardware.ros2.{unknown[0]} is not a ROS 2 setting; "
                              f"allowed: {list(ROS2_KEYS)}")
        names = dict(cfg.get("action_names") or {})
        bad = sorted(set(names) - set(robot.arm_names))
        if bad:
            raise ConfigError(f"hardware.ros2.action_names names arm(s) {bad}; arms: {list(robot.arm_names)}")
        self.robot, self.cfg = robot, cfg
        self.action_names = {a: names.get(a, f"/{a}_arm_controller/follow_joint_trajectory")
                             for a in robot.arm_names}
        self.drivers: dict[str, Ros2ArmDriver] = {}
        self._ros = None
        self._node = self._executor = self._thread = None

    def start(self) -> Ros2Connection:
        ros = self._ros = import_ros()
        rclpy = ros["rclpy"]
        from rclpy.executors import MultiThreadedExecutor

        if not rclpy.ok():
            rclpy.init()
        node = self._node = rclpy.create_node(str(self.cfg.get("node_name", "choreograph_arms")))

        def clock() -> float:
            return node.get_clock().now().nanoseconds * 1e-9

        states = JointStateCache(float(self.cfg.get("state_stale_after_s", 0.5)), clock)

        def on_state(msg) -> None:
            states.update(list(msg.name), list(msg.position), list(msg.velocity),
                          to_seconds(msg.header.stamp))

        node.create_subscription(ros["JointState"], str(self.cfg.get("state_topic", "/joint_states")),
                                 on_state, 10)
        for arm in self.robot.arms:
            client = ros["ActionClient"](node, ros["FollowJointTrajectory"], self.action_names[arm.name])
            self.drivers[arm.name] = Ros2ArmDriver(
                arm.name, arm.joints, client, clock, states,
                server_timeout_s=float(self.cfg.get("server_timeout_s", 5.0)),
                result_timeout_s=float(self.cfg.get("result_timeout_s", 2.0)),
                goal_time_tolerance_s=float(self.cfg.get("goal_time_tolerance_s", 0.5)),
                goal_tolerance_rad=self.cfg.get("goal_tolerance_rad"))
        self._executor = MultiThreadedExecutor()
        self._executor.add_node(node)
        self._thread = threading.Thread(target=self._executor.spin, name="ros2-spin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
        if self._node is not None:
            self._node.destroy_node()
        if self._thread is not None:
            self._thread.join(2.0)
        self._executor = self._node = self._thread = None

    def __enter__(self) -> Ros2Connection:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
