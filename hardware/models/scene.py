"""Build the full scene (robot MJCF + a scene config) with ``mujoco.MjSpec``.

``build_scene(robot_config, scene_config)`` loads the robot's MJCF, adds a floor, lights, the
table, the cameras and any configured objects to the world body, raises the offscreen buffer
to fit the largest camera, adds a ``home`` keyframe, compiles, and returns a :class:`Scene`:
the compiled ``MjModel``, a standalone XML text (``spec.to_xml()``, loadable by
``mujoco.MjModel.from_xml_path`` from any folder) and the camera names.

Scene config (``conf/scene/table.yaml``), every key optional unless marked::

    skybox:  {rgb1: [...], rgb2: [...]}                              # gradient; null = none
    floor:   {size: [hx, hy], rgba1: [...], rgba2: [...]}           # checker plane at z = 0
    table:   {center: [x, y], size: [sx, sy], height: z_top, thickness: t,
              rgba: [...], friction: [...], legs: true}              # null = no table
    lights:  {<name>: {pos: [...], dir: [...], directional: bool, diffuse: [...],
                       specular: [...], castshadow: bool}}
    cameras: {<name>: {pos: [...], lookat: [...] | quat: [w, x, y, z], up: [0, 0, 1],
                       fovy_deg: 45, resolution: [W, H]}}            # scene_camera required
    objects: {<name>: {kind: box | "hardware.<module>:<function>", ...}}

Keys inside these sections are checked (an unknown one is a ``ConfigError`` listing the
allowed ones); other top-level keys belong to the parts that read them (e.g. a task's start
pose) and are ignored here.

Objects are how later parts (the tagged peg, its fixture, the ChArUco board) enter the scene by
config alone. ``kind: box`` is built in (see :func:`add_box`); any other kind is a function
``f(spec, name, params, context)`` in the ``hardware`` namespace, e.g.
``kind: hardware.models.peg:add_tagged_peg``. ``context`` is a :class:`BuildContext` (asset
folder for generated files, repo root). Generated images must be written as PNG files there
and referenced by path: ``MjSpec.to_xml`` cannot write in-memory ("buffer") textures.

Collision convention (as in the robot): collision geoms have ``contype = conaffinity = 1``;
visual-only geoms have both 0. The table top and the floor collide; the table legs are visual.
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.se3 import matrix_to_quat

SCENE_CAMERA = "scene_camera"
DEFAULT_RESOLUTION = (640, 480)
BUILTIN_KINDS = ("box",)
_ALLOWED_KIND_PREFIX = "hardware."


@dataclass(frozen=True)
class Scene:
    """A compiled scene: model, standalone XML, camera names (scene_camera first)."""

    model: Any  # mujoco.MjModel
    xml: str
    cameras: tuple[str, ...]
    robot_mjcf: Path
    renamed: dict[str, str] = field(default_factory=dict)  # the robot file's names the scene took


@dataclass(frozen=True)
class BuildContext:
    """What object builders may use: where to write generated assets, the repo root."""

    asset_dir: Path
    repo_root: Path


# ---------------------------------------------------------------------- public API
def build_scene(robot_config: Mapping[str, Any], scene_config: Mapping[str, Any] | None = None,
                *, asset_dir: str | Path | None = None) -> Scene:
    """Compile the robot's MJCF plus the scene described by ``scene_config``.

    ``asset_dir`` is where object builders write generated files (textures); default: a new
    temporary folder. A run should pass a folder inside its run directory so the saved
    ``scene.xml`` keeps working.
    """
    import mujoco

    from hardware.models.names import elements, yield_clashing_names
    from hardware.robot import REPO_ROOT, _plain

    rcfg = _plain(robot_config) or {}
    scfg = _plain(scene_config) or {}
    if not isinstance(scfg, Mapping):
        raise ConfigError(f"scene config must be a mapping, got {type(scfg).__name__}")
    spec, mjcf = load_robot_spec(rcfg)
    asset = Path(asset_dir) if asset_dir is not None else Path(tempfile.mkdtemp(prefix="scene_"))
    asset.mkdir(parents=True, exist_ok=True)
    ctx = BuildContext(asset_dir=asset.resolve(), repo_root=REPO_ROOT)
    renamed: dict[str, str] = {}
    try:
        _add_scene(spec, scfg, ctx)
    except ValueError as e:   # MjSpec refuses a name the robot file already uses ("repeated name")
        if "repeated name" not in str(e):
            raise
        probe = mujoco.MjSpec()   # the scene alone: the names it needs
        _add_scene(probe, scfg, ctx)
        spec, mjcf = load_robot_spec(rcfg)
        renamed = yield_clashing_names(spec, elements(probe), f"{rcfg.get('name', 'robot')}/")
        _check_renamed_unused(rcfg, renamed)
        _add_scene(spec, scfg, ctx)
    cams = _section(scfg, "cameras")

    # offscreen buffer large enough for every camera
    sizes = [camera_resolution_from_config(_section(cams, n)) for n in cams]
    g = spec.visual.global_
    g.offwidth = max([int(g.offwidth)] + [w for w, _ in sizes])
    g.offheight = max([int(g.offheight)] + [h for _, h in sizes])

    model = _compile(spec, mjcf)
    if isinstance(rcfg, Mapping) and rcfg.get("home"):
        _add_home_key(spec, model, rcfg)
        if spec.keys:
            model = _compile(spec, mjcf)
    xml = spec.to_xml()
    cam_names = (SCENE_CAMERA,) + tuple(str(n) for n in cams if n != SCENE_CAMERA)
    return Scene(model=model, xml=xml, cameras=cam_names, robot_mjcf=mjcf, renamed=renamed)


def _add_scene(spec, scfg: Mapping[str, Any], ctx: BuildContext) -> None:
    """Sky, floor, lights, table, cameras and objects, as the scene config says."""
    if scfg.get("skybox", {}) is not None:
        add_skybox(spec, _section(scfg, "skybox"))
    if scfg.get("floor", {}) is not None:
        add_floor(spec, _section(scfg, "floor"))
    lights = _section(scfg, "lights") or _DEFAULT_LIGHTS
    for name in lights:
        add_light(spec, str(name), _section(lights, name))
    if scfg.get("table", {}) is not None:
        add_table(spec, _section(scfg, "table"))
    cams = _section(scfg, "cameras")
    if SCENE_CAMERA not in cams:
        raise ConfigError(f"scene.cameras must define {SCENE_CAMERA!r}; "
                          f"cameras given: {sorted(cams) or '(none)'}")
    for name in cams:
        add_camera(spec, str(name), _section(cams, name))
    for name in _section(scfg, "objects"):
        _build_object(spec, str(name), _section(_section(scfg, "objects"), name), ctx)


def load_robot_spec(robot_cfg: Mapping[str, Any]):
    """The robot's ``MjSpec`` (one file: ``robot.mjcf``; or parts: ``robot.build``) and its source path."""
    import mujoco

    from hardware.robot import resolve_mjcf_path

    if not isinstance(robot_cfg, Mapping):
        raise ConfigError(f"robot config must be a mapping, got {type(robot_cfg).__name__}")
    build, mjcf = robot_cfg.get("build"), robot_cfg.get("mjcf")
    if bool(build) == bool(mjcf):
        raise ConfigError("a robot is one file (robot.mjcf: a path or pkg://<package>/<file>) or built from "
                          f"parts (robot.build: base, arms); give exactly one (got mjcf={mjcf!r}, "
                          f"build={'set' if build else None})")
    if build:
        from hardware.assembly import assemble

        return assemble(build), Path(f"<robot.build {robot_cfg.get('name', 'robot')}>")
    path = resolve_mjcf_path(mjcf)
    try:
        spec = mujoco.MjSpec.from_file(str(path))
    except Exception as e:  # mujoco raises ValueError/FatalError on bad XML
        raise ConfigError(f"robot.mjcf {path} does not load: {e}") from e
    _absolute_asset_dirs(spec, path)
    return spec, path


def _check_renamed_unused(robot_cfg: Mapping[str, Any], renamed: dict[str, str]) -> None:
    """A name the robot config uses that had to yield to the scene's is a clash left: refuse it."""
    used = []
    for arm, a in (robot_cfg.get("arms") or {}).items():
        if isinstance(a, Mapping):
            used += [(f"robot.arms.{arm}.joints", "joint", j) for j in a.get("joints") or []]
            used.append((f"robot.arms.{arm}.ee_site", "site", a.get("ee_site")))
    for key, kind, name in used:
        if f"{kind} {name}" in renamed:
            raise ConfigError(f"{key}: {kind} {name!r} of the robot file clashes with the scene's {kind} of "
                              f"that name (scene config); rename one of them")


def camera_resolution_from_config(cfg: Mapping[str, Any]) -> tuple[int, int]:
    res = cfg.get("resolution", DEFAULT_RESOLUTION)
    w, h = _vec(res, 2, "scene.cameras.*.resolution")
    if w < 1 or h < 1 or w != int(w) or h != int(h):
        raise ConfigError(f"camera resolution must be two positive integers [W, H], got {res!r}")
    return int(w), int(h)


def look_at_quat(pos, lookat, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Quaternion (w, x, y, z) of a MuJoCo camera at ``pos`` looking at ``lookat``.

    MuJoCo cameras look along their -Z axis with +Y up and +X to the right.
    """
    pos, lookat, up = (np.asarray(v, dtype=float) for v in (pos, lookat, up))
    fwd = lookat - pos
    if np.linalg.norm(fwd) < 1e-9:
        raise ConfigError("camera lookat coincides with its pos")
    z = -fwd / np.linalg.norm(fwd)
    x = np.cross(up, z)
    if np.linalg.norm(x) < 1e-9:
        raise ConfigError("camera up vector is parallel to its viewing direction")
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return matrix_to_quat(np.column_stack([x, y, z]))


# ---------------------------------------------------------------------- element builders
_DEFAULT_LIGHTS = {
    "key": {"pos": [0.6, -0.8, 2.6], "dir": [-0.1, 0.35, -1.0], "diffuse": [0.7, 0.7, 0.7],
            "castshadow": True},
    "fill": {"pos": [1.5, 1.0, 2.2], "dir": [-0.5, -0.4, -0.8], "diffuse": [0.35, 0.35, 0.35],
             "castshadow": False},
}


def add_skybox(spec, cfg: Mapping[str, Any]) -> None:
    """A vertical gradient sky (a generated texture, so the XML needs no image file)."""
    import mujoco

    _check_keys(cfg, ("rgb1", "rgb2"), "scene.skybox")
    for other in [t for t in spec.textures if t.type == mujoco.mjtTexture.mjTEXTURE_SKYBOX]:
        spec.delete(other)   # a robot file's own sky (MuJoCo draws the first one): the scene's is the sky
    tex = spec.add_texture(name="skybox", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                           builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, width=512, height=3072)
    tex.rgb1 = _vec(cfg.get("rgb1", [0.62, 0.7, 0.8]), 3, "scene.skybox.rgb1")
    tex.rgb2 = _vec(cfg.get("rgb2", [0.12, 0.14, 0.18]), 3, "scene.skybox.rgb2")


def add_floor(spec, cfg: Mapping[str, Any]) -> None:
    import mujoco

    _check_keys(cfg, ("size", "rgba1", "rgba2"), "scene.floor")
    hx, hy = _vec(cfg.get("size", [2.5, 2.5]), 2, "scene.floor.size")
    tex = spec.add_texture(name="floor_checker", type=mujoco.mjtTexture.mjTEXTURE_2D,
                           builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, width=512, height=512)
    tex.rgb1 = _vec(cfg.get("rgba1", [0.34, 0.36, 0.38, 1.0]), 4, "scene.floor.rgba1")[:3]
    tex.rgb2 = _vec(cfg.get("rgba2", [0.26, 0.28, 0.3, 1.0]), 4, "scene.floor.rgba2")[:3]
    mat = spec.add_material(name="floor")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "floor_checker"
    mat.texrepeat = [6, 6]
    mat.reflectance = 0.05
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE,
                            size=[hx, hy, 0.05], material="floor", contype=1, conaffinity=1,
                            condim=3)


def add_light(spec, name: str, cfg: Mapping[str, Any]) -> None:
    import mujoco

    key = f"scene.lights.{name}"
    _check_keys(cfg, ("pos", "dir", "diffuse", "specular", "castshadow", "directional"), key)
    light = spec.worldbody.add_light(name=name)
    light.pos = _vec(cfg.get("pos", [0, 0, 3]), 3, f"{key}.pos")
    light.dir = _vec(cfg.get("dir", [0, 0, -1]), 3, f"{key}.dir")
    light.diffuse = _vec(cfg.get("diffuse", [0.6, 0.6, 0.6]), 3, f"{key}.diffuse")
    light.specular = _vec(cfg.get("specular", [0.2, 0.2, 0.2]), 3, f"{key}.specular")
    light.castshadow = bool(cfg.get("castshadow", False))
    if cfg.get("directional", False):
        light.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL


def add_table(spec, cfg: Mapping[str, Any]) -> None:
    """A box table top (collision) on four visual legs; the top surface at ``height``."""
    import mujoco

    _check_keys(cfg, ("center", "size", "height", "thickness", "rgba", "friction", "legs"),
                "scene.table")
    cx, cy = _vec(cfg.get("center", [0.55, 0.0]), 2, "scene.table.center")
    sx, sy = _vec(cfg.get("size", [0.6, 1.2]), 2, "scene.table.size")
    top = _num(cfg.get("height", 0.75), "scene.table.height")
    t = _num(cfg.get("thickness", 0.04), "scene.table.thickness")
    if min(sx, sy, t) <= 0 or top <= t:
        raise ConfigError(f"scene.table: size and thickness must be > 0 and height > thickness; "
                          f"got size={[sx, sy]}, thickness={t}, height={top}")
    rgba = _vec(cfg.get("rgba", [0.62, 0.52, 0.4, 1.0]), 4, "scene.table.rgba")
    friction = _vec(cfg.get("friction", [0.8, 0.005, 0.0001]), 3, "scene.table.friction")
    body = spec.worldbody.add_body(name="table", pos=[cx, cy, top - t / 2])
    body.add_geom(name="table_top", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=[sx / 2, sy / 2, t / 2], rgba=rgba, friction=friction,
                  contype=1, conaffinity=1, condim=3, group=0)
    if cfg.get("legs", True):
        leg = 0.025
        h = (top - t) / 2
        for i, (dx, dy) in enumerate([(1, 1), (1, -1), (-1, 1), (-1, -1)]):
            body.add_geom(name=f"table_leg{i}", type=mujoco.mjtGeom.mjGEOM_BOX,
                          size=[leg, leg, h],
                          pos=[dx * (sx / 2 - 2 * leg), dy * (sy / 2 - 2 * leg), -t / 2 - h],
                          rgba=[0.3, 0.3, 0.32, 1.0], contype=0, conaffinity=0, group=1)


def add_camera(spec, name: str, cfg: Mapping[str, Any]) -> None:
    """A fixed camera: ``pos`` and either ``lookat`` (+ ``up``) or ``quat``; ``fovy_deg``."""
    key = f"scene.cameras.{name}"
    _check_keys(cfg, ("pos", "lookat", "up", "quat", "fovy_deg", "resolution"), key)
    pos = _vec(cfg.get("pos"), 3, f"{key}.pos")
    if cfg.get("quat") is not None:
        quat = np.asarray(_vec(cfg["quat"], 4, f"{key}.quat"))
        quat = quat / np.linalg.norm(quat)
    elif cfg.get("lookat") is not None:
        quat = look_at_quat(pos, _vec(cfg["lookat"], 3, f"{key}.lookat"),
                            _vec(cfg.get("up", [0, 0, 1]), 3, f"{key}.up"))
    else:
        raise ConfigError(f"{key} needs either lookat: [x, y, z] or quat: [w, x, y, z]")
    fovy = _num(cfg.get("fovy_deg", 45.0), f"{key}.fovy_deg")
    if not 1.0 <= fovy <= 170.0:
        raise ConfigError(f"{key}.fovy_deg must be in [1, 170] degrees, got {fovy}")
    w, h = camera_resolution_from_config(cfg)
    cam = spec.worldbody.add_camera(name=name, pos=list(pos), quat=list(quat), fovy=fovy)
    cam.resolution = [w, h]


def add_box(spec, name: str, cfg: Mapping[str, Any], ctx: BuildContext | None = None) -> None:
    """``kind: box`` — a box body: fixed, or free (``free: true``, with ``mass``).

    Keys: ``pos``, ``quat`` [w, x, y, z], ``size`` (half extents), ``rgba``, ``friction``,
    ``material`` (a material already in the spec) or ``texture`` (a PNG file: absolute, or
    relative to the build's asset folder; mapped onto the box by MuJoCo's box UVs), ``free``,
    ``mass``, ``condim``, ``collide`` (default true).
    """
    import mujoco

    key = f"scene.objects.{name}"
    _check_keys(cfg, ("pos", "quat", "size", "rgba", "friction", "material", "texture", "free",
                      "mass", "condim", "collide"), key)
    pos = _vec(cfg.get("pos", [0, 0, 0]), 3, f"{key}.pos")
    quat = _vec(cfg.get("quat", [1, 0, 0, 0]), 4, f"{key}.quat")
    size = _vec(cfg.get("size"), 3, f"{key}.size")
    if min(size) <= 0:
        raise ConfigError(f"{key}.size (half extents) must be > 0, got {list(size)}")
    body = spec.worldbody.add_body(name=name, pos=pos, quat=quat)
    collide = 1 if cfg.get("collide", True) else 0
    geom = body.add_geom(name=f"{name}_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=size,
                         rgba=_vec(cfg.get("rgba", [0.8, 0.5, 0.2, 1.0]), 4, f"{key}.rgba"),
                         friction=_vec(cfg.get("friction", [1.0, 0.005, 0.0001]), 3,
                                       f"{key}.friction"),
                         contype=collide, conaffinity=collide, condim=int(cfg.get("condim", 4)))
    if cfg.get("material"):
        geom.material = str(cfg["material"])
    if cfg.get("texture"):
        geom.material = _texture_material(spec, name, cfg["texture"], ctx, f"{key}.texture")
        geom.rgba = [1.0, 1.0, 1.0, 1.0]
    if cfg.get("free", False):
        body.add_freejoint(name=f"{name}_free")
        mass = _num(cfg.get("mass", 0.1), f"{key}.mass")
        if mass <= 0:
            raise ConfigError(f"{key}.mass must be > 0 kg, got {mass}")
        geom.mass = mass


# ---------------------------------------------------------------------- internals
def _texture_material(spec, name: str, texture: Any, ctx: BuildContext | None, key: str) -> str:
    """A 2D texture from a PNG file and a material using it; returns the material name."""
    import mujoco

    p = Path(str(texture)).expanduser()
    if not p.is_absolute():
        p = (ctx.asset_dir if ctx is not None else Path.cwd()) / p
    if p.suffix.lower() != ".png" or not p.is_file():
        raise ConfigError(f"{key}: expected an existing .png file, got {str(p)!r} (MuJoCo loads "
                          "PNG textures only; relative paths are in the build's asset folder)")
    spec.add_texture(name=f"{name}_tex", type=mujoco.mjtTexture.mjTEXTURE_2D, file=str(p.resolve()))
    mat = spec.add_material(name=f"{name}_mat")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = f"{name}_tex"
    return f"{name}_mat"


def _build_object(spec, name: str, cfg: Mapping[str, Any], ctx: BuildContext) -> None:
    kind = cfg.get("kind")
    params = {k: v for k, v in cfg.items() if k != "kind"}
    if kind == "box":
        add_box(spec, name, params, ctx)
        return
    fn = _resolve_kind(name, kind)
    fn(spec, name, params, ctx)


def _resolve_kind(name: str, kind: Any) -> Callable[..., None]:
    allowed = f"{', '.join(BUILTIN_KINDS)}, or '{_ALLOWED_KIND_PREFIX}<module>:<function>'"
    if not isinstance(kind, str) or not kind.startswith(_ALLOWED_KIND_PREFIX) or ":" not in kind:
        raise ConfigError(f"scene.objects.{name}.kind={kind!r} is not allowed; kinds: {allowed}")
    module, _, func = kind.partition(":")
    try:
        fn = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"scene.objects.{name}.kind={kind!r} cannot be imported ({e}); "
                          f"kinds: {allowed}") from e
    if not callable(fn):
        raise ConfigError(f"scene.objects.{name}.kind={kind!r} is not a function")
    return fn


def _absolute_asset_dirs(spec, mjcf: Path) -> None:
    """Make meshdir/texturedir absolute when the model reads asset files, so the written XML
    loads from any folder (a model without asset files is left as it is)."""
    uses_files = any(getattr(mesh, "file", "") for mesh in spec.meshes) or any(
        getattr(t, "file", "") or any(getattr(t, "cubefiles", []) or []) for t in spec.textures)
    if not uses_files:
        return
    base = mjcf.parent
    for attr in ("meshdir", "texturedir"):
        p = Path(getattr(spec, attr) or "")
        setattr(spec, attr, str((p if p.is_absolute() else base / p).resolve()) + "/")


def _compile(spec, mjcf: Path):
    try:
        return spec.compile()
    except Exception as e:
        raise ConfigError(f"the scene built on {mjcf} (robot.mjcf or robot.build, and the scene config) "
                          f"does not compile: {e}") from e


def _add_home_key(spec, model, robot_cfg: Mapping[str, Any]) -> None:
    """A ``home`` keyframe: ``qpos0`` with every arm at the config's home.

    Left out when the config's names do not resolve (``RobotSpec`` reports those errors).
    """
    import mujoco

    arms = robot_cfg.get("arms") or {}
    home = robot_cfg.get("home") or {}
    if not isinstance(arms, Mapping) or not isinstance(home, Mapping) or not home:
        return
    q = np.array(model.qpos0, dtype=float)
    for arm, values in home.items():
        joints = (arms.get(arm) or {}).get("joints") if isinstance(arms.get(arm), Mapping) else None
        if not joints or not hasattr(values, "__len__") or len(joints) != len(values):
            return
        for jn, v in zip(joints, values, strict=True):
            jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, str(jn))
            if jid < 0:
                return
            q[model.jnt_qposadr[jid]] = float(v)
    key = next((k for k in spec.keys if k.name == "home"), None) or spec.add_key(name="home")
    key.qpos = q.tolist()


def _check_keys(cfg: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in cfg if k not in allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
                          f"{', '.join(allowed)}")


def _section(cfg: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    v = cfg.get(key)
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise ConfigError(f"scene.{key} must be a mapping, got {v!r}")
    return v


def _num(x: Any, key: str) -> float:
    from hardware.robot import _number

    return _number(x, key)


def _vec(x: Any, n: int, key: str) -> list[float]:
    if isinstance(x, str | bytes) or not hasattr(x, "__len__") or len(x) != n:
        raise ConfigError(f"{key}: expected a list of {n} numbers, got {x!r}")
    return [_num(e, f"{key}[{i}]") for i, e in enumerate(x)]


