"""Tagged objects for the scene: the ten-tag peg and a tag plate for a robot's hand.

Both are scene-object builders (``kind: hardware.models.peg:add_tagged_peg`` /
``kind: hardware.models.peg:add_tag_plate`` in ``conf/scene/*.yaml``); see
:mod:`hardware.models.scene` for how objects enter a scene.

Tag images are generated at build time with ``cv2.aruco.generateImageMarker`` (never committed),
written as PNG files into the build's asset folder, and applied one per thin visual box geom.
Every tag geom's frame is ``Tag.frame()`` from :mod:`core.tag_layouts` (+X = tag right,
+Y = tag up, +Z = the face's outward normal); MuJoCo (>= 3.12) maps a 2D texture by the box's
UVs so the image is upright on the +Z face (``tests/arms/perception/test_tags_render.py`` renders
every face and checks each detected corner against the layout). The layout module is the one
place the tag geometry is defined: the builder and the pose estimator both read it.

Peg (``add_tagged_peg``) keys::

    pos: [x, y, z]            # initial pose of the body (the box centre)
    quat: [w, x, y, z]
    size: [0.04, 0.04, 0.14]  # full extents; z is the long axis
    mass: 0.1                 # kg
    friction: [1.0, 0.005, 0.0001]   # sliding, torsional, rolling (condim 4: torsional too)
    condim: 4
    rgba: [0.72, 0.72, 0.7, 1]
    tag_thickness_m: 0.0004   # how far the tag geoms stand proud of the faces (visual only)
    tag_albedo: 0.72          # grey level of the tags' white (see DEFAULT_TAG_ALBEDO)
    tags: {...}               # see core.tag_layouts

The peg is a free body (joint ``<name>_free``) with one collision box ``<name>_geom``; the
tags are visual-only geoms ``<name>_tag<id>`` (contype = conaffinity = 0, massless), so
contacts and the grasp see a plain box.

Tag plate (``add_tag_plate``): a flat white plate of ``grid = [rows, cols]`` tags rigidly
attached to ``parent`` (a body of the robot, e.g. ``left_hand``) at ``pos``/``quat`` in the
parent's frame; the plate body is named after the object, its +z is the tags' normal. Visual
only, massless: it changes neither the dynamics nor the collision model. It is a calibration
target (a marker on the hand), see :mod:`stages.arms.perception.extrinsics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import atomic_write_bytes
from core.errors import ConfigError
from core.se3 import matrix_to_quat
from core.settings import from_config, require
from core.tag_layouts import (
    PEG_TAG_THICKNESS_M,
    PLATE_TAG_THICKNESS_M,
    TAG_FAMILY_CELLS,
    PegTagSettings,
    PlateTagSettings,
    marker_dictionary,
    peg_layout,
    plate_layout,
)

DEFAULT_TAG_ALBEDO = 0.72
"""Reflectance of the tags' white (matte paper). Below 1 so that the scene's lights (their
diffuse colours add up to more than 1) do not clip white at 255: a clipped white moves the
black/white edge by up to half a pixel toward the black, which makes tags look smaller and
farther away (measured: 1-3 mm of depth error at 1 m before this was lowered)."""
DEFAULT_PX_PER_CELL = 16
Vec3 = tuple[float, float, float]
Vec4 = tuple[float, float, float, float]


def _albedo_ok(albedo: float) -> bool:
    return 0 < albedo <= 1


@dataclass(frozen=True)
class TaggedPegSettings:
    """``kind: hardware.models.peg:add_tagged_peg`` (module docstring)."""

    pos: Vec3 = (0.6, 0.0, 0.8)        # initial pose of the body (the box centre)
    quat: Vec4 = (1.0, 0.0, 0.0, 0.0)
    size: Vec3 = (0.04, 0.04, 0.14)    # full extents; z is the long axis
    mass: float = 0.1                  # kg
    friction: Vec3 = (1.0, 0.005, 0.0001)
    condim: int = 4
    rgba: Vec4 = (0.72, 0.72, 0.7, 1.0)
    tag_thickness_m: float = PEG_TAG_THICKNESS_M
    tag_albedo: float = DEFAULT_TAG_ALBEDO
    tags: PegTagSettings = field(default_factory=PegTagSettings)

    def __post_init__(self):
        require(0 < self.tag_thickness_m < 0.005, "tag_thickness_m", self.tag_thickness_m, "(0, 0.005) m")
        require(self.mass > 0, "mass", self.mass, "> 0 kg")
        require(float(np.linalg.norm(self.quat)) >= 1e-9, "quat", list(self.quat), "a non-zero quaternion")
        require(_albedo_ok(self.tag_albedo), "tag_albedo", self.tag_albedo, "(0, 1]")


@dataclass(frozen=True)
class TagPlateSettings:
    """``kind: hardware.models.peg:add_tag_plate``: a plate of tags fixed to the robot body ``parent``."""

    parent: str | None = None           # a body of the robot, e.g. left_hand (required)
    pos: Vec3 = (0.0, 0.0, 0.0)         # in the parent's frame
    quat: Vec4 = (1.0, 0.0, 0.0, 0.0)
    rgba: Vec4 = (0.72, 0.72, 0.72, 1.0)
    thickness_m: float = 0.002
    margin_m: float = 0.002
    tag_albedo: float = DEFAULT_TAG_ALBEDO
    tags: PlateTagSettings = field(default_factory=PlateTagSettings)

    def __post_init__(self):
        require(_albedo_ok(self.tag_albedo), "tag_albedo", self.tag_albedo, "(0, 1]")


def marker_image(dictionary: str, tag_id: int, px_per_cell: int = DEFAULT_PX_PER_CELL,
                 quiet_zone_cells: int = 1) -> np.ndarray:
    """An RGB uint8 image of one marker with a white quiet zone, OpenCV's upright orientation."""
    import cv2

    cells = TAG_FAMILY_CELLS.get(dictionary, 8)
    d = marker_dictionary(dictionary)
    if not 0 <= int(tag_id) < d.bytesList.shape[0]:
        raise ConfigError(f"tag id {tag_id} is not in {dictionary} (ids 0..{d.bytesList.shape[0] - 1})")
    img = cv2.aruco.generateImageMarker(d, int(tag_id), cells * px_per_cell, borderBits=1)
    q = quiet_zone_cells * px_per_cell
    img = cv2.copyMakeBorder(img, q, q, q, q, cv2.BORDER_CONSTANT, value=255)
    return cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)


def write_png(path: Path, rgb: np.ndarray) -> Path:
    import cv2

    ok, enc = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    if not ok:
        raise OSError(f"could not encode {path}")
    atomic_write_bytes(path, enc.tobytes())
    return path


def _add_tag_geoms(spec, body, name: str, layout, asset_dir: Path, thickness: float,
                   px_per_cell: int, albedo: float = DEFAULT_TAG_ALBEDO) -> None:
    """One textured visual box per tag, its +Z face flush outside the object's face."""
    import mujoco

    cells = TAG_FAMILY_CELLS.get(layout.dictionary, 8)
    for tag in layout.tags:
        png = write_png(asset_dir / f"{name}_tag{tag.id}.png",
                        marker_image(layout.dictionary, tag.id, px_per_cell, layout.quiet_zone_cells))
        tex = f"{name}_tag{tag.id}_tex"
        spec.add_texture(name=tex, type=mujoco.mjtTexture.mjTEXTURE_2D, file=str(png))
        mat = spec.add_material(name=f"{name}_tag{tag.id}_mat")
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex
        mat.specular = 0.0
        mat.shininess = 0.0
        outer = tag.size_m * (cells + 2 * layout.quiet_zone_cells) / cells
        R = tag.rotation()
        pos = np.asarray(tag.center) - R[:, 2] * thickness / 2  # outer face = printed surface
        body.add_geom(name=f"{name}_tag{tag.id}", type=mujoco.mjtGeom.mjGEOM_BOX,
                      size=[outer / 2, outer / 2, thickness / 2], pos=pos.tolist(),
                      quat=matrix_to_quat(R).tolist(), material=mat.name,
                      rgba=[albedo, albedo, albedo, 1.0],
                      contype=0, conaffinity=0, group=2, density=0)


def add_tagged_peg(spec, name: str, params: Mapping[str, Any] | TaggedPegSettings, context) -> None:
    """``kind: hardware.models.peg:add_tagged_peg`` — the free, ten-tag peg (module docstring)."""
    import mujoco

    cfg = from_config(TaggedPegSettings, params, f"scene.objects.{name}")
    layout = peg_layout(cfg.size, cfg.tags, name, cfg.tag_thickness_m)
    quat = np.asarray(cfg.quat)
    body = spec.worldbody.add_body(name=name, pos=list(cfg.pos), quat=(quat / np.linalg.norm(quat)).tolist())
    body.add_freejoint(name=f"{name}_free")
    body.add_geom(name=f"{name}_geom", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=list(layout.half_extents), mass=cfg.mass, rgba=list(cfg.rgba),
                  friction=list(cfg.friction), condim=cfg.condim, contype=1, conaffinity=1, group=0)
    _add_tag_geoms(spec, body, name, layout, Path(context.asset_dir), cfg.tag_thickness_m,
                   cfg.tags.texture_px_per_cell, cfg.tag_albedo)


def add_tag_plate(spec, name: str, params: Mapping[str, Any] | TagPlateSettings, context) -> None:
    """``kind: hardware.models.peg:add_tag_plate`` — a tag plate fixed to a robot body."""
    import mujoco

    where = f"scene.objects.{name}"
    cfg = from_config(TagPlateSettings, params, where)
    parent = spec.body(cfg.parent) if cfg.parent else None
    if parent is None:
        bodies = [b.name for b in spec.bodies if b.name]
        raise ConfigError(f"{where}.parent={cfg.parent!r} is not a body of the scene; bodies: "
                          f"{', '.join(bodies)}")
    layout = plate_layout(cfg.tags, name, PLATE_TAG_THICKNESS_M)
    quat = np.asarray(cfg.quat)
    body = parent.add_body(name=name, pos=list(cfg.pos), quat=(quat / np.linalg.norm(quat)).tolist())
    t, margin = cfg.thickness_m, cfg.margin_m
    cells = TAG_FAMILY_CELLS.get(layout.dictionary, 8)
    corners = layout.corners().reshape(-1, 3)
    pad = max(tag.size_m for tag in layout.tags) * layout.quiet_zone_cells / cells + margin
    lo, hi = corners[:, :2].min(axis=0) - pad, corners[:, :2].max(axis=0) + pad
    body.add_geom(name=f"{name}_plate", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=[(hi[0] - lo[0]) / 2, (hi[1] - lo[1]) / 2, t / 2],
                  pos=[(hi[0] + lo[0]) / 2, (hi[1] + lo[1]) / 2, -t / 2],
                  rgba=list(cfg.rgba), contype=0, conaffinity=0, group=2, density=0)
    _add_tag_geoms(spec, body, name, layout, Path(context.asset_dir), PLATE_TAG_THICKNESS_M,
                   cfg.tags.texture_px_per_cell, cfg.tag_albedo)
