"""Pedro Pathing ``.pp`` path files in and out: read, convert to cubic segments, write back.

Facts (sources read for facts only, nothing copied; commits are the snapshots read):

- Format: Pedro-Pathing/Visualizer ``src/types.ts``, ``src/utils/file.ts`` (e03780b). JSON
  ``{startPoint, lines, shapes, sequence, settings?}``; a pose is ``{x, y, heading}`` with heading
  ``linear`` (``startDeg``, ``endDeg``), ``constant`` (``degrees``) or ``tangential``
  (``reverse``); a line is ``{endPoint, controlPoints: [{x, y}...], color, id?, name?, ...}`` and
  starts where ``lines[i-1]`` ends (``App.svelte``, ``codeExporter.ts``; ``sequence`` orders
  paths and waits for playback, it is not geometry). It is a Bézier of degree
  ``len(controlPoints) + 1``, any degree (``getCurvePoint``, ``src/utils/math.ts``). Real files
  add stale fields of other modes, ``reverse`` on linear lines, and the Plus fork's extras
  (Mallen220/PedroPathingPlusVisualizer ``src/types/index.ts``, 5eb677b: ``version``,
  ``header``, ``eventMarkers``; its heading modes ``facingPoint``/``piecewise`` are refused).
- Frame: 144 x 144 in, origin at a field corner, x right and y up on the drawing (``App.svelte``
  maps y 0..144 to canvas bottom..top); headings in degrees counter-clockwise from +x.
- Headings (Pedro-Pathing/PedroPathing ``core/.../paths/HeadingInterpolator.java``, 51ea440):
  constant holds ``degrees``; linear turns ``startDeg`` → ``endDeg`` the shorter way, linear in
  the curve parameter; tangential faces along the path; ``reverse`` adds 180 degrees
  (``setReversed()``; the visualizer's code export applies it to any mode, its animation only to
  tangential). Start heading: ``startDeg`` (linear), ``degrees`` (constant), or the first line's
  start direction (tangential) (``src/utils/timeCalculator.ts``).
- The project's frame (origin at the field's centre, SPEC section 4) is Pedro's moved by
  (-72, -72) in, axes and headings unchanged, so ``field.png`` shows a path as the visualizer
  draws it. (Pedro's ``ftc/.../FTCCoordinates.java`` (51ea440) also turns the axes by -90 degrees
  for FTC's official frame; its ``convertToPedro`` turns them by -90 too, so the pair are not
  inverses, and ``InvertedFTCCoordinates`` and the Plus fork's FTC display turn by +90: no one
  turn is the convention.)

Lines become cubics in :mod:`stages.mecanum.paths.bezier_degree` (exact up to degree 3).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import atomic_write_json
from stages.mecanum.paths.bezier import JOIN_TOLERANCE_IN, CubicBezier, PathError
from stages.mecanum.paths.bezier_degree import EXACT_IN, as_cubics, hermite_cubic
from stages.mecanum.paths.heading import (
    SEGMENT_HEADING_MODES,
    SegmentHeading,
    SegmentHeadingMode,
    short_turn,
)
from stages.mecanum.paths.settings import Segments

CENTRE_IN = 72.0  # Pedro's field centre (its frame spans 0..144 in)
SPLIT_TOLERANCE_IN = 1e-3  # default bound for lines of degree > 3 (well under path flatness)
_MODE_FIELDS = {"linear": ("startDeg", "endDeg"), "constant": ("degrees",), "tangential": ()}
_PALETTE = ("#5FA8D3", "#E07A5F", "#81B29A", "#F2CC8F", "#9C89B8", "#3D405B")


# -- the frame ------------------------------------------------------------------------------
def to_field(x: float, y: float) -> tuple[float, float]:
    """Pedro (corner origin) → this project's field frame (centre origin, the same axes), inches."""
    return float(x) - CENTRE_IN, float(y) - CENTRE_IN


def from_field(x: float, y: float) -> tuple[float, float]:
    """This project's field frame → Pedro's; the exact inverse of :func:`to_field`."""
    return float(x) + CENTRE_IN, float(y) + CENTRE_IN


def heading_to_field(degrees: float) -> float:
    """A Pedro heading in degrees → radians in the field frame (the same axes; not wrapped)."""
    return math.radians(degrees)


def heading_from_field(radians: float) -> float:
    """A field-frame heading in radians → Pedro degrees; inverse of :func:`heading_to_field`."""
    return math.degrees(radians)


# -- the file as data (Pedro frame, degrees) ------------------------------------------------
@dataclass(frozen=True)
class PedroPose:
    """``startPoint`` or a line's ``endPoint``: the heading fields of its mode, rest in ``extras``."""

    x: float
    y: float
    heading: SegmentHeadingMode
    start_deg: float | None = None  # linear
    end_deg: float | None = None  # linear
    degrees: float | None = None  # constant
    reverse: bool = False
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PedroLine:
    end: PedroPose
    control_points: tuple[tuple[float, float], ...]  # (x, y); a point's other keys are not kept
    extras: dict[str, Any] = field(default_factory=dict)  # id, name, color, waits, markers, ...


@dataclass(frozen=True)
class PedroPath:
    start: PedroPose
    lines: tuple[PedroLine, ...]
    extras: dict[str, Any] = field(default_factory=dict)  # shapes, sequence, settings, version, ...
    name: str = "<pp>"  # the file's name, for messages


def _number(d: dict[str, Any], key: str, where: str) -> float:
    value = d.get(key)
    if value is None:
        raise PathError(f"{where}.{key}: missing")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PathError(f"{where}.{key}: {value!r} is not a finite number")
    return float(value)


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PathError(f"{where}: " + ("missing" if value is None else f"{value!r} is not an object"))
    return value


def _point(d: Any, where: str) -> tuple[float, float]:
    d = _obj(d, where)
    return _number(d, "x", where), _number(d, "y", where)


def _pose(d: Any, where: str) -> PedroPose:
    x, y = _point(d, where)
    mode = d.get("heading")
    if mode not in SEGMENT_HEADING_MODES:
        what = "missing; expected" if mode is None else f"{mode!r} is not"
        raise PathError(f"{where}.heading: {what} one of {', '.join(SEGMENT_HEADING_MODES)}")
    vals = {k: _number(d, k, where) for k in _MODE_FIELDS[mode]}
    reverse = d.get("reverse", False)
    if not isinstance(reverse, bool):
        raise PathError(f"{where}.reverse: {reverse!r} is not true or false")
    known = ("x", "y", "heading", "reverse", *_MODE_FIELDS[mode])
    return PedroPose(x, y, mode, vals.get("startDeg"), vals.get("endDeg"), vals.get("degrees"),
                     reverse, {k: v for k, v in d.items() if k not in known})


def parse_pp(data: Any, name: str = "<pp>") -> PedroPath:
    """Validate a decoded ``.pp`` document; errors read ``name: field: what``."""
    try:
        if not isinstance(data, dict):
            raise PathError(f"top level: expected a JSON object; got {type(data).__name__}")
        start = _pose(data.get("startPoint"), "startPoint")
        raw_lines = data.get("lines", [])
        if not isinstance(raw_lines, list):
            raise PathError(f"lines: expected a list; got {raw_lines!r}")
        lines = []
        for i, ln in enumerate(raw_lines):
            ln = _obj(ln, f"lines[{i}]")
            cps = ln.get("controlPoints", [])
            if not isinstance(cps, list):
                raise PathError(f"lines[{i}].controlPoints: expected a list; got {cps!r}")
            lines.append(PedroLine(
                _pose(ln.get("endPoint"), f"lines[{i}].endPoint"),
                tuple(_point(c, f"lines[{i}].controlPoints[{k}]") for k, c in enumerate(cps)),
                {k: v for k, v in ln.items() if k not in ("endPoint", "controlPoints")}))
    except PathError as e:
        raise PathError(f"{name}: {e}") from None
    extras = {k: v for k, v in data.items() if k not in ("startPoint", "lines")}
    return PedroPath(start, tuple(lines), extras, name)


def read_pp(path: Path | str) -> PedroPath:
    """Read and validate a ``.pp`` file (see :func:`parse_pp`)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise PathError(f"{path.name}: cannot read: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PathError(f"{path.name}: not a JSON .pp file ({e})") from None
    return parse_pp(data, path.name)


# -- to the project's path -------------------------------------------------------------------
@dataclass(frozen=True)
class FieldPath:
    """A ``.pp`` path in this project's terms: ``segments`` goes to ``PathSettings.segments``."""

    segments: Segments
    headings: tuple[SegmentHeading, ...]  # one per .pp line
    start_heading_rad: float
    line_of_segment: tuple[int, ...]  # which .pp line each segment traces
    spans: tuple[tuple[float, float], ...]  # each segment's parameter range within its line
    approximated: tuple[int, ...] = ()  # lines of degree > 3 split within the tolerance
    max_error_in: float = 0.0  # bound on the distance to the file's curves (0: all exact)

    def segment_headings(self) -> tuple[SegmentHeading, ...]:
        """One heading per segment: a split line's linear turn is cut at its pieces' spans."""
        out = []
        for seg, i, (a, b) in zip(self.segments, self.line_of_segment, self.spans, strict=True):
            h = self.headings[i]
            if (a, b) == (0.0, 1.0) or h.mode == "constant":
                out.append(h)
            elif h.mode == "linear":
                turn = short_turn(h.start_rad, h.end_rad)
                out.append(SegmentHeading("linear", h.start_rad + a * turn, h.start_rad + b * turn,
                                          h.reverse))
            else:
                c = CubicBezier(np.array(seg))
                out.append(SegmentHeading("tangential", _angle(c.start_direction()),
                                          _angle(c.end_direction()), h.reverse))
        return tuple(out)


def _angle(v: np.ndarray) -> float:
    return float(math.atan2(v[1], v[0]))


def _heading(pose: PedroPose, start_dir: np.ndarray, end_dir: np.ndarray) -> SegmentHeading:
    if pose.heading == "linear":
        return SegmentHeading("linear", heading_to_field(pose.start_deg), heading_to_field(pose.end_deg),
                              pose.reverse)
    if pose.heading == "constant":
        h = heading_to_field(pose.degrees)
        return SegmentHeading("constant", h, h, pose.reverse)
    return SegmentHeading("tangential", _angle(start_dir), _angle(end_dir), pose.reverse)


def to_segments(pp: PedroPath, tolerance_in: float = SPLIT_TOLERANCE_IN) -> FieldPath:
    """Cubic segments in the field frame and the per-line headings (see the module doc)."""
    if not pp.lines:
        raise PathError(f"{pp.name}: lines: empty; a path needs at least one line")
    prev = to_field(pp.start.x, pp.start.y)
    segments, owners, spans, headings, approx, worst = [], [], [], [], [], 0.0
    for i, line in enumerate(pp.lines):
        pts = [prev] + [to_field(*c) for c in line.control_points]
        pts.append(to_field(line.end.x, line.end.y))
        pieces = as_cubics(np.array(pts), tolerance_in, f"{pp.name}: lines[{i}]")
        for a, b, c, _ in pieces:
            segments.append(tuple((float(x), float(y)) for x, y in c))
            owners.append(i)
            spans.append((a, b))
        err = max(e for *_, e in pieces)
        if err > 0:
            approx.append(i)
            worst = max(worst, err)
        headings.append(_heading(line.end, CubicBezier(pieces[0][2]).start_direction(),
                                 CubicBezier(pieces[-1][2]).end_direction()))
        prev = pts[-1]
    s = pp.start
    if s.heading == "tangential":
        start = headings[0].start_rad + (math.pi if s.reverse else 0.0)
    else:
        start = heading_to_field(s.start_deg if s.heading == "linear" else s.degrees)
    return FieldPath(tuple(segments), tuple(headings), start, tuple(owners), tuple(spans),
                     tuple(approx), worst)


# -- writing ---------------------------------------------------------------------------------
def _pedro_xy(xy: np.ndarray) -> dict[str, float]:
    x, y = from_field(*xy)
    return {"x": x, "y": y}


def _control_points(c: np.ndarray) -> list[np.ndarray]:
    """The fewest control points that give cubic ``c`` exactly (to EXACT_IN): 0, 1 or 2."""
    p0, p1, p2, p3 = c
    if max(np.hypot(*(p1 - (p0 + (p3 - p0) / 3))), np.hypot(*(p2 - (p3 - (p3 - p0) / 3)))) <= EXACT_IN:
        return []
    q = (p0 + 1.5 * (p1 - p0) + p3 + 1.5 * (p2 - p3)) / 2
    if np.abs(hermite_cubic(np.array([p0, q, p3])) - c).max() <= EXACT_IN / 2:
        return [q]
    return [p1, p2]


def _pose_dict(xy: np.ndarray, h: SegmentHeading, keep: PedroPose | None) -> dict[str, Any]:
    d = dict(keep.extras) if keep is not None else {}
    d.update(_pedro_xy(xy), heading=h.mode)
    if h.mode == "linear":
        d.update(startDeg=heading_from_field(h.start_rad), endDeg=heading_from_field(h.end_rad))
    elif h.mode == "constant":
        d["degrees"] = heading_from_field(h.start_rad)
    d["reverse"] = h.reverse
    return d


def pp_document(segments: Sequence, headings: Sequence[SegmentHeading] | None = None,
                start_heading_rad: float = 0.0, template: PedroPath | None = None,
                name: str = "<pp>") -> dict[str, Any]:
    """Cubic ``segments`` (field frame) as a ``.pp`` document, one line per segment (``name``: errors).

    ``headings``: one per segment (default tangential). ``template`` (the file the path came
    from) keeps its top-level fields, its start point's and, when it has as many lines as there
    are segments, each line's fields (id, name, color, waits, ...); otherwise its ``sequence``,
    which names its lines, is dropped and the visualizer rebuilds it.
    """
    try:
        p = np.array(segments, dtype=float)
    except (TypeError, ValueError):
        raise PathError(f"{name}: segments must be [[x, y]] * 4 quadruples") from None
    if p.ndim != 3 or p.shape[1:] != (4, 2) or len(p) == 0 or not np.all(np.isfinite(p)):
        raise PathError(f"{name}: segments must be a non-empty list of four finite [x, y]; "
                        f"got shape {p.shape}")
    for i in range(1, len(p)):
        gap = float(np.hypot(*(p[i, 0] - p[i - 1, 3])))
        if gap > JOIN_TOLERANCE_IN:
            raise PathError(f"{name}: segments[{i}] starts {gap:.4g} in from where segments"
                            f"[{i - 1}] ends; a .pp path is one continuous chain")
    heads = tuple(headings) if headings is not None else (SegmentHeading("tangential"),) * len(p)
    if len(heads) != len(p) or not all(isinstance(h, SegmentHeading) for h in heads):
        raise PathError(f"{name}: headings must be {len(p)} SegmentHeading (one per segment); "
                        f"got {len(heads)}")
    same = template is not None and len(template.lines) == len(p)
    lines = []
    for i, (c, h) in enumerate(zip(p, heads, strict=True)):
        keep = template.lines[i] if same else None
        d = dict(keep.extras) if keep else {"id": f"line-{i + 1}", "name": f"Path {i + 1}",
                                            "color": _PALETTE[i % len(_PALETTE)]}
        d["endPoint"] = _pose_dict(c[3], h, keep.end if keep else None)
        d["controlPoints"] = [_pedro_xy(q) for q in _control_points(c)]
        lines.append(d)
    ts = template.start if template is not None else None
    start = dict(ts.extras) if ts is not None else {}
    deg = heading_from_field(start_heading_rad)
    start.update(_pedro_xy(p[0, 0]))
    if ts is not None and ts.heading == "constant":
        start.update(heading="constant", degrees=deg)
    else:  # the visualizer reads only startDeg of a linear start; a template's endDeg is kept
        end = ts.end_deg if ts is not None and ts.heading == "linear" else deg
        start.update(heading="linear", startDeg=deg, endDeg=end)
    extras = dict(template.extras) if template is not None else {"shapes": []}
    if not same:
        extras.pop("sequence", None)
    return {"startPoint": start, "lines": lines, **extras}


def write_pp(path: Path | str, segments: Sequence, headings: Sequence[SegmentHeading] | None = None,
             start_heading_rad: float = 0.0, template: PedroPath | None = None) -> Path:
    """Write :func:`pp_document` to ``path`` atomically."""
    path = Path(path)
    return atomic_write_json(path, pp_document(segments, headings, start_heading_rad, template, path.name))


@dataclass(frozen=True, eq=False)
class PedroFile:
    """A path as a ``.pp`` artifact (a stage's file; see :func:`write_pp`)."""

    segments: Segments
    headings: tuple[SegmentHeading, ...] | None = None
    start_heading_rad: float = 0.0
    template: PedroPath | None = None
    suffix = ".pp"

    def save(self, path: Path) -> None:
        write_pp(path, self.segments, self.headings, self.start_heading_rad, self.template)

    def round_trip_in(self) -> float:
        """How far the segments read back from this ``.pp`` lie from the segments (in, control points)."""
        doc = pp_document(self.segments, self.headings, self.start_heading_rad, self.template)
        back = to_segments(parse_pp(json.loads(json.dumps(doc))), tolerance_in=0.0).segments
        return float(np.abs(np.subtract(back, self.segments)).max())


def path_from_pp(file: Path | str) -> tuple[FieldPath, PedroPath]:
    """A ``.pp`` file read and converted (:func:`read_pp`, :func:`to_segments`)."""
    pp = read_pp(file)
    return to_segments(pp), pp
