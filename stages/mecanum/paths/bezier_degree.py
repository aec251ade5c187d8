"""A Bézier curve of any degree as cubic segments: exact where it can be, bounded where not.

Degrees 1-3 become one cubic each by exact degree elevation (:func:`hermite_cubic`: the cubic with
the curve's ends and end derivatives is, for n <= 3, the curve itself). A curve of degree n > 3 is
one cubic only if it is an elevated cubic; otherwise no cubic chain traces it exactly, so
:func:`as_cubics` halves it (De Casteljau, :func:`halves`) until each piece's cubic is within the
tolerance by a rigorous bound: the largest distance between the Bernstein control points of the
piece and of its cubic elevated to degree n (:func:`elevate`). Tolerance 0 refuses such a curve
with a :class:`~stages.mecanum.paths.bezier.PathError`.
"""

from __future__ import annotations

import numpy as np

from stages.mecanum.paths.bezier import PathError

EXACT_IN = 1e-9  # control points this close count as the same curve (in)


def hermite_cubic(p: np.ndarray) -> np.ndarray:
    """The cubic with the ends and end derivatives of Bézier ``p`` (degree n ≥ 1); for n ≤ 3
    this is exact degree elevation."""
    n = len(p) - 1
    return np.array([p[0], p[0] + n / 3 * (p[1] - p[0]), p[-1] - n / 3 * (p[-1] - p[-2]), p[-1]])


def elevate(p: np.ndarray, degree: int) -> np.ndarray:
    """Bézier ``p``'s control points raised to ``degree`` (the same curve)."""
    while len(p) - 1 < degree:
        m = len(p)  # new degree
        i = np.arange(1, m)[:, None] / m
        p = np.vstack([p[:1], i * p[:-1] + (1 - i) * p[1:], p[-1:]])
    return p


def halves(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bézier ``p`` split at t = 1/2 (De Casteljau): the two halves' control points."""
    left, right, q = [p[0]], [p[-1]], p
    while len(q) > 1:
        q = (q[:-1] + q[1:]) / 2
        left.append(q[0])
        right.append(q[-1])
    return np.array(left), np.array(right[::-1])


def as_cubics(p: np.ndarray, tol: float, where: str, a: float = 0.0, b: float = 1.0,
              depth: int = 0) -> list[tuple[float, float, np.ndarray, float]]:
    """(a, b, cubic, error bound) pieces tracing Bézier ``p`` over its parameters [a, b]."""
    c = hermite_cubic(p)
    err = 0.0 if len(p) <= 4 else float(np.linalg.norm(elevate(c, len(p) - 1) - p, axis=1).max())
    if err <= max(tol, EXACT_IN):
        return [(a, b, c, err if err > EXACT_IN else 0.0)]
    n = len(p) - 1
    if tol <= 0 or depth >= 30:
        raise PathError(f"{where}: a Bézier of degree {n} ({n - 1} control points) cannot be one "
                        f"cubic (it is up to {err:.3g} in from the nearest); pass tolerance_in > 0 "
                        "to split it into cubics within that distance")
    left, right = halves(p)
    m = (a + b) / 2
    return as_cubics(left, tol, where, a, m, depth + 1) + as_cubics(right, tol, where, m, b, depth + 1)
