"""A robot as the planner sees it: arms, joints, limits, end-effector sites, home.

``RobotSpec.from_config(config, model)`` checks a robot config (SPEC section 1's schema,
as a plain dict) against a compiled MuJoCo model and resolves every name to indices:

.. code-block:: yaml

    name: twin_panda
    mjcf: hardware/models/twin_panda.xml   # absolute, or relative to the repo root
    clearance_m: 0.005
    arms:
      left:
        joints: [left_joint1, ..., left_joint7]
        ee_site: left_grip_site
        gripper: {actuators: [left_fingers], open: 0.04, closed: 0.0}   # optional
        velocity_limits: [...]        # optional
        acceleration_limits: [...]    # optional
    home: {left: [...], right: [...]}

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parent.parent
"""Relative ``mjcf`` paths are resolved against this (the parent of the ``hardware`` package)."""

DEFAULT_VELOCITY_LIMIT = 1.0  # rad/s (m/s for slide joints), used when neither config nor MJCF say
DEFAULT_ACCELERATION_LIMIT = 2.0  # rad/s^2 (m/s^2)
DEFAULT_HINGE_RANGE_RAD = (-math.pi, math.pi)  # for hinge joints without a range in the MJCF
DEFAULT_CLEARANCE_M = 0.005


@dataclass(frozen=True)
class GripperSpec:
    """A gripper driven by position actuators: ``open``/``closed`` are their control values."""

    actuators: tuple[str, ...]
    actuator_ids: tuple[int, ...]
    open: float
    closed: float


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
    middle of their range where ``qpos0`` is outside it)."""

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_config(cls, config: Mapping[str, Any], model) -> RobotSpec:
        """Validate ``config`` (SPEC section 1's robot schema) against a compiled ``MjModel``."""
        cfg = _plain(config)
        if not isinstance(cfg, Mapping):
            raise ConfigError(f"robot config must be a mapping, got {type(cfg).__name__}")
        name = str(cfg.get("name", "robot"))
        mjcf = cfg.get("mjcf")
        mjcf_path = (resolve_mjcf_path(mjcf, check_exists=False) if mjcf
                     else Path(f"<robot.build {name}>") if cfg.get("build") else Path("<model>"))
        clearance = _number(cfg.get("clearance_m", DEFAULT_CLEARANCE_M), "robot.clearance_m")
        if clearance < 0:
            raise ConfigError(f"robot.clearance_m must be >= 0 (metres), got {clearance}")
        arms_cfg = cfg.get("arms")
        if not isinstance(arms_cfg, Mapping) or not arms_cfg:
            raise ConfigError("robot.arms must map arm names to {joints, ee_site, ...}; "
                              f"got {arms_cfg!r}")
        home_cfg = cfg.get("home") or {}
        if not isinstance(home_cfg, Mapping):
            raise ConfigError(f"robot.home must map arm names to joint lists, got {home_cfg!r}")
        unknown = sorted(set(home_cfg) - set(arms_cfg))
        if unknown:
            raise ConfigError(f"robot.home names arm(s) {unknown} that are not in robot.arms; "
                              f"arms: {sorted(arms_cfg)}")
        where = mjcf if mjcf else "the model"
        arms = []
        seen: dict[str, str] = {}
        for arm_name, arm_cfg in arms_cfg.items():
            arm = _arm_spec(str(arm_name), arm_cfg, home_cfg.get(arm_name), model, where)
            for j in arm.joints:
                if j in seen:
                    raise ConfigError(f"joint {j!r} is listed in both arms {seen[j]!r} and "
                                      f"{arm.name!r}; each joint belongs to one arm")
                seen[j] = arm.name
            arms.append(arm)
        return cls(name=name, mjcf=mjcf_path, clearance_m=clearance, arms=tuple(arms),
                   held_joints=_held_joints(cfg, model, seen, where))

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


# ---------------------------------------------------------------------- helpers
def resolve_mjcf_path(path: str | Path, *, check_exists: bool = True) -> Path:
    """An absolute ``mjcf`` path as is; a relative one against the repo root (:data:`REPO_ROOT`)."""
    if path is None or str(path).strip() == "":
        raise ConfigError("robot.mjcf is empty; give an MJCF path (absolute, or relative to "
                          f"{REPO_ROOT}, or pkg://<package>/<file>)")
    if str(path).startswith("pkg://"):
        from hardware.assembly import resolve_resource

        return resolve_resource(str(path), "robot.mjcf")
    p = Path(str(path)).expanduser()
    if not p.is_absolute():
        p = REPO_ROOT / p
    p = p.resolve()
    if check_exists and not p.is_file():
        raise ConfigError(f"robot.mjcf: no file at {p} (relative paths are resolved against "
                          f"{REPO_ROOT})")
    return p


def load_robot(config: Mapping[str, Any]):
    """Compile the config's MJCF and validate the config against it: ``(MjModel, RobotSpec)``."""
    import mujoco

    cfg = _plain(config)
    path = resolve_mjcf_path(cfg.get("mjcf") if isinstance(cfg, Mapping) else None)
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise ConfigError(f"robot.mjcf {path} does not compile: {e}") from e
    return model, RobotSpec.from_config(cfg, model)


def _plain(config: Any) -> Any:
    """OmegaConf containers become plain dicts/lists; anything else is returned as is."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # pragma: no cover - omegaconf is a core dependency
        return config
    if isinstance(config, DictConfig | ListConfig):
        return OmegaConf.to_container(config, resolve=True)
    return config


def _names(model, objtype, count: int) -> list[str]:
    import mujoco

    return [mujoco.mj_id2name(model, objtype, i) or f"<unnamed {i}>" for i in range(count)]


def _lookup(model, objtype, name: str, count: int, what: str, key: str, where: str) -> int:
    import mujoco

    if not isinstance(name, str):
        raise ConfigError(f"{key}: expected a {what} name (string), got {name!r}")
    i = mujoco.mj_name2id(model, objtype, name)
    if i < 0:
        real = [n for n in _names(model, objtype, count) if not n.startswith("<unnamed")]
        raise ConfigError(f"{key}: {what} {name!r} is not in {where}; {what}s in the model: "
                          f"{', '.join(real) if real else '(none)'}")
    return int(i)


def _number(x: Any, key: str) -> float:
    if isinstance(x, bool):
        raise ConfigError(f"{key}: expected a number, got {x!r}")
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ConfigError(f"{key}: expected a number, got {x!r}") from None
    if not math.isfinite(v):
        raise ConfigError(f"{key}: expected a finite number, got {x!r}")
    return v


def _vector(x: Any, n: int, key: str, *, positive: bool = False) -> tuple[float, ...]:
    if isinstance(x, str | bytes) or not isinstance(x, Sequence | np.ndarray):
        raise ConfigError(f"{key}: expected a list of {n} numbers, got {x!r}")
    if len(x) != n:
        raise ConfigError(f"{key}: expected {n} values (one per joint), got {len(x)}")
    v = tuple(_number(e, f"{key}[{i}]") for i, e in enumerate(x))
    if positive and any(e <= 0 for e in v):
        raise ConfigError(f"{key}: every limit must be > 0, got {list(v)}")
    return v


def _custom_numeric(model, name: str) -> float | None:
    import mujoco

    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, name)
    if i < 0 or model.numeric_size[i] < 1:
        return None
    return float(model.numeric_data[model.numeric_adr[i]])


def _limits(model, cfg_value, joints, key, suffix, default) -> tuple[float, ...]:
    if cfg_value is not None:
        return _vector(cfg_value, len(joints), key, positive=True)
    out = []
    for j in joints:
        v = _custom_numeric(model, f"{j}_{suffix}")
        out.append(default if v is None or v <= 0 else v)
    return tuple(out)


def _arm_spec(name: str, cfg: Any, home_cfg: Any, model, where: str) -> ArmSpec:
    import mujoco

    key = f"robot.arms.{name}"
    if not isinstance(cfg, Mapping):
        raise ConfigError(f"{key} must be a mapping with joints and ee_site, got {cfg!r}")
    joints = cfg.get("joints")
    if isinstance(joints, str) or not isinstance(joints, Sequence) or not joints:
        raise ConfigError(f"{key}.joints must be a non-empty list of joint names, got {joints!r}")
    joints = tuple(joints)
    joint_ids = tuple(_lookup(model, mujoco.mjtObj.mjOBJ_JOINT, j, model.njnt, "joint",
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
    _check_chain(model, joints, joint_ids, key)
    site = cfg.get("ee_site")
    site_id = _lookup(model, mujoco.mjtObj.mjOBJ_SITE, site, model.nsite, "site",
                      f"{key}.ee_site", where)
    vel = _limits(model, cfg.get("velocity_limits"), joints, f"{key}.velocity_limits",
                  "max_velocity", DEFAULT_VELOCITY_LIMIT)
    acc = _limits(model, cfg.get("acceleration_limits"), joints, f"{key}.acceleration_limits",
                  "max_acceleration", DEFAULT_ACCELERATION_LIMIT)
    gripper = _gripper_spec(cfg.get("gripper"), model, f"{key}.gripper", where)

    if home_cfg is None:  # qpos0 clipped into the limits
        home = tuple(float(np.clip(model.qpos0[model.jnt_qposadr[jid]], lo, hi))
                     for jid, lo, hi in zip(joint_ids, lower, upper, strict=True))
    else:
        home = _vector(home_cfg, len(joints), f"robot.home.{name}")
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
        ee_site=site,
        ee_site_id=site_id,
        home=home,
        joint_actuator_ids=tuple(act_ids),
        gripper=gripper,
    )


def _check_chain(model, joints: Sequence[str], joint_ids: Sequence[int], key: str) -> None:
    """An arm's joints, in order, must be one kinematic chain: each joint's body at or below the last's."""
    def ancestors(body: int) -> set[int]:
        out = {body}
        while body:
            body = int(model.body_parentid[body])
            out.add(body)
        return out

    for k in range(1, len(joint_ids)):
        j0, j1, i0, i1 = joints[k - 1], joints[k], joint_ids[k - 1], joint_ids[k]
        if int(model.jnt_bodyid[i0]) not in ancestors(int(model.jnt_bodyid[i1])):
            raise ConfigError(f"{key}.joints are not one kinematic chain: {j1!r} is not below {j0!r} "
                              "(list an arm's joints from its base to its gripper)")


def _held_joints(cfg: Mapping[str, Any], model, arm_joints: Mapping[str, str],
                 where: str) -> tuple[tuple[int, float], ...]:
    """Where the joints outside every arm are held (see :attr:`RobotSpec.held_joints`)."""
    import mujoco

    fixed = cfg.get("fixed_joints") or {}
    if not isinstance(fixed, Mapping):
        raise ConfigError(f"robot.fixed_joints must map joint names to values, got {fixed!r}")
    key_name = cfg.get("keyframe")
    key_q = None
    if key_name is not None:
        k = _lookup(model, mujoco.mjtObj.mjOBJ_KEY, key_name, model.nkey, "keyframe", "robot.keyframe", where)
        key_q = model.key_qpos[k]
    hinge, slide = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
    held: dict[int, float] = {}
    for name, value in fixed.items():
        jid = _lookup(model, mujoco.mjtObj.mjOBJ_JOINT, str(name), model.njnt, "joint",
                      "robot.fixed_joints", where)
        if name in arm_joints:
            raise ConfigError(f"robot.fixed_joints.{name}: the joint belongs to arm {arm_joints[name]!r}; "
                              "fixed joints are the ones outside every arm")
        if int(model.jnt_type[jid]) not in (hinge, slide):
            raise ConfigError(f"robot.fixed_joints.{name}: only hinge or slide joints can be held")
        v = _number(value, f"robot.fixed_joints.{name}")
        if model.jnt_limited[jid] and not model.jnt_range[jid, 0] <= v <= model.jnt_range[jid, 1]:
            raise ConfigError(f"robot.fixed_joints.{name}={v} is outside its range "
                              f"{model.jnt_range[jid].tolist()}")
        held[int(model.jnt_qposadr[jid])] = v
    for jid in range(model.njnt):
        adr = int(model.jnt_qposadr[jid])
        jname = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, jid)
        if adr in held or jname in arm_joints or int(model.jnt_type[jid]) not in (hinge, slide):
            continue
        if key_q is not None:
            held[adr] = float(key_q[adr])
        elif model.jnt_limited[jid] and not (model.jnt_range[jid, 0] <= model.qpos0[adr]
                                             <= model.jnt_range[jid, 1]):
            held[adr] = float(model.jnt_range[jid].mean())
    return tuple(sorted(held.items()))


def _gripper_spec(cfg: Any, model, key: str, where: str) -> GripperSpec | None:
    import mujoco

    if cfg is None:
        return None
    if not isinstance(cfg, Mapping):
        raise ConfigError(f"{key} must be {{actuators: [...], open: x, closed: y}}, got {cfg!r}")
    acts = cfg.get("actuators")
    if isinstance(acts, str):
        acts = [acts]
    if not isinstance(acts, Sequence) or not acts:
        raise ConfigError(f"{key}.actuators must be a non-empty list of actuator names")
    ids = tuple(_lookup(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a, model.nu, "actuator",
                        f"{key}.actuators", where) for a in acts)
    open_ = _number(cfg.get("open", 0.04), f"{key}.open")
    closed = _number(cfg.get("closed", 0.0), f"{key}.closed")
    for a, i in zip(acts, ids, strict=True):
        if model.actuator_ctrllimited[i]:
            lo, hi = model.actuator_ctrlrange[i]
            for label, v in (("open", open_), ("closed", closed)):
                if not lo - 1e-12 <= v <= hi + 1e-12:
                    raise ConfigError(f"{key}.{label}={v} is outside actuator {a!r}'s ctrlrange "
                                      f"[{lo}, {hi}]")
    return GripperSpec(actuators=tuple(acts), actuator_ids=ids, open=open_, closed=closed)
