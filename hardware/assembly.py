"""Compose a robot from MJCF parts with ``mujoco.MjSpec``, by config alone.

A *part* is ``{file: <MJCF>}``, ``{urdf: <URDF>, srdf: <SRDF, optional>}`` (:mod:`hardware.urdf`:
collision geometry, ``package://`` meshes found, a site per link; the SRDF is checked against it
here and used by the collision matrix and named goals, :mod:`hardware.semantics`) or, for packages
that ship ``<mujocoinclude>`` fragments,
``{fragments: {assets: [...], worldbody: [...], actuators: [...], meshdir: <dir>, texturedir: <dir>,
angle: radian}}``; ``root_body: <name>`` keeps only that body's subtree (e.g. drops Fetch's mocap
body and weld). Paths: absolute, relative to the repo root, or ``pkg://<package>/<path inside it>``.
Asset paths are made absolute, so the assembled spec's ``to_xml()`` loads from anywhere.

A build (``robot.build``, read as :class:`BuildSettings`)::

    base: {box: {size: [hx, hy, hz], pos: [x, y, z], rgba: [...]}}  # or a part (prefix "base/"); or absent
    arms:
      <arm>:                          # a part, on the base body (or the world), prefix "<arm>/"
        file: pkg://dm_control/third_party/kinova/jaco_arm.xml
        mount: {pos: [x, y, z], quat: [w, x, y, z]}   # or euler_deg: [rx, ry, rz] (extrinsic x, y, z)
        gripper: {file: ..., site: <site in the arm> | body: <body in the arm>, mount: {...}}  # "hand/"
        position_actuators: {joints: [...], kp: 100 | [...], kv: 0 | [...], forcerange: [lo, hi] | [[..]]}
        gravcomp: false               # true: the arm's controller cancels gravity
    integrator: Euler                 # or implicitfast (MuJoCo's option), RK4, implicit

Compiled names are ``<arm>/<name>`` and ``<arm>/hand/<name>``. ``position_actuators.joints`` are
the arm part's own names (a gripper joint is ``hand/<name>``); each gets a position actuator named
like the joint, ``ctrlrange`` = the joint's range. A gripper needs actuators of its own or
position actuators on its joints. Every error is a ``ConfigError`` naming the config key.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import quoteattr

import numpy as np

from core.errors import ConfigError
from core.settings import from_config, require
from hardware.resources import INSTALL_HINT, PKG_SCHEME, REPO_ROOT, plain_config, resolve_resource
from hardware.srdf import read_srdf
from hardware.urdf import read_urdf, urdf_spec

__all__ = ["INSTALL_HINT", "PKG_SCHEME", "REPO_ROOT", "BuildSettings", "assemble", "resolve_resource"]

_SIZE_FIELDS = ("nconmax", "njmax", "nkey", "nuserdata", "nuser_actuator", "nuser_body", "nuser_cam",
                "nuser_geom", "nuser_jnt", "nuser_sensor", "nuser_site", "nuser_tendon")
Vec3 = tuple[float, float, float]


# ---------------------------------------------------------------------- settings
@dataclass(frozen=True)
class FragmentsSettings:
    """``<mujocoinclude>`` fragment files wrapped into one MJCF."""

    assets: tuple[str, ...] = ()
    worldbody: tuple[str, ...] = ()
    actuators: tuple[str, ...] = ()
    meshdir: str | None = None
    texturedir: str | None = None
    angle: Literal["radian", "degree"] = "radian"

    def __post_init__(self):
        require(len(self.worldbody) > 0, "worldbody", list(self.worldbody),
                "at least one fragment file with the robot's bodies")


@dataclass(frozen=True)
class _PartFile:
    """Where a part's model comes from (one of ``file``, ``fragments`` or ``urdf``), which subtree to keep."""

    file: str | None = None
    fragments: FragmentsSettings | None = None
    urdf: str | None = None
    srdf: str | None = None   # beside a urdf: its semantics (collision pairs, groups, named states)
    root_body: str | None = None

    def __post_init__(self):
        require([self.file, self.fragments, self.urdf].count(None) == 2, "file", self.file,
                "exactly one of file: <MJCF path>, urdf: <URDF path> or fragments: {assets, worldbody, "
                "actuators, meshdir, texturedir, angle}")
        require(self.srdf is None or self.urdf is not None, "srdf", self.srdf, "an SRDF beside a urdf: only")


@dataclass(frozen=True)
class MountSettings:
    """A part's pose on its parent: ``pos`` and ``quat`` [w, x, y, z] or ``euler_deg`` (extrinsic x, y, z)."""

    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] | None = None
    euler_deg: Vec3 | None = None

    def __post_init__(self):
        require(self.quat is None or self.euler_deg is None, "euler_deg", self.euler_deg,
                "quat or euler_deg, not both")
        require(self.quat is None or float(np.linalg.norm(self.quat)) >= 1e-9, "quat", self.quat,
                "a non-zero quaternion [w, x, y, z]")


@dataclass(frozen=True)
class HandSettings(_PartFile):
    """A gripper part, attached at a ``site`` or a ``body`` of its arm part (prefix ``hand/``)."""

    site: str | None = None
    body: str | None = None
    mount: MountSettings = field(default_factory=MountSettings)

    def __post_init__(self):
        super().__post_init__()
        require((self.site is None) != (self.body is None), "site", self.site,
                "exactly one of site: <site in the arm part> or body: <body in it>")


@dataclass(frozen=True)
class PositionActuatorsSettings:
    """Position actuators added on the part's joints: gains per joint or one for all."""

    joints: tuple[str, ...]
    kp: float | tuple[float, ...]
    kv: float | tuple[float, ...] = 0.0
    forcerange: tuple[float, float] | tuple[tuple[float, float], ...] | None = None   # one, or per joint

    def __post_init__(self):
        require(len(self.joints) > 0, "joints", list(self.joints), "a non-empty list of joint names")


@dataclass(frozen=True)
class PartSettings(_PartFile):
    """An arm part: its file, where it is mounted, its gripper, actuators to add, gravity compensation."""

    mount: MountSettings = field(default_factory=MountSettings)
    gripper: HandSettings | None = None
    position_actuators: PositionActuatorsSettings | None = None
    gravcomp: bool = False   # the controller cancels gravity, as a real arm's does


@dataclass(frozen=True)
class BoxSettings:
    size: Vec3   # half extents, m
    pos: Vec3 = (0.0, 0.0, 0.0)
    rgba: tuple[float, float, float, float] = (0.5, 0.5, 0.55, 1.0)

    def __post_init__(self):
        require(min(self.size) > 0, "size", list(self.size), "half extents > 0 (m)")


@dataclass(frozen=True)
class BaseSettings(_PartFile):
    """What the arms are mounted on: a ``box`` body named ``base``, or a part (prefix ``base/``)."""

    box: BoxSettings | None = None

    def __post_init__(self):
        if self.box is None:
            super().__post_init__()
        require(self.box is None or (self.file is None and self.fragments is None and self.urdf is None
                                     and self.root_body is None),
                "box", self.box, "a box or a part (file/fragments), not both")


@dataclass(frozen=True)
class BuildSettings:
    """``robot.build``: the arms on a base (or on the world)."""

    base: BaseSettings | None = None
    arms: dict[str, PartSettings] = field(default_factory=dict)
    # MuJoCo's integrator; implicitfast integrates the actuators' kv implicitly (light links, as a
    # URDF's, without the armature a MJCF file gives them, are stable at the 2 ms step)
    integrator: Literal["Euler", "RK4", "implicit", "implicitfast"] = "Euler"

    def __post_init__(self):
        require(len(self.arms) > 0, "arms", self.arms,
                "a mapping of arm names to parts ({file: ...} or {fragments: ...})")


# ---------------------------------------------------------------------- public API
def assemble(build: Mapping | BuildSettings, key: str = "robot.build"):
    """The robot of ``build`` as an uncompiled ``mujoco.MjSpec`` (the caller adds the scene)."""
    import mujoco

    cfg = from_config(BuildSettings, plain_config(build), key)   # OmegaConf -> plain -> settings
    spec = mujoco.MjSpec()
    spec.modelname = "robot"
    spec.option.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{cfg.integrator.upper()}")
    base = _add_base(spec, cfg.base, f"{key}.base")
    for name, arm in cfg.arms.items():
        akey = f"{key}.arms.{name}"
        part = _build_arm(arm, akey)
        _attach(spec, base.add_frame(**_mount(arm.mount)), part, f"{name}/")
    return spec


# ---------------------------------------------------------------------- parts
def _load(cfg: _PartFile, key: str):
    """``(spec, compiled model, root body or None)``; compiling checks that asset files resolve."""
    if cfg.file is not None:
        spec = _from_file(resolve_resource(cfg.file, f"{key}.file"), key)
    elif cfg.urdf is not None:
        path = resolve_resource(cfg.urdf, f"{key}.urdf")
        spec = urdf_spec(path, f"{key}.urdf")
        if cfg.srdf is not None:   # every name and named state checked against the URDF
            read_srdf(resolve_resource(cfg.srdf, f"{key}.srdf"), read_urdf(path, f"{key}.urdf"),
                      f"{key}.srdf")
    else:
        spec = _from_fragments(cfg.fragments, f"{key}.fragments")
    root = None if cfg.root_body is None else spec.body(cfg.root_body)
    if cfg.root_body is not None and (root is None or root.name == "world"):
        raise ConfigError(f"{key}.root_body={cfg.root_body!r} is not a body of the part; bodies: "
                          f"{_names(spec, None, 'BODY')}")
    here = Path(spec.modelfiledir or ".")
    for assets, folder in ((spec.meshes, spec.meshdir), (spec.hfields, spec.meshdir),
                           (spec.skins, spec.meshdir), (spec.textures, spec.texturedir)):
        for a in assets:  # absolute paths survive attaching and to_xml()
            if a.file and not Path(a.file).is_absolute():
                a.file = str((here / (folder or "") / a.file).resolve())
    try:
        return spec, spec.compile(), root
    except Exception as e:
        msg = str(e).strip()
        missing = re.search(r"Error opening file '([^']*)'", msg)
        if missing:
            raise ConfigError(f"{key}: asset file {missing.group(1)} does not resolve (check the part's "
                              f"meshdir/texturedir); MuJoCo: {msg}") from e
        raise ConfigError(f"{key}: the part does not compile: {msg}") from e


def _from_file(path: Path, key: str):
    import mujoco

    try:
        return mujoco.MjSpec.from_file(str(path))
    except Exception as e:
        raise ConfigError(f"{key}: {path} does not load as MJCF: {e}") from e


def _from_fragments(frag: FragmentsSettings, key: str):
    """A wrapper MJCF: asset includes, then ``<compiler>`` (MuJoCo 4.0.1 needs it after them)."""
    inc = {sec: [f"<include file={quoteattr(str(resolve_resource(f, f'{key}.{sec}[{i}]')))}/>"
                 for i, f in enumerate(getattr(frag, sec))]
           for sec in ("assets", "actuators", "worldbody")}
    compiler = f"<compiler angle={quoteattr(frag.angle)}" + "".join(
        f" {d}={quoteattr(str(resolve_resource(getattr(frag, d), f'{key}.{d}')) + '/')}"
        for d in ("meshdir", "texturedir") if getattr(frag, d) is not None) + "/>"
    xml = "\n".join(["<mujoco>", *inc["assets"], compiler, *inc["actuators"], "<worldbody>",
                     *inc["worldbody"], "</worldbody>", "</mujoco>", ""])
    with tempfile.TemporaryDirectory(prefix="choreograph_part_") as tmp:
        (Path(tmp) / "part.xml").write_text(xml)
        return _from_file(Path(tmp) / "part.xml", key)


# ---------------------------------------------------------------------- assembly
def _add_base(spec, cfg: BaseSettings | None, key: str):
    import mujoco

    if cfg is None:
        return spec.worldbody
    if cfg.box is None:
        part = _load(cfg, key)
        tops = [part[2].name] if part[2] is not None else [b.name for b in part[0].worldbody.bodies]
        if len(tops) != 1 or not tops[0]:
            raise ConfigError(f"{key}: a base part needs exactly one named top-level body to mount arms "
                              f"on; it has {tops} (set {key}.root_body)")
        _attach(spec, spec.worldbody.add_frame(), part, "base/")
        return spec.body(f"base/{tops[0]}")
    box = cfg.box
    body = spec.worldbody.add_body(name="base", pos=list(box.pos))
    body.add_geom(name="base_box", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(box.size), contype=1,
                  conaffinity=1, rgba=list(box.rgba))
    return body


def _build_arm(cfg: PartSettings, key: str):
    part = _load(cfg, key)
    gcfg, gkey, driven = cfg.gripper, f"{key}.gripper", []
    if gcfg is not None:
        hand = _load(gcfg, gkey)
        hand_joints = [f"hand/{n}" for n in _names(hand[0], hand[2], "JOINT")]
        hand_actuated = len(hand[0].actuators) > 0
        _attach(part[0], _gripper_frame(part, gcfg, gkey), hand, "hand/")
    if cfg.position_actuators is not None:
        driven = _add_position_actuators(part, cfg.position_actuators, f"{key}.position_actuators")
    if gcfg is not None and not hand_actuated and not set(hand_joints) & set(driven):
        raise ConfigError(f"{gkey}: a gripper file without actuators; add its joints {hand_joints} to "
                          f"{key}.position_actuators.joints")
    if cfg.gravcomp:   # the controller cancels gravity, as a real arm's does
        for body in part[0].bodies:
            body.gravcomp = 1.0
    return part


def _gripper_frame(arm, gcfg: HandSettings, key: str):
    """A frame on the arm at the gripper's site or body, offset by the gripper's ``mount``."""
    import mujoco

    spec, model, root = arm
    kind, name = ("site", gcfg.site) if gcfg.site is not None else ("body", gcfg.body)
    if name not in _names(spec, root, kind.upper()):
        raise ConfigError(f"{key}.{kind}={name!r} is not a {kind} of the arm part; {kind}s: "
                          f"{_names(spec, root, kind.upper())}")
    m = _mount(gcfg.mount)
    if gcfg.body is not None:
        return spec.body(name).add_frame(**m)
    sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name)
    p, q = np.zeros(3), np.zeros(4)  # the compiled site pose in its body (resolves euler, axisangle...)
    mujoco.mju_rotVecQuat(p, np.asarray(m["pos"], float), model.site_quat[sid])
    mujoco.mju_mulQuat(q, model.site_quat[sid], np.asarray(m["quat"], float))
    return spec.site(name).parent.add_frame(pos=(model.site_pos[sid] + p).tolist(), quat=q.tolist())


def _add_position_actuators(arm, cfg: PositionActuatorsSettings, key: str) -> list[str]:
    import mujoco

    spec, _, root = arm
    n, fr = len(cfg.joints), cfg.forcerange
    kp, kv = _per_joint(cfg.kp, n, f"{key}.kp", 1e-12), _per_joint(cfg.kv, n, f"{key}.kv")
    if fr is not None:
        per_joint = isinstance(fr[0], tuple)
        if per_joint and len(fr) != n:
            raise ConfigError(f"{key}.forcerange: expected [lo, hi] or {n} pairs (one per joint), "
                              f"got {len(fr)}")
        fr = [list(x) for x in (fr if per_joint else [fr] * n)]
    known = _names(spec, root, "JOINT")
    driven = {a.target for a in spec.actuators if a.trntype == mujoco.mjtTrn.mjTRN_JOINT}
    for i, name in enumerate(cfg.joints):
        if name not in known:
            raise ConfigError(f"{key}.joints[{i}]={name!r} is not a joint of the part; joints: {known}")
        if name in driven:
            raise ConfigError(f"{key}.joints[{i}]={name!r} already has an actuator in the part")
        driven.add(name)
        j = spec.joint(name)
        ranged = j.limited == mujoco.mjtLimited.mjLIMITED_TRUE or (
            j.limited == mujoco.mjtLimited.mjLIMITED_AUTO and j.range[0] < j.range[1])
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=kp[i], kv=kv[i], inheritrange=ranged)  # ctrlrange = the joint's range
        if fr is not None:
            act.forcelimited, act.forcerange = mujoco.mjtLimited.mjLIMITED_TRUE, fr[i]
    return list(cfg.joints)


def _attach(parent, frame, part, prefix: str) -> None:
    """Attach a part at ``frame``: its whole spec, or only its root body's subtree."""
    spec, _, root = part
    _merge_sizes(parent, spec)
    if root is None:
        parent.attach(spec, prefix=prefix, frame=frame)
    else:
        frame.attach_body(root, prefix, "")


def _mount(cfg: MountSettings) -> dict[str, list[float]]:
    """``{pos, quat}`` of a mount: ``quat`` [w, x, y, z] as given, or from ``euler_deg`` (extrinsic)."""
    import mujoco

    q = np.array(cfg.quat if cfg.quat is not None else (1.0, 0.0, 0.0, 0.0))
    for axis, deg in enumerate(cfg.euler_deg or ()):
        r = np.zeros(4)  # extrinsic: each rotation about a fixed axis multiplies from the left
        mujoco.mju_axisAngle2Quat(r, np.eye(3)[axis], math.radians(deg))
        mujoco.mju_mulQuat(q, r, q.copy())
    return {"pos": list(cfg.pos), "quat": (q / np.linalg.norm(q)).tolist()}


# ---------------------------------------------------------------------- small helpers
def _merge_sizes(parent, child) -> None:
    """Size fields (nuser_actuator, ...) to the max of both, so attaching raises no conflict warning."""
    for f in _SIZE_FIELDS:
        setattr(parent, f, max(int(getattr(parent, f)), int(getattr(child, f))))


def _names(spec, root, kind: str) -> list[str]:
    """Sorted names of ``kind`` (BODY, JOINT, SITE) in the part (only ``root``'s subtree if set)."""
    import mujoco

    found = list((root or spec.worldbody).find_all(getattr(mujoco.mjtObj, f"mjOBJ_{kind}")))
    return sorted({e.name for e in found + ([root] if root is not None and kind == "BODY" else []) if e.name})


def _per_joint(x: float | tuple[float, ...], n: int, key: str, minimum: float = 0.0) -> list[float]:
    values = list(x) if isinstance(x, tuple) else [x] * n
    if len(values) != n or min(values) < minimum or not all(math.isfinite(v) for v in values):
        raise ConfigError(f"{key}: expected a number or a list of {n} numbers (one per joint), each "
                          f"{'> 0' if minimum > 0 else '>= 0'}; got {x!r}")
    return values
