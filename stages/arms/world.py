"""The world: robot + scene compiled into one model, its robot spec and collision matrix.

The scene stage's output ``world`` is what every manipulation stage after it plans, checks
and runs on; the joint limits and home renders of it are read here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.errors import ConfigError
from hardware.collision_matrix import compute_collision_matrix, default_cache_dir
from hardware.models.scene import build_scene, scene_settings
from hardware.resources import plain_config
from hardware.robot import RobotSpec
from hardware.robot_settings import robot_settings
from hardware.semantics import named_states, srdf_pairs
from stages.arms.planning.checker import ClearanceChecker


@dataclass(frozen=True)
class World:
    """The compiled scene and the robot in it (in memory; ``scene.xml`` is its saved form)."""

    model: Any  # mujoco.MjModel
    robot: Any  # hardware.robot.RobotSpec
    scene: Any  # hardware.models.scene.Scene
    clearance_m: float
    collision_matrix: Any = None  # hardware.collision_matrix.CollisionMatrix
    named_states: dict[str, dict[str, tuple[float, ...]]] = field(default_factory=dict)  # SRDF group_states

    def named_goal(self, name: str) -> dict[str, list[float]]:
        """The joint goal per arm of the SRDF state ``name`` (``goal.named``)."""
        if name not in self.named_states:
            raise ConfigError(f"goal.named={name!r}: not a named state of robot {self.robot.name!r}; named "
                              f"states (its SRDFs' group_states): {sorted(self.named_states) or '(none)'}")
        return {arm: list(q) for arm, q in self.named_states[name].items()}

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
    """Compile robot + scene, validate the robot config, and compute (or load) its collision matrix.

    A cell's ``home`` (``scene.cell.home.<arm>``) replaces the robot's home of those arms: where
    they wait in that cell (the reset's last segment, the pose every plan of the loop starts from)."""
    compiled = build_scene(robot, scene, asset_dir=asset_dir)
    robot = with_cell_home(robot, scene)
    spec = RobotSpec.from_config(robot, compiled.model)
    cfg = plain_config(robot)
    acm = cfg.get("collision_matrix") or {}
    matrix = compute_collision_matrix(
        compiled.model, spec.joint_names(), spec.home_qpos(compiled.model), spec.clearance_m,
        samples=int(acm.get("samples", 200)), never=bool(acm.get("never", False)),
        allowed=cfg.get("allowed_pairs") or (),
        cache_dir=default_cache_dir() if acm.get("cache", True) else None,
        held_bodies=free_bodies(compiled.model),   # objects a gripper may carry: never rigid with the table
        srdf=srdf_pairs(robot))
    return World(compiled.model, spec, compiled, spec.clearance_m, matrix, named_states(robot))


def with_cell_home(robot: dict, scene: dict) -> dict:
    """The robot config with ``scene.cell.home``'s arms' homes in place of its own."""
    cell = scene_settings(scene).cell
    if cell is None or not cell.home:
        return robot
    cfg = plain_config(robot)
    arms = cfg.get("arms") or {}
    for arm, q in cell.home.items():
        if arm not in arms:
            raise ConfigError(f"scene.cell.home.{arm}: robot {cfg.get('name')!r} has no arm {arm!r}; "
                              f"its arms: {', '.join(arms)}")
        n = len(robot_settings(cfg).arms[arm].joints)   # listed, or an SRDF group's
        if len(q) != n:
            raise ConfigError(f"scene.cell.home.{arm}: {len(q)} values for the arm's {n} joints")
    return {**cfg, "home": {**(cfg.get("home") or {}), **{a: list(q) for a, q in cell.home.items()}}}


def home_proximity(world: World):
    """The smallest true distance between geometry that may not touch, at home."""
    joints = world.robot.joint_names()
    checker = ClearanceChecker.for_world(world, joints, world.clearance_m)
    return checker.proximity(world.robot.home())


def render_home(world: World, cameras: Sequence[str]) -> dict[str, np.ndarray]:
    """RGB renders of the robot at home by each of ``cameras`` the scene has (others are skipped)."""
    import mujoco

    from hardware.render import render_rgb  # sets MUJOCO_GL on import: only when rendering

    data = mujoco.MjData(world.model)
    data.qpos[:] = world.home_qpos()
    mujoco.mj_forward(world.model, data)
    return {cam: render_rgb(world.model, data, cam) for cam in cameras if cam in world.scene.cameras}


def position_limits_for(world, joint_names) -> tuple[list[float], list[float]]:
    """Lower and upper position limits of the named joints, from the robot spec."""
    lo, hi = {}, {}
    for arm in world.robot.arms:
        for j, a, b in zip(arm.joints, arm.lower, arm.upper, strict=True):
            lo[j], hi[j] = a, b
    return [lo[j] for j in joint_names], [hi[j] for j in joint_names]


def limits_for(world, joint_names):
    """Velocity and acceleration limits of the named joints, from the robot spec."""
    vel, acc = {}, {}
    for arm in world.robot.arms:
        for j, v, a in zip(arm.joints, arm.velocity_limits, arm.acceleration_limits, strict=True):
            vel[j], acc[j] = v, a
    return [vel[j] for j in joint_names], [acc[j] for j in joint_names]


