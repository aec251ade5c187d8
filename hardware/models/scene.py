"""Build the full scene (robot MJCF + a scene config) with ``mujoco.MjSpec``.

``build_scene(robot_config, scene_config)`` loads the robot (:mod:`hardware.robot_file`), adds a
floor, lights, the table, the cameras and any configured objects to the world body
(:mod:`hardware.models.elements`), raises the offscreen buffer to fit the largest camera, adds a
``home`` keyframe (every arm at home, the joints outside the arms held), compiles, and returns a
:class:`Scene`: the compiled ``MjModel``, a standalone XML text (``spec.to_xml()``, loadable by
``mujoco.MjModel.from_xml_path`` from any folder) and the camera names.

Scene config (``conf/scene/table.yaml``, read as :class:`SceneSettings`), every key optional unless marked::

    skybox:  {rgb1: [...], rgb2: [...]}                              # gradient; null = none
    floor:   {size: [hx, hy], rgba1: [...], rgba2: [...]}           # checker plane at z = 0; null = none
    table:   {center: [x, y], size: [sx, sy], height: z_top, thickness: t,
              rgba: [...], friction: [...], legs: true}              # null = no table
    lights:  {<name>: {pos: [...], dir: [...], directional: bool, diffuse: [...],
                       specular: [...], castshadow: bool}}
    cameras: {<name>: {pos: [...], lookat: [...] | quat: [w, x, y, z], up: [0, 0, 1],
                       fovy_deg: 45, resolution: [W, H]}}            # scene_camera required
    objects: {<name>: {kind: box | "hardware.<module>:<function>", ...}}   # <name>: null = left out
    contact: {cone: pyramidal | elliptic, impratio: 10}              # null = the robot file's options
    cell:    {surface_z: z, start_xy: [x, y], drop: {x_range, y_range, z_range}, push_toward_xy,
              fixture_pos, board_pos, home}                         # where a lab's loop works (CellSettings)

Keys inside these sections are checked (an unknown one is a ``ConfigError`` listing the
allowed ones); other top-level keys belong to the parts that read them (e.g. a task's start
pose) and are ignored here.

Objects are how later parts (the tagged peg, its fixture, the ChArUco board) enter the scene by
config alone. ``kind: box`` is built in (see :func:`~hardware.models.elements.add_box`); any other
kind is a function ``f(spec, name, params, context)`` in the ``hardware`` namespace, e.g.
``kind: hardware.models.peg:add_tagged_peg``. ``context`` is a :class:`BuildContext` (asset
folder for generated files, repo root). Generated images must be written as PNG files there
and referenced by path: ``MjSpec.to_xml`` cannot write in-memory ("buffer") textures.
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from core.errors import ConfigError
from core.settings import from_config, require
from hardware.joints import held_joints
from hardware.models.elements import (
    DEFAULT_LIGHTS,
    DEFAULT_RESOLUTION,
    SCENE_CAMERA,
    BuildContext,
    CameraSettings,
    FloorSettings,
    LightSettings,
    SkyboxSettings,
    TableSettings,
    add_box,
    add_camera,
    add_floor,
    add_light,
    add_skybox,
    add_table,
    look_at_quat,
)
from hardware.models.names import elements, yield_clashing_names
from hardware.resources import REPO_ROOT, plain_config
from hardware.robot_file import load_robot_spec
from hardware.robot_settings import RobotSettings, robot_settings

__all__ = ["BUILTIN_KINDS", "DEFAULT_RESOLUTION", "SCENE_CAMERA", "BuildContext", "Scene", "SceneSettings",
           "add_box", "build_scene", "look_at_quat"]

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
class ContactSettings:
    """How contacts are solved in a scene where things are held by friction (MuJoCo's ``<option>``):
    elliptic friction cones and an impedance ratio above 1 keep a grasped object from creeping
    (MuJoCo's advice for grasping); a key left ``None`` keeps the robot file's value."""

    cone: Literal["pyramidal", "elliptic"] | None = None
    impratio: float | None = None

    def __post_init__(self):
        require(self.impratio is None or self.impratio >= 1, "impratio", self.impratio, ">= 1")

    def apply(self, spec) -> None:
        import mujoco

        if self.cone is not None:
            spec.option.cone = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL,
                                "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}[self.cone]
        if self.impratio is not None:
            spec.option.impratio = float(self.impratio)


@dataclass(frozen=True)
class DropRegion:
    """Where a dropped object is released: uniformly in this box (m, world frame)."""

    x_range: tuple[float, float] = (0.52, 0.72)
    y_range: tuple[float, float] = (-0.15, 0.15)
    z_range: tuple[float, float] = (0.85, 0.95)


@dataclass(frozen=True)
class HoldRegion:
    """Where one arm holds an object up to the camera: around ``center`` [x, y], ``size`` across (m)."""

    center: tuple[float, float] = (0.63, 0.0)
    size: tuple[float, float] = (0.2, 0.2)


@dataclass(frozen=True)
class CellSettings:
    """Where a lab's loop works in this scene, read by the reset, the RL loop and the objects placed
    from it (``${scene.cell.fixture_pos}``): the table top ``surface_z``, the insertion task's start
    pose, where pegs are dropped and where one no grasp can take is pushed, and where each arm holds
    the peg up to the camera for ``pipeline=calibrate_peg`` (``hold_regions``, per arm, its spots'
    heights counted from ``hold_z``, a spot no plan reaches at its random turn tried at up to
    ``spot_tries`` turns); a robot's ``conf/cell/<robot>.yaml`` moves them to where its
    arms reach (m)."""

    surface_z: float = 0.75
    start_xy: tuple[float, float] = (0.40, 0.09)
    drop: DropRegion = field(default_factory=DropRegion)
    push_toward_xy: tuple[float, float] = (0.62, 0.0)
    fixture_pos: tuple[float, float, float] = (0.37, -0.08, 0.75)
    board_pos: tuple[float, float, float] = (0.65, 0.0, 0.753)
    hold_regions: dict[str, HoldRegion | None] = field(default_factory=dict)   # null: not that arm
    hold_z: float = 0.753
    spot_tries: int = 1
    home: dict[str, tuple[float, ...]] = field(default_factory=dict)   # where arms wait here (rad);
                                                                       # others: the robot's home


@dataclass(frozen=True)
class SceneSettings:
    """The scene's own sections (the module docstring); ``None`` for sky, floor or table: none."""

    name: str = "scene"
    skybox: SkyboxSettings | None = field(default_factory=SkyboxSettings)
    floor: FloorSettings | None = field(default_factory=FloorSettings)
    table: TableSettings | None = field(default_factory=TableSettings)
    lights: dict[str, LightSettings] = field(default_factory=dict)   # none given: a key and a fill light
    cameras: dict[str, CameraSettings] = field(default_factory=dict)
    objects: dict[str, dict[str, Any] | None] = field(default_factory=dict)   # each read by its kind's
                                                                              # builder; null: left out
    contact: ContactSettings | None = None
    cell: CellSettings | None = None

    def __post_init__(self):
        require(SCENE_CAMERA in self.cameras, "cameras", sorted(self.cameras),
                f"cameras that define {SCENE_CAMERA!r}")


def scene_settings(scene_config: Mapping[str, Any] | SceneSettings | None) -> SceneSettings:
    """The ``scene`` group as :class:`SceneSettings` (a wrong key, type or value names the key)."""
    return from_config(SceneSettings, plain_config(scene_config), "scene")


# ---------------------------------------------------------------------- public API
def build_scene(robot_config: Mapping[str, Any] | RobotSettings,
                scene_config: Mapping[str, Any] | SceneSettings | None = None,
                *, asset_dir: str | Path | None = None) -> Scene:
    """Compile the robot's MJCF plus the scene described by ``scene_config``.

    ``asset_dir`` is where object builders write generated files (textures); default: a new
    temporary folder. A run should pass a folder inside its run directory so the saved
    ``scene.xml`` keeps working.
    """
    import mujoco

    robot = robot_settings(robot_config)
    spec, mjcf = load_robot_spec(robot)
    scene = scene_settings(scene_config)
    asset = Path(asset_dir) if asset_dir is not None else Path(tempfile.mkdtemp(prefix="scene_"))
    asset.mkdir(parents=True, exist_ok=True)
    ctx = BuildContext(asset_dir=asset.resolve(), repo_root=REPO_ROOT)
    renamed: dict[str, str] = {}
    try:
        _add_scene(spec, scene, ctx)
    except ValueError as e:   # MjSpec refuses a name the robot file already uses ("repeated name")
        if "repeated name" not in str(e):
            raise
        probe = mujoco.MjSpec()   # the scene alone: the names it needs
        _add_scene(probe, scene, ctx)
        spec, mjcf = load_robot_spec(robot)
        renamed = yield_clashing_names(spec, elements(probe), f"{robot.name}/")
        _check_renamed_unused(robot, renamed)
        _add_scene(spec, scene, ctx)

    # offscreen buffer large enough for every camera
    g = spec.visual.global_
    g.offwidth = max([int(g.offwidth)] + [c.resolution[0] for c in scene.cameras.values()])
    g.offheight = max([int(g.offheight)] + [c.resolution[1] for c in scene.cameras.values()])

    model = _compile(spec, mjcf)
    if robot.home:
        _add_home_key(spec, model, robot)
        if spec.keys:
            model = _compile(spec, mjcf)
    xml = spec.to_xml()
    cam_names = (SCENE_CAMERA,) + tuple(str(n) for n in scene.cameras if n != SCENE_CAMERA)
    return Scene(model=model, xml=xml, cameras=cam_names, robot_mjcf=mjcf, renamed=renamed)


def _add_scene(spec, scene: SceneSettings, ctx: BuildContext) -> None:
    """Sky, floor, lights, table, cameras and objects, as the scene config says."""
    if scene.contact is not None:
        scene.contact.apply(spec)
    if scene.skybox is not None:
        add_skybox(spec, scene.skybox)
    if scene.floor is not None:
        add_floor(spec, scene.floor)
    for name, light in (scene.lights or DEFAULT_LIGHTS).items():
        add_light(spec, str(name), light)
    if scene.table is not None:
        add_table(spec, scene.table)
    for name, camera in scene.cameras.items():
        add_camera(spec, str(name), camera)
    for name, obj in scene.objects.items():
        if obj is not None:   # an object a derived scene or a cell took out
            _build_object(spec, str(name), obj, ctx)


def _check_renamed_unused(robot: RobotSettings, renamed: dict[str, str]) -> None:
    """A name the robot config uses that had to yield to the scene's is a clash left: refuse it."""
    used = []
    for arm, a in robot.arms.items():
        used += [(f"robot.arms.{arm}.joints", "joint", j) for j in a.joints]
        used.append((f"robot.arms.{arm}.ee_site", "site", a.ee_site))
    for key, kind, name in used:
        if f"{kind} {name}" in renamed:
            raise ConfigError(f"{key}: {kind} {name!r} of the robot file clashes with the scene's {kind} of "
                              f"that name (scene config); rename one of them")


# ---------------------------------------------------------------------- objects
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


# ---------------------------------------------------------------------- compiling
def _compile(spec, mjcf: Path):
    try:
        return spec.compile()
    except Exception as e:
        raise ConfigError(f"the scene built on {mjcf} (robot.mjcf or robot.build, and the scene config) "
                          f"does not compile: {e}") from e


def _add_home_key(spec, model, robot: RobotSettings) -> None:
    """A ``home`` keyframe: ``qpos0`` with the joints outside the arms held
    (:func:`hardware.joints.held_joints`, as in :meth:`RobotSpec.home_qpos`) and every arm at the
    config's home.

    Left out when the config's names do not resolve (``RobotSpec`` reports those errors).
    """
    import mujoco

    owner = {j: arm for arm, a in robot.arms.items() for j in a.joints}
    try:
        held = held_joints(model, robot.fixed_joints, robot.keyframe, owner, robot.mjcf or "the model")
    except ConfigError:
        return
    q = np.array(model.qpos0, dtype=float)
    for adr, value in held:
        q[adr] = value
    for arm, values in robot.home.items():
        for jn, v in zip(robot.arms[arm].joints, values, strict=True):
            jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, jn)
            if jid < 0:
                return
            q[model.jnt_qposadr[jid]] = v
    key = next((k for k in spec.keys if k.name == "home"), None) or spec.add_key(name="home")
    key.qpos = q.tolist()
