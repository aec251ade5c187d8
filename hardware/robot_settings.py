"""The robot config (``conf/robot/*.yaml``, the ``robot`` group) as one tree of frozen settings.

``robot_settings(config)`` reads it with :func:`core.settings.from_config` (every key and type
checked, ints accepted for floats, the full key in every error); ``schema(RobotSettings)`` is the
Hydra structured config of the same tree. What needs the compiled model (names, joint ranges,
actuator ranges) is checked by :meth:`hardware.robot.RobotSpec.from_config`.

.. code-block:: yaml

    name: twin_panda
    mjcf: hardware/models/twin_panda.xml   # one file (absolute, repo-relative or pkg://...), or
    build: {base: ..., arms: ...}          # a rig built from parts (hardware.assembly)
    clearance_m: 0.005
    arms:
      left:
        joints: [left_joint1, ..., left_joint7]
        ee_site: left_grip_site
        gripper: {actuators: [left_fingers], open: 0.04, closed: 0.0}   # optional
        velocity_limits: [...]        # optional, rad/s (m/s)
        acceleration_limits: [...]    # optional, rad/s^2 (m/s^2)
    home: {left: [...], right: [...]}  # per arm, one value per joint (ints welcome)
    fixed_joints: {<joint>: value}     # joints outside every arm, held there
    keyframe: <key>                    # else held at this keyframe of the robot file
    allowed_pairs: [[a, b], ...]       # geom or body names or globs that may touch
    collision_matrix: {samples: 200, never: false, cache: true}
    extra: {...}                       # robot-specific keys, free-form
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.errors import ConfigError
from core.settings import from_config, require
from hardware.resources import plain_config, resolve_resource
from hardware.srdf import read_srdf
from hardware.urdf import read_urdf

DEFAULT_CLEARANCE_M = 0.005


def _finite(values) -> bool:
    return all(math.isfinite(v) for v in values)


@dataclass(frozen=True)
class GripperSettings:
    """A gripper driven by position actuators: ``open``/``closed`` are their control values.

    The rest describes a parallel-jaw gripper for grasping (:mod:`hardware.gripper`); what is
    left out is derived from the robot file and measured on it."""

    actuators: tuple[str, ...]
    open: float = 0.04
    closed: float = 0.0
    finger_joints: tuple[str, ...] | None = None   # default: the joints the actuators move (and coupled)
    pads: tuple[str, ...] | None = None            # geoms the fingers hold with; default: collision geoms
    closing_axis: tuple[float, float, float] = (0.0, 1.0, 0.0)   # in the ee site's frame
    approach_axis: tuple[float, float, float] = (0.0, 0.0, 1.0)  # in the ee site's frame
    grasp_depth_m: float = 0.02                    # the ee site this far below a grasped object's top face
    opening_m: tuple[float, float] | None = None   # [closed, open] pad to pad; checked against the model

    def __post_init__(self):
        require(len(self.actuators) > 0, "actuators", list(self.actuators),
                "a non-empty list of actuator names")
        require(_finite((self.open, self.closed)), "open", (self.open, self.closed),
                "finite control values")
        require(self.grasp_depth_m >= 0, "grasp_depth_m", self.grasp_depth_m, ">= 0 (m)")
        ok = self.opening_m is None or (len(self.opening_m) == 2 and self.opening_m[0] < self.opening_m[1])
        require(ok, "opening_m", self.opening_m, "[closed, open] (m), closed < open")


@dataclass(frozen=True)
class ArmSettings:
    """One arm: its joints from base to gripper, its end-effector site, optional limits."""

    ee_site: str
    joints: tuple[str, ...] = ()   # base to gripper; or from an SRDF planning group:
    group: str | None = None       # its joints, in chain order, with the arm's prefix
    gripper: GripperSettings | None = None
    velocity_limits: tuple[float, ...] | None = None  # rad/s (m/s); else the MJCF's, else defaults
    acceleration_limits: tuple[float, ...] | None = None  # rad/s^2 (m/s^2)

    def __post_init__(self):
        require(len(self.joints) > 0, "joints", list(self.joints),
                "a non-empty list of joint names (or group: a planning group of the arm's SRDF)")
        twice = sorted({j for j in self.joints if self.joints.count(j) > 1})
        require(not twice, "joints", list(self.joints), f"each joint once (listed twice: {twice})")
        for name in ("velocity_limits", "acceleration_limits"):
            v = getattr(self, name)
            require(v is None or (len(v) == len(self.joints) and _finite(v) and min(v) > 0), name,
                    None if v is None else list(v),
                    f"{len(self.joints)} limits (one per joint), every limit > 0")


@dataclass(frozen=True)
class CollisionMatrixSettings:
    samples: int = 200     # configurations sampled for the "always" (and opt-in "never") rules
    never: bool = False    # also allow pairs never within clearance over the samples (a speed option)
    cache: bool = True     # reuse the matrix computed for the same robot file and settings


@dataclass(frozen=True)
class RobotSettings:
    """The whole ``robot`` config group (see the module docstring)."""

    name: str = "robot"
    mjcf: str | None = None   # one file holding every arm (absolute, relative to the repo root, or pkg://...)
    build: dict[str, Any] | None = None   # or a rig built from parts (hardware.assembly.BuildSettings)
    clearance_m: float = DEFAULT_CLEARANCE_M   # true distance between geometry that may not touch
    arms: dict[str, ArmSettings] = field(default_factory=dict)
    home: dict[str, tuple[float, ...]] = field(default_factory=dict)   # per arm; else qpos0 clipped
    fixed_joints: dict[str, float] = field(default_factory=dict)   # joints outside every arm, held here
    keyframe: str | None = None   # else held at this keyframe of the robot file
    allowed_pairs: tuple[tuple[str, ...], ...] = ()   # [geom or body name or glob, same]
    collision_matrix: CollisionMatrixSettings = field(default_factory=CollisionMatrixSettings)
    extra: dict[str, Any] = field(default_factory=dict)   # robot-specific keys, free-form

    def __post_init__(self):
        require(math.isfinite(self.clearance_m) and self.clearance_m >= 0, "clearance_m",
                self.clearance_m, "a distance >= 0 (metres)")
        require(len(self.arms) > 0, "arms", self.arms,
                "a mapping of arm names to {joints, ee_site, ...}, at least one arm")
        seen: dict[str, str] = {}
        for arm, a in self.arms.items():
            for j in a.joints:
                require(j not in seen, f"arms.{arm}.joints", list(a.joints),
                        f"joints of no other arm ({j!r} is listed in both arms {seen.get(j)!r} and "
                        f"{arm!r}; each joint belongs to one arm)")
                seen[j] = arm
        for arm, q in self.home.items():
            require(arm in self.arms, f"home.{arm}", list(q),
                    f"a home for an arm of robot.arms: {sorted(self.arms)}")
            n = len(self.arms[arm].joints)
            require(len(q) == n and _finite(q), f"home.{arm}", list(q),
                    f"{n} finite joint values (one per joint of arm {arm!r})")
        for joint, v in self.fixed_joints.items():
            require(math.isfinite(v), f"fixed_joints.{joint}", v, "a finite joint value")


def robot_settings(config: Mapping[str, Any] | RobotSettings | None, key: str = "robot") -> RobotSettings:
    """The robot config (a mapping, an OmegaConf node or settings already) as :class:`RobotSettings`;
    an arm given as ``group:`` (no ``joints``) gets its SRDF group's chain (:func:`_group_joints`)."""
    if isinstance(config, RobotSettings):
        return config
    return from_config(RobotSettings, _group_joints(plain_config(config) or {}, key), key)


def _group_joints(cfg: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``arms.<arm>.joints`` filled from ``arms.<arm>.group``: that planning group of the SRDF of the
    build part ``<arm>``, one kinematic chain base to tip, each joint ``<arm>/<name>``."""
    arms = cfg.get("arms") if isinstance(cfg, Mapping) else None
    wanted = [a for a, s in (arms or {}).items()
              if isinstance(s, Mapping) and s.get("group") and not s.get("joints")]
    if not wanted:
        return cfg
    parts = ((cfg.get("build") or {}).get("arms") or {})
    filled = dict(arms)
    for arm in wanted:
        where, part = f"{key}.arms.{arm}.group", parts.get(arm) or {}
        if not (part.get("urdf") and part.get("srdf")):
            raise ConfigError(f"{where}={arms[arm]['group']!r}: a planning group needs the arm's SRDF "
                              f"({key}.build.arms.{arm}.urdf and .srdf); or list {key}.arms.{arm}.joints")
        chain = _srdf_chain(str(part["urdf"]), str(part["srdf"]), str(arms[arm]["group"]), where)
        filled[arm] = {**arms[arm], "joints": [f"{arm}/{j}" for j in chain]}
    return {**cfg, "arms": filled}


@functools.lru_cache(maxsize=32)
def _srdf_chain(urdf: str, srdf: str, group: str, where: str) -> tuple[str, ...]:
    robot = read_urdf(resolve_resource(urdf, f"{where} (urdf)"), urdf)
    return read_srdf(resolve_resource(srdf, f"{where} (srdf)"), robot, srdf).chain(group, where)
