"""The recorder that writes a Rerun file (``recording.rrd``), through its own ``RecordingStream``.

Each run gets its own stream (never Rerun's global one), so runs in one process (a sweep's
basic launcher, the tests) never mix. The file is streamed as the run goes: what was logged
before a failure is in it; :meth:`RerunRecorder.close` writes the footer.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import numpy as np

from core.errors import ConfigError
from core.recording import TIMELINE, Color, Level, Mesh, Primitive, Recorder, Shape, View

APPLICATION_ID = "choreograph"


def _rgba(color: Color) -> list[int] | None:
    if color is None:
        return None
    c = [float(x) for x in color]
    if all(x <= 1.0 for x in c) and any(isinstance(x, float) for x in color):
        c = [x * 255.0 for x in c]
    return [int(round(min(max(x, 0.0), 255.0))) for x in c]


def _colors(colors) -> list[list[int]] | list[int] | None:
    """One colour, or one per item."""
    if colors is None:
        return None
    arr = np.asarray(colors)
    if arr.ndim == 1:
        return _rgba(arr.tolist() if arr.dtype.kind == "f" else [int(x) for x in arr])
    return [_rgba(c.tolist() if arr.dtype.kind == "f" else [int(x) for x in c]) for c in arr]


def _xyzw(q_wxyz) -> np.ndarray:
    q = np.asarray(q_wxyz, dtype=float)
    return q[..., [1, 2, 3, 0]]


class RerunRecorder(Recorder):
    """Logs to ``path`` (an ``.rrd``) through a private :class:`rerun.RecordingStream`."""

    enabled = True

    def __init__(self, path: Path | str, name: str | None = None):
        import rerun as rr

        self._rr = rr
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._stream = rr.RecordingStream(APPLICATION_ID, recording_id=uuid.uuid4(), send_properties=True)
        self._stream.save(self.path)
        if name:
            self._stream.send_recording_name(name)
        self._closed = False
        self._lock = threading.Lock()
        self._entities: set[str] = set()   # every entity logged (the layout keeps views that show one)
        self._views: tuple[View, ...] = ()

    # --- time
    def set_time_s(self, seconds: float) -> None:
        self._stream.set_time(TIMELINE, duration=float(seconds))

    def clear_time(self) -> None:
        self._stream.disable_timeline(TIMELINE)

    def _log(self, entity: str, archetype, static: bool = False) -> None:
        self._entities.add(entity)
        self._stream.log(entity, archetype, static=static)

    def _columns(self, entity: str, times_s: np.ndarray, columns) -> None:
        self._entities.add(entity)
        rr = self._rr
        times = np.asarray(times_s, dtype=float).reshape(-1)
        self._stream.send_columns(entity, indexes=[rr.TimeColumn(TIMELINE, duration=times)], columns=columns)

    # --- time series
    def scalar(self, entity: str, value: float) -> None:
        self._log(entity, self._rr.Scalars(float(value)))

    def series(self, entity, times_s, values, names=None) -> None:
        rr = self._rr
        times = np.asarray(times_s, dtype=float).reshape(-1)
        vals = np.asarray(values, dtype=float)
        vals = vals.reshape(len(times), -1)
        if names is not None:
            self.series_style(entity, names)
        self._columns(entity, times, rr.Scalars.columns(scalars=vals))

    def series_style(self, entity, names=None, colors=None) -> None:
        kwargs = {}
        if names is not None:
            kwargs["names"] = [str(n) for n in names]
        if colors is not None:
            kwargs["colors"] = [_rgba(c) for c in colors]
        self._log(entity, self._rr.SeriesLines(**kwargs), static=True)

    def state(self, entity, label) -> None:
        rr = self._rr
        self._log(entity, rr.StateChange(state=label) if label else rr.StateChange.cleared())

    # --- 3-D
    def points3d(self, entity, positions_m, *, colors=None, radii_m=None, labels=None, static=False) -> None:
        pts = np.asarray(positions_m, dtype=float).reshape(-1, 3)
        self._log(entity, self._rr.Points3D(pts, colors=_colors(colors), radii=radii_m,
                                            labels=None if labels is None else [str(x) for x in labels]),
                  static)

    def line_strips3d(self, entity, strips_m, *, colors=None, radii_m=None, labels=None,
                      static=False) -> None:
        strips = [np.asarray(s, dtype=float).reshape(-1, 3) for s in strips_m]
        self._log(entity, self._rr.LineStrips3D(strips, colors=_colors(colors), radii=radii_m,
                                                labels=None if labels is None else [str(x) for x in labels]),
                  static)

    def arrows3d(self, entity, origins_m, vectors, *, colors=None, static=False) -> None:
        self._log(entity, self._rr.Arrows3D(origins=np.asarray(origins_m, float).reshape(-1, 3),
                                            vectors=np.asarray(vectors, float).reshape(-1, 3),
                                            colors=_colors(colors)), static)

    def transform(self, entity, translation_m, quaternion_wxyz=(1.0, 0.0, 0.0, 0.0), *,
                  static=False) -> None:
        rr = self._rr
        self._log(entity, rr.Transform3D(translation=np.asarray(translation_m, float),
                                         quaternion=rr.Quaternion(xyzw=_xyzw(quaternion_wxyz))), static)

    def transforms(self, entity, times_s, translations_m, quaternions_wxyz) -> None:
        rr = self._rr
        self._columns(entity, times_s, rr.Transform3D.columns(
            translation=np.asarray(translations_m, float).reshape(-1, 3),
            quaternion=_xyzw(np.asarray(quaternions_wxyz).reshape(-1, 4))))

    def shape(self, entity, shape: Shape, *, label=None, static=True) -> None:
        self._log(entity, self._archetype(shape, label), static)

    def _archetype(self, shape: Shape, label: str | None):
        rr = self._rr
        labels = None if label is None else [label]
        if isinstance(shape, Mesh):
            return rr.Mesh3D(vertex_positions=np.asarray(shape.vertices_m, np.float32),
                             triangle_indices=np.asarray(shape.triangles, np.uint32),
                             vertex_normals=None if shape.normals is None
                             else np.asarray(shape.normals, np.float32),
                             albedo_factor=_rgba(shape.color))
        if not isinstance(shape, Primitive):
            raise ConfigError(f"cannot record a {type(shape).__name__}; shapes are Primitive or Mesh")
        s, color, solid = shape.size_m, [_rgba(shape.color)] if shape.color else None, \
            rr.components.FillMode.Solid
        if shape.kind == "box":
            return rr.Boxes3D(half_sizes=[s[:3]], colors=color, fill_mode=solid, labels=labels)
        if shape.kind in ("sphere", "ellipsoid"):
            half = [s[0]] * 3 if shape.kind == "sphere" else list(s[:3])
            return rr.Ellipsoids3D(half_sizes=[half], colors=color, fill_mode=solid, labels=labels)
        if shape.kind == "capsule":
            return rr.Capsules3D(lengths=[2 * s[1]], radii=[s[0]], translations=[[0.0, 0.0, -s[1]]],
                                 colors=color, labels=labels)
        if shape.kind == "cylinder":
            return rr.Cylinders3D(lengths=[2 * s[1]], radii=[s[0]], centers=[[0.0, 0.0, 0.0]],
                                  colors=color, fill_mode=solid, labels=labels)
        raise ConfigError(f"primitive kind {shape.kind!r}; allowed: box, sphere, capsule, cylinder, "
                          "ellipsoid")

    # --- camera
    def pinhole(self, entity, camera_matrix, width_px, height_px) -> None:
        self._log(entity, self._rr.Pinhole(image_from_camera=np.asarray(camera_matrix, float),
                                           width=int(width_px), height=int(height_px)), static=True)

    def image(self, entity, rgb, jpeg_quality=None) -> None:
        image = self._rr.Image(np.ascontiguousarray(rgb))
        self._log(entity, image if jpeg_quality is None else image.compress(jpeg_quality=int(jpeg_quality)))

    def points2d(self, entity, pixels, *, colors=None, radii_px=None, labels=None) -> None:
        self._log(entity, self._rr.Points2D(np.asarray(pixels, float).reshape(-1, 2), colors=_colors(colors),
                                            radii=radii_px,
                                            labels=None if labels is None else [str(x) for x in labels]))

    def line_strips2d(self, entity, strips_px, *, colors=None, labels=None) -> None:
        strips = [np.asarray(s, float).reshape(-1, 2) for s in strips_px]
        self._log(entity, self._rr.LineStrips2D(strips, colors=_colors(colors),
                                                labels=None if labels is None else [str(x) for x in labels]))

    # --- text
    def text(self, entity, message, level: Level = "INFO") -> None:
        self._log(entity, self._rr.TextLog(str(message), level=level))

    def document(self, entity, markdown) -> None:
        self._log(entity, self._rr.TextDocument(str(markdown), media_type="text/markdown"), static=True)

    # --- layout
    def layout(self, views) -> None:
        self._views = tuple(views)

    def _blueprint(self):
        return blueprint([v for v in self._views if v.shows_any(self._entities)])

    # --- lifetime
    def flush(self) -> None:
        if not self._closed:
            self._stream.flush()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            blueprint = self._blueprint() if self._views else None
            if blueprint is not None:
                self._stream.send_blueprint(blueprint, make_active=True, make_default=True)
            self._stream.flush()
            self._stream.disconnect()


def rerun_view(view: View):
    """The Rerun blueprint view of a :class:`View`."""
    import rerun.blueprint as bp

    kinds = {"3d": bp.Spatial3DView, "2d": bp.Spatial2DView, "series": bp.TimeSeriesView,
             "state": bp.StateTimelineView, "text": bp.TextLogView, "document": bp.TextDocumentView}
    if view.kind == "3d" and view.eye is not None:
        position, target = view.eye
        eye = bp.EyeControls3D(position=position, look_target=target, eye_up=(0.0, 0.0, 1.0))
        return bp.Spatial3DView(origin=view.origin, contents=view.queries, name=view.name, eye_controls=eye)
    return kinds[view.kind](origin=view.origin, contents=view.queries, name=view.name)


def blueprint(views: list[View]):
    """One run's layout: the spatial views as tabs on the left; on the right the first other view
    above the rest (as tabs). None when there is nothing to show."""
    import rerun.blueprint as bp

    spatial = [rerun_view(v) for v in views if v.spatial]
    other = [rerun_view(v) for v in views if not v.spatial]
    right = None
    if other:
        right = other[0] if len(other) == 1 else bp.Vertical(other[0], bp.Tabs(*other[1:]))
    parts = [p for p in (bp.Tabs(*spatial) if spatial else None, right) if p is not None]
    if not parts:
        return None
    root = bp.Horizontal(*parts, column_shares=[3, 2]) if len(parts) == 2 else parts[0]
    return bp.Blueprint(root, bp.TimePanel(timeline=TIMELINE), collapse_panels=False)   # the motion's clock


def open_recorder(path: Path | str, record: bool, name: str | None = None) -> Recorder:
    """A :class:`RerunRecorder` writing ``path`` when ``record``, else the no-op recorder."""
    if not record:
        return Recorder()
    return RerunRecorder(path, name)

