"""Compose a robot from MJCF parts with ``mujoco.MjSpec``, by config alone.

A *part* is ``{file: <MJCF>}`` or, for packages that ship ``<mujocoinclude>`` fragments,
``{fragments: {assets: [...], worldbody: [...], actuators: [...], meshdir: <dir>, texturedir: <dir>,
angle: radian}}``; ``root_body: <name>`` keeps only that body's subtree (e.g. drops Fetch's mocap
body and weld). Paths: absolute, relative to the repo root, or ``pkg://<package>/<path inside it>``.
Asset paths are made absolute, so the assembled spec's ``to_xml()`` loads from anywhere.

A build (``robot.build``)::

    base: {box: {size: [hx, hy, hz], pos: [x, y, z], rgba: [...]}}  # or a part (prefix "base/"); or absent
    arms:
      <arm>:                          # a part, on the base body (or the world), prefix "<arm>/"
        file: pkg://dm_control/third_party/kinova/jaco_arm.xml
        mount: {pos: [x, y, z], quat: [w, x, y, z]}   # or euler_deg: [rx, ry, rz] (extrinsic x, y, z)
        gripper: {file: ..., site: <site in the arm> | body: <body in the arm>, mount: {...}}  # "hand/"
        position_actuators: {joints: [...], kp: 100 | [...], kv: 0 | [...], forcerange: [lo, hi] | [[..]]}

Compiled names are ``<arm>/<name>`` and ``<arm>/hand/<name>``. ``position_actuators.joints`` are
the arm part's own names (a gripper joint is ``hand/<name>``); each gets a position actuator named
like the joint, ``ctrlrange`` = the joint's range. A gripper needs actuators of its own or
position actuators on its joints. Every error is a ``ConfigError`` naming the config key.
"""

from __future__ import annotations

import importlib.util
import math
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from core.errors import ConfigError
from hardware.robot import REPO_ROOT, _number, _plain

PKG_SCHEME = "pkg://"
INSTALL_HINT = "pip install -e '.[robots]'"
_PART_KEYS = ("file", "fragments", "root_body")
_FRAGMENT_KEYS = ("assets", "worldbody", "actuators", "meshdir", "texturedir", "angle")
_SIZE_FIELDS = ("nconmax", "njmax", "nkey", "nuserdata", "nuser_actuator", "nuser_body", "nuser_cam",
                "nuser_geom", "nuser_jnt", "nuser_sensor", "nuser_site", "nuser_tendon")


def resolve_resource(path: str, key: str) -> Path:
    """``pkg://<package>/<path>`` inside an installed package; absolute as is; else repo-relative."""
    s = str(path if path is not None else "").strip()
    if not s:
        raise ConfigError(f"{key} is empty; give a path (absolute, relative to {REPO_ROOT}, "
                          f"or {PKG_SCHEME}<package>/<path>)")
    if s.startswith(PKG_SCHEME):
        package, _, inner = s[len(PKG_SCHEME):].partition("/")
        try:
            found = importlib.util.find_spec(package) if package else None
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise ConfigError(f"{key}: package {package!r} (for {s!r}) is not installed; install the "
                              f"robot packages with: {INSTALL_HINT}")
        dirs = [Path(d) for d in found.submodule_search_locations or []] or [Path(found.origin or ".").parent]
        p = next((d / inner for d in dirs if (d / inner).exists()), dirs[0] / inner)
    else:
        p = Path(s).expanduser()
        p = p if p.is_absolute() else REPO_ROOT / p
    p = p.resolve()
    if not p.exists():
        raise ConfigError(f"{key}: no file at {p} (from {s!r})")
    return p


def load_part(cfg: Mapping, key: str):
    """A part as a fresh ``mujoco.MjSpec`` (with ``root_body``: a spec holding only that subtree)."""
    import mujoco

    spec, _, root = _load(_plain(cfg), key, _PART_KEYS)
    if root is None:
        return spec
    if root.parent.name == "world":  # drop the other top-level bodies (and what refers to them)
        for body in [b for b in spec.worldbody.bodies if b.name != root.name]:
            spec.delete(body)
        return spec
    sub = mujoco.MjSpec()  # MuJoCo warns of the empty prefix; assemble() attaches subtrees directly
    _merge_sizes(sub, spec)
    sub.worldbody.add_frame().attach_body(root, "", "")
    return sub


def assemble(build: Mapping, key: str = "robot.build"):
    """The robot of ``build`` as an uncompiled ``mujoco.MjSpec`` (the caller adds the scene)."""
    import mujoco

    build = _section(_plain(build), key, ("base", "arms"))  # OmegaConf -> plain
    spec = mujoco.MjSpec()
    spec.modelname = "robot"
    base = _add_base(spec, build.get("base"), f"{key}.base")
    arms = _section(build.get("arms"), f"{key}.arms")
    if not arms:
        raise ConfigError(f"{key}.arms must map arm names to parts ({{file: ...}} or {{fragments: ...}})")
    for name, acfg in arms.items():
        akey = f"{key}.arms.{name}"
        part = _build_arm(_section(acfg, akey), akey)
        _attach(spec, base.add_frame(**_mount(acfg.get("mount"), f"{akey}.mount")), part, f"{name}/")
    return spec


# ---------------------------------------------------------------------- parts
def _load(cfg: Any, key: str, allowed: tuple[str, ...]):
    """``(spec, compiled model, root body or None)``; compiling checks that asset files resolve."""
    cfg = _section(cfg, key, allowed)
    if ("file" in cfg) == ("fragments" in cfg):
        raise ConfigError(f"{key} needs exactly one of file: <MJCF path> or fragments: "
                          f"{{{', '.join(_FRAGMENT_KEYS)}}}")
    if "file" in cfg:
        spec = _from_file(resolve_resource(cfg["file"], f"{key}.file"), key)
    else:
        spec = _from_fragments(_section(cfg["fragments"], f"{key}.fragments", _FRAGMENT_KEYS),
                               f"{key}.fragments")
    root = None if cfg.get("root_body") is None else spec.body(str(cfg["root_body"]))
    if cfg.get("root_body") is not None and (root is None or root.name == "world"):
        raise ConfigError(f"{key}.root_body={cfg['root_body']!r} is not a body of the part; bodies: "
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


def _from_fragments(frag: Mapping, key: str):
    """A wrapper MJCF: asset includes, then ``<compiler>`` (MuJoCo 4.0.1 needs it after them)."""
    inc: dict[str, list[str]] = {}
    for sec in ("assets", "actuators", "worldbody"):
        files = frag.get(sec) or []
        if isinstance(files, str) or not isinstance(files, list | tuple):
            raise ConfigError(f"{key}.{sec} must be a list of fragment files, got {files!r}")
        inc[sec] = [f"<include file={quoteattr(str(resolve_resource(f, f'{key}.{sec}[{i}]')))}/>"
                    for i, f in enumerate(files)]
    if not inc["worldbody"]:
        raise ConfigError(f"{key}.worldbody must list at least one fragment file with the robot's bodies")
    angle = str(frag.get("angle", "radian"))
    if angle not in ("radian", "degree"):
        raise ConfigError(f"{key}.angle must be radian or degree, got {angle!r}")
    compiler = f"<compiler angle={quoteattr(angle)}" + "".join(
        f" {d}={quoteattr(str(resolve_resource(frag[d], f'{key}.{d}')) + '/')}"
        for d in ("meshdir", "texturedir") if frag.get(d) is not None) + "/>"
    xml = "\n".join(["<mujoco>", *inc["assets"], compiler, *inc["actuators"], "<worldbody>",
                     *inc["worldbody"], "</worldbody>", "</mujoco>", ""])
    with tempfile.TemporaryDirectory(prefix="choreograph_part_") as tmp:
        (Path(tmp) / "part.xml").write_text(xml)
        return _from_file(Path(tmp) / "part.xml", key)


# ---------------------------------------------------------------------- assembly
def _add_base(spec, cfg: Any, key: str):
    import mujoco

    if cfg is None:
        return spec.worldbody
    if "box" not in _section(cfg, key):
        part = _load(cfg, key, _PART_KEYS)
        tops = [part[2].name] if part[2] is not None else [b.name for b in part[0].worldbody.bodies]
        if len(tops) != 1 or not tops[0]:
            raise ConfigError(f"{key}: a base part needs exactly one named top-level body to mount arms "
                              f"on; it has {tops} (set {key}.root_body)")
        _attach(spec, spec.worldbody.add_frame(), part, "base/")
        return spec.body(f"base/{tops[0]}")
    _section(cfg, key, ("box",))
    box = _section(cfg["box"], f"{key}.box", ("size", "pos", "rgba"))
    size = _vec(box.get("size"), 3, f"{key}.box.size")
    if min(size) <= 0:
        raise ConfigError(f"{key}.box.size (half extents, m) must be > 0, got {size}")
    body = spec.worldbody.add_body(name="base", pos=_vec(box.get("pos", [0, 0, 0]), 3, f"{key}.box.pos"))
    body.add_geom(name="base_box", type=mujoco.mjtGeom.mjGEOM_BOX, size=size, contype=1, conaffinity=1,
                  rgba=_vec(box.get("rgba", [0.5, 0.5, 0.55, 1]), 4, f"{key}.box.rgba"))
    return body


def _build_arm(cfg: Mapping, key: str):
    part = _load(cfg, key, _PART_KEYS + ("mount", "gripper", "position_actuators", "gravcomp"))
    gcfg, gkey, driven = cfg.get("gripper"), f"{key}.gripper", []
    if gcfg is not None:
        hand = _load(gcfg, gkey, _PART_KEYS + ("site", "body", "mount"))
        hand_joints = [f"hand/{n}" for n in _names(hand[0], hand[2], "JOINT")]
        hand_actuated = len(hand[0].actuators) > 0
        _attach(part[0], _gripper_frame(part, gcfg, gkey), hand, "hand/")
    if cfg.get("position_actuators") is not None:
        driven = _add_position_actuators(part, cfg["position_actuators"], f"{key}.position_actuators")
    if gcfg is not None and not hand_actuated and not set(hand_joints) & set(driven):
        raise ConfigError(f"{gkey}: a gripper file without actuators; add its joints {hand_joints} to "
                          f"{key}.position_actuators.joints")
    if cfg.get("gravcomp", False):   # the controller cancels gravity, as a real arm's does
        for body in part[0].bodies:
            body.gravcomp = 1.0
    return part


def _gripper_frame(arm, gcfg: Mapping, key: str):
    """A frame on the arm at the gripper's site or body, offset by the gripper's ``mount``."""
    import mujoco

    spec, model, root = arm
    site, body = gcfg.get("site"), gcfg.get("body")
    if (site is None) == (body is None):
        raise ConfigError(f"{key} needs exactly one of site: <site in the arm part> or body: <body in it>")
    kind, name = ("site", str(site)) if site is not None else ("body", str(body))
    if name not in _names(spec, root, kind.upper()):
        raise ConfigError(f"{key}.{kind}={name!r} is not a {kind} of the arm part; {kind}s: "
                          f"{_names(spec, root, kind.upper())}")
    m = _mount(gcfg.get("mount"), f"{key}.mount")
    if body is not None:
        return spec.body(name).add_frame(**m)
    sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name)
    p, q = np.zeros(3), np.zeros(4)  # the compiled site pose in its body (resolves euler, axisangle...)
    mujoco.mju_rotVecQuat(p, np.asarray(m["pos"], float), model.site_quat[sid])
    mujoco.mju_mulQuat(q, model.site_quat[sid], np.asarray(m["quat"], float))
    return spec.site(name).parent.add_frame(pos=(model.site_pos[sid] + p).tolist(), quat=q.tolist())


def _add_position_actuators(arm, cfg: Any, key: str) -> list[str]:
    import mujoco

    spec, _, root = arm
    cfg = _section(cfg, key, ("joints", "kp", "kv", "forcerange"))
    joints = cfg.get("joints")
    if isinstance(joints, str) or not isinstance(joints, list | tuple) or not joints:
        raise ConfigError(f"{key}.joints must be a non-empty list of joint names, got {joints!r}")
    n, fr = len(joints), cfg.get("forcerange")
    kp, kv = _per_joint(cfg.get("kp"), n, f"{key}.kp", 1e-12), _per_joint(cfg.get("kv", 0), n, f"{key}.kv")
    if fr is not None:
        pairs = isinstance(fr, list | tuple) and len(fr) == n and all(isinstance(x, list | tuple) for x in fr)
        fr = [_vec(x, 2, f"{key}.forcerange") for x in (fr if pairs else [fr] * n)]
    known = _names(spec, root, "JOINT")
    driven = {a.target for a in spec.actuators if a.trntype == mujoco.mjtTrn.mjTRN_JOINT}
    for i, name in enumerate(map(str, joints)):
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
    return [str(j) for j in joints]


def _attach(parent, frame, part, prefix: str) -> None:
    """Attach a part at ``frame``: its whole spec, or only its root body's subtree."""
    spec, _, root = part
    _merge_sizes(parent, spec)
    if root is None:
        parent.attach(spec, prefix=prefix, frame=frame)
    else:
        frame.attach_body(root, prefix, "")


def _mount(cfg: Any, key: str) -> dict[str, list[float]]:
    """``{pos, quat}`` from ``pos`` and ``quat`` [w, x, y, z] or ``euler_deg`` (extrinsic x, y, z)."""
    import mujoco

    cfg = _section(cfg, key, ("pos", "quat", "euler_deg"))
    if cfg.get("quat") is not None and cfg.get("euler_deg") is not None:
        raise ConfigError(f"{key}: give quat or euler_deg, not both")
    q = np.array(_vec(cfg.get("quat", [1, 0, 0, 0]), 4, f"{key}.quat"))
    if np.linalg.norm(q) < 1e-9:
        raise ConfigError(f"{key}.quat must be a non-zero quaternion [w, x, y, z], got {q.tolist()}")
    euler = cfg.get("euler_deg")
    for axis, deg in enumerate([] if euler is None else _vec(euler, 3, f"{key}.euler_deg")):
        r = np.zeros(4)  # extrinsic: each rotation about a fixed axis multiplies from the left
        mujoco.mju_axisAngle2Quat(r, np.eye(3)[axis], math.radians(deg))
        mujoco.mju_mulQuat(q, r, q.copy())
    return {"pos": _vec(cfg.get("pos", [0, 0, 0]), 3, f"{key}.pos"), "quat": (q / np.linalg.norm(q)).tolist()}


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


def _per_joint(x: Any, n: int, key: str, minimum: float = 0.0) -> list[float]:
    values = [_number(v, key) for v in (x if isinstance(x, list | tuple) else [x] * n)]
    if len(values) != n or min(values) < minimum:
        raise ConfigError(f"{key}: expected a number or a list of {n} numbers (one per joint), each "
                          f"{'> 0' if minimum > 0 else '>= 0'}; got {x!r}")
    return values


def _section(x: Any, key: str, allowed: tuple[str, ...] | None = None) -> Mapping:
    """``x`` as a mapping (None -> {}), with only ``allowed`` keys when given."""
    if x is None:
        return {}
    if not isinstance(x, Mapping):
        raise ConfigError(f"{key} must be a mapping, got {x!r}")
    unknown = sorted(str(k) for k in x if allowed is not None and k not in allowed)
    if unknown:
        raise ConfigError(f"{key}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(allowed or ())}")
    return x


def _vec(x: Any, n: int, key: str) -> list[float]:
    if isinstance(x, str | bytes) or not hasattr(x, "__len__") or len(x) != n:
        raise ConfigError(f"{key}: expected a list of {n} numbers, got {x!r}")
    return [_number(e, f"{key}[{i}]") for i, e in enumerate(x)]
