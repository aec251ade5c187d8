"""Distances between many pairs of line segments at once (numpy, one column per pair): the capsule
bound of :mod:`stages.arms.planning.bounds` is the segments' distance less the two radii."""

from __future__ import annotations

import numpy as np


def _dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


def _cross(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.stack([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]])


_TINY = 1e-300   # a divisor floor: every quotient it guards has a zero numerator when it applies

NEARLY_PARALLEL = 1e-6
"""Below ``|w1 × w2|² = NEARLY_PARALLEL·|w1|²|w2|²`` segment_distances_m takes the lines' closest
point from cross products (``b·f - c·e`` loses too many digits there)."""


def segment_distances_m(c1: np.ndarray, w1: np.ndarray, c2: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """Distances (M,) between segments ``c1 + s·w1`` and ``c2 + t·w2``, s, t in [-1, 1]; arrays (3, M).

    Ericson's clamped closest points (Real-Time Collision Detection, 5.1.9): s of the lines'
    closest points, clamped; t best for that s, clamped; s best for that t, clamped (each step
    exact, so the last s and t are the segments' closest points). The lines' s is
    ``(b·f - c·e) / (a·e - b²)``, or for nearly parallel segments (``NEARLY_PARALLEL``)
    ``((w1×w2)·(w2×r)) / |w1×w2|²`` (no cancellation: its sign, which picks the end where a
    nearly parallel pair is closest, stays right); exactly parallel or zero-length segments get
    s = 0 there (any start gives parallel segments' distance; a zero-length one has a = 0 or
    e = 0, and then b = c = 0 or b = f = 0, so the divisions by ``max(·, _TINY)`` give 0)."""
    r = c1 - c2
    gram = np.einsum("uxm,vxm->uvm", np.stack([w1, w2, r]), np.stack([w1, w2]))   # (3, 2, M)
    a, b, e, c, f = gram[0, 0], gram[0, 1], gram[1, 1], gram[2, 0], gram[2, 1]
    ae = a * e
    denom = ae - b * b
    s = b * f
    s -= c * e
    s /= np.maximum(denom, _TINY)
    near = denom <= NEARLY_PARALLEL * ae
    if near.any():
        k = np.flatnonzero(near)
        x = _cross(w1[:, k], w2[:, k])
        s[k] = _dot(x, _cross(w2[:, k], r[:, k])) / np.maximum(_dot(x, x), _TINY)
    np.minimum(np.maximum(s, -1.0, out=s), 1.0, out=s)
    t = b * s
    t += f
    t /= np.maximum(e, _TINY)
    np.minimum(np.maximum(t, -1.0, out=t), 1.0, out=t)
    s = b * t
    s -= c
    s /= np.maximum(a, _TINY)
    np.minimum(np.maximum(s, -1.0, out=s), 1.0, out=s)
    r += s * w1
    r -= t * w2
    return np.sqrt(np.einsum("xm,xm->m", r, r))
