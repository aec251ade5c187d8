"""Cubic Bézier curves and chains of them: the autonomous paths.

A path is a list of cubic segments, each four control points ``[[x, y]] * 4`` in
inches. :class:`CubicBezier` evaluates one segment (position, derivatives,
curvature, De Casteljau split); :class:`BezierChain` validates a whole list,
joins it end to end and reports where the direction jumps (a G1 break is
*reported*, never smoothed away).

Degenerate input is handled exactly or refused with a message naming the entry:
NaN/inf or a wrong shape is a :class:`PathError`; a segment whose four points
coincide adds nothing to the path and is dropped (its index is kept in
``BezierChain.dropped``); a path that is nothing but such segments is an error;
coincident control points elsewhere (``P1 == P0``, cusps) are valid curves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.errors import ConfigError

JOIN_TOLERANCE_IN = 1e-4  # consecutive segments must share their end point to this
_TINY = 1e-12


class PathError(ConfigError):
    """A path's geometry is invalid (from config or built on the fly); says which entry."""


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class CubicBezier:
    """One cubic segment; ``p`` is its 4×2 control points in inches."""

    p: np.ndarray

    def __post_init__(self) -> None:
        p = np.asarray(self.p, dtype=float)
        if p.shape != (4, 2):
            raise PathError(f"a cubic Bézier needs 4 control points [x, y]; got shape {p.shape}")
        if not np.all(np.isfinite(p)):
            raise PathError(f"control points must be finite numbers; got {p.tolist()}")
        object.__setattr__(self, "p", _readonly(p))

    # -- evaluation -------------------------------------------------------------------
    def point(self, t: float | np.ndarray) -> np.ndarray:
        """Position at parameter(s) ``t`` in [0, 1]: shape (2,) or (n, 2)."""
        t = np.asarray(t, dtype=float)[..., None]
        s = 1.0 - t
        p0, p1, p2, p3 = self.p
        return s**3 * p0 + 3 * s * s * t * p1 + 3 * s * t * t * p2 + t**3 * p3

    def derivative(self, t: float | np.ndarray, order: int = 1) -> np.ndarray:
        """d^order B / dt^order at ``t`` (order 1, 2 or 3)."""
        t = np.asarray(t, dtype=float)[..., None]
        d1 = 3 * np.diff(self.p, axis=0)  # hodograph control points (3×2)
        if order == 1:
            s = 1.0 - t
            return s * s * d1[0] + 2 * s * t * d1[1] + t * t * d1[2]
        d2 = 2 * np.diff(d1, axis=0)
        if order == 2:
            return (1.0 - t) * d2[0] + t * d2[1]
        if order == 3:
            return np.broadcast_to(np.diff(d2, axis=0)[0], t.shape[:-1] + (2,)).copy()
        raise ValueError(f"derivative order must be 1, 2 or 3; got {order}")

    def curvature(self, t: float | np.ndarray) -> np.ndarray:
        """Signed curvature (1/in, positive = turning left). Where the speed vanishes
        (a cusp, coincident control points) the limit: ±inf if the curve turns there
        (B'' × B''' non-zero: κ grows like 1/t), 0 if it is straight."""
        d1, d2, d3 = (self.derivative(t, k) for k in (1, 2, 3))
        cross = d1[..., 0] * d2[..., 1] - d1[..., 1] * d2[..., 0]
        turn = d2[..., 0] * d3[..., 1] - d2[..., 1] * d3[..., 0]
        speed = np.hypot(d1[..., 0], d1[..., 1])
        scale = max(float(np.ptp(self.p, axis=0).max()), 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = cross / speed**3
        stalled = speed <= _TINY * scale
        k = np.where(stalled, np.where(np.abs(turn) <= _TINY * scale**2, 0.0,
                                       np.copysign(np.inf, turn)), k)
        return k if k.ndim else float(k)

    def split(self, t: float = 0.5) -> tuple[CubicBezier, CubicBezier]:
        """De Casteljau: the two halves [0, t] and [t, 1], each again a cubic."""
        p0, p1, p2, p3 = self.p
        a, b, c = p0 + t * (p1 - p0), p1 + t * (p2 - p1), p2 + t * (p3 - p2)
        d, e = a + t * (b - a), b + t * (c - b)
        m = d + t * (e - d)
        return CubicBezier(np.array([p0, a, d, m])), CubicBezier(np.array([m, e, c, p3]))

    def arc_length(self, pieces: int = 16) -> float:
        """Arc length by 5-point Gauss–Legendre on ``pieces`` parameter intervals per
        stretch between the roots of B'x and B'y: the speed |B'| is smooth except where
        B' = 0 (a cusp), and that is always one of those roots, so each stretch is smooth."""
        x, w = np.polynomial.legendre.leggauss(5)
        d1 = 3 * np.diff(self.p, axis=0)  # B'(t) = a t² + b t + c per coordinate
        breaks = [0.0, 1.0]
        for k in range(2):
            a = d1[0, k] - 2 * d1[1, k] + d1[2, k]
            b = 2 * (d1[1, k] - d1[0, k])
            c = d1[0, k]
            roots = np.roots([a, b, c]) if abs(a) + abs(b) > 0 else []
            breaks += [float(r.real) for r in roots if abs(r.imag) < 1e-12 and 0 < r.real < 1]
        knots = np.unique(breaks)
        edges = np.unique(np.concatenate([np.linspace(lo, hi, pieces + 1)
                                          for lo, hi in zip(knots[:-1], knots[1:], strict=True)]))
        pieces = len(edges) - 1
        mid, half = (edges[1:] + edges[:-1]) / 2, (edges[1:] - edges[:-1]) / 2
        t = (mid[:, None] + half[:, None] * x[None, :]).ravel()
        speed = np.linalg.norm(self.derivative(t), axis=-1).reshape(pieces, 5)
        return float(np.sum(speed * w[None, :] * half[:, None]))

    # -- geometry ---------------------------------------------------------------------
    @property
    def is_point(self) -> bool:
        """All four control points coincide: a segment of length 0."""
        return bool(np.ptp(self.p, axis=0).max() <= _TINY * max(np.abs(self.p).max(), 1.0))

    def start_direction(self) -> np.ndarray:
        """Unit tangent at t=0: the first non-zero of P1−P0, P2−P0, P3−P0."""
        return _first_direction(self.p[1:] - self.p[0])

    def end_direction(self) -> np.ndarray:
        """Unit tangent at t=1: the first non-zero of P3−P2, P3−P1, P3−P0."""
        return _first_direction(self.p[3] - self.p[2::-1])


def _first_direction(candidates: np.ndarray) -> np.ndarray:
    for v in candidates:
        n = float(np.hypot(*v))
        if n > _TINY * max(float(np.abs(candidates).max()), 1.0):
            return v / n
    return np.zeros(2)


@dataclass(frozen=True)
class Joint:
    """Where segment ``index`` meets segment ``index + 1`` (indices into ``segments``)."""

    index: int
    angle_rad: float  # angle between the incoming and outgoing tangents
    g1: bool  # tangent directions agree within the tolerance


@dataclass(frozen=True, eq=False)
class BezierChain:
    """Cubic segments joined end to end (C0 is enforced; G1 is checked and reported)."""

    segments: tuple[CubicBezier, ...]
    dropped: tuple[int, ...] = field(default=())  # config indices of zero-length segments

    def __post_init__(self) -> None:
        if not self.segments:
            raise PathError("a path needs at least one segment of non-zero length")
        for i in range(1, len(self.segments)):
            gap = float(np.hypot(*(self.segments[i].p[0] - self.segments[i - 1].p[3])))
            if gap > JOIN_TOLERANCE_IN:
                raise PathError(f"segment {i} starts {gap:.4g} in away from where segment "
                                f"{i - 1} ends; consecutive segments must share that point")

    @classmethod
    def from_control_points(cls, data: Sequence, where: str = "path.segments") -> BezierChain:
        """Validate a config list ``[[[x, y]] * 4, ...]``; errors name ``where[i]``."""
        if isinstance(data, (str, bytes)) or not isinstance(data, Sequence) or len(data) == 0:
            raise PathError(f"{where} must be a non-empty list of control-point quadruples "
                            f"[[x,y],[x,y],[x,y],[x,y]] in inches; got {data!r}")
        segments: list[CubicBezier] = []
        dropped: list[int] = []
        for i, quad in enumerate(data):
            try:
                p = np.array(quad, dtype=float)
            except (TypeError, ValueError):
                raise PathError(f"{where}[{i}] = {quad!r} is not four [x, y] points") from None
            if p.shape != (4, 2):
                raise PathError(f"{where}[{i}] must be four [x, y] points; got shape {p.shape}")
            bad = np.argwhere(~np.isfinite(p))
            if len(bad):
                k = int(bad[0][0])
                raise PathError(f"{where}[{i}][{k}] = {p[k].tolist()} is not finite")
            if segments:
                gap = float(np.hypot(*(p[0] - segments[-1].p[3])))
                if gap > JOIN_TOLERANCE_IN:
                    raise PathError(
                        f"{where}[{i}] starts at {p[0].tolist()} but the path so far ends at "
                        f"{segments[-1].p[3].tolist()} ({gap:.4g} in away); consecutive "
                        "segments must share their end point")
                p[0] = segments[-1].p[3]  # snap within tolerance: exactly continuous
            seg = CubicBezier(p)
            if seg.is_point:
                dropped.append(i)
                continue
            segments.append(seg)
        if not segments:
            raise PathError(f"{where} has zero length: every segment's control points coincide")
        return cls(tuple(segments), tuple(dropped))

    def to_list(self) -> list[list[list[float]]]:
        return [s.p.tolist() for s in self.segments]

    # -- evaluation over the chain parameter u in [0, n] ------------------------------
    def __len__(self) -> int:
        return len(self.segments)

    def _locate(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        u = np.clip(np.asarray(u, dtype=float), 0.0, len(self))
        i = np.minimum(np.floor(u).astype(int), len(self) - 1)
        return i, u - i

    def point(self, u: float | np.ndarray) -> np.ndarray:
        i, t = self._locate(u)
        i, t = np.atleast_1d(i), np.atleast_1d(t)
        out = np.empty((len(t), 2))
        for k in np.unique(i):
            out[i == k] = self.segments[k].point(t[i == k])
        return out if np.ndim(u) else out[0]

    def sample(self, per_segment: int = 64) -> np.ndarray:
        """Points along the whole chain, ``per_segment`` intervals per segment."""
        t = np.linspace(0.0, 1.0, per_segment + 1)
        return np.vstack([self.segments[0].point(t[:1])]
                         + [s.point(t[1:]) for s in self.segments])

    def arc_length(self) -> float:
        return float(sum(s.arc_length() for s in self.segments))

    # -- continuity -------------------------------------------------------------------
    def joints(self, angle_tolerance_rad: float = 1e-3) -> tuple[Joint, ...]:
        """Every junction with the angle between its tangents; ``g1`` false = a break."""
        out = []
        for i in range(len(self) - 1):
            a, b = self.segments[i].end_direction(), self.segments[i + 1].start_direction()
            ang = float(np.arctan2(abs(a[0] * b[1] - a[1] * b[0]), float(a @ b)))
            out.append(Joint(i, ang, ang <= angle_tolerance_rad))
        return tuple(out)

    def g1_breaks(self, angle_tolerance_rad: float = 1e-3) -> tuple[Joint, ...]:
        return tuple(j for j in self.joints(angle_tolerance_rad) if not j.g1)
