"""The geometric path the retimer times: the planner's polyline with bounded corner blends.

The planner verified the straight edges between waypoints, so the timed path must stay close
to them. Each interior corner ``W`` between unit directions ``u1`` and ``u2`` (turn angle θ)
is replaced by the quadratic Bézier ``W - l·u1 → W → W + l·u2``. Its largest distance to the
two edges is exactly ``l·sinθ/4`` (at its midpoint), so choosing ``l ≤ 4·δ/sinθ`` keeps the
whole path within ``δ = max_deviation_rad`` (Euclidean norm in joint space, hence also per
joint) of the polyline. ``l`` is also at most ``blend_fraction`` of each adjacent edge, so
blends never overlap. The blend lies in the convex hull of points on the edges, so a box of
joint position limits that holds the waypoints holds the path.

A corner turning more than ``max_blend_angle_deg`` (a near reversal), or any corner when
``max_deviation_rad == 0``, is not blended: the path stops there (rest at the corner).

Parameterization: ``s`` is arc length on the straight pieces and ``2l`` long on a blend, so
``q'(s)`` is continuous (unit length on lines, ≤ 1 on blends). Every piece is quadratic in
``s``: ``q = c0 + c1·σ + c2·σ²/2`` with ``σ = s - start``; ``q''`` is constant per piece (zero
on lines). The retimer relies on that structure to bound limits between grid points exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_DUPLICATE_RAD = 1e-12      # consecutive waypoints closer than this are one waypoint
_COLLINEAR_COS = 1.0 - 1e-12  # a "corner" straighter than this is no corner


@dataclass(frozen=True, eq=False)
class BlendedPath:
    """A C¹ piecewise-quadratic joint path; evaluate with ``path(s, order)``."""

    waypoints: np.ndarray      # the (deduplicated, collinear-merged) polyline, N×D
    starts: np.ndarray         # (K,) path parameter at each piece's start
    lengths: np.ndarray        # (K,) parameter length of each piece
    c0: np.ndarray             # (K, D) position at the piece start
    c1: np.ndarray             # (K, D) dq/ds at the piece start
    c2: np.ndarray             # (K, D) d²q/ds², constant on the piece
    is_blend: np.ndarray       # (K,) bool
    rest_at_start: np.ndarray  # (K,) bool: the motion is at rest where the piece begins
    deviations_rad: np.ndarray  # (number of blends,) each blend's largest distance to its edges

    @property
    def dof(self) -> int:
        return int(self.waypoints.shape[1])

    @property
    def num_pieces(self) -> int:
        return int(self.starts.shape[0])

    @property
    def length(self) -> float:
        return float(self.starts[-1] + self.lengths[-1]) if self.num_pieces else 0.0

    @property
    def max_deviation_rad(self) -> float:
        """Largest joint-space (Euclidean) distance from this path to the polyline."""
        return float(self.deviations_rad.max()) if self.deviations_rad.size else 0.0

    @property
    def rest_points(self) -> np.ndarray:
        """Path parameters where the motion must be at rest: start, stops, end."""
        inner = self.starts[1:][self.rest_at_start[1:]]
        return np.concatenate([[0.0], inner, [self.length]])

    def piece_index(self, s: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(self.starts, s, side="right") - 1
        return np.clip(idx, 0, self.num_pieces - 1)

    def evaluate(self, s: np.ndarray, pieces: np.ndarray | None = None):
        """(q, q', q'') at parameters ``s`` (M,), each M×D; ``pieces`` pins the piece used."""
        s = np.asarray(s, dtype=float)
        k = self.piece_index(s) if pieces is None else np.asarray(pieces)
        sigma = np.clip(s - self.starts[k], 0.0, self.lengths[k])[:, None]
        c1, c2 = self.c1[k], self.c2[k]
        q = self.c0[k] + c1 * sigma + 0.5 * c2 * sigma**2
        return q, c1 + c2 * sigma, c2

    def __call__(self, s, order: int = 0) -> np.ndarray:
        """toppra-style evaluation: (M, D) for an array ``s``, (D,) for a scalar."""
        scalar = np.ndim(s) == 0
        values = self.evaluate(np.atleast_1d(np.asarray(s, dtype=float)))[order]
        return values[0] if scalar else values


def _simplify(waypoints: np.ndarray) -> np.ndarray:
    """Drop repeated waypoints and the middle of straight, same-direction runs."""
    kept = [waypoints[0]]
    for w in waypoints[1:]:
        if np.linalg.norm(w - kept[-1]) > _DUPLICATE_RAD:
            kept.append(w)
    out = [kept[0]]
    for i in range(1, len(kept) - 1):
        a, b = kept[i] - out[-1], kept[i + 1] - kept[i]
        if np.dot(a, b) <= _COLLINEAR_COS * np.linalg.norm(a) * np.linalg.norm(b):
            out.append(kept[i])
    if len(kept) > 1:
        out.append(kept[-1])
    return np.array(out)


def blend_polyline(
    waypoints: np.ndarray,
    max_deviation_rad: float,
    blend_fraction: float = 0.5,
    max_blend_angle_deg: float = 175.0,
) -> BlendedPath:
    """Blend the corners of the polyline ``waypoints`` (N×D, N ≥ 2 distinct points)."""
    w = _simplify(np.asarray(waypoints, dtype=float))
    if w.shape[0] < 2:
        raise ValueError("blend_polyline needs at least two distinct waypoints")
    seg = np.diff(w, axis=0)
    seg_len = np.linalg.norm(seg, axis=1)
    u = seg / seg_len[:, None]
    n_corners = w.shape[0] - 2
    blend_len = np.zeros(w.shape[0])  # l at each waypoint (0 at the ends and at stops)
    deviation = np.zeros(w.shape[0])
    cos_max = np.cos(np.radians(max_blend_angle_deg))
    for i in range(1, n_corners + 1):
        cos_t = float(np.clip(np.dot(u[i - 1], u[i]), -1.0, 1.0))
        sin_t = float(np.linalg.norm(u[i] - cos_t * u[i - 1]))
        if cos_t < cos_max or max_deviation_rad <= 0.0:
            continue
        limit = 4.0 * max_deviation_rad / sin_t if sin_t > 0 else np.inf
        blend_len[i] = min(blend_fraction * seg_len[i - 1], blend_fraction * seg_len[i], limit)
        deviation[i] = 0.25 * blend_len[i] * sin_t

    rows: list[tuple] = []  # (length, c0, c1, c2, is_blend, rest_at_start)
    rest_next = True
    for i in range(w.shape[0] - 1):
        line_len = seg_len[i] - blend_len[i] - blend_len[i + 1]
        if line_len > 1e-12 * seg_len[i]:
            rows.append((line_len, w[i] + blend_len[i] * u[i], u[i], np.zeros_like(u[i]),
                         False, rest_next))
        rest_next = False
        if i + 1 <= n_corners:
            l_b = blend_len[i + 1]
            if l_b > 0:
                rows.append((2.0 * l_b, w[i + 1] - l_b * u[i], u[i], (u[i + 1] - u[i]) / (2 * l_b),
                             True, False))
            else:
                rest_next = True
    lengths = np.array([r[0] for r in rows])
    starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
    return BlendedPath(
        waypoints=w,
        starts=starts,
        lengths=lengths,
        c0=np.array([r[1] for r in rows]),
        c1=np.array([r[2] for r in rows]),
        c2=np.array([r[3] for r in rows]),
        is_blend=np.array([r[4] for r in rows], dtype=bool),
        rest_at_start=np.array([r[5] for r in rows], dtype=bool),
        deviations_rad=deviation[blend_len > 0],
    )
