"""Execution stages: synchronized execution on the physics driver, and the sequential baseline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import ConfigError
from stages.arms.execution.replay import tracking_error

FAULT_KEYS = ("send_latency_s", "send_jitter_s", "fail_at_s", "reject", "hang")
HARDWARE_KEYS = ("driver", "speed", "start_buffer_s", "max_start_lead_s", "ack_timeout_s", "faults", "video",
                 "seed", "joint_offsets_deg", "timestep_s")


def hardware_settings(cfg: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = dict(cfg or {})
    unknown = sorted(set(cfg) - set(HARDWARE_KEYS))
    if unknown:
        raise ConfigError(f"hardware.{unknown[0]} is not a hardware setting; allowed: {list(HARDWARE_KEYS)}")
    if cfg.get("driver", "mujoco") != "mujoco":
        raise ConfigError(f"hardware.driver={cfg['driver']!r}: only 'mujoco' runs here (the ROS 2 adapter "
                          "hardware.arms.ros2 needs a robot); allowed: ['mujoco']")
    for arm, faults in (cfg.get("faults") or {}).items():
        bad = sorted(set(faults or {}) - set(FAULT_KEYS))
        if bad:
            raise ConfigError(f"hardware.faults.{arm}.{bad[0]} is not a fault; allowed: {list(FAULT_KEYS)}")
    step = cfg.get("timestep_s")
    if step is not None and not (isinstance(step, (int, float)) and 0 < step <= 0.01):
        raise ConfigError(f"hardware.timestep_s={step!r}: the physics step in seconds, in (0, 0.01], "
                          "or null for the model's own")
    offsets = cfg.get("joint_offsets_deg")
    if offsets is not None:
        if not isinstance(offsets, Mapping):
            raise ConfigError(f"hardware.joint_offsets_deg must be null or {{arm: [one value per joint]}}, "
                              f"got {offsets!r}")
        for arm, values in offsets.items():
            try:
                vals = [float(v) for v in values]
            except (TypeError, ValueError):
                raise ConfigError(f"hardware.joint_offsets_deg.{arm} must be a list of numbers (deg), "
                                  f"got {values!r}") from None
            if any(abs(v) > 10.0 for v in vals):
                raise ConfigError(f"hardware.joint_offsets_deg.{arm}={vals}: hidden zero offsets are "
                                  "small (|offset| <= 10 deg)")
    return cfg


def joint_offsets_rad(hw: Mapping[str, Any], arm) -> np.ndarray | None:
    """The hidden zero offsets of ``arm`` (an ArmSpec) in rad, or None; checks the count."""
    values = (hw.get("joint_offsets_deg") or {}).get(arm.name)
    if values is None:
        return None
    if len(values) != len(arm.joints):
        raise ConfigError(f"hardware.joint_offsets_deg.{arm.name} lists {len(values)} values; the arm "
                          f"has {len(arm.joints)} joints {list(arm.joints)}")
    return np.radians(np.asarray(values, float))


def active_faults(faults: Mapping[str, Any] | None) -> dict[str, Any]:
    """The faults that do something (zero latency, no failure time, false flags are none)."""
    return {k: v for k, v in (faults or {}).items() if v not in (None, 0, 0.0, False)}


def simulated_robot(world, start_q: np.ndarray, joint_names, hw: Mapping[str, Any], seed: int):
    """A PhysicsSim at ``start_q`` and one (possibly fault-injecting) driver per arm."""
    from hardware.arms.faults import FaultyDriver
    from hardware.arms.mujoco_driver import MujocoArmDriver
    from hardware.arms.mujoco_sim import PhysicsSim

    qpos = world.home_qpos()
    index = {j: i for i, j in enumerate(joint_names)}
    for arm in world.robot.arms:
        for j, adr in zip(arm.joints, arm.qpos_indices, strict=True):
            if j in index:
                qpos[adr] = start_q[index[j]]
    sim = PhysicsSim(world.model, qpos, speed=float(hw.get("speed", 1.0)), timestep_s=hw.get("timestep_s"))
    drivers = {}
    faults = hw.get("faults") or {}
    for k, arm in enumerate(world.robot.arms):
        if not set(arm.joints) <= set(joint_names):
            continue
        driver = MujocoArmDriver(sim, arm.name, arm.joints, joint_offsets_rad(hw, arm))
        if arm.gripper is not None:
            for a in arm.gripper.actuator_ids:
                sim.set_ctrl(a, arm.gripper.open)
        f = active_faults(faults.get(arm.name))
        drivers[arm.name] = FaultyDriver(driver, seed=seed + k, **f) if f else driver
    return sim, drivers


def tracking_errors(trajectory, start_stamp, times, positions, names) -> dict[str, float]:
    """Largest |measured − desired| during the motion, and at the end."""
    index = {j: i for i, j in enumerate(trajectory.joint_names)}
    cols = [index[j] for j in names]
    reference = np.asarray(trajectory.positions)[:, cols]
    return {"tracking_error_max_rad": tracking_error(np.asarray(trajectory.times), reference, start_stamp,
                                                     times, positions),
            "final_error_rad": float(np.abs(positions[-1] - reference[-1]).max())}
