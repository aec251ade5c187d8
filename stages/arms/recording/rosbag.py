"""A run's motion as a rosbag2 folder (MCAP storage), for ROS tools (``ros2 bag play``, Foxglove,
plotting ``JointState``), written with the pure-Python ``rosbags`` (no ROS install needed):

- ``/<arm>/joint_trajectory`` (``trajectory_msgs/msg/JointTrajectory``): each arm's retimed
  trajectory of every move (one message per move: a plan's one, a reset's segments in turn), its
  header stamp the executor's shared start stamp of that move, every 125 Hz sample a point
  (positions, velocities, accelerations, ``time_from_start``);
- ``/joint_states`` (``sensor_msgs/msg/JointState``): every recorded physics state of the arms'
  joints (what was executed; the RL loop's and the calibration's, minutes long, at 50 Hz),
  stamped with the simulation's clock;
- ``/tf`` (``tf2_msgs/msg/TFMessage``): each arm's end-effector site in ``world`` at those states.

Stamps are the simulation's seconds (its clock starts at 0), as ``builtin_interfaces/Time``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import mujoco
import numpy as np

from stages.arms.recording.motion import thin

BAG_STATE_RATE_HZ = 50.0   # /joint_states and /tf of runs minutes long (the RL loop, a calibration)
ROS_DISTRO_TYPES = "ROS2_HUMBLE"   # the message definitions written (rosbags' typestore)


def _ns(seconds: float) -> int:
    return int(round(float(seconds) * 1e9))


def write_motion_bag(folder: Path | str, world, moves: Sequence[tuple[float, Mapping[str, object]]],
                     times_s: np.ndarray, qpos: np.ndarray, joint_names: Sequence[str],
                     state_rate_hz: float | None = None) -> Path:
    """Write ``folder`` (a rosbag2 folder; it must not exist yet). ``moves``: (start stamp, each arm's
    trajectory: ``joint_names``, ``times``, ``positions``, ``velocities``, ``accelerations``) in the
    order they ran; ``times_s``/``qpos`` the recorded full states (every one, or thinned to
    ``state_rate_hz`` for runs of minutes), ``joint_names`` the joints ``/joint_states`` carries."""
    if state_rate_hz is not None:
        keep = thin(times_s, state_rate_hz)
        times_s, qpos = np.asarray(times_s)[keep], np.asarray(qpos)[keep]
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(getattr(Stores, ROS_DISTRO_TYPES))
    t = store.types
    Time, Duration, Header = (t["builtin_interfaces/msg/Time"], t["builtin_interfaces/msg/Duration"],
                              t["std_msgs/msg/Header"])

    def stamp(seconds: float):
        ns = _ns(seconds)
        return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def header(seconds: float, frame: str = "world"):
        return Header(stamp=stamp(seconds), frame_id=frame)

    folder = Path(folder)
    model = world.model
    columns = [int(model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)])
               for j in joint_names]
    with Writer(folder, version=8, storage_plugin=StoragePlugin.MCAP) as bag:
        kind = "trajectory_msgs/msg/JointTrajectory"
        topics = {}
        for start_stamp_s, per_arm in moves:
            for arm, traj in per_arm.items():
                if arm not in topics:
                    topics[arm] = bag.add_connection(f"/{arm}/joint_trajectory", kind, typestore=store)
                msg = t[kind](header=header(start_stamp_s), joint_names=list(traj.joint_names),
                              points=[point(t, Duration, traj, k) for k in range(len(traj.times))])
                bag.write(topics[arm], _ns(start_stamp_s), store.serialize_cdr(msg, kind))
        states = bag.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store)
        tf = bag.add_connection("/tf", "tf2_msgs/msg/TFMessage", typestore=store)
        data = mujoco.MjData(model)
        for ts, q in zip(np.asarray(times_s, float), np.asarray(qpos, float), strict=True):
            js = t["sensor_msgs/msg/JointState"](header=header(ts, ""), name=list(joint_names),
                                                 position=np.ascontiguousarray(q[columns], float),
                                                 velocity=np.zeros(0), effort=np.zeros(0))
            bag.write(states, _ns(ts), store.serialize_cdr(js, "sensor_msgs/msg/JointState"))
            data.qpos[:] = q
            mujoco.mj_kinematics(model, data)
            transforms = [_site_transform(t, header(ts), arm.ee_site, data, arm.ee_site_id)
                          for arm in world.robot.arms]
            msg = t["tf2_msgs/msg/TFMessage"](transforms=transforms)
            bag.write(tf, _ns(ts), store.serialize_cdr(msg, "tf2_msgs/msg/TFMessage"))
    return folder


def point(t, Duration, traj, k: int):
    """The ``k``-th sample of ``traj`` as a ``JointTrajectoryPoint``."""
    ns = _ns(traj.times[k])
    return t["trajectory_msgs/msg/JointTrajectoryPoint"](
        positions=np.ascontiguousarray(traj.positions[k], float),
        velocities=np.ascontiguousarray(traj.velocities[k], float),
        accelerations=np.ascontiguousarray(traj.accelerations[k], float), effort=np.zeros(0),
        time_from_start=Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000))


def _site_transform(t, header, child: str, data, site: int):
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, data.site_xmat[site])
    x, y, z = (float(v) for v in data.site_xpos[site])
    return t["geometry_msgs/msg/TransformStamped"](
        header=header, child_frame_id=child,
        transform=t["geometry_msgs/msg/Transform"](
            translation=t["geometry_msgs/msg/Vector3"](x=x, y=y, z=z),
            rotation=t["geometry_msgs/msg/Quaternion"](x=float(quat[1]), y=float(quat[2]), z=float(quat[3]),
                                                       w=float(quat[0]))))
