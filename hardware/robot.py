"""A robot as the planner sees it: arms, joints, limits, end-effector sites, home.

``RobotSpec.from_config(config, model)`` reads a robot config (the ``robot`` group, as
:class:`hardware.robot_settings.RobotSettings`, a mapping or an OmegaConf node) against a compiled
MuJoCo model and resolves every name to indices. The config's keys and types are checked by the
settings; what needs the model (names, joint ranges, actuator ranges) is checked here.

Where the limits come from, per joint:

* position: the MJCF joint ``range``. An unlimited hinge gets ``[-pi, pi]``
  (:data:`DEFAULT_HINGE_RANGE_RAD`); an unlimited slide joint is a ``ConfigError``.
* velocity / acceleration: the config; else a ``<custom><numeric>`` in the MJCF named
  ``<joint>_max_velocity`` / ``<joint>_max_acceleration``; else the conservative defaults
  :data:`DEFAULT_VELOCITY_LIMIT` (1.0 rad/s or m/s) and
  :data:`DEFAULT_ACCELERATION_LIMIT` (2.0 rad/s² or m/s²).

A joint, site or actuator name that is not in the model raises
:class:`core.errors.ConfigError` listing the names that are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigError
from hardware.joints import check_chain, lookup
from hardware.joints import held_joints as _held_joints
from hardware.resources import REPO_ROOT, plain_config, resolve_mjcf_path
from hardware.robot_settings import (
    DEFAULT_CLEARANCE_M,
    ArmSettings,
    GripperSettings,
    RobotSettings,
    robot_settings,
)

__all__ = ["DEFAULT_ACCELERATION_LIMIT", "DEFAULT_CLEARANCE_M", "DEFAULT_HINGE_RANGE_RAD",
           "DEFAULT_VELOCITY_LIMIT", "REPO_ROOT", "ArmSpec", "GripperSpec", "RobotSpec",
           "resolve_mjcf_path"]

_plain = plain_config   # the old private name (stages.arms.world); use hardware.resources.plain_config

DEFAULT_VELOCITY_LIMIT = 1.0  # rad/s (m/s for slide joints), used when neither config nor MJCF say
DEFAULT_ACCELERATION_LIMIT = 2.0  # rad/s^2 (m/s^2)
DEFAULT_HINGE_RANGE_RAD = (-math.pi, math.pi)  # for hinge joints without a range in the MJCF


@dataclass(frozen=True)
class GripperSpec:
    """A gripper driven by position actuators: ``open``/``closed`` are their control values;
    ``settings`` its whole config (the parallel-jaw description: :mod:`hardware.gripper`)."""

    actuators: tuple[str, ...]
    actuator_ids: tuple[int, ...]
    open: float
    closed: float
    settings: GripperSettings | None = None


@dataclass(frozen=True)
class ArmSpec:
    """One arm: its joints (in order), their limits and indices, its ee site and home."""

    name: str
    joints: tuple[str, ...]
    joint_ids: tuple[int, ...]
    qpos_indices: tuple[int, ...]
    dof_indices: tuple[int, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    velocity_limits: tuple[float, ...]
    acceleration_limits: tuple[float, ...]
    ee_site: str
    ee_site_id: int
    home: tuple[float, ...]
    joint_actuator_ids: tuple[int, ...]
    """Per joint, the id of an actuator transmitting directly to it, or -1 when there is none."""
    gripper: GripperSpec | None = None

    @property
    def dof(self) -> int:
        return len(self.joints)


@dataclass(frozen=True)
class RobotSpec:
    """The validated robot: arms in config order, clearance, MJCF path."""

    name: str
    mjcf: Path
    clearance_m: float
    arms: tuple[ArmSpec, ...]
    held_joints: tuple[tuple[int, float], ...] = ()
    """(qpos address, value) of the robot's joints outside every arm: fingers, a torso lift, a head,
    a mobile base. They are held there (``robot.fixed_joints``, else ``robot.keyframe``, else the
    middle of their range where ``qpos0`` is outside it): :func:`hardware.joints.held_joints`."""
    settings: RobotSettings | None = field(default=None, compare=False, repr=False)
    """The config this spec was read from (allowed pairs, collision-matrix settings, extra keys)."""

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_config(cls, config: Mapping[str, Any] | RobotSettings, model) -> RobotSpec:
        """Read ``config`` (the robot group) against a compiled ``MjModel``."""
        cfg = robot_settings(config)
        mjcf_path = (resolve_mjcf_path(cfg.mjcf, check_exists=False) if cfg.mjcf
                     else Path(f"<robot.build {cfg.name}>") if cfg.build else Path("<model>"))
        where = cfg.mjcf if cfg.mjcf else "the model"
        arms = tuple(_arm_spec(str(name), a, cfg.home.get(name), model, where)
                     for name, a in cfg.arms.items())
        owner = {j: arm.name for arm in arms for j in arm.joints}
        return cls(name=cfg.name, mjcf=mjcf_path, clearance_m=cfg.clearance_m, arms=arms,
                   held_joints=_held_joints(model, cfg.fixed_joints, cfg.keyframe, owner, where),
                   settings=cfg)

    # ------------------------------------------------------------------ lookups
    @property
    def arm_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arms)

    def arm(self, name: str) -> ArmSpec:
        for a in self.arms:
            if a.name == name:
                return a
        raise ConfigError(f"unknown arm {name!r}; arms of robot {self.name!r}: "
                          f"{', '.join(self.arm_names)}")

    def group(self, arms: Sequence[str] | None = None) -> tuple[ArmSpec, ...]:
        """The named arms (all, in config order, when ``arms`` is None)."""
        return self.arms if arms is None else tuple(self.arm(a) for a in arms)

    def joint_names(self, arms: Sequence[str] | None = None) -> list[str]:
        return [j for a in self.group(arms) for j in a.joints]

    def qpos_indices(self, arms: Sequence[str] | None = None) -> np.ndarray:
        return np.array([i for a in self.group(arms) for i in a.qpos_indices], dtype=int)

    def dof_indices(self, arms: Sequence[str] | None = None) -> np.ndarray:
        return np.array([i for a in self.group(arms) for i in a.dof_indices], dtype=int)

    def lower(self, arms: Sequence[str] | None = None) -> np.ndarray:
        return np.array([x for a in self.group(arms) for x in a.lower])

    def upper(self, arms: Sequence[str] | None = None) -> np.ndarray:
        return np.array([x for a in self.group(arms) for x in a.upper])

    def velocity_limits(self, arms: Sequence[str] | None = None) -> np.ndarray:
        return np.array([x for a in self.group(arms) for x in a.velocity_limits])

    def acceleration_limits(self, arms: Sequence[str] | None = None) -> np.ndarray:
        return np.array([x for a in self.group(arms) for x in a.acceleration_limits])

    def home(self, arms: Sequence[str] | None = None) -> np.ndarray:
        return np.array([x for a in self.group(arms) for x in a.home])

    def home_qpos(self, model) -> np.ndarray:
        """A full ``qpos`` vector: the model's ``qpos0`` with every arm at home."""
        q = np.array(model.qpos0, dtype=float)
        for adr, value in self.held_joints:
            q[adr] = value
        q[self.qpos_indices()] = self.home()
        return q

    def summary(self) -> dict[str, Any]:
        """Plain-JSON description (arms, joints, limits, ee sites)."""
        return {
            "name": self.name,
            "mjcf": str(self.mjcf),
            "clearance_m": self.clearance_m,
            "arms": {
                a.name: {
                    "joints": list(a.joints),
                    "ee_site": a.ee_site,
                    "lower_rad": list(a.lower),
                    "upper_rad": list(a.upper),
                    "velocity_limits": list(a.velocity_limits),
                    "acceleration_limits": list(a.acceleration_limits),
                    "home": list(a.home),
                    "gripper": None if a.gripper is None else {
                        "actuators": list(a.gripper.actuators),
                        "open": a.gripper.open, "closed": a.gripper.closed},
                }
                for a in self.arms
            },
        }


# ---------------------------------------------------------------------- reading the config
def _custom_numeric(model, name: str) -> float | None:
    import mujoco

    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, name)
    if i < 0 or model.numeric_size[i] < 1:
        return None
    return float(model.numeric_data[model.numeric_adr[i]])


def _limits(model, configured: tuple[float, ...] | None, joints, suffix, default) -> tuple[float, ...]:
    if configured is not None:
        return configured
    out = []
    for j in joints:
        v = _custom_numeric(model, f"{j}_{suffix}")
        out.append(default if v is None or v <= 0 else v)
    return tuple(out)


def _arm_spec(name: str, cfg: ArmSettings, home_cfg: tuple[float, ...] | None, model, where: str) -> ArmSpec:
    import mujoco

    key = f"robot.arms.{name}"
    joints = cfg.joints
    joint_ids = tuple(lookup(model, mujoco.mjtObj.mjOBJ_JOINT, j, model.njnt, "joint",
                             f"{key}.joints", where) for j in joints)
    if len(set(joint_ids)) != len(joint_ids):
        raise ConfigError(f"{key}.joints lists a joint twice: {list(joints)}")
    hinge, slide = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
    lower, upper = [], []
    for j, jid in zip(joints, joint_ids, strict=True):
        jtype = int(model.jnt_type[jid])
        if jtype not in (hinge, slide):
            raise ConfigError(f"{key}.joints: {j!r} is a free or ball joint; arm joints must be "
                              "hinge or slide joints")
        if model.jnt_limited[jid]:
            lo, hi = (float(v) for v in model.jnt_range[jid])
        elif jtype == hinge:
            lo, hi = DEFAULT_HINGE_RANGE_RAD
        else:
            raise ConfigError(f"{key}.joints: slide joint {j!r} has no range in {where}; "
                              "give it range=\"lo hi\"")
        lower.append(lo)
        upper.append(hi)
    check_chain(model, joints, joint_ids, key)
    site_id = lookup(model, mujoco.mjtObj.mjOBJ_SITE, cfg.ee_site, model.nsite, "site",
                     f"{key}.ee_site", where)
    vel = _limits(model, cfg.velocity_limits, joints, "max_velocity", DEFAULT_VELOCITY_LIMIT)
    acc = _limits(model, cfg.acceleration_limits, joints, "max_acceleration", DEFAULT_ACCELERATION_LIMIT)
    gripper = None if cfg.gripper is None else _gripper_spec(cfg.gripper, model, f"{key}.gripper", where)

    if home_cfg is None:  # qpos0 clipped into the limits
        home = tuple(float(np.clip(model.qpos0[model.jnt_qposadr[jid]], lo, hi))
                     for jid, lo, hi in zip(joint_ids, lower, upper, strict=True))
    else:
        home = tuple(home_cfg)
        bad = [f"{j}={q:.4f} not in [{lo:.4f}, {hi:.4f}]"
               for j, q, lo, hi in zip(joints, home, lower, upper, strict=True)
               if not lo <= q <= hi]
        if bad:
            raise ConfigError(f"robot.home.{name} is outside the joint limits: {'; '.join(bad)}")

    act_ids = []
    joint_trn = int(mujoco.mjtTrn.mjTRN_JOINT)
    for jid in joint_ids:
        match = [a for a in range(model.nu)
                 if model.actuator_trntype[a] == joint_trn and model.actuator_trnid[a, 0] == jid]
        act_ids.append(match[0] if match else -1)

    return ArmSpec(
        name=name,
        joints=joints,
        joint_ids=joint_ids,
        qpos_indices=tuple(int(model.jnt_qposadr[j]) for j in joint_ids),
        dof_indices=tuple(int(model.jnt_dofadr[j]) for j in joint_ids),
        lower=tuple(lower),
        upper=tuple(upper),
        velocity_limits=vel,
        acceleration_limits=acc,
        ee_site=cfg.ee_site,
        ee_site_id=site_id,
        home=home,
        joint_actuator_ids=tuple(act_ids),
        gripper=gripper,
    )


def _gripper_spec(cfg: GripperSettings, model, key: str, where: str) -> GripperSpec:
    import mujoco

    ids = tuple(lookup(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a, model.nu, "actuator",
                       f"{key}.actuators", where) for a in cfg.actuators)
    for a, i in zip(cfg.actuators, ids, strict=True):
        if model.actuator_ctrllimited[i]:
            lo, hi = model.actuator_ctrlrange[i]
            for label, v in (("open", cfg.open), ("closed", cfg.closed)):
                if not lo - 1e-12 <= v <= hi + 1e-12:
                    raise ConfigError(f"{key}.{label}={v} is outside actuator {a!r}'s ctrlrange "
                                      f"[{lo}, {hi}]")
    return GripperSpec(actuators=cfg.actuators, actuator_ids=ids, open=cfg.open, closed=cfg.closed,
                       settings=cfg)
