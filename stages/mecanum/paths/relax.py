"""Relaxation: widen the turns that need more acceleration than the robot has.

**Required acceleration.** At the design speed v a turn of curvature κ needs the
centripetal ``v²κ``; the plan also keeps ``tangential_in_s2`` for speeding up and
slowing down in the turn. Both come out of one wheel budget (a circle), so the
demand of a segment is ``max_t sqrt((v² κ(t))² + a_t²)``, sampled at fixed
parameters, against ``limits.accel_at(v)``.

**The move.** Per offending segment, four numbers: the lengths of its two
handles (``P1 = P0 + h1·d1``, ``P2 = P3 + h2·d2``, original directions) and, at
each end that is a G1 joint, a slide of the joint along its tangent (the
neighbour's handle point slides with it, so the joint stays G1; a G1 break is
never smoothed, the path's first and last points never move). Every control
point stays within ``tolerance_in`` of where the author put it, so, the curve
being an affine combination of its control points with non-negative weights,
``|B_new(t) − B_old(t)| ≤ tolerance_in`` everywhere. Sliding a joint back along
a straight lead-in starts the turn earlier: that is what widens it.

**The search** (deterministic): a 5⁴ grid over the allowed box, zoomed six times
around the best point; candidates that move a point too far or break a G1 joint
are out. One that meets the budget scores by how little it moves; otherwise by
the largest demand among the segments it touches (i−1, i, i+1). The current
points are always a candidate and are kept unless something is strictly better,
so the largest required acceleration never increases. Two sweeps over the
offending segments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.mecanum.paths.bezier import BezierChain, CubicBezier, PathError
from stages.mecanum.paths.limits import PathLimits

SAMPLES = 128
_GRID, _ROUNDS = 5, 6


def _t(samples: int) -> np.ndarray:
    """Both ends and ``samples`` interior midpoints."""
    return np.r_[0.0, (np.arange(samples) + 0.5) / samples, 1.0]


def curvatures(p: np.ndarray, samples: int = SAMPLES) -> np.ndarray:
    """|κ| of many cubics at once: ``p`` (m, 4, 2) → (m, samples + 2), ends included.

    Where the speed vanishes (coincident control points, a cusp) the curvature is
    the limit: inf if the curve turns there (κ ~ 1/t as t → 0), 0 if it is straight.
    """
    t = _t(samples)[None, :, None]
    d1 = 3 * np.diff(p, axis=1)[:, None]  # (m, 1, 3, 2)
    v = ((1 - t) ** 2 * d1[:, :, 0] + 2 * t * (1 - t) * d1[:, :, 1] + t * t * d1[:, :, 2])
    d2 = 2 * np.diff(d1, axis=2)
    a = (1 - t) * d2[:, :, 0] + t * d2[:, :, 1]
    j = np.diff(d2, axis=2)[:, :, 0]  # (m, 1, 2)
    cross = np.abs(v[..., 0] * a[..., 1] - v[..., 1] * a[..., 0])
    speed = np.hypot(v[..., 0], v[..., 1])
    scale = np.maximum(np.ptp(p, axis=1).max(axis=1), 1.0)[:, None]
    stalled = speed <= 1e-12 * scale
    turning = np.abs(a[..., 0] * j[..., 1] - a[..., 1] * j[..., 0]) > 1e-12 * scale**2
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(stalled, np.where(turning | (cross > 0), np.inf, 0.0), cross / speed**3)
    return k


def end_directions(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit start and end tangents of many cubics (m, 4, 2): first non-zero difference."""
    def first(c: np.ndarray) -> np.ndarray:  # c: (m, 3, 2) candidates in order
        n = np.hypot(c[..., 0], c[..., 1])
        k = np.argmax(n > 1e-12 * np.maximum(n.max(axis=1, keepdims=True), 1.0), axis=1)
        v = c[np.arange(len(c)), k]
        return v / np.maximum(np.hypot(v[:, 0], v[:, 1]), 1e-300)[:, None]
    return first(p[:, 1:] - p[:, :1]), first(p[:, 3:] - p[:, 2::-1])


def required_accel(p: np.ndarray, speed_in_s: float, tangential_in_s2: float = 0.0,
                   samples: int = SAMPLES) -> np.ndarray:
    """Demand (in/s²) of each cubic in ``p`` (m, 4, 2) at the design speed."""
    kappa = curvatures(np.asarray(p, dtype=float).reshape(-1, 4, 2), samples).max(axis=1)
    return np.hypot(speed_in_s**2 * kappa, tangential_in_s2)


@dataclass(frozen=True, eq=False)
class RelaxResult:
    chain: BezierChain  # relaxed
    original: BezierChain
    budget_in_s2: float
    demand_before_in_s2: np.ndarray  # per segment
    demand_after_in_s2: np.ndarray
    control_point_shift_in: float  # largest control point move (bounds the curve's move)
    shift_in: float  # Hausdorff distance between the relaxed and original curves (sampled)
    changed: tuple[int, ...]

    @property
    def feasible(self) -> bool:
        return bool(np.all(self.demand_after_in_s2 <= self.budget_in_s2 * (1 + 1e-9)))


def _handle(p: np.ndarray, end: int) -> tuple[np.ndarray, float]:
    """Unit direction and length of the handle at end 0 (P1−P0) or 1 (P2−P3)."""
    seg = CubicBezier(p)
    h = p[1] - p[0] if end == 0 else p[2] - p[3]
    d = seg.start_direction() if end == 0 else -seg.end_direction()
    n = float(np.hypot(*h))
    return (h / n if n > 0 else d), n


def _relax_turn(cur: np.ndarray, orig: np.ndarray, i: int, g1: list[bool],
                budget: float, speed: float, tangential: float, tol: float) -> np.ndarray | None:
    """Best new control points for segments i−1..i+1 (or None if nothing is better).

    Variables: the slides ``sa``, ``sb`` of segment i's end points along their
    tangents (only at G1 joints; the neighbour's handle slides with them, so the
    joint stays G1) and the handle lengths ``h1``, ``h2``.
    """
    n = len(cur)
    slide = (i > 0 and g1[i - 1], i < n - 1 and g1[i])
    idx = [j for j in (i - 1, i, i + 1) if 0 <= j < n]
    k = idx.index(i)
    p = cur[i]
    (d1, h1), (d2, h2) = _handle(p, 0), _handle(p, 1)
    da, db = CubicBezier(p).start_direction(), CubicBezier(p).end_direction()
    x0 = np.array([0.0, 0.0, h1, h2])
    box_lo = np.array([-tol * slide[0], -tol * slide[1], max(h1 - 2 * tol, 0), max(h2 - 2 * tol, 0)])
    box_hi = np.array([tol * slide[0], tol * slide[1], h1 + 2 * tol, h2 + 2 * tol])
    base = cur[idx]

    def build(x: np.ndarray) -> np.ndarray:  # (m, 4) → (m, len(idx), 4, 2)
        q = np.repeat(base[None], len(x), axis=0)
        p0 = p[0] + x[:, :1] * da
        p3 = p[3] + x[:, 1:2] * db
        q[:, k] = np.stack([p0, p0 + x[:, 2:3] * d1, p3 + x[:, 3:4] * d2, p3], axis=1)
        if k > 0:
            q[:, k - 1, 3], q[:, k - 1, 2] = p0, cur[i - 1][2] + x[:, :1] * da
        if k + 1 < len(idx):
            q[:, k + 1, 0], q[:, k + 1, 1] = p3, cur[i + 1][1] + x[:, 1:2] * db
        return q

    def score(x: np.ndarray) -> np.ndarray:
        q = build(x)
        moved = np.hypot(*(q - orig[idx][None]).reshape(len(x), -1, 2).transpose(2, 0, 1))
        moved = moved.max(axis=1) / max(tol, 1e-300)
        demand = required_accel(q.reshape(-1, 4, 2), speed, tangential).reshape(len(x), -1)
        demand = demand.max(axis=1)
        s = np.where(demand <= budget, moved, 1.0 + demand / budget)
        ok = moved <= 1.0 + 1e-9
        starts, ends = end_directions(q.reshape(-1, 4, 2))
        starts, ends = starts.reshape(len(x), -1, 2), ends.reshape(len(x), -1, 2)
        for m in range(len(idx) - 1):  # joints inside the window must stay G1 if they were
            if g1[idx[m]]:
                ok &= np.einsum("ij,ij->i", ends[:, m], starts[:, m + 1]) >= np.cos(1e-3)
        return np.where(ok, s, np.inf)

    active = box_hi > box_lo
    best, best_score = x0, float(score(x0[None])[0])
    lo, hi = box_lo.copy(), box_hi.copy()
    for _ in range(_ROUNDS):
        axes = [np.linspace(lo[j], hi[j], _GRID) if active[j] else np.array([x0[j]])
                for j in range(4)]
        cand = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 4)
        sc = score(cand)
        m = int(np.argmin(sc))
        if sc[m] < best_score:
            best, best_score = cand[m], float(sc[m])
        span = (hi - lo) / (_GRID - 1)
        lo, hi = np.maximum(box_lo, best - span), np.minimum(box_hi, best + span)
    if best is x0:
        return None
    out = cur.copy()
    out[idx] = build(best[None])[0]
    return out


def relax_chain(chain: BezierChain, limits: PathLimits, *, speed_in_s: float,
                tolerance_in: float, tangential_in_s2: float = 0.0, sweeps: int = 2,
                shift_samples: int = 128) -> RelaxResult:
    """Relax every segment whose demand at ``speed_in_s`` exceeds the budget."""
    if not (np.isfinite(speed_in_s) and speed_in_s > 0):
        raise PathError(f"relax speed_in_s must be a positive speed; got {speed_in_s!r}")
    if not (np.isfinite(tolerance_in) and tolerance_in >= 0):
        raise PathError(f"relax tolerance_in must be ≥ 0 inches; got {tolerance_in!r}")
    budget = limits.accel_at(speed_in_s)
    if not (0 <= tangential_in_s2 < budget):
        raise PathError(f"relax tangential_in_s2={tangential_in_s2!r} must be ≥ 0 and below the "
                        f"budget at {speed_in_s:g} in/s ({budget:.4g} in/s²), or no turn is "
                        "possible at that speed")
    old = np.array([s.p for s in chain.segments])
    g1 = [j.g1 for j in chain.joints()]
    before = required_accel(old, speed_in_s, tangential_in_s2)
    new = old.copy()
    for _ in range(sweeps if tolerance_in > 0 else 0):
        demand = required_accel(new, speed_in_s, tangential_in_s2)
        for i in np.flatnonzero(demand > budget):
            out = _relax_turn(new, old, int(i), g1, budget, speed_in_s, tangential_in_s2,
                              tolerance_in)
            if out is not None:
                new = out
    after = required_accel(new, speed_in_s, tangential_in_s2)
    changed = tuple(int(i) for i in range(len(new)) if not np.array_equal(new[i], old[i]))
    relaxed = BezierChain(tuple(CubicBezier(q) for q in new), chain.dropped)
    shift = 0.0
    if changed:
        a, b = chain.sample(shift_samples), relaxed.sample(shift_samples)
        shift = max(polyline_distance(b, a).max(), polyline_distance(a, b).max())
    cp_shift = float(np.hypot(*(new - old).reshape(-1, 2).T).max())
    return RelaxResult(relaxed, chain, float(budget), before, after, cp_shift, float(shift),
                       changed)


def polyline_distance(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance from each point to the nearest point of a polyline."""
    a, d = polyline[:-1], np.diff(polyline, axis=0)
    dd = np.maximum(np.einsum("ij,ij->i", d, d), 1e-300)
    rel = points[:, None, :] - a[None]
    s = np.clip(np.einsum("pij,ij->pi", rel, d) / dd, 0.0, 1.0)
    gap = rel - s[..., None] * d[None]
    return np.sqrt(np.einsum("pij,pij->pi", gap, gap).min(axis=1))
