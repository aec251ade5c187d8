"""The scene's own elements: sky, floor, lights, table, cameras, and the built-in ``kind: box`` object.

Each is a frozen settings dataclass (read with :func:`core.settings.from_config`, so a wrong key or
type names the full key and what is allowed) and a builder that adds it to a ``mujoco.MjSpec``.
:mod:`hardware.models.scene` puts them together.

Collision convention (as in the robot): collision geoms have ``contype = conaffinity = 1``;
visual-only geoms have both 0. The table top and the floor collide; the table legs are visual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.se3 import matrix_to_quat
from core.settings import from_config, require

SCENE_CAMERA = "scene_camera"
DEFAULT_RESOLUTION = (640, 480)
Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Vec4 = tuple[float, float, float, float]


@dataclass(frozen=True)
class BuildContext:
    """What object builders may use: where to write generated assets, the repo root."""

    asset_dir: Path
    repo_root: Path


# ---------------------------------------------------------------------- settings
@dataclass(frozen=True)
class SkyboxSettings:
    """A vertical gradient sky (a generated texture, so the XML needs no image file)."""

    rgb1: Vec3 = (0.62, 0.7, 0.8)
    rgb2: Vec3 = (0.12, 0.14, 0.18)


@dataclass(frozen=True)
class FloorSettings:
    """A checker plane at z = 0."""

    size: Vec2 = (2.5, 2.5)   # half extents, m
    rgba1: Vec4 = (0.34, 0.36, 0.38, 1.0)
    rgba2: Vec4 = (0.26, 0.28, 0.3, 1.0)


@dataclass(frozen=True)
class LightSettings:
    pos: Vec3 = (0.0, 0.0, 3.0)
    dir: Vec3 = (0.0, 0.0, -1.0)
    diffuse: Vec3 = (0.6, 0.6, 0.6)
    specular: Vec3 = (0.2, 0.2, 0.2)
    castshadow: bool = False
    directional: bool = False


DEFAULT_LIGHTS = {
    "key": LightSettings(pos=(0.6, -0.8, 2.6), dir=(-0.1, 0.35, -1.0), diffuse=(0.7, 0.7, 0.7),
                         castshadow=True),
    "fill": LightSettings(pos=(1.5, 1.0, 2.2), dir=(-0.5, -0.4, -0.8), diffuse=(0.35, 0.35, 0.35),
                          castshadow=False),
}


@dataclass(frozen=True)
class TableSettings:
    """A box table top (collision) on four visual legs; the top surface at ``height``."""

    center: Vec2 = (0.55, 0.0)
    size: Vec2 = (0.6, 1.2)   # full extents, m
    height: float = 0.75      # the top surface, m
    thickness: float = 0.04
    rgba: Vec4 = (0.62, 0.52, 0.4, 1.0)
    friction: Vec3 = (0.8, 0.005, 0.0001)
    legs: bool = True

    def __post_init__(self):
        require(min(*self.size, self.thickness) > 0 and self.height > self.thickness, "size",
                {"size": list(self.size), "thickness": self.thickness, "height": self.height},
                "size and thickness > 0 and height > thickness")


@dataclass(frozen=True)
class CameraSettings:
    """A fixed camera: ``pos`` and either ``lookat`` (+ ``up``) or ``quat`` [w, x, y, z]."""

    pos: Vec3
    lookat: Vec3 | None = None
    up: Vec3 = (0.0, 0.0, 1.0)
    quat: Vec4 | None = None
    fovy_deg: float = 45.0
    resolution: tuple[int, int] = DEFAULT_RESOLUTION   # [W, H] pixels

    def __post_init__(self):
        require(self.quat is not None or self.lookat is not None, "lookat", None,
                "either lookat: [x, y, z] or quat: [w, x, y, z]")
        require(1.0 <= self.fovy_deg <= 170.0, "fovy_deg", self.fovy_deg, "[1, 170] degrees")
        require(min(self.resolution) >= 1, "resolution", list(self.resolution),
                "two positive integers [W, H]")


@dataclass(frozen=True)
class BoxSettings:
    """``kind: box``: a box body, fixed or free (``free: true``, with ``mass``).

    ``material`` names a material already in the spec; ``texture`` is a PNG file (absolute, or
    relative to the build's asset folder) mapped onto the box by MuJoCo's box UVs.
    """

    size: Vec3                # half extents, m
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: Vec4 = (1.0, 0.0, 0.0, 0.0)
    rgba: Vec4 = (0.8, 0.5, 0.2, 1.0)
    friction: Vec3 = (1.0, 0.005, 0.0001)
    material: str | None = None
    texture: str | None = None
    free: bool = False
    mass: float = 0.1         # kg, for a free box
    condim: int = 4
    collide: bool = True

    def __post_init__(self):
        require(min(self.size) > 0, "size", list(self.size), "half extents > 0 (m)")
        require(not self.free or self.mass > 0, "mass", self.mass, "> 0 kg")


# ---------------------------------------------------------------------- builders
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


def add_skybox(spec, cfg: SkyboxSettings) -> None:
    import mujoco

    for other in [t for t in spec.textures if t.type == mujoco.mjtTexture.mjTEXTURE_SKYBOX]:
        spec.delete(other)   # a robot file's own sky (MuJoCo draws the first one): the scene's is the sky
    tex = spec.add_texture(name="skybox", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                           builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, width=512, height=3072)
    tex.rgb1 = list(cfg.rgb1)
    tex.rgb2 = list(cfg.rgb2)


def add_floor(spec, cfg: FloorSettings) -> None:
    import mujoco

    hx, hy = cfg.size
    tex = spec.add_texture(name="floor_checker", type=mujoco.mjtTexture.mjTEXTURE_2D,
                           builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, width=512, height=512)
    tex.rgb1 = list(cfg.rgba1[:3])
    tex.rgb2 = list(cfg.rgba2[:3])
    mat = spec.add_material(name="floor")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "floor_checker"
    mat.texrepeat = [6, 6]
    mat.reflectance = 0.05
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE,
                            size=[hx, hy, 0.05], material="floor", contype=1, conaffinity=1,
                            condim=3)


def add_light(spec, name: str, cfg: LightSettings) -> None:
    import mujoco

    light = spec.worldbody.add_light(name=name)
    light.pos = list(cfg.pos)
    light.dir = list(cfg.dir)
    light.diffuse = list(cfg.diffuse)
    light.specular = list(cfg.specular)
    light.castshadow = cfg.castshadow
    if cfg.directional:
        light.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL


def add_table(spec, cfg: TableSettings) -> None:
    import mujoco

    (cx, cy), (sx, sy), top, t = cfg.center, cfg.size, cfg.height, cfg.thickness
    body = spec.worldbody.add_body(name="table", pos=[cx, cy, top - t / 2])
    body.add_geom(name="table_top", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=[sx / 2, sy / 2, t / 2], rgba=list(cfg.rgba), friction=list(cfg.friction),
                  contype=1, conaffinity=1, condim=3, group=0)
    if cfg.legs:
        leg = 0.025
        h = (top - t) / 2
        for i, (dx, dy) in enumerate([(1, 1), (1, -1), (-1, 1), (-1, -1)]):
            body.add_geom(name=f"table_leg{i}", type=mujoco.mjtGeom.mjGEOM_BOX,
                          size=[leg, leg, h],
                          pos=[dx * (sx / 2 - 2 * leg), dy * (sy / 2 - 2 * leg), -t / 2 - h],
                          rgba=[0.3, 0.3, 0.32, 1.0], contype=0, conaffinity=0, group=1)


def add_camera(spec, name: str, cfg: CameraSettings) -> None:
    if cfg.quat is not None:
        quat = np.asarray(cfg.quat)
        quat = quat / np.linalg.norm(quat)
    else:
        quat = look_at_quat(cfg.pos, cfg.lookat, cfg.up)
    cam = spec.worldbody.add_camera(name=name, pos=list(cfg.pos), quat=list(quat), fovy=cfg.fovy_deg)
    cam.resolution = list(cfg.resolution)


def add_box(spec, name: str, params: Mapping[str, Any] | BoxSettings,
            ctx: BuildContext | None = None) -> None:
    """``kind: box`` — a box body (see :class:`BoxSettings`)."""
    import mujoco

    key = f"scene.objects.{name}"
    cfg = from_config(BoxSettings, params, key)
    body = spec.worldbody.add_body(name=name, pos=list(cfg.pos), quat=list(cfg.quat))
    collide = 1 if cfg.collide else 0
    geom = body.add_geom(name=f"{name}_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(cfg.size),
                         rgba=list(cfg.rgba), friction=list(cfg.friction),
                         contype=collide, conaffinity=collide, condim=cfg.condim)
    if cfg.material:
        geom.material = cfg.material
    if cfg.texture:
        geom.material = _texture_material(spec, name, cfg.texture, ctx, f"{key}.texture")
        geom.rgba = [1.0, 1.0, 1.0, 1.0]
    if cfg.free:
        body.add_freejoint(name=f"{name}_free")
        geom.mass = cfg.mass


def _texture_material(spec, name: str, texture: str, ctx: BuildContext | None, key: str) -> str:
    """A 2D texture from a PNG file and a material using it; returns the material name."""
    import mujoco

    p = Path(texture).expanduser()
    if not p.is_absolute():
        p = (ctx.asset_dir if ctx is not None else Path.cwd()) / p
    if p.suffix.lower() != ".png" or not p.is_file():
        raise ConfigError(f"{key}: expected an existing .png file, got {str(p)!r} (MuJoCo loads "
                          "PNG textures only; relative paths are in the build's asset folder)")
    spec.add_texture(name=f"{name}_tex", type=mujoco.mjtTexture.mjTEXTURE_2D, file=str(p.resolve()))
    mat = spec.add_material(name=f"{name}_mat")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = f"{name}_tex"
    return f"{name}_mat"
