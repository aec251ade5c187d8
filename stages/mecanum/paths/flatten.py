r"""Adaptive De Casteljau flattening of a Bézier chain into straight segments.

Each cubic is halved (De Casteljau at t = 1/2) until every piece passes a
flatness test below; each passing piece becomes the chord from its first to its
last control point.

**The bound (Willcocks / Fischer).** For a cubic with control points
P0..P3 let ``u = 3P1 − 2P0 − P3`` and ``v = 3P2 − 2P3 − P0``. If

    max(ux², vx²) + max(uy², vy²) ≤ 16·tol²

then every point of the curve is within ``tol`` of the chord P0P3.

*Proof.* Let ``L(t) = (1−t)P0 + tP3`` (a point of the chord for t in [0, 1]).
Expanding the Bernstein form and collecting the P0 and P3 terms,

    (1−t)³ − (1−t) = −t(1−t)(2−t),    t³ − t = −t(1−t)(1+t),

so ``B(t) − L(t) = t(1−t)·[(1−t)·u + t·v]``. Per coordinate, the bracket is a
convex combination of u and v, hence ``|Bx − Lx| ≤ t(1−t)·max(|ux|, |vx|) ≤
max(|ux|, |vx|)/4`` (``t(1−t) ≤ 1/4``), and likewise for y. Squaring and adding,

    |B(t) − L(t)|² ≤ (max(ux², vx²) + max(uy², vy²)) / 16 ≤ tol².

So each curve point B(t) lies within tol of the chord point L(t) (and each chord
point within tol of a curve point): the Hausdorff distance is ≤ tol. ∎

A second sufficient test catches what this one over-refines (control points on
the chord but spaced unevenly, e.g. ``P1 = P0``, ``P2 = P3``, where B(t) runs
ahead of L(t) along the same line): the curve lies in the convex hull of its
control points, and the distance to the segment P0P3 is convex, so if P1 and P2
are within tol of that segment, so is every point of the curve.

The recursion ends: on a piece spanning parameters [a, a+h] of the original,
``P1 = B(a) + h·B'(a)/3``, so ``u = B(a) + h·B'(a) − B(a+h) = −h²·B''(a)/2 − h³·B'''/6``
(and likewise v); halving a small piece divides u and v by about 4 and the test
value by about 16 per level. The bound uses no derivative, so
cusps and coincident control points (``P1 = P0``, ``P1 = P2``, all four equal)
need no special case: a piece whose chord has length 0 and passes the test lies
within tol of that point and is merged into its neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from stages.mecanum.paths.bezier import BezierChain, CubicBezier, PathError

MAX_DEPTH = 24  # 2**24 pieces on one segment: far beyond any sane tolerance
MAX_SEGMENTS = 500_000
MIN_SEGMENT_IN = 1e-9  # shorter flattened segments have no usable direction


def flatness(p: np.ndarray) -> float:
    """``max(ux², vx²) + max(uy², vy²)`` of a 4×2 control polygon (compare with 16·tol²)."""
    u = 3.0 * p[1] - 2.0 * p[0] - p[3]
    v = 3.0 * p[2] - 2.0 * p[3] - p[0]
    return float(np.maximum(u * u, v * v).sum())


def _segment_distance(q: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    dd = float(d @ d)
    s = np.clip((q - a) @ d / dd, 0.0, 1.0) if dd > 0 else np.zeros(len(q))
    return np.hypot(*(q - a - s[:, None] * d).T)


def is_flat(p: np.ndarray, tolerance_in: float) -> bool:
    """Either sufficient test: the Willcocks/Fischer bound, or the convex hull within tol."""
    if flatness(p) <= 16.0 * tolerance_in * tolerance_in:
        return True
    return bool(_segment_distance(p[1:3], p[0], p[3]).max() <= tolerance_in)


def _halves(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b, c = (p[0] + p[1]) / 2, (p[1] + p[2]) / 2, (p[2] + p[3]) / 2
    d, e = (a + b) / 2, (b + c) / 2
    m = (d + e) / 2
    return np.array([p[0], a, d, m]), np.array([m, e, c, p[3]])


def flatten_cubic(curve: CubicBezier, tolerance_in: float, max_depth: int = MAX_DEPTH,
                  max_segments: int = MAX_SEGMENTS) -> tuple[np.ndarray, np.ndarray, int]:
    """Parameters ``t`` of the polyline's vertices on one cubic, the points, and the depth used.

    Iterative (an explicit stack), left to right. Raises PathError if a piece still
    fails the test at ``max_depth`` or the pieces would exceed ``max_segments``.
    """
    ts, pts = [0.0], [curve.p[0].copy()]
    stack = [(curve.p, 0.0, 1.0, 0)]
    deepest = 0
    while stack:
        p, t0, t1, depth = stack.pop()
        if is_flat(p, tolerance_in):
            deepest = max(deepest, depth)
            if np.hypot(*(p[3] - pts[-1])) > 0.0:  # skip zero-length chords (exact)
                ts.append(t1)
                pts.append(p[3].copy())
                if len(pts) > max_segments:
                    raise PathError(f"flatness_in={tolerance_in:g} needs more than "
                                    f"{max_segments} segments; raise flatness_in")
            continue
        if depth >= max_depth:
            raise PathError(f"flatness_in={tolerance_in:g} is not met after {max_depth} halvings "
                            f"near t={t0:.6g}; raise flatness_in (or max_depth)")
        left, right = _halves(p)
        tm = 0.5 * (t0 + t1)
        stack.append((right, tm, t1, depth + 1))
        stack.append((left, t0, tm, depth + 1))
    if len(pts) == 1:  # the whole segment is within tol of one point
        ts.append(1.0)
        pts.append(curve.p[3].copy())
    return np.array(ts), np.array(pts), deepest


@dataclass(frozen=True, eq=False)
class FlatPath:
    """A polyline: ``points`` (N+1)×2 in inches, with where each vertex came from."""

    points: np.ndarray
    tolerance_in: float
    source_u: np.ndarray | None = None  # chain parameter (segment index + t) of each vertex
    max_chord_error_in: float = 0.0  # measured on the source curve (≤ tolerance by the bound)
    depth: int = 0
    lengths_in: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        pts = np.array(self.points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 2 or not np.all(np.isfinite(pts)):
            raise PathError(f"a flattened path needs ≥ 2 finite [x, y] points; got {pts.shape}")
        lengths = np.hypot(*np.diff(pts, axis=0).T)
        if np.any(lengths <= MIN_SEGMENT_IN):
            raise PathError(f"flattened segment {int(np.argmin(lengths))} is shorter than "
                            f"{MIN_SEGMENT_IN:g} in (no direction); raise flatness_in")
        for name, value in (("points", pts), ("lengths_in", lengths),
                            ("source_u", self.source_u)):
            if value is not None:
                value = np.array(value, dtype=float)
                value.flags.writeable = False
                object.__setattr__(self, name, value)

    @classmethod
    def from_points(cls, points: np.ndarray, tolerance_in: float = 0.0) -> FlatPath:
        """A polyline given directly (dropping points within MIN_SEGMENT_IN of the last kept)."""
        pts = np.asarray(points, dtype=float)
        keep = [0]
        for k in range(1, len(pts)):
            if np.hypot(*(pts[k] - pts[keep[-1]])) > MIN_SEGMENT_IN:
                keep.append(k)
        return cls(pts[keep], tolerance_in)

    @property
    def segments(self) -> int:
        return len(self.points) - 1

    @property
    def cum_length_in(self) -> np.ndarray:
        return np.r_[0.0, np.cumsum(self.lengths_in)]

    @property
    def length_in(self) -> float:
        return float(self.lengths_in.sum())

    @property
    def directions(self) -> np.ndarray:
        return np.diff(self.points, axis=0) / self.lengths_in[:, None]

    @property
    def turn_angles_rad(self) -> np.ndarray:
        """Unsigned turn at each vertex (0 at the two ends), in [0, π]."""
        d = self.directions
        cross = d[:-1, 0] * d[1:, 1] - d[:-1, 1] * d[1:, 0]
        dot = np.einsum("ij,ij->i", d[:-1], d[1:])
        return np.r_[0.0, np.arctan2(np.abs(cross), dot), 0.0]


def flatten_chain(chain: BezierChain, tolerance_in: float, max_depth: int = MAX_DEPTH,
                  check_samples: int = 8) -> FlatPath:
    """Flatten every segment; measure the worst chord error at ``check_samples`` points per piece."""
    if not (np.isfinite(tolerance_in) and tolerance_in > 0):
        raise PathError(f"flatness_in must be a positive number of inches; got {tolerance_in!r}")
    all_pts, all_u, worst, deepest = [chain.segments[0].p[:1]], [np.zeros(1)], 0.0, 0
    for i, seg in enumerate(chain.segments):
        ts, pts, depth = flatten_cubic(seg, tolerance_in, max_depth)
        worst = max(worst, chord_error(seg, ts, pts, check_samples))
        deepest = max(deepest, depth)
        all_pts.append(pts[1:])
        all_u.append(i + ts[1:])
    pts, u = np.vstack(all_pts), np.concatenate(all_u)
    keep = np.r_[True, np.hypot(*np.diff(pts, axis=0).T) > 0.0]  # a closed zero-length joint
    if keep.sum() < 2:
        raise PathError("the path flattens to a single point (all its segments are within "
                        f"flatness_in={tolerance_in:g} of one point)")
    return FlatPath(pts[keep], float(tolerance_in), u[keep], worst, deepest)


def chord_error(curve: CubicBezier, ts: np.ndarray, pts: np.ndarray, samples: int = 8) -> float:
    """Largest distance from the curve to its chord over each piece [ts[k], ts[k+1]].

    Sampled at ``samples`` interior parameters per piece (a lower estimate of the
    true maximum, whose upper bound is the tolerance by the flatness proof).
    """
    frac = np.arange(1, samples + 1) / (samples + 1)
    t = ts[:-1, None] + (ts[1:] - ts[:-1])[:, None] * frac[None, :]
    b = curve.point(t)  # (pieces, samples, 2)
    a, d = pts[:-1, None, :], (pts[1:] - pts[:-1])[:, None, :]
    dd = np.einsum("ijk,ijk->ij", d, d)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.clip(np.where(dd > 0, np.einsum("ijk,ijk->ij", b - a, d) / dd, 0.0), 0.0, 1.0)
    return float(np.max(np.hypot(*(b - a - s[..., None] * d).transpose(2, 0, 1)), initial=0.0))
