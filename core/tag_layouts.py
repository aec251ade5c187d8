"""Tag layouts: where every AprilTag's corners are on a rigid object, in the object's frame.

One :class:`TagLayout` describes a tagged object (the peg, a tag plate on a hand): for each tag
its id, its centre, and the three axes of its face (``right``, ``up``, outward ``normal``, a
right-handed frame: ``right x up = normal``). Corners come in OpenCV's order, which is the
order of the generated marker image seen from outside the face: top-left, top-right,
bottom-right, bottom-left (clockwise on the image).

The same layout is used twice, so the two can never disagree: ``hardware.models.peg`` places one
textured visual geom per tag at ``Tag.frame()`` (geom +X = tag right, +Y = tag up, +Z = outward
normal; MuJoCo's box UVs put the texture upright on the +Z face, which a render-and-detect
test pins), and :mod:`stages.arms.perception.peg_pose` fits the object's pose to the corners.

Peg layout (``peg_layout``): a box with its long axis along the peg frame's z, origin at the box
centre. Ten tags: two on each long face (``±x``, ``±y``; at ``z = ±long_face_offset_m``, "up"
along +z) and one on each end (``±z``; "up" along +y). Ids in config order: ``+x`` (upper,
lower), ``-x`` (upper, lower), ``+y`` (upper, lower), ``-y`` (upper, lower), ``+z``, ``-z``.

Config (the peg's entry in ``conf/scene/*.yaml``, ``objects.peg``)::

    size: [0.04, 0.04, 0.14]          # full extents x, y, z (m); z is the long axis
    tags:
      dictionary: DICT_APRILTAG_36h11
      ids: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
      size_m: 0.03                    # side of the black square (the corners OpenCV finds)
      long_face_offset_m: 0.035       # tag centres on the long faces, along z from the centre
      quiet_zone_cells: 1             # white margin around the black square, in cells
    tag_thickness_m: 0.0004           # the printed surface stands this far proud of the face

A tag's ``center`` is on its printed surface (``surface_offset_m`` outside the object's face), so
the corners are exactly where the camera sees them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.settings import from_config, require

TAG_FAMILY_CELLS = {"DICT_APRILTAG_36h11": 8, "DICT_APRILTAG_25h9": 7, "DICT_APRILTAG_16h5": 6,
                    "DICT_APRILTAG_36h10": 8, "DICT_4X4_50": 6, "DICT_4X4_100": 6,
                    "DICT_5X5_50": 7, "DICT_5X5_100": 7, "DICT_6X6_100": 8, "DICT_7X7_100": 9}
"""Cells across a marker's black square (data bits plus the one-cell black border)."""

FACES = ("+x", "-x", "+y", "-y", "+z", "-z")
PEG_TAG_THICKNESS_M = 0.0004
"""Default height of the peg's tag geoms above its faces."""
PLATE_TAG_THICKNESS_M = 0.0003
"""Height of a tag plate's tag geoms above the plate."""
_AXIS = {"x": 0, "y": 1, "z": 2}


def face_normal(face: str) -> np.ndarray:
    if face not in FACES:
        raise ConfigError(f"unknown face {face!r}; faces: {', '.join(FACES)}")
    n = np.zeros(3)
    n[_AXIS[face[1]]] = 1.0 if face[0] == "+" else -1.0
    return n


def dictionary_id(name: str) -> int:
    """The ``cv2.aruco`` predefined-dictionary constant for ``name`` (e.g. DICT_APRILTAG_36h11)."""
    import cv2

    value = getattr(cv2.aruco, str(name), None) if str(name).startswith("DICT_") else None
    if not isinstance(value, int):
        known = sorted(n for n in dir(cv2.aruco) if n.startswith("DICT_"))
        raise ConfigError(f"unknown marker dictionary {name!r}; cv2.aruco has {', '.join(known)}")
    return value


def marker_dictionary(name: str):
    import cv2

    return cv2.aruco.getPredefinedDictionary(dictionary_id(name))


@dataclass(frozen=True)
class Tag:
    """One square tag on a face: id, centre and face axes in the object frame, black-square side."""

    id: int
    face: str
    center: tuple[float, float, float]
    right: tuple[float, float, float]
    up: tuple[float, float, float]
    size_m: float

    @property
    def normal(self) -> np.ndarray:
        return np.cross(self.right, self.up)

    def rotation(self) -> np.ndarray:
        """Columns: right, up, normal (the tag geom's frame in the object frame)."""
        return np.column_stack([self.right, self.up, self.normal])

    def frame(self) -> np.ndarray:
        """4x4 pose of the tag (its geom frame) in the object frame."""
        T = np.eye(4)
        T[:3, :3] = self.rotation()
        T[:3, 3] = self.center
        return T

    def corners(self) -> np.ndarray:
        """(4, 3) corners in OpenCV order (TL, TR, BR, BL seen from outside), object frame."""
        h = self.size_m / 2.0
        c, r, u = (np.asarray(v, float) for v in (self.center, self.right, self.up))
        return np.array([c - h * r + h * u, c + h * r + h * u, c + h * r - h * u, c - h * r - h * u])


def square_corners(size_m: float) -> np.ndarray:
    """A tag's corners in its own frame (z = 0), OpenCV order: what SOLVEPNP_IPPE_SQUARE wants."""
    h = size_m / 2.0
    return np.array([[-h, h, 0.0], [h, h, 0.0], [h, -h, 0.0], [-h, -h, 0.0]])


@dataclass(frozen=True)
class TagLayout:
    """The tags of one rigid object. ``half_extents`` is the object's box (None if not a box)."""

    name: str
    dictionary: str
    tags: tuple[Tag, ...]
    half_extents: tuple[float, float, float] | None = None
    quiet_zone_cells: int = 1

    def __post_init__(self):
        ids = [t.id for t in self.tags]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"{self.name}: tag ids must be distinct, got {ids}")

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(t.id for t in self.tags)

    def tag(self, tag_id: int) -> Tag:
        for t in self.tags:
            if t.id == int(tag_id):
                return t
        raise KeyError(f"tag id {tag_id} is not on {self.name} (ids {list(self.ids)})")

    def corners(self, ids: Sequence[int] | None = None) -> np.ndarray:
        """(N, 4, 3) corners of the given tags (all, in layout order, when None)."""
        ids = self.ids if ids is None else ids
        return np.array([self.tag(i).corners() for i in ids]).reshape(-1, 4, 3)

    def box_corners(self) -> np.ndarray | None:
        """(8, 3) corners of the object's box, or None."""
        if self.half_extents is None:
            return None
        h = np.asarray(self.half_extents)
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        return signs * h

    def box_edges(self) -> list[tuple[int, int]]:
        """Index pairs into :meth:`box_corners` that are the box's 12 edges."""
        corners = self.box_corners()
        if corners is None:
            return []
        return [(i, j) for i in range(8) for j in range(i + 1, 8)
                if np.count_nonzero(np.sign(corners[i]) != np.sign(corners[j])) == 1]

    def cell_m(self) -> float:
        return min(t.size_m for t in self.tags) / TAG_FAMILY_CELLS.get(self.dictionary, 8)

    def aruco_board(self):
        """The layout as one ``cv2.aruco.Board`` (any 3-D layout)."""
        import cv2

        obj = [c.astype(np.float32) for c in self.corners()]
        return cv2.aruco.Board(obj, marker_dictionary(self.dictionary), np.array(self.ids))


# ---------------------------------------------------------------------- settings and builders
@dataclass(frozen=True)
class PegTagSettings:
    """The peg's ``tags``: ten tags, ids in config order (see the module docstring)."""

    dictionary: str = "DICT_APRILTAG_36h11"
    ids: tuple[int, ...] = tuple(range(10))
    size_m: float = 0.03                      # side of the black square
    long_face_offset_m: float | None = None   # tag centres along z from the centre; None: length / 4
    quiet_zone_cells: int = 1                 # white margin around the black square, in cells
    texture_px_per_cell: int = 16             # resolution of the generated tag images

    def __post_init__(self):
        require(len(self.ids) == 10 and min(self.ids) >= 0, "ids", list(self.ids), "exactly 10 tag ids >= 0")
        require(np.isfinite(self.size_m) and self.size_m > 0, "size_m", self.size_m, "> 0 (m)")


@dataclass(frozen=True)
class PlateTagSettings:
    """A tag plate's ``tags``: a ``grid`` of tags, ids row by row from the top-left."""

    dictionary: str = "DICT_APRILTAG_36h11"
    ids: tuple[int, ...] | None = None        # None: 0, 1, ... (rows x cols of them)
    size_m: float = 0.04                      # side of the black square
    grid: tuple[int, int] = (1, 1)            # rows, cols
    spacing_m: float | None = None            # tag pitch; None: the tag with its quiet zone
    quiet_zone_cells: int = 1
    texture_px_per_cell: int = 16

    def __post_init__(self):
        require(min(self.grid) >= 1, "grid", list(self.grid), "[rows, cols] >= 1")
        n = self.grid[0] * self.grid[1]
        require(self.ids is None or (len(self.ids) == n and min(self.ids) >= 0), "ids",
                None if self.ids is None else list(self.ids), f"exactly {n} tag ids >= 0 (rows x cols)")
        require(np.isfinite(self.size_m) and self.size_m > 0, "size_m", self.size_m, "> 0 (m)")


@dataclass(frozen=True)
class _PegSize:
    size: tuple[float, float, float]   # full extents, m; z is the long axis

    def __post_init__(self):
        require(all(np.isfinite(self.size)) and min(self.size) > 0, "size", list(self.size),
                "[x, y, z] full extents > 0 in metres")


def peg_layout(size: Sequence[float], tags: Mapping[str, Any] | PegTagSettings | None = None,
               name: str = "peg", surface_offset_m: float = 0.0004) -> TagLayout:
    """The ten-tag peg (see the module docstring). ``size`` = full extents (x, y, z = long)."""
    where = f"scene.objects.{name}"
    sx, sy, sz = from_config(_PegSize, {"size": size}, where).size
    cfg = from_config(PegTagSettings, tags, f"{where}.tags")
    dictionary, ids, s, quiet = cfg.dictionary, cfg.ids, cfg.size_m, cfg.quiet_zone_cells
    off = sz / 4 if cfg.long_face_offset_m is None else cfg.long_face_offset_m
    cells = TAG_FAMILY_CELLS.get(dictionary, 8)
    outer = s * (cells + 2 * quiet) / cells  # the tag geom with its white quiet zone
    if sz <= sx or sz <= sy:
        raise ConfigError(f"{where}.size: z must be the long axis (z > x, y), got {list(size)}")
    if outer > min(sx, sy) + 1e-9:
        raise ConfigError(f"{where}.tags.size_m={s}: with its quiet zone the tag is {outer:.4f} m "
                          f"wide, more than the peg's narrowest face ({min(sx, sy)} m)")
    if off - outer / 2 < 0 or off + outer / 2 > sz / 2 + 1e-9:
        raise ConfigError(f"{where}.tags.long_face_offset_m={off}: the two tags of a long face "
                          f"(each {outer:.4f} m with quiet zone) must fit between the centre and "
                          f"the end (0..{sz / 2} m) without overlapping")
    half = np.array([sx, sy, sz]) / 2
    z = np.array([0.0, 0.0, 1.0])
    y = np.array([0.0, 1.0, 0.0])
    placed = []
    k = 0
    for face in ("+x", "-x", "+y", "-y"):
        n = face_normal(face)
        right = np.cross(z, n)  # right x up = normal with up = +z
        for dz in (off, -off):
            c = n * (half + surface_offset_m) + z * dz
            placed.append(Tag(ids[k], face, tuple(c), tuple(right), tuple(z), s))
            k += 1
    for face in ("+z", "-z"):
        n = face_normal(face)
        right = np.cross(y, n)
        placed.append(Tag(ids[k], face, tuple(n * (half + surface_offset_m)), tuple(right),
                          tuple(y), s))
        k += 1
    return TagLayout(name, dictionary, tuple(placed), tuple(half.tolist()), quiet)


def plate_layout(tags: Mapping[str, Any] | PlateTagSettings | None = None, name: str = "tag_plate",
                 surface_offset_m: float = 0.0003) -> TagLayout:
    """A flat plate of ``grid = [rows, cols]`` tags facing the plate frame's +z, centred at 0
    (the plate's surface is z = 0; the tags' printed surface at ``surface_offset_m``).

    Ids run row by row from the top-left (plate +y is up, +x is right).
    """
    cfg = from_config(PlateTagSettings, tags, f"scene.objects.{name}.tags")
    rows, cols = cfg.grid
    ids = tuple(range(rows * cols)) if cfg.ids is None else cfg.ids
    s, dictionary, quiet = cfg.size_m, cfg.dictionary, cfg.quiet_zone_cells
    cells = TAG_FAMILY_CELLS.get(dictionary, 8)
    pitch = s * (cells + 2 * quiet) / cells if cfg.spacing_m is None else cfg.spacing_m
    placed = []
    for r in range(rows):
        for c in range(cols):
            x = (c - (cols - 1) / 2) * pitch
            y = ((rows - 1) / 2 - r) * pitch
            placed.append(Tag(ids[r * cols + c], "+z", (x, y, surface_offset_m), (1.0, 0.0, 0.0),
                              (0.0, 1.0, 0.0), s))
    return TagLayout(name, dictionary, tuple(placed), None, quiet)


def layout_from_config(obj: Mapping[str, Any], name: str = "peg") -> TagLayout:
    """The layout of a scene object config (its ``kind`` picks the peg or the plate layout)."""
    kind = str(obj.get("kind", ""))
    if kind.endswith(":add_tag_plate"):
        return plate_layout(obj.get("tags"), name, PLATE_TAG_THICKNESS_M)
    if kind.endswith(":add_tagged_peg") or "size" in obj:
        return peg_layout(obj.get("size", [0.04, 0.04, 0.14]), obj.get("tags"), name,
                          float(obj.get("tag_thickness_m", PEG_TAG_THICKNESS_M)))
    raise ConfigError(f"scene.objects.{name}: kind {kind!r} has no tag layout; tagged kinds are "
                      "hardware.models.peg:add_tagged_peg and hardware.models.peg:add_tag_plate")
