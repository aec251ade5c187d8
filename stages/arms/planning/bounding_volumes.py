"""Solids that contain a collision geom, from the compiled model: the pre-test's containers.

A sphere or capsule is its own capsule; a box, cylinder or ellipsoid lies in a capsule along its
longest axis (or a ball, whichever is smaller); a mesh in a capsule fitted to its own vertices
(``mesh_vert``, kept in the geom's frame), checked on every vertex. Boxes, cylinders, ellipsoids
and meshes also get a bounding box. A plane has no capsule (it is a half-space to
:mod:`stages.arms.planning.bounds`); any other geom lies in the ball of ``geom_rbound``. MuJoCo
collides a mesh's convex hull, which lies in any convex solid that holds its vertices.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from stages.arms.planning.geom_kinematics import z_axis_frame

MESH_INFLATION_M = 1e-9
"""Added to a mesh's fitted capsule radius (the fit is checked on every vertex in float64)."""


@dataclass(frozen=True)
class BoundingCapsule:
    """A capsule that contains one geom: the segment from ``a_m`` to ``b_m`` (geom frame, m) swept
    by a ball of ``radius_m``. A sphere is a capsule with ``a_m == b_m``."""

    a_m: np.ndarray
    b_m: np.ndarray
    radius_m: float

    @property
    def center_m(self) -> np.ndarray:
        return (np.asarray(self.a_m) + np.asarray(self.b_m)) / 2.0

    @property
    def half_axis_m(self) -> np.ndarray:
        return (np.asarray(self.b_m) - np.asarray(self.a_m)) / 2.0

    @property
    def volume_m3(self) -> float:
        length = float(np.linalg.norm(self.half_axis_m)) * 2.0
        r = self.radius_m
        return np.pi * r * r * length + 4.0 / 3.0 * np.pi * r ** 3

    def distances_m(self, points_m: np.ndarray) -> np.ndarray:
        """Distance of each point (K, 3) (geom frame) from the capsule's segment."""
        p = np.asarray(points_m, float) - self.center_m
        w = self.half_axis_m
        ww = float(w @ w)
        t = np.clip(p @ w / ww, -1.0, 1.0) if ww > 0 else np.zeros(len(p))
        return np.linalg.norm(p - t[:, None] * w, axis=1)


def _capsule_along(axis: int, half_length_m: float, radius_m: float) -> BoundingCapsule:
    b = np.zeros(3)
    b[axis] = half_length_m
    return BoundingCapsule(-b, b, float(radius_m))


def _ball(radius_m: float, center_m=(0.0, 0.0, 0.0)) -> BoundingCapsule:
    c = np.array(center_m, float)
    return BoundingCapsule(c, c.copy(), float(radius_m))


def fit_capsule(points_m: np.ndarray) -> BoundingCapsule:
    """A small capsule containing every point (K, 3). Along each principal axis of the points and
    each frame axis, through the points' mean or the middle of their extent across the axis: the
    radius is the largest distance from that line, and the ends are pulled in as far as every point
    stays inside. The smallest of those and the ball around the origin wins."""
    p = np.asarray(points_m, float)
    best = _ball(float(np.linalg.norm(p, axis=1).max()))
    mean = p.mean(axis=0)
    _, vecs = np.linalg.eigh((p - mean).T @ (p - mean))
    for axis in np.r_[vecs.T, np.eye(3)]:
        R = z_axis_frame(axis)
        local = p @ R                       # across (x, y) and along (z) the axis
        for middle in (local[:, :2].mean(axis=0), (local[:, :2].min(axis=0) + local[:, :2].max(axis=0)) / 2):
            radial = np.linalg.norm(local[:, :2] - middle, axis=1)
            r = float(radial.max())
            slack = np.sqrt(np.maximum(r * r - radial * radial, 0.0))
            t = local[:, 2]
            hi, lo = float((t - slack).max()), float((t + slack).min())
            if hi < lo:                     # a ball on the axis holds every point
                hi = lo = (hi + lo) / 2.0
            cap = BoundingCapsule(R @ [*middle, lo], R @ [*middle, hi], r)
            if cap.volume_m3 < best.volume_m3:
                best = cap
    # the fit in float64 is exact up to rounding: measure it on every point and keep a hair of room
    worst = float(best.distances_m(p).max())
    return BoundingCapsule(best.a_m, best.b_m, max(best.radius_m, worst) + MESH_INFLATION_M)


MAX_PIECES = 4
PIECE_COST = 1.15
"""A mesh gets up to ``MAX_PIECES`` capsules; k pieces are taken over k - 1 when their volume is below
1 / ``PIECE_COST`` of it (each piece costs a segment distance per pair)."""


def hull_slabs(points_m: np.ndarray, pieces: int) -> list[np.ndarray]:
    """The convex hull of ``points_m`` (K, 3) cut into ``pieces`` slabs of equal width along its
    principal axis, each slab's part as points whose convex hull it is: the hull's vertices inside
    the slab and the points where the hull's edges cross the slab's two planes (a vertex of a convex
    polytope cut by a plane is one of its vertices or an edge's crossing)."""
    p = np.asarray(points_m, float)
    hull = ConvexHull(p)
    verts = p[hull.vertices]
    mean = verts.mean(axis=0)
    _, vecs = np.linalg.eigh((verts - mean).T @ (verts - mean))
    axis = vecs[:, -1]
    t = p @ axis
    edges = np.unique(np.sort(np.concatenate([hull.simplices[:, [0, 1]], hull.simplices[:, [1, 2]],
                                              hull.simplices[:, [0, 2]]]), axis=1), axis=0)
    cuts = np.linspace(t[hull.vertices].min(), t[hull.vertices].max(), pieces + 1)
    crossings = []
    for c in cuts[1:-1]:
        ta, tb = t[edges[:, 0]] - c, t[edges[:, 1]] - c
        cross = ta * tb < 0
        w = (ta[cross] / (ta[cross] - tb[cross]))[:, None]
        crossings.append(p[edges[cross, 0]] + w * (p[edges[cross, 1]] - p[edges[cross, 0]]))
    out = []
    tv = t[hull.vertices]
    for k in range(pieces):
        inside = verts[(tv >= cuts[k]) & (tv <= cuts[k + 1])]
        parts = [inside] + ([crossings[k - 1]] if k > 0 else []) + ([crossings[k]] if k < pieces - 1 else [])
        out.append(np.concatenate(parts))
    return out


def fit_capsules(points_m: np.ndarray) -> list[BoundingCapsule]:
    """A few capsules whose union contains the convex hull of ``points_m``: one per slab of
    :func:`hull_slabs`, each fitted (:func:`fit_capsule`) to its slab's points, so it holds its part
    of the hull; the number of slabs (1 to ``MAX_PIECES``) whose capsules' volume is smallest once
    each extra piece is charged ``PIECE_COST``."""
    p = np.asarray(points_m, float)
    best = [fit_capsule(p)]
    cost = best[0].volume_m3
    if len(p) < 8:
        return best
    for k in range(2, MAX_PIECES + 1):
        try:
            caps = [fit_capsule(part) for part in hull_slabs(p, k)]
        except QhullError:   # a flat or degenerate mesh: one capsule
            return best
        volume = sum(c.volume_m3 for c in caps) * PIECE_COST ** (k - 1)
        if volume < cost:
            best, cost = caps, volume
    return best


@functools.lru_cache(maxsize=512)
def _fit_capsules_once(vertices: bytes, count: int) -> tuple[BoundingCapsule, ...]:
    """:func:`fit_capsules` once per mesh (every checker of a group fits the same meshes)."""
    return tuple(fit_capsules(np.frombuffer(vertices, float).reshape(count, 3)))


@dataclass(frozen=True)
class BoundingBox:
    """A box that contains one geom: centre ``center_m`` and half sizes ``half_m`` along the geom
    frame's axes (m)."""

    center_m: np.ndarray
    half_m: np.ndarray


def _mesh_vertices(model, geom: int) -> np.ndarray:
    mesh = int(model.geom_dataid[geom])
    start, count = int(model.mesh_vertadr[mesh]), int(model.mesh_vertnum[mesh])
    return np.asarray(model.mesh_vert[start:start + count], float)


def bounding_capsule(model, geom: int) -> BoundingCapsule | None:
    """A capsule (geom frame) containing geom ``geom`` of the compiled ``model``; None for a plane
    (bounded as a half-space). Meshes: MuJoCo stores ``mesh_vert`` in the geom's frame (its
    ``geom_aabb`` is the vertices' box, tests/arms/planning/test_bounds.py)."""
    import mujoco

    T = mujoco.mjtGeom
    kind = int(model.geom_type[geom])
    s = np.asarray(model.geom_size[geom], float)
    if kind == T.mjGEOM_PLANE:
        return None
    if kind == T.mjGEOM_SPHERE:
        return _ball(s[0])
    if kind == T.mjGEOM_CAPSULE:
        return _capsule_along(2, s[1], s[0])
    if kind == T.mjGEOM_MESH:
        return fit_capsule(_mesh_vertices(model, geom))
    if kind == T.mjGEOM_CYLINDER:
        candidates = [_capsule_along(2, s[1], s[0]), _ball(np.hypot(s[0], s[1]))]
    elif kind == T.mjGEOM_BOX:
        i = int(np.argmax(s))
        candidates = [_capsule_along(i, s[i], np.linalg.norm(np.delete(s, i))), _ball(np.linalg.norm(s))]
    elif kind == T.mjGEOM_ELLIPSOID:
        order = np.argsort(s)[::-1]
        a, b = s[order[0]], s[order[1]]
        # |x| <= a, y² + z² <= b²(1 - x²/a²): within b of the segment |x| <= a - b
        candidates = [_capsule_along(int(order[0]), a - b, b), _ball(a)]
    else:   # height fields, SDFs, ...: MuJoCo's bounding sphere around the geom frame
        return _ball(float(model.geom_rbound[geom]))
    return min(candidates, key=lambda c: c.volume_m3)


def bounding_capsules(model, geom: int) -> list[BoundingCapsule] | None:
    """Capsules (geom frame) whose union contains geom ``geom``: a mesh's from :func:`fit_capsules`,
    any other geom's one :func:`bounding_capsule`; None for a plane."""
    import mujoco

    if int(model.geom_type[geom]) == mujoco.mjtGeom.mjGEOM_MESH:
        v = np.ascontiguousarray(_mesh_vertices(model, geom))
        return list(_fit_capsules_once(v.tobytes(), v.shape[0]))
    cap = bounding_capsule(model, geom)
    return None if cap is None else [cap]


def bounding_box(model, geom: int) -> BoundingBox | None:
    """A box (geom frame axes) containing the geom, for the geoms whose capsule leaves corners
    empty: a box itself, a cylinder's or ellipsoid's box, a mesh's vertices' box; None otherwise."""
    import mujoco

    T = mujoco.mjtGeom
    kind = int(model.geom_type[geom])
    s = np.asarray(model.geom_size[geom], float)
    if kind in (T.mjGEOM_BOX, T.mjGEOM_ELLIPSOID):
        return BoundingBox(np.zeros(3), s.copy())
    if kind == T.mjGEOM_CYLINDER:
        return BoundingBox(np.zeros(3), np.array([s[0], s[0], s[1]]))
    if kind == T.mjGEOM_MESH:
        v = _mesh_vertices(model, geom)
        lo, hi = v.min(axis=0), v.max(axis=0)
        return BoundingBox((lo + hi) / 2.0, (hi - lo) / 2.0 + MESH_INFLATION_M)
    return None
