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


# ---------------------------------------------------------------------- builders
def _ids(cfg: Mapping[str, Any], n: int, where: str) -> list[int]:
    ids = cfg.get("ids", list(range(n)))
    if isinstance(ids, str | bytes) or not hasattr(ids, "__len__") or len(ids) != n:
        raise ConfigError(f"{where}.ids must list exactly {n} tag ids, got {ids!r}")
    try:
        out = [int(i) for i in ids]
    except (TypeError, ValueError):
        raise ConfigError(f"{where}.ids must be integers, got {ids!r}") from None
    if min(out) < 0:
        raise ConfigError(f"{where}.ids must be >= 0, got {out}")
    return out


def _positive(x: Any, where: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ConfigError(f"{where} must be a number, got {x!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ConfigError(f"{where} must be > 0, got {x!r}")
    return v


def _check(cfg: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in cfg if k not in allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
                          f"{', '.join(allowed)}")


PEG_TAG_KEYS = ("dictionary", "ids", "size_m", "long_face_offset_m", "quiet_zone_cells",
                "texture_px_per_cell")
PLATE_TAG_KEYS = ("dictionary", "ids", "size_m", "grid", "spacing_m", "quiet_zone_cells",
                  "texture_px_per_cell")


def peg_layout(size: Sequence[float], tags: Mapping[str, Any] | None = None,
               name: str = "peg", surface_offset_m: float = 0.0004) -> TagLayout:
    """The ten-tag peg (see the module docstring). ``size`` = full extents (x, y, z = long)."""
    where = f"scene.objects.{name}"
    if isinstance(size, str | bytes) or not hasattr(size, "__len__") or len(size) != 3:
        raise ConfigError(f"{where}.size must be [x, y, z] full extents in metres, got {size!r}")
    sx, sy, sz = (_positive(v, f"{where}.size[{i}]") for i, v in enumerate(size))
    cfg = dict(tags or {})
    _check(cfg, PEG_TAG_KEYS, f"{where}.tags")
    dictionary = str(cfg.get("dictionary", "DICT_APRILTAG_36h11"))
    ids = _ids(cfg, 10, f"{where}.tags")
    s = _positive(cfg.get("size_m", 0.03), f"{where}.tags.size_m")
    off = float(cfg.get("long_face_offset_m", sz / 4))
    quiet = int(cfg.get("quiet_zone_cells", 1))
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


def plate_layout(tags: Mapping[str, Any] | None = None, name: str = "tag_plate",
                 surface_offset_m: float = 0.0003) -> TagLayout:
    """A flat plate of ``grid = [rows, cols]`` tags facing the plate frame's +z, centred at 0
    (the plate's surface is z = 0; the tags' printed surface at ``surface_offset_m``).

    Ids run row by row from the top-left (plate +y is up, +x is right).
    """
    where = f"scene.objects.{name}.tags"
    cfg = dict(tags or {})
    _check(cfg, PLATE_TAG_KEYS, where)
    rows, cols = (int(v) for v in cfg.get("grid", [1, 1]))
    if rows < 1 or cols < 1:
        raise ConfigError(f"{where}.grid must be [rows, cols] >= 1, got {cfg.get('grid')!r}")
    ids = _ids(cfg, rows * cols, where)
    s = _positive(cfg.get("size_m", 0.04), f"{where}.size_m")
    dictionary = str(cfg.get("dictionary", "DICT_APRILTAG_36h11"))
    quiet = int(cfg.get("quiet_zone_cells", 1))
    pitch = float(cfg.get("spacing_m", s * (TAG_FAMILY_CELLS.get(dictionary, 8) + 2 * quiet)
                          / TAG_FAMILY_CELLS.get(dictionary, 8)))
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
