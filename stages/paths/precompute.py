"""The precompute: one backward pass → the fastest entry speed of every segment and corner.

**The corner model.** At vertex i the flattened path turns by θᵢ. The robot
rounds it on an arc of radius rᵢ tangent to both segments, the largest that
(a) fits in the halves of the adjacent segments, ``r tan(θ/2) ≤ min(lᵢ₋₁, lᵢ)/2``,
and (b) stays within ``corner_tolerance_in`` d of the vertex,
``r (1/cos(θ/2) − 1) ≤ d``. It takes the arc at a steady speed, so the turn
caps the speed there at ``limits.corner_speed(rᵢ)`` (``v²/r`` within the
budget at that speed). A U-turn or cusp (θ → π) gives r → 0: the robot must stop
there. On a finely flattened smooth curve rᵢ is the curve's own radius (the
vertices lie on the curve), so the cap is the curvature limit.

**The backward pass.** Braking happens on the straight part of each segment,
``sᵢ = lᵢ − rᵢ tan(θᵢ/2) − rᵢ₊₁ tan(θᵢ₊₁/2) ≥ 0``, at ``brake_accel_in_s2`` a:

    v[N] = min(cap[N], end_speed),    v[i] = min(cap[i], sqrt(v[i+1]² + 2 a sᵢ)).

Unrolled, ``v[i]² = min_{j≥i}(cap[j]² + 2a(S[j] − S[i]))`` with S the running
sum of s, which is a suffix minimum: one reversed ``np.minimum.accumulate``,
O(n), deterministic. Every pair of neighbours then satisfies
``v[i]² − v[i+1]² ≤ 2 a sᵢ``: the table never asks for more braking than there is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from stages.paths.bezier import PathError
from stages.paths.flatten import FlatPath
from stages.paths.limits import PathLimits


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class EntrySpeedTable:
    """What the control loop reads (read-only arrays; N segments, N+1 vertices).

    ``entry_speed_in_s[i]`` is the fastest speed at which the robot may be at vertex
    i (entering segment i); the last one is the end speed.
    """

    points_in: np.ndarray  # (N+1, 2)
    lengths_in: np.ndarray  # (N,)
    cum_length_in: np.ndarray  # (N+1,) arc length at each vertex
    directions: np.ndarray  # (N, 2) unit
    turn_angles_rad: np.ndarray  # (N+1,)
    corner_radius_in: np.ndarray  # (N+1,) inf where the path does not turn
    corner_tangent_in: np.ndarray  # (N+1,) arc length taken from each neighbour
    corner_speed_in_s: np.ndarray  # (N+1,) cap from the turn alone
    brake_length_in: np.ndarray  # (N,) straight part of each segment
    entry_speed_in_s: np.ndarray  # (N+1,) after the backward pass
    limits: PathLimits
    arrays: ClassVar[tuple[str, ...]] = (
        "points_in", "lengths_in", "cum_length_in", "directions", "turn_angles_rad",
        "corner_radius_in", "corner_tangent_in", "corner_speed_in_s", "brake_length_in",
        "entry_speed_in_s")

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

    def point_at(self, s_in: float | np.ndarray) -> np.ndarray:
        s = np.clip(np.asarray(s_in, dtype=float), 0.0, self.length_in)
        i = self.segment_at(s)
        return self.points_in[i] + (s - self.cum_length_in[i])[..., None] * self.directions[i]

    def speed_limit_at(self, s_in: float | np.ndarray) -> np.ndarray:
        """The fastest speed allowed at arc length ``s_in``: on a corner arc its entry speed,
        on a straight part the speed from which braking at the table's rate still
        reaches the next corner's entry speed."""
        s = np.clip(np.asarray(s_in, dtype=float), 0.0, self.length_in)
        i = self.segment_at(s)
        x = s - self.cum_length_in[i]
        to_brake_end = self.lengths_in[i] - self.corner_tangent_in[i + 1] - x
        d = np.clip(to_brake_end, 0.0, self.brake_length_in[i])
        v = np.sqrt(self.entry_speed_in_s[i + 1] ** 2 + 2.0 * self.limits.brake_accel_in_s2 * d)
        v = np.where(x < self.corner_tangent_in[i], np.minimum(v, self.entry_speed_in_s[i]), v)
        return np.minimum(v, self.limits.max_speed_in_s)

    def corner_radius_at(self, s_in: float | np.ndarray) -> np.ndarray:
        """Radius of the corner arc the robot is on at ``s_in`` (inf on a straight part)."""
        s = np.clip(np.asarray(s_in, dtype=float), 0.0, self.length_in)
        i = self.segment_at(s)
        x = s - self.cum_length_in[i]
        r = np.where(x < self.corner_tangent_in[i], self.corner_radius_in[i], np.inf)
        tail = x > self.lengths_in[i] - self.corner_tangent_in[i + 1]
        return np.where(tail, np.minimum(r, self.corner_radius_in[i + 1]), r)

    def braking_distance_in(self, speed_in_s: float, target_speed_in_s: float = 0.0) -> float:
        """Distance to slow from one speed to another at the table's braking rate."""
        dv2 = max(0.0, speed_in_s * speed_in_s - target_speed_in_s * target_speed_in_s)
        return dv2 / (2.0 * self.limits.brake_accel_in_s2)

    def as_arrays(self) -> dict[str, np.ndarray]:
        return {name: np.asarray(getattr(self, name)) for name in self.arrays}


def corner_geometry(flat: FlatPath, corner_tolerance_in: float) -> tuple[np.ndarray, np.ndarray]:
    """Radius and tangent length of the arc rounding each vertex (see the module doc)."""
    theta = flat.turn_angles_rad
    half = 0.5 * theta
    lengths = flat.lengths_in
    room = np.full(len(theta), np.inf)
    room[1:-1] = 0.5 * np.minimum(lengths[:-1], lengths[1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        tan_h = np.tan(half)
        r_fit = room / tan_h
        # 1/cos − 1 = 2 sin²(θ/4) / cos(θ/2): no cancellation for small turns
        r_tol = corner_tolerance_in * np.cos(half) / (2.0 * np.sin(0.5 * half) ** 2)
        radius = np.minimum(r_fit, r_tol)
        straight = theta <= 1e-12
        radius = np.where(straight, np.inf, np.where(np.cos(half) <= 1e-12, 0.0, radius))
        tangent = np.where(straight | (radius == 0.0), 0.0, radius * tan_h)
    tangent = np.minimum(tangent, room)
    return radius, tangent


def precompute_entry_speeds(flat: FlatPath, limits: PathLimits, *,
                            corner_tolerance_in: float | None = None,
                            start_speed_in_s: float | None = None,
                            end_speed_in_s: float = 0.0) -> EntrySpeedTable:
    """The backward pass over a flattened path (O(n), no Python loop over segments).

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
    cap = np.asarray(limits.corner_speed(radius), dtype=float)
    cap[-1] = min(limits.max_speed_in_s, end_speed_in_s)
    if start_speed_in_s is not None:
        cap[0] = min(cap[0], start_speed_in_s)
    brake = np.maximum(flat.lengths_in - tangent[:-1] - tangent[1:], 0.0)
    a2 = 2.0 * limits.brake_accel_in_s2
    s_cum = np.r_[0.0, np.cumsum(brake)]
    best = np.minimum.accumulate((cap**2 + a2 * s_cum)[::-1])[::-1]
    entry = np.sqrt(np.maximum(best - a2 * s_cum, 0.0))
    entry = np.minimum(entry, cap)  # exact where the cap itself is the minimum
    return EntrySpeedTable(flat.points, flat.lengths_in, flat.cum_length_in, flat.directions,
                           flat.turn_angles_rad, radius, tangent, cap, brake, entry, limits)


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
