"""Time-optimal path parameterization (TOPP) on a :class:`BlendedPath`, by reachability.

State ``x = ṡ²`` on grid nodes, ``u = s̈`` constant on each interval, so ``x`` is linear in
``s`` there (``x_{i+1} = x_i + 2·Δ·u_i``). A backward pass computes each node's largest
controllable ``x`` (from rest at the end), a forward pass greedily takes the largest
admissible ``u`` (from rest at the start).

Exact between nodes, not only at them. On every piece ``q'`` is linear in ``s`` and ``q''``
constant, so on an interval ``q̈_j = q'_j(s)·u + q''_j·x(s)`` is linear in ``s``: bounding it at
both interval ends (TOPP-RA's "interpolation" rows) bounds it everywhere. ``q̇_j² = q'_j²·x``
is bounded with the interval's largest ``|q'_j|`` at both ends. The resulting continuous
trajectory keeps every limit at every instant, hence at any sampling.

Straight pieces (``q'' = 0``) have constant bounds ``|u| ≤ a`` and ``x ≤ V`` and are solved in
closed form (accelerate, cruise, brake: a concave piecewise-linear ``x(s)``), so only the
blends need a grid. On a blend the admissible ``u`` range at a given ``x`` is
``[max_r(-P_r + Q_r·x), min_r(P_r + Q_r·x)]``; the largest controllable ``x`` is the right root
of the convex piecewise-linear gap function, found exactly by Newton steps from the right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.arms.retiming.blended_path import BlendedPath

_A_FLOOR = 1e-12  # |q'_j| below this is treated as this (error ≤ 1e-12·|u|, far below margins)


@dataclass(frozen=True, eq=False)
class PathProfile:
    """Piecewise-constant ``s̈`` profile: nodes ``s`` and ``x = ṡ²``; per interval its piece."""

    s: np.ndarray       # (M+1,)
    x: np.ndarray       # (M+1,)
    u: np.ndarray       # (M,) s̈ on each interval
    piece: np.ndarray   # (M,)
    t: np.ndarray       # (M+1,) time at each node

    @property
    def duration_s(self) -> float:
        return float(self.t[-1])

    def sample(self, tau: np.ndarray):
        """(s, ṡ, s̈, piece) at times ``tau`` within [0, duration]."""
        i = np.clip(np.searchsorted(self.t, tau, side="right") - 1, 0, len(self.piece) - 1)
        u = self.u[i]
        sd0 = np.sqrt(self.x[i])
        dt = np.clip(tau - self.t[i], 0.0, self.t[i + 1] - self.t[i])
        sd = np.maximum(sd0 + u * dt, 0.0)
        s = np.clip(self.s[i] + sd0 * dt + 0.5 * u * dt**2, self.s[i], self.s[i + 1])
        return s, sd, u, self.piece[i]


def _blend_rows(c1, c2, length, n, acc):
    """Node parameters, node velocity caps and the (P, Q) rows of a blend's n intervals."""
    sigma = np.linspace(0.0, length, n + 1)
    delta = length / n
    qp = c1[None, :] + c2[None, :] * sigma[:, None]                       # (n+1, D)
    a_start, a_end = qp[:-1], qp[1:] + 2.0 * delta * c2[None, :]          # (n, D)
    big_a = np.concatenate([a_start, a_end], axis=1)                      # (n, 2D)
    big_b = np.broadcast_to(np.concatenate([c2, c2]), big_a.shape)
    lim = np.concatenate([acc, acc])
    sign = np.where(big_a >= 0.0, 1.0, -1.0)
    mag = np.maximum(np.abs(big_a), _A_FLOOR)
    return sigma, delta, lim / mag, -sign * big_b / mag, np.abs(qp)


def _blend_velocity_caps(abs_qp, vel):
    worst = np.maximum(abs_qp[:-1], abs_qp[1:])                           # (n, D)
    with np.errstate(divide="ignore"):
        cap_int = np.min((vel / worst) ** 2, axis=1)                      # (n,)
    return np.concatenate([[cap_int[0]], np.minimum(cap_int[:-1], cap_int[1:]), [cap_int[-1]]])


def _gap(p, q, inv2d, beta, x):
    """(u_lo - u_hi, its slope) at x: how far the admissible u range is from existing."""
    qx = q * x
    hi = p + qx
    j = hi.argmin()
    u_hi, slope_hi = hi[j], q[j]
    u_beta = (beta - x) * inv2d
    if u_beta < u_hi:
        u_hi, slope_hi = u_beta, -inv2d
    lo = qx - p
    m = lo.argmax()
    u_lo, slope_lo = lo[m], q[m]
    u_zero = -x * inv2d
    if u_zero > u_lo:
        u_lo, slope_lo = u_zero, -inv2d
    return float(u_lo - u_hi), float(slope_lo - slope_hi), abs(u_hi) + abs(u_lo)


def _controllable_x(p, q, inv2d, cap, beta, guess):
    """Largest x ≤ cap from which some admissible u reaches [0, beta].

    The gap u_lo(x) - u_hi(x) is convex piecewise linear and ≤ 0 at x = 0, so the answer is
    its right root (or ``cap``). Newton steps from the right converge to it monotonically in
    finitely many steps; one step from a feasible ``guess`` left of the root lands right of it.
    """
    x = min(guess, cap)
    gap, slope, scale = _gap(p, q, inv2d, beta, x)
    if gap <= 0.0:
        if slope <= 0.0 or x >= cap:
            x = cap
        else:
            x = min(cap, x - gap / slope)
        gap, slope, scale = _gap(p, q, inv2d, beta, x)
    for _ in range(60):
        if gap <= 1e-13 * scale:
            return x
        if slope <= 0.0:
            return 0.0
        step = gap / slope
        if step <= 1e-13 * x:  # round-off level: infeasible by ~1e-13, far inside the margin
            return x - step
        x = max(x - step, 0.0)
        gap, slope, scale = _gap(p, q, inv2d, beta, x)
    return x


def _line_profile(x_start, hi_end, cap, acc, length):
    """Breakpoints (σ, x) and u of x(σ) = min(cap, x_start + 2aσ, hi_end + 2a(L-σ))."""
    two_a = 2.0 * acc

    def branches(sig):
        return np.stack([x_start + two_a * sig, np.full_like(sig, cap),
                         hi_end + two_a * (length - sig)])

    cands = [0.0, length, (cap - x_start) / two_a, length - (cap - hi_end) / two_a,
             (hi_end + two_a * length - x_start) / (2.0 * two_a)]
    sig = np.unique(np.clip(np.array(cands), 0.0, length))
    x = np.maximum(branches(sig).min(axis=0), 0.0)
    x[0] = x_start
    active = np.argmin(branches(0.5 * (sig[:-1] + sig[1:])), axis=0)   # 0: accel, 1: cruise, 2: brake
    return sig, x, np.array([acc, 0.0, -acc])[active]


def solve_topp(
    path: BlendedPath,
    velocity_limits: np.ndarray,
    acceleration_limits: np.ndarray,
    intervals_per_unit_turn: float = 16.0,
    blend_step: float = 0.02,
    min_blend_intervals: int = 6,
) -> PathProfile:
    """Time-optimal profile from rest to rest; limits are per piece, K×D (positive).

    A blend gets ``max(min_blend_intervals, intervals_per_unit_turn·|u2 - u1|,
    length / blend_step)`` grid intervals; lines need none (closed form).
    """
    k_pieces = path.num_pieces
    vel, acc = np.asarray(velocity_limits, float), np.asarray(acceleration_limits, float)
    with np.errstate(divide="ignore"):
        line_cap = np.min((vel / np.abs(path.c1)) ** 2, axis=1)
        line_acc = np.min(acc / np.abs(path.c1), axis=1)
    rest_after = np.append(path.rest_at_start[1:], True)

    blends: dict[int, tuple] = {}
    for k in np.flatnonzero(path.is_blend):
        turn = float(np.linalg.norm(path.c2[k]) * path.lengths[k])
        n = int(max(min_blend_intervals, np.ceil(intervals_per_unit_turn * turn),
                    np.ceil(path.lengths[k] / blend_step)))
        sigma, delta, p, q, abs_qp = _blend_rows(path.c1[k], path.c2[k], path.lengths[k], n, acc[k])
        blends[k] = (sigma, delta, p, q, _blend_velocity_caps(abs_qp, vel[k]))

    # Backward pass: hi[k] = controllable x at the nodes of piece k (ends for lines).
    hi: list[np.ndarray] = [np.empty(0)] * k_pieces
    beta = 0.0
    for k in range(k_pieces - 1, -1, -1):
        if rest_after[k]:
            beta = 0.0
        if not path.is_blend[k]:
            end = min(beta, line_cap[k])
            hi[k] = np.array([min(line_cap[k], end + 2.0 * line_acc[k] * path.lengths[k]), end])
        else:
            sigma, delta, p, q, caps = blends[k]
            h = np.empty(len(sigma))
            h[-1] = min(beta, caps[-1])
            inv2d = 0.5 / delta
            for i in range(len(sigma) - 2, -1, -1):
                h[i] = _controllable_x(p[i], q[i], inv2d, caps[i], h[i + 1], h[i + 1])
            hi[k] = h
        beta = float(hi[k][0])

    # Forward pass from rest, greedy in u.
    s_nodes, x_nodes, u_all, pieces = [np.zeros(1)], [np.zeros(1)], [], []
    x = 0.0
    for k in range(k_pieces):
        if path.rest_at_start[k]:
            x = 0.0
        x = min(x, float(hi[k][0]))
        if not path.is_blend[k]:
            sig, xs, us = _line_profile(x, float(hi[k][1]), line_cap[k], line_acc[k],
                                        path.lengths[k])
        else:
            sig, delta, p, q, _ = blends[k]
            h = hi[k]
            xs = np.empty(len(sig))
            xs[0] = x
            for i in range(len(sig) - 1):
                u = min(float((p[i] + q[i] * xs[i]).min()), (h[i + 1] - xs[i]) / (2.0 * delta))
                xs[i + 1] = min(max(xs[i] + 2.0 * delta * u, 0.0), h[i + 1])
            us = np.diff(xs) / (2.0 * delta)
        s_nodes.append(path.starts[k] + sig[1:])
        x_nodes.append(xs[1:])
        u_all.append(us)
        pieces.append(np.full(len(sig) - 1, k))
        x = float(xs[-1])

    s_all, x_all = np.concatenate(s_nodes), np.concatenate(x_nodes)
    x_all[-1] = 0.0
    piece_all = np.concatenate(pieces)
    ds = np.diff(s_all)
    speed_sum = np.sqrt(x_all[:-1]) + np.sqrt(x_all[1:])
    if np.any(speed_sum <= 0.0):
        raise ZeroDivisionError("profile stalls (zero speed over an interval)")
    t = np.concatenate([[0.0], np.cumsum(2.0 * ds / speed_sum)])
    return PathProfile(s=s_all, x=x_all, u=np.concatenate(u_all), piece=piece_all, t=t)
