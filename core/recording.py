"""What a run records for the viewer: the :class:`Recorder` stages log through, and its shapes.

The runner opens one recorder per run (``<run_dir>/recording.rrd``, :mod:`core.rerun_recorder`)
and hands it to every stage as ``ctx.recorder``; with ``record: false`` it hands this class
itself, which does nothing. The methods speak robotics, not Rerun: seconds on the ``time``
timeline, metres, quaternions in MuJoCo's ``[w, x, y, z]`` order, pixels.

Time: :meth:`Recorder.set_time_s` sets the ``time`` timeline (seconds) for the calls that follow
on this thread; :meth:`series` and :meth:`transforms` carry their own times (one call for a whole
125 Hz trajectory). ``static=True`` logs something that holds at every time (scene geometry).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

TIMELINE = "time"
RECORDING_FILE = "recording.rrd"
Color = Sequence[int] | Sequence[float] | None   # RGB(A), 0–255 ints or 0–1 floats
Level = Literal["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"]


@dataclass(frozen=True)
class Primitive:
    """A solid in its own frame, centred at the origin, axis along +z: ``size_m`` is
    box: half sizes (3); sphere: radius (1); capsule, cylinder: radius and half length (2);
    ellipsoid: half axes (3) — MuJoCo's geom sizes."""

    kind: Literal["box", "sphere", "capsule", "cylinder", "ellipsoid"]
    size_m: tuple[float, ...]
    color: Color = None


@dataclass(frozen=True, eq=False)
class Mesh:
    """A triangle mesh in its own frame: vertices (V×3, m), triangles (F×3 indices), normals (V×3)."""

    vertices_m: np.ndarray
    triangles: np.ndarray
    normals: np.ndarray | None = None
    color: Color = None


Shape = Primitive | Mesh


@dataclass(frozen=True)
class View:
    """One panel of the viewer's default layout: ``kind`` 3d (a scene), 2d (an image), series (plots),
    state (state lanes), text (log lines) or document (notes). ``contents`` and ``context`` are
    entity path queries (``world/planned/**``); a view is left out of a run's layout unless one of
    its ``contents`` was logged (``context``, e.g. the static scene, is shown but decides nothing)."""

    kind: Literal["3d", "2d", "series", "state", "text", "document"]
    name: str
    contents: tuple[str, ...]
    context: tuple[str, ...] = ()
    origin: str = "/"
    eye: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    """3d: where the viewer's camera starts, (position, a point it looks at), z up; None: the viewer's."""

    @property
    def spatial(self) -> bool:
        return self.kind in ("3d", "2d")

    @property
    def queries(self) -> list[str]:
        return [*self.contents, *self.context]

    def shows_any(self, entities) -> bool:
        """Does one of ``contents`` match one of ``entities`` (entity paths logged)?"""
        return any(query_matches(q, e) for q in self.contents for e in entities)

    def under(self, prefix: str, name: str) -> View:
        """The same view of a recording moved under ``prefix`` (a sweep's job), named ``name``."""
        def move(q: str) -> str:
            return f"{prefix.strip('/')}/{q.strip('/')}".rstrip("/")
        return View(self.kind, name, tuple(map(move, self.contents)), tuple(map(move, self.context)),
                    move(self.origin))


def query_matches(query: str, entity: str) -> bool:
    """Does an entity path query (``a/b/**`` or ``a/b``) take ``entity``?"""
    q, e = query.strip().strip("/"), entity.strip("/")
    if q.endswith("**"):
        base = q[:-2].rstrip("/")
        return not base or e == base or e.startswith(base + "/")
    return e == q


class Recorder:
    """The recorder interface, and the no-op one (``record: false``): every call does nothing."""

    enabled: bool = False
    path: Path | None = None

    # --- time
    def set_time_s(self, seconds: float) -> None:
        """Put the following calls (on this thread) at ``seconds`` on the ``time`` timeline."""

    def clear_time(self) -> None:
        """Following calls carry no ``time`` (only the wall clock of logging)."""

    # --- time series
    def scalar(self, entity: str, value: float) -> None:
        """One value of a time series at the current time."""

    def series(self, entity: str, times_s: np.ndarray, values: np.ndarray,
               names: Sequence[str] | None = None) -> None:
        """A whole time series at once: ``values`` (T,) or (T, k), ``names`` the k lines' names."""

    def series_style(self, entity: str, names: Sequence[str] | None = None,
                     colors: Sequence[Color] | None = None) -> None:
        """Names and colours of a series' lines (static)."""

    def state(self, entity: str, label: str | None) -> None:
        """A discrete state from the current time on (``None`` ends it: a gap in the lane)."""

    # --- 3-D
    def points3d(self, entity: str, positions_m: np.ndarray, *, colors: Color | Sequence[Color] = None,
                 radii_m: float | np.ndarray | None = None, labels: Sequence[str] | None = None,
                 static: bool = False) -> None:
        """Points (N×3, m)."""

    def line_strips3d(self, entity: str, strips_m: Sequence[np.ndarray], *,
                      colors: Color | Sequence[Color] = None, radii_m: float | None = None,
                      labels: Sequence[str] | None = None, static: bool = False) -> None:
        """Polylines, each (N×3, m)."""

    def arrows3d(self, entity: str, origins_m: np.ndarray, vectors: np.ndarray, *,
                 colors: Color | Sequence[Color] = None, static: bool = False) -> None:
        """Arrows from ``origins_m`` (N×3) along ``vectors`` (N×3, in the scene's units)."""

    def transform(self, entity: str, translation_m: Sequence[float],
                  quaternion_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0), *, static: bool = False) -> None:
        """The pose of ``entity`` in its parent's frame, at the current time (or always)."""

    def transforms(self, entity: str, times_s: np.ndarray, translations_m: np.ndarray,
                   quaternions_wxyz: np.ndarray) -> None:
        """The pose of ``entity`` at every one of ``times_s`` (T×3 and T×4), in one call."""

    def shape(self, entity: str, shape: Shape, *, label: str | None = None, static: bool = True) -> None:
        """A primitive or a mesh in ``entity``'s frame."""

    # --- camera
    def pinhole(self, entity: str, camera_matrix: np.ndarray, width_px: int, height_px: int) -> None:
        """A camera's intrinsics (static); its images go to ``entity`` too."""

    def image(self, entity: str, rgb: np.ndarray, jpeg_quality: int | None = None) -> None:
        """An RGB (H×W×3, uint8) or grey image at the current time; lossless, or JPEG at
        ``jpeg_quality`` (1–100) where many images would make the file large."""

    def points2d(self, entity: str, pixels: np.ndarray, *, colors: Color | Sequence[Color] = None,
                 radii_px: float | None = None, labels: Sequence[str] | None = None) -> None:
        """Image points (N×2, px) at the current time."""

    def line_strips2d(self, entity: str, strips_px: Sequence[np.ndarray], *,
                      colors: Color | Sequence[Color] = None, labels: Sequence[str] | None = None) -> None:
        """Image polylines, each (N×2, px), at the current time."""

    # --- text
    def text(self, entity: str, message: str, level: Level = "INFO") -> None:
        """A log line at the current time."""

    def document(self, entity: str, markdown: str) -> None:
        """A static note (markdown): settings, a summary, a table."""

    # --- layout
    def layout(self, views: Sequence[View]) -> None:
        """The viewer's default layout: the 3-D and image views as tabs on the left, the others on
        the right. Written when the recording closes (the last call wins)."""

    # --- lifetime
    def flush(self) -> None:
        """Everything logged so far is in the file."""

    def close(self) -> None:
        """Finish the file (idempotent)."""


NULL_RECORDER = Recorder()
