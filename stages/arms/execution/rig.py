"""The simulated robot the execution stages run on: the ``hardware`` settings, one physics
simulation with a (possibly fault-injecting) driver per arm, and which arms a trajectory moves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.settings import from_config
from hardware.arms.faults import FaultyDriver
from hardware.arms.mujoco_driver import MujocoArmDriver
from hardware.arms.mujoco_sim import PhysicsSim
from stages.arms.execution.settings import HardwareSettings


def hardware_settings(cfg: Mapping[str, Any] | HardwareSettings | None) -> HardwareSettings:
    """The ``hardware`` group as :class:`HardwareSettings` (wrong keys, types and values name the key)."""
    return from_config(HardwareSettings, cfg, "hardware")


def joint_offsets_rad(hw: HardwareSettings, arm) -> np.ndarray | None:
    """The hidden zero offsets of ``arm`` (an ArmSpec) in rad, or None; checks the count."""
    values = (hw.joint_offsets_deg or {}).get(arm.name)
    if values is None:
        return None
    if len(values) != len(arm.joints):
        raise ConfigError(f"hardware.joint_offsets_deg.{arm.name} lists {len(values)} values; the arm "
                          f"has {len(arm.joints)} joints {list(arm.joints)}")
    return np.radians(np.asarray(values, float))


def simulated_robot(world, start_q: np.ndarray, joint_names, hw: HardwareSettings, seed: int):
    """A PhysicsSim at ``start_q`` and one (possibly fault-injecting) driver per arm."""
    qpos = world.home_qpos()
    index = {j: i for i, j in enumerate(joint_names)}
    for arm in world.robot.arms:
        for j, adr in zip(arm.joints, arm.qpos_indices, strict=True):
            if j in index:
                qpos[adr] = start_q[index[j]]
    sim = PhysicsSim(world.model, qpos, speed=hw.speed, timestep_s=hw.timestep_s, clock=hw.clock)
    drivers = {}
    for k, arm in enumerate(world.robot.arms):
        if not set(arm.joints) <= set(joint_names):
            continue
        driver = MujocoArmDriver(sim, arm.name, arm.joints, joint_offsets_rad(hw, arm))
        if arm.gripper is not None:
            for a in arm.gripper.actuator_ids:
                sim.set_ctrl(a, arm.gripper.open)
        f = hw.faults_of(arm.name)
        drivers[arm.name] = FaultyDriver(driver, seed=seed + k, **f) if f else driver
    return sim, drivers


def moving_arms(world, joint_names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The arms all of whose joints are in ``joint_names`` (a trajectory's), with their joints."""
    return {a.name: a.joints for a in world.robot.arms if set(a.joints) <= set(joint_names)}


def arm_columns(world, arms: Mapping[str, Any]) -> tuple[np.ndarray, list[str]]:
    """The qpos addresses and joint names of ``arms``, in the robot's order."""
    adr = np.array([i for a in world.robot.arms if a.name in arms for i in a.qpos_indices])
    names = [j for a in world.robot.arms if a.name in arms for j in a.joints]
    return adr, names
