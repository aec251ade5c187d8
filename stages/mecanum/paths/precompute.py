"""The precompute: one backward pass → the fastest entry speed of every segment and corner.

**The corner model.** At vertex i the flattened path turns by θᵢ. The robot
takes it on an arc of radius rᵢ: the circle through the vertex and its two
neighbours (the vertices lie on the curve, so on a smooth curve this is the
curve's own radius), but no larger than the arc that stays within
``corner_tolerance_in`` d of the vertex, ``r (1/cos(θ/2) − 1) ≤ d`` (which is
what binds at a real corner: a G1 break, a cusp, a polyline given directly).
The arc caps the speed at ``limits.corner_speed(rᵢ)`` (``v²/r`` within the
budget at that speed); a U-turn or cusp (θ → π) gives r → 0: the robot stops
there. The arc's curvature 1/rᵢ holds over ``tᵢ = min(rᵢ tan(θᵢ/2), half the
shorter neighbour)`` on each side, so each segment is three pieces: the end of
vertex i's arc, a straight part, the start of vertex i+1's arc.

**Braking on a piece** of length L and curvature κ: the tangential deceleration
is at most the braking ability b and shares one friction circle of radius A
(``max_accel_in_s2``) with the turn, ``(v²κ)² + a_t² ≤ A²``. Braking from
w = v_start² to v_end² with the budget left at the fastest (first) speed,
``w − v_end² = 2L·min(b, sqrt(A² − w²κ²))``: the right side falls as w rises, so w
is the smaller of the two crossings, ``v_end² + 2bL`` and the quadratic's root

    w = (v_end² + sqrt(4L²(A²(1 + 4L²κ²) − κ²v_end⁴))) / (1 + 4L²κ²)

(κ = 0 gives ``v_end² + 2·min(b, A)·L``; every root has wκ ≤ A).

**The backward pass** walks the segments once from the end, ``v[N] = end speed``:
tail arc → straight → head arc, each step the formula above, capped by the
arc's cap, and ``v[i] = min(cap[i], …)``. O(n) (three closed forms per segment,
no fixed-point iteration), deterministic. ``speed_limit_at(s)`` evaluates the same pieces at
any arc length, so a robot that keeps under it never needs more braking than it has.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from stages.mecanum.paths.bezier import PathError
from stages.mecanum.paths.flatten import FlatPath
from stages.mecanum.paths.limits import PathLimits


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def brake_v2(v2_end, length_in, kappa, circle, brake):
    """Largest v² at the start of a piece (length, curvature) from which the robot can
    slow to ``v2_end`` by its end with ``a_t ≤ brake`` and ``a_t² + (v²κ)² ≤ circle²``
    (arrays broadcast). ``v2_end`` is first held to the piece's own turn limit."""
    v2, L, k = (np.asarray(x, dtype=float) for x in (v2_end, length_in, kappa))
    k = np.where(L > 0, k, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        v2 = np.minimum(v2, np.where(k > 0, circle / k, np.inf))
        q = 4.0 * L * L * k * k
        disc = 4.0 * L * L * (circle * circle * (1.0 + q) - k * k * v2 * v2)
        w = (v2 + np.sqrt(np.maximum(disc, 0.0))) / (1.0 + q)
    return np.minimum(w, v2 + 2.0 * brake * L)


def _brake_v2(v2: float, L: float, k: float, circle: float, brake: float) -> float:
    """Scalar :func:`brake_v2` (the backward pass's inner step, plain floats for speed)."""
    if L <= 0.0:
        return v2
    if k > 0.0:
        v2 = min(v2, circle / k)
    q = 4.0 * L * L * k * k
    disc = 4.0 * L * L * (circle * circle * (1.0 + q) - k * k * v2 * v2)
    w = (v2 + math.sqrt(max(disc, 0.0))) / (1.0 + q)
    return min(w, v2 + 2.0 * brake * L)


@dataclass(frozen=True, eq=False)
class EntrySpeedTable:
    """What the control loop reads (read-only arrays; N segments, N+1 vertices).

    ``entry_speed_in_s[i]`` is the fastest speed at which the robot may pass vertex
    i (entering segment i); the last one is the end speed.
    """

    points_in: np.ndarray  # (N+1, 2)
    lengths_in: np.ndarray  # (N,)
    cum_length_in: np.ndarray  # (N+1,) arc length at each vertex
    directions: np.ndarray  # (N, 2) unit
    turn_angles_rad: np.ndarray  # (N+1,)
    corner_radius_in: np.ndarray  # (N+1,) inf where the path does not turn
    corner_tangent_in: np.ndarray  # (N+1,) arc length the corner takes from each neighbour
    corner_curvature_per_in: np.ndarray  # (N+1,) 1/r on the corner arc (0 without one)
    corner_speed_in_s: np.ndarray  # (N+1,) cap from the turn alone
    straight_in: np.ndarray  # (N,) straight part of each segment
    straight_speed_in_s: np.ndarray  # (N,) limit where the straight part starts
    tail_speed_in_s: np.ndarray  # (N,) limit where the next corner's arc starts
    entry_speed_in_s: np.ndarray  # (N+1,) the backward pass's result
    limits: PathLimits
    arrays: ClassVar[tuple[str, ...]] = (
        "points_in", "lengths_in", "cum_length_in", "directions", "turn_angles_rad",
        "corner_radius_in", "corner_tangent_in", "corner_curvature_per_in", "corner_speed_in_s",
        "straight_in", "straight_speed_in_s", "tail_speed_in_s", "entry_speed_in_s")

    def __post_init__(self) -> None:
        for name in self.arrays:
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def segments(self) -> int:
        return len(self.lengths_in)

    @property
    def length_in(self) -> float:
        return float(self.cum_length_in[-1])

    def segment_at(self, s_in: float | np.ndarray) -> np.ndarray:
        """Index of the segment holding arc length ``s_in`` (clipped to the path)."""
        i = np.searchsorted(self.cum_length_in, s_in, side="right") - 1
        return np.clip(i, 0, self.segments - 1)

    def _where(self, s_in):
        s = np.clip(np.asarray(s_in, dtype=float), 0.0, self.length_in)
        i = self.segment_at(s)
        return s, i, s - self.cum_length_in[i]

    def point_at(self, s_in: float | np.ndarray) -> np.ndarray:
        s, i, x = self._where(s_in)
        return self.points_in[i] + x[..., None] * self.directions[i]

    def curvature_at(self, s_in: float | np.ndarray) -> np.ndarray:
        """Curvature (1/in) of the rounded path at ``s_in``: 1/r on a corner arc, else 0."""
        s, i, x = self._where(s_in)
        k = np.where(x < self.corner_tangent_in[i], self.corner_curvature_per_in[i], 0.0)
        tail = x > self.lengths_in[i] - self.corner_tangent_in[i + 1]
        return np.where(tail, np.maximum(k, self.corner_curvature_per_in[i + 1]), k)

    def speed_limit_at(self, s_in: float | np.ndarray) -> np.ndarray:
        """The fastest speed allowed at arc length ``s_in``: from it, braking within the
        friction circle still meets every later entry speed."""
        s, i, x = self._where(s_in)
        c = self.limits.max_accel_in_s2
        a = min(self.limits.brake_accel_in_s2, c)
        rest = self.cum_length_in[i + 1] - s  # to the next vertex (exact at the path's end)
        t0, t1 = self.corner_tangent_in[i], self.corner_tangent_in[i + 1]
        k0, k1 = self.corner_curvature_per_in[i], self.corner_curvature_per_in[i + 1]
        v2 = self.tail_speed_in_s[i] ** 2 + 2.0 * a * np.clip(rest - t1, 0.0, None)
        tail = np.minimum(brake_v2(self.entry_speed_in_s[i + 1] ** 2, rest, k1, c, a),
                          self.corner_speed_in_s[i + 1] ** 2)
        v2 = np.where(rest < t1, tail, v2)
        v2 = np.where(rest <= 0.0, self.entry_speed_in_s[i + 1] ** 2, v2)
        cap0 = self.corner_speed_in_s[i] ** 2
        head = np.minimum(brake_v2(np.minimum(self.straight_speed_in_s[i] ** 2, cap0),
                                   t0 - x, k0, c, a), cap0)
        v2 = np.where(x <= t0, head, v2)
        return np.minimum(np.sqrt(v2), self.limits.max_speed_in_s)

    def braking_distance_in(self, speed_in_s: float, target_speed_in_s: float = 0.0,
                            curvature_per_in: float = 0.0) -> float:
        """Distance to slow from one speed to another at the table's braking rate, on a
        piece of the given curvature (inf if the turn alone uses the whole budget)."""
        c = self.limits.max_accel_in_s2
        a = min(self.limits.brake_accel_in_s2, c)
        w, v2 = speed_in_s * speed_in_s, target_speed_in_s * target_speed_in_s
        if w <= v2:
            return 0.0
        left = c * c - (w * curvature_per_in) ** 2
        return (w - v2) / (2.0 * min(a, math.sqrt(left))) if left > 0 else math.inf

    def as_arrays(self) -> dict[str, np.ndarray]:
        return {name: np.asarray(getattr(self, name)) for name in self.arrays}


def corner_geometry(flat: FlatPath, corner_tolerance_in: float) -> tuple[np.ndarray, np.ndarray]:
    """Radius and tangent length of the arc rounding each vertex (see the module doc)."""
    theta = flat.turn_angles_rad
    half = 0.5 * theta
    pts, lengths = flat.points, flat.lengths_in
    room = np.full(len(theta), np.inf)
    room[1:-1] = 0.5 * np.minimum(lengths[:-1], lengths[1:])
    chord = np.full(len(theta), np.inf)
    chord[1:-1] = np.hypot(*(pts[2:] - pts[:-2]).T)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        menger = chord / (2.0 * np.sin(theta))  # circle through the vertex and its neighbours
        # 1/cos − 1 = 2 sin²(θ/4) / cos(θ/2): no cancellation for small turns
        r_tol = corner_tolerance_in * np.cos(half) / (2.0 * np.sin(0.5 * half) ** 2)
        radius = np.minimum(np.where(theta < 0.5 * np.pi, menger, np.inf), r_tol)
        straight = theta <= 1e-12
        radius = np.where(straight, np.inf, np.where(np.cos(half) <= 1e-12, 0.0, radius))
        tangent = np.where(straight | (radius == 0.0), 0.0, radius * np.tan(half))
    tangent = np.minimum(tangent, room)
    return radius, tangent


def precompute_entry_speeds(flat: FlatPath, limits: PathLimits, *,
                            corner_tolerance_in: float | None = None,
                            start_speed_in_s: float | None = None,
                            end_speed_in_s: float = 0.0) -> EntrySpeedTable:
    """The backward pass over a flattened path (see the module doc).

    ``corner_tolerance_in`` defaults to the flattening tolerance (floored at 1e-3 in);
    ``start_speed_in_s`` caps vertex 0 (default: no cap beyond max speed);
    ``end_speed_in_s`` is the speed at the path's end (0 = stop there).
    """
    d = flat.tolerance_in if corner_tolerance_in is None else corner_tolerance_in
    d = max(float(d), 1e-3)
    for name, value in (("end_speed_in_s", end_speed_in_s), ("start_speed_in_s", start_speed_in_s)):
        if value is not None and not (np.isfinite(value) and value >= 0):
            raise PathError(f"{name} must be a non-negative speed; got {value!r}")
    radius, tangent = corner_geometry(flat, d)
    with np.errstate(divide="ignore"):
        kappa = np.where(tangent > 0, 1.0 / radius, 0.0)
    cap = np.asarray(limits.corner_speed(radius), dtype=float)
    cap[-1] = min(limits.max_speed_in_s, end_speed_in_s)
    if start_speed_in_s is not None:
        cap[0] = min(cap[0], start_speed_in_s)
    straight = np.maximum(flat.lengths_in - tangent[:-1] - tangent[1:], 0.0)
    c = limits.max_accel_in_s2
    a = min(limits.brake_accel_in_s2, c)  # braking is also bounded by the friction circle
    n = flat.segments
    cap2, t, k, st = (cap**2).tolist(), tangent.tolist(), kappa.tolist(), straight.tolist()
    v2, tail2, straight2 = [0.0] * (n + 1), [0.0] * n, [0.0] * n
    v2[n] = cap2[n]
    for i in range(n - 1, -1, -1):
        w = min(_brake_v2(v2[i + 1], t[i + 1], k[i + 1], c, a), cap2[i + 1])
        tail2[i] = w
        w += 2.0 * a * st[i]
        straight2[i] = w
        v2[i] = min(_brake_v2(min(w, cap2[i]), t[i], k[i], c, a), cap2[i])
    return EntrySpeedTable(flat.points, flat.lengths_in, flat.cum_length_in, flat.directions,
                           flat.turn_angles_rad, radius, tangent, kappa, cap, straight,
                           np.sqrt(straight2), np.sqrt(tail2), np.sqrt(v2), limits)


def synthetic_path(segments: int, seed: int = 0, step_in: float = 1.0) -> FlatPath:
    """A seeded random-turn polyline with ``segments`` pieces (benchmark input)."""
    rng = np.random.default_rng(seed)
    heading = np.cumsum(rng.normal(0.0, 0.3, segments))
    steps = step_in * rng.uniform(0.5, 1.5, segments)[:, None]
    pts = np.vstack([np.zeros((1, 2)),
                     np.cumsum(steps * np.c_[np.cos(heading), np.sin(heading)], axis=0)])
    return FlatPath(pts, 0.05)


def benchmark_precompute(sizes=(10, 100, 1000, 10000), limits: PathLimits | None = None,
                         repeats: int = 7, seed: int = 0) -> dict[int, float]:
    """Median wall time (s) of :func:`precompute_entry_speeds` per path size."""
    limits = limits or PathLimits(max_speed_in_s=40.0, max_accel_in_s2=80.0,
                                  brake_accel_in_s2=80.0)
    out = {}
    for n in sizes:
        flat = synthetic_path(int(n), seed)
        times = []
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            precompute_entry_speeds(flat, limits)
            times.append(time.perf_counter() - t0)
        out[int(n)] = float(np.median(times))
    return out
