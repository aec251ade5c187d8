"""The scene stage: compile robot + scene, validate the robot config, save and render it.

Its output ``world`` (model, robot spec, compiled scene) is what every manipulation
stage after it plans, checks and runs on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class World:
    """The compiled scene and the robot in it (in memory; ``scene.xml`` is its saved form)."""

    model: Any  # mujoco.MjModel
    robot: Any  # hardware.robot.RobotSpec
    scene: Any  # hardware.models.scene.Scene
    clearance_m: float
    collision_matrix: Any = None  # hardware.collision_matrix.CollisionMatrix

    @property
    def allowed_pairs(self) -> tuple[tuple[int, int], ...]:
        """Geom pairs the collision matrix lets touch (every checker of this world skips them)."""
        return () if self.collision_matrix is None else tuple(self.collision_matrix.disabled)

    def home_qpos(self) -> np.ndarray:
        return self.robot.home_qpos(self.model)


def free_bodies(model) -> list[str]:
    """Bodies on a free joint (the scene's loose objects)."""
    import mujoco

    free = int(mujoco.mjtJoint.mjJNT_FREE)
    return [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, int(model.jnt_bodyid[j]))
            for j in range(model.njnt) if int(model.jnt_type[j]) == free]


def build_world(robot: dict, scene: dict, asset_dir=None) -> World:
    """Compile robot + scene, validate the robot config, and compute (or load) its collision matrix."""
    from hardware.collision_matrix import compute_collision_matrix, default_cache_dir
    from hardware.models.scene import build_scene
    from hardware.robot import RobotSpec, _plain

    compiled = build_scene(robot, scene, asset_dir=asset_dir)
    spec = RobotSpec.from_config(robot, compiled.model)
    cfg = _plain(robot)
    acm = cfg.get("collision_matrix") or {}
    matrix = compute_collision_matrix(
        compiled.model, spec.joint_names(), spec.home_qpos(compiled.model), spec.clearance_m,
        samples=int(acm.get("samples", 200)), never=bool(acm.get("never", False)),
        allowed=cfg.get("allowed_pairs") or (),
        cache_dir=default_cache_dir() if acm.get("cache", True) else None,
        held_bodies=free_bodies(compiled.model))   # objects a gripper may carry: never rigid with the table
    return World(compiled.model, spec, compiled, spec.clearance_m, matrix)


def home_proximity(world: World):
    """The smallest true distance between geometry that may not touch, at home."""
    from stages.arms.planning.checker import ClearanceChecker

    joints = world.robot.joint_names()
    checker = ClearanceChecker.for_world(world, joints, world.clearance_m)
    return checker.proximity(world.robot.home())


def limits_for(world, joint_names):
    """Velocity and acceleration limits of the named joints, from the robot spec."""
    vel, acc = {}, {}
    for arm in world.robot.arms:
        for j, v, a in zip(arm.joints, arm.velocity_limits, arm.acceleration_limits, strict=True):
            vel[j], acc[j] = v, a
    return [vel[j] for j in joint_names], [acc[j] for j in joint_names]


