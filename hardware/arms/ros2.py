"""A real-robot arm driver: a ROS 2 ``control_msgs/action/FollowJointTrajectory`` client.

It keeps the same :class:`hardware.arms.protocol.ArmDriver` protocol as the MuJoCo driver, so
the synchronized executor, the bring-up protocol and every execution stage run on it unchanged.
How the protocol maps onto ROS 2 messages (start stamp, points, clock, cancel, state, results) is
in :mod:`hardware.arms.ros2_messages`; its names are re-exported here.

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

In code: ``with Ros2Connection(robot_spec, settings) as conn: drivers = conn.drivers``, with
``settings`` a :class:`Ros2Settings` or the ``hardware.ros2`` mapping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import ConfigError, ExecutionError
from core.settings import from_config
from hardware.arms.clock import WallClock
from hardware.arms.protocol import ArmTrajectory, CancelEvent, GoalResult, JointState, Outcome
from hardware.arms.ros2_messages import (
    ERROR_CODES,
    INSTALL_HINT,
    INT32_MAX,
    OLD_HEADER_TIMESTAMP,
    REFUSED_CODES,
    STATUS_ABORTED,
    STATUS_ACCEPTED,
    STATUS_CANCELED,
    STATUS_CANCELING,
    STATUS_EXECUTING,
    STATUS_SUCCEEDED,
    STATUS_UNKNOWN,
    RosUnavailableError,
    follow_joint_trajectory_goal,
    goal_message,
    import_ros,
    joint_trajectory,
    outcome_from_result,
    reorder_joint_state,
    seconds_to_duration,
    stamp_to_time,
    start_from_feedback,
    to_seconds,
)

__all__ = [
    "ERROR_CODES", "INSTALL_HINT", "INT32_MAX", "OLD_HEADER_TIMESTAMP", "REFUSED_CODES", "STATUS_ABORTED",
    "STATUS_ACCEPTED", "STATUS_CANCELED", "STATUS_CANCELING", "STATUS_EXECUTING", "STATUS_SUCCEEDED",
    "STATUS_UNKNOWN", "JointStateCache", "Ros2ArmDriver", "Ros2Connection", "Ros2Settings",
    "RosUnavailableError", "follow_joint_trajectory_goal", "goal_message", "import_ros", "joint_trajectory",
    "outcome_from_result", "reorder_joint_state", "seconds_to_duration", "stamp_to_time",
    "start_from_feedback", "to_seconds",
]


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
        self.timing = WallClock(clock)   # a real robot's time passes by itself
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


@dataclass(frozen=True)
class Ros2Settings:
    """``hardware.ros2``: the node, one action server per arm, the state topic, timeouts."""

    node_name: str = "choreograph_arms"
    action_names: dict[str, str] = field(default_factory=dict)   # {arm: action}; default below
    state_topic: str = "/joint_states"
    server_timeout_s: float = 5.0
    result_timeout_s: float = 2.0
    goal_time_tolerance_s: float = 0.5
    goal_tolerance_rad: float | tuple[float, ...] | None = None   # None: the controller's
    state_stale_after_s: float = 0.5


class Ros2Connection:
    """One ROS 2 node, spun in a background thread, with one :class:`Ros2ArmDriver` per arm.

    ``settings``: :class:`Ros2Settings`, or the ``hardware.ros2`` mapping (None: the defaults);
    an action server not named is ``/<arm>_arm_controller/follow_joint_trajectory``. Use as a
    context manager (like the physics simulation).
    """

    def __init__(self, robot, settings: Ros2Settings | Mapping[str, Any] | None = None):
        cfg = from_config(Ros2Settings, settings, "hardware.ros2")
        bad = sorted(set(cfg.action_names) - set(robot.arm_names))
        if bad:
            raise ConfigError(f"hardware.ros2.action_names names arm(s) {bad}; arms: {list(robot.arm_names)}")
        self.robot, self.settings = robot, cfg
        self.action_names = {a: cfg.action_names.get(a, f"/{a}_arm_controller/follow_joint_trajectory")
                             for a in robot.arm_names}
        self.drivers: dict[str, Ros2ArmDriver] = {}
        self._ros = None
        self._node = self._executor = self._thread = None

    def start(self) -> Ros2Connection:
        ros = self._ros = import_ros()
        rclpy = ros["rclpy"]
        from rclpy.executors import MultiThreadedExecutor

        cfg = self.settings
        if not rclpy.ok():
            rclpy.init()
        node = self._node = rclpy.create_node(cfg.node_name)

        def clock() -> float:
            return node.get_clock().now().nanoseconds * 1e-9

        states = JointStateCache(cfg.state_stale_after_s, clock)

        def on_state(msg) -> None:
            states.update(list(msg.name), list(msg.position), list(msg.velocity),
                          to_seconds(msg.header.stamp))

        node.create_subscription(ros["JointState"], cfg.state_topic, on_state, 10)
        for arm in self.robot.arms:
            client = ros["ActionClient"](node, ros["FollowJointTrajectory"], self.action_names[arm.name])
            self.drivers[arm.name] = Ros2ArmDriver(
                arm.name, arm.joints, client, clock, states, server_timeout_s=cfg.server_timeout_s,
                result_timeout_s=cfg.result_timeout_s, goal_time_tolerance_s=cfg.goal_time_tolerance_s,
                goal_tolerance_rad=cfg.goal_tolerance_rad)
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
