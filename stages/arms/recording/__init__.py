"""What the two-arm pipelines record (``recording.rrd``): motion, perception, the peg reset."""

from stages.arms.recording.motion import (
    full_qpos,
    record_detour,
    record_executed,
    record_gripper_paths,
    record_independent,
    record_robot_motion,
    record_scene,
    record_sequential,
    record_trajectory,
    record_verified,
)
from stages.arms.recording.perception import record_camera, record_look
from stages.arms.recording.reset import record_reset
from stages.arms.recording.rl import record_rl_loop

__all__ = ["full_qpos", "record_camera", "record_detour", "record_executed", "record_gripper_paths",
           "record_independent", "record_look", "record_reset", "record_rl_loop", "record_robot_motion",
           "record_scene", "record_sequential", "record_trajectory", "record_verified"]
