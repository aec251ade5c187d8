"""Relaxation: widen the turns that need more acceleration than the robot has.

**Required acceleration.** At the design speed v a turn of curvature κ needs the
centripetal ``v²κ``; the plan also keeps ``tangential_in_s2`` for speeding up and
slowing down in the turn. Both come out of one wheel budget (a circle), so the
demand of a segment is ``max_t sqrt((v² κ(t))² + a_t²)``, sampled at fixed
parameters, against ``limits.accel_at(v)``.

**The move.** Only the inner control points move, and only along their handles:
``P1 = P0 + h1·d1``, ``P2 = P3 + h2·d2`` with the original directions d1, d2 and
``|h − h_orig| ≤ tolerance_in``. End points stay where the path author put them
and so do the tangent directions at every junction, so G1 joints stay G1 and
breaks stay breaks (neither is smoothed). Since the curve is an affine
combination of its control points with non-negative weights summing to one,
``|B_new(t) − B_old(t)| ≤ max |ΔP| ≤ tolerance_in`` everywhere.

**The search** (per offending segment, deterministic): a 9×9 grid over the box of
allowed handle lengths, zoomed four times around the best point. A candidate that
meets the budget scores by how little it moves; otherwise by its demand. The
original handles are always a candidate and are kept unless something is strictly
better, so relaxation never increases the required acceleration of any segment
(segments are independent: end points and junction tangents are fixed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.paths.bezier import BezierChain, CubicBezier, PathError
from stages.paths.limits import PathLimits

SAMPLES = 128
_GRID, _ROUNDS = 9, 4


def _t(samples: int) -> np.ndarray:
    return (np.arange(samples) + 0.5) / samples  # interior: never an end point's 0/0


def curvatures(p: np.ndarray, samples: int = SAMPLES) -> np.ndarray:
    """|κ| of many cubics at once: ``p`` (m, 4, 2) → (m, samples); inf at a stalled turn."""
    t = _t(samples)[None, :, None]
    d1 = 3 * np.diff(p, axis=1)[:, None]  # (m, 1, 3, 2)
    v = ((1 - t) ** 2 * d1[:, :, 0] + 2 * t * (1 - t) * d1[:, :, 1] + t * t * d1[:, :, 2])
    d2 = 2 * np.diff(d1, axis=2)
    a = (1 - t) * d2[:, :, 0] + t * d2[:, :, 1]
    cross = np.abs(v[..., 0] * a[..., 1] - v[..., 1] * a[..., 0])
    speed3 = np.hypot(v[..., 0], v[..., 1]) ** 3
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(speed3 > 0, cross / speed3, np.where(cross > 0, np.inf, 0.0))
    return k


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
    control_point_shift_in: float  # largest control point move
    shift_in: float  # largest distance between the curves at equal parameters (sampled)
    changed: tuple[int, ...]

    @property
    def feasible(self) -> bool:
        return bool(np.all(self.demand_after_in_s2 <= self.budget_in_s2 * (1 + 1e-9)))


def _handle(p: np.ndarray, end: int) -> tuple[np.ndarray, float]:
    """Unit direction and length of the handle at end 0 (P1−P0) or 1 (P2−P3)."""
    seg = CubicBezier(p)
    if end == 0:
        h = p[1] - p[0]
        d = seg.start_direction()
    else:
        h = p[2] - p[3]
        d = -seg.end_direction()
    n = float(np.hypot(*h))
    return (h / n if n > 0 else d), n


def relax_segment(p: np.ndarray, budget: float, speed: float, tangential: float,
                  tolerance_in: float) -> np.ndarray:
    """The relaxed control points of one cubic (the original if nothing is better)."""
    (d1, h1), (d2, h2) = _handle(p, 0), _handle(p, 1)
    orig = np.array([h1, h2])
    bound_lo, bound_hi = np.maximum(orig - tolerance_in, 0.0), orig + tolerance_in

    def build(h: np.ndarray) -> np.ndarray:  # h: (m, 2) → (m, 4, 2)
        q = np.repeat(p[None], len(h), axis=0)
        q[:, 1] = p[0] + h[:, :1] * d1
        q[:, 2] = p[3] + h[:, 1:] * d2
        return q

    def score(h: np.ndarray) -> np.ndarray:
        demand = required_accel(build(h), speed, tangential)
        moved = np.abs(h - orig).max(axis=1) / max(tolerance_in, 1e-300)
        return np.where(demand <= budget, moved, 1.0 + demand / budget)

    best, best_score = orig, float(score(orig[None])[0])
    lo, hi = bound_lo.copy(), bound_hi.copy()
    for _ in range(_ROUNDS):
        g = np.stack(np.meshgrid(np.linspace(lo[0], hi[0], _GRID),
                                 np.linspace(lo[1], hi[1], _GRID), indexing="ij"), -1)
        cand = g.reshape(-1, 2)
        s = score(cand)
        k = int(np.argmin(s))
        if s[k] < best_score:
            best, best_score = cand[k], float(s[k])
        span = (hi - lo) / (_GRID - 1)
        lo, hi = np.maximum(bound_lo, best - span), np.minimum(bound_hi, best + span)
    return build(best[None])[0] if best is not orig else p.copy()


def relax_chain(chain: BezierChain, limits: PathLimits, *, speed_in_s: float,
                tolerance_in: float, tangential_in_s2: float = 0.0,
                shift_samples: int = 64) -> RelaxResult:
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
    before = required_accel(old, speed_in_s, tangential_in_s2)
    new = old.copy()
    changed = []
    for i in np.flatnonzero(before > budget):
        if tolerance_in == 0:
            break
        q = relax_segment(old[i], budget, speed_in_s, tangential_in_s2, tolerance_in)
        if not np.array_equal(q, old[i]):
            new[i] = q
            changed.append(int(i))
    after = required_accel(new, speed_in_s, tangential_in_s2)
    relaxed = BezierChain(tuple(CubicBezier(q) for q in new), chain.dropped)
    t = np.linspace(0, 1, shift_samples + 1)
    shift = max((float(np.hypot(*(CubicBezier(new[i]).point(t) - CubicBezier(old[i]).point(t)).T)
                       .max()) for i in changed), default=0.0)
    cp_shift = float(np.hypot(*(new - old).reshape(-1, 2).T).max())
    return RelaxResult(relaxed, chain, float(budget), before, after, cp_shift, shift,
                       tuple(changed))
