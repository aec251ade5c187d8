"""A cheap pre-test for the clearance checker: proven lower bounds on every checked pair's distance,
for many states at once, in numpy (no call into MuJoCo's collision pipeline).

For each state and each pair of ``ClearanceChecker.pairs``, :meth:`GeomBounds.pair_lower_bounds`
gives a number (m) at most the true signed distance ``mj_geomDistance`` reports. A state whose
every bound reaches the clearance is valid (:meth:`GeomBounds.clear`); the others go to the exact
check. Why every bound is a lower bound:

- **Containment.** Every geom lies inside simpler solids built from the compiled model: a capsule
  (:func:`bounding_capsule`: a sphere or capsule is its own; a box, cylinder or ellipsoid lies in
  one along its longest axis; a mesh in one fitted to its vertices; any other geom in the ball of
  ``geom_rbound`` around its frame) and, for boxes, cylinders, ellipsoids and meshes, a box
  (:func:`bounding_box`). A mesh's convex hull, which is what MuJoCo collides, lies in any convex
  solid that holds its vertices (``mesh_vert``, kept in the geom's frame). If A ⊂ A' and B ⊂ B', A
  and B are at least as far apart as A' and B'; when they overlap, a translation that separates A'
  and B' also separates A and B, so A and B penetrate no deeper. A bound on the containers'
  signed distance is therefore one on the geoms'.
- **Triangle inequality.** Points of two capsules (segments S1, S2, radii r1, r2) lie within r1
  and r2 of S1 and S2, so the capsules are at least ``|S1 S2| - r1 - r2`` apart (the segments'
  distance, from clamped closest points); overlapping, they separate by a translation of exactly
  ``r1 + r2 - |S1 S2|``. A ball is a capsule of zero length.
- **Separating axes.** A box of half sizes e lies in the slab ``|u_k·(x - o)| <= e_k`` along each
  of its axes u_k; a solid whose extent along u_k ends ``g`` beyond the slab is at least ``g``
  away (overlapping, sliding it ``-g`` along u_k separates them). A pair with a box takes the
  larger of the capsules' bound and the largest such gap (over both boxes' faces for two boxes).
  A plane is its half-space: the bound is the other solid's lowest point above it.

The bounds hold whenever MuJoCo reports the true distance (apart) or no more than the true
penetration depth (overlapping); the tests compare them with ``mj_geomDistance`` on every pair of
every shipped robot. Poses come from :class:`GeomKinematics`, MuJoCo's ``mj_kinematics`` for hinge
and slide joints replayed in numpy for all states at once (MuJoCo's to 1e-9 in the tests). Every
bound is lowered by ``ROUNDING_M`` for float64 rounding.

Speed: :meth:`GeomBounds.clear` poses every geom once for all states (one small matrix product
per level of the kinematic tree), then proves what it can densely: planes and boxes that stand
still (a floor, a table, a torso) against every geom's capsule, the other pairs by their two balls
(float32, with room for its rounding: ``SPHERE_SLACK``); only the (pair, state) entries those leave
open, in states not yet disproved, get the capsule and box bounds.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from core.errors import ConfigError

ROUNDING_M = 1e-10
"""Subtracted from every bound: float64 rounding of poses and distances (about 1e-15 m) with room."""

SPHERE_SLACK = 4e-6
"""The float32 ball test proves a pair only ``SPHERE_SLACK * (1 + largest coordinate, m)`` beyond
the clearance: float32 rounding of coordinates, distances and threshold stays below a quarter of it
(about 9e-7 of the largest coordinate)."""

MESH_INFLATION_M = 1e-9
"""Added to a mesh's fitted capsule radius (the fit is checked on every vertex in float64)."""


# ---------------------------------------------------------------------------- bounding capsules
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
        R = _z_to(axis)
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


# ---------------------------------------------------------------------------- kinematics
def _quat_to_mat(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _homogeneous(R=None, p=None) -> np.ndarray:
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def _z_to(axis) -> np.ndarray:
    """A rotation whose third column is the unit ``axis``."""
    z = np.asarray(axis, float) / np.linalg.norm(axis)
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _rz(theta: float) -> np.ndarray:
    c, s = np.cos(theta), np.sin(theta)
    return _homogeneous(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]))


_Z_ONE = np.diag([0.0, 0.0, 1.0, 1.0])     # Rz(θ) = _Z_ONE + cos θ·_Z_COS + sin θ·_Z_SIN
_Z_COS = np.diag([1.0, 1.0, 0.0, 0.0])
_Z_SIN = np.zeros((4, 4))
_Z_SIN[1, 0], _Z_SIN[0, 1] = 1.0, -1.0
_Z_SLIDE = np.zeros((4, 4))                 # Tz(d) = I + d·_Z_SLIDE
_Z_SLIDE[2, 3] = 1.0
_WORLD_T = np.eye(4)[:3].T                  # the identity in GeomKinematics.frames' layout


@dataclass(frozen=True)
class AttachedVectors:
    """Vectors fixed in geoms, in rows grouped by kinematic frame, ``local`` (rows, 4) homogeneous in
    the frame's coordinates: frames ``narrow`` (each with at most ``width`` vectors) take
    ``width`` rows each from row 0 (unused rows are zero); each ``(f, lo, hi)`` of ``wide`` takes
    rows ``lo:hi``; rows ``still`` (a slice) are on no moving frame, ``still_m`` their (constant)
    world coordinates. Vector v comes out in row ``slots[v]`` of :meth:`GeomKinematics.world`."""

    local: np.ndarray
    narrow: np.ndarray
    width: int
    wide: tuple[tuple[int, int, int], ...]
    still: slice
    still_m: np.ndarray
    slots: np.ndarray


_NARROW = 8   # frames with at most this many vectors share one stacked matrix product


class GeomKinematics:
    """World poses of ``geoms`` for many configurations of the joints at ``qpos_adr`` at once.

    MuJoCo's ``mj_kinematics`` for hinge and slide joints (``qpos - qpos0``, anchors ``jnt_pos``,
    axes ``jnt_axis``, ``body_pos``/``body_quat``, ``geom_pos``/``geom_quat``; several joints on one
    body in order), written as a product of 4×4 transforms: each configuration joint is a *frame*
    ``parent @ C @ J(q)`` with a constant ``C`` and ``J`` a rotation about (or a slide along) z.
    Everything no configuration joint moves is posed once by ``mj_kinematics`` at ``base_qpos``
    (joints outside the configuration on moved bodies are held there too). ``held``
    (a bound :class:`~stages.arms.planning.held.HeldObject`) is posed at
    ``attach_body @ T_attach_obj``, as the checker places it. Ball and free joints on moved bodies
    are refused (:class:`~core.errors.ConfigError`).
    """

    def __init__(self, model, qpos_adr, base_qpos, geoms, held=None):
        import mujoco

        J = mujoco.mjtJoint
        self.geoms = np.asarray(geoms, int).reshape(-1)
        self.qpos_adr = np.asarray(qpos_adr, int).reshape(-1)
        base_qpos = np.asarray(base_qpos, float)
        if held is not None and held.body_id < 0:
            held = held.bind(model)
        d = mujoco.MjData(model)
        d.qpos[:] = base_qpos
        mujoco.mj_kinematics(model, d)
        if held is not None:
            held.place(model, d)
            mujoco.mj_kinematics(model, d)
        config = {int(a): i for i, a in enumerate(self.qpos_adr)}
        WORLD = -1

        def world_pose(b: int) -> np.ndarray:
            return _homogeneous(d.xmat[b].reshape(3, 3), d.xpos[b])

        # per frame: parent frame, C, kind (True hinge / False slide), configuration index, qpos0
        parents, consts, hinge, index, qpos0 = [], [], [], [], []
        pose: dict[int, tuple[int, np.ndarray]] = {}   # dynamic body -> (frame, constant transform)
        carried = np.zeros(model.nbody, bool)          # the held object and the bodies below it
        for b in range(1, model.nbody):
            carried[b] = held is not None and (b == held.body_id or carried[model.body_parentid[b]])
        # the held object after everything else: it follows its hand, wherever that is in the tree
        for b in [*np.flatnonzero(~carried[1:]) + 1, *np.flatnonzero(carried)]:
            b = int(b)
            p = int(model.body_parentid[b])
            jnts = range(int(model.body_jntadr[b]), int(model.body_jntadr[b]) + int(model.body_jntnum[b]))
            is_held = held is not None and b == held.body_id
            if not (is_held or p in pose or any(int(model.jnt_qposadr[j]) in config for j in jnts)):
                continue                                              # static: mj_kinematics' pose
            if is_held:
                f, T = pose.get(held.attach_id, (WORLD, world_pose(held.attach_id)))
                pose[b] = (f, T @ np.asarray(held.T_attach_obj, float))
                continue
            f, T = pose.get(p, (WORLD, world_pose(p)))
            T = T @ _homogeneous(_quat_to_mat(model.body_quat[b]), model.body_pos[b])
            for j in jnts:
                kind, adr = int(model.jnt_type[j]), int(model.jnt_qposadr[j])
                name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
                if kind not in (J.mjJNT_HINGE, J.mjJNT_SLIDE):
                    raise ConfigError(f"joint {name!r} (type {J(kind).name}) moves with the configuration; "
                                      "the bounds handle hinge and slide joints only")
                A = _z_to(model.jnt_axis[j])
                anchor = np.asarray(model.jnt_pos[j], float) if kind == J.mjJNT_HINGE else np.zeros(3)
                F = _homogeneous(A, anchor)
                if adr in config:
                    parents.append(f)
                    consts.append(T @ F)
                    hinge.append(kind == J.mjJNT_HINGE)
                    index.append(config[adr])
                    qpos0.append(float(model.qpos0[adr]))
                    f, T = len(consts) - 1, np.linalg.inv(F)
                else:
                    v = float(base_qpos[adr] - model.qpos0[adr])
                    Jv = _rz(v) if kind == J.mjJNT_HINGE else np.eye(4) + v * _Z_SLIDE
                    T = T @ F @ Jv @ np.linalg.inv(F)
            pose[b] = (f, T)

        # order frames by depth (a level's parents are all in earlier levels)
        K = len(consts)
        depth = np.zeros(K, int)
        for k in range(K):
            depth[k] = 0 if parents[k] == WORLD else depth[parents[k]] + 1
        order = np.argsort(depth, kind="stable")
        new = np.empty(K, int)
        new[order] = np.arange(K)
        remap = lambda f: K if f == WORLD else int(new[f])   # noqa: E731  (frame K: the world)
        self.n_frames = K
        C = np.array([consts[k] for k in order]).reshape(K, 4, 4)
        is_hinge = np.array([hinge[k] for k in order], bool)
        self._slide = np.flatnonzero(~is_hinge)
        self._index = np.array([index[k] for k in order], int)
        self._qpos0 = np.array([qpos0[k] for k in order], float)
        # frame k = parent @ (B0 + c1·B1 + c2·B2), (c1, c2) = (cos, sin) of q - qpos0 (hinge) or
        # (q - qpos0, 0) (slide); stored transposed for one matrix product per level (see frames)
        B = np.stack([np.where(is_hinge[:, None, None], C @ _Z_ONE, C),
                      np.where(is_hinge[:, None, None], C @ _Z_COS, C @ _Z_SLIDE),
                      np.where(is_hinge[:, None, None], C @ _Z_SIN, 0.0)], axis=1)      # (K, 3, 4, 4)
        self._BT = np.ascontiguousarray(B.transpose(0, 1, 3, 2).reshape(K, 12, 4))
        self._levels = []   # (lo, hi, parent frames), the first level's parent being the world (K)
        sorted_parents = np.array([remap(parents[k]) for k in order], int)
        sorted_depth = depth[order]
        for level in range(int(sorted_depth.max(initial=-1)) + 1):
            lo, hi = np.searchsorted(sorted_depth, [level, level + 1])
            par = sorted_parents[lo:hi]
            if np.array_equal(par, np.arange(par[0], par[0] + len(par))):
                par = slice(int(par[0]), int(par[0]) + len(par))   # a run of frames: a view, no copy
            self._levels.append((int(lo), int(hi), par))
        # each geom: its frame and its pose in that frame
        self._geom_frame = np.empty(len(self.geoms), int)
        self._geom_local = np.empty((len(self.geoms), 4, 4))
        for i, g in enumerate(self.geoms.tolist()):
            b = int(model.geom_bodyid[g])
            if b in pose:
                f, T = pose[b]
                self._geom_frame[i] = remap(f)
                self._geom_local[i] = T @ _homogeneous(_quat_to_mat(model.geom_quat[g]), model.geom_pos[g])
            else:
                self._geom_frame[i] = K
                self._geom_local[i] = _homogeneous(d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g])
        self._poses = self.attach(np.repeat(np.arange(len(self.geoms)), 4),
                                  np.tile(np.eye(4)[[3, 0, 1, 2]], (len(self.geoms), 1)))

    def static_geoms(self) -> np.ndarray:
        """(G,) bool: the geoms no configuration joint moves."""
        return self._geom_frame == self.n_frames

    def geom_local(self, index) -> np.ndarray:
        """(len(index), 4, 4): geoms' poses in their frames (the world pose for a static geom)."""
        return self._geom_local[np.asarray(index, int)]

    @classmethod
    def for_checker(cls, checker, geoms=None) -> GeomKinematics:
        """The geoms of ``checker.pairs`` (or ``geoms``) posed as ``checker`` poses them."""
        geoms = np.unique(checker.pairs) if geoms is None else geoms
        return cls(checker.model, checker.qpos_adr, checker.base_qpos, geoms, checker.held)

    def frames(self, states: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """(K + 1, 4, 3, N): every configuration joint's frame (after its motion) in the world, as
        ``F[k, col, row, n] = T_k[row, col]`` in state ``n`` (the transform's top three rows,
        transposed, states last); frame K is the world itself."""
        Q = np.asarray(states, float)
        N, K = len(Q), self.n_frames
        theta = np.take(Q, self._index, axis=1).T                       # (K, N)
        theta -= self._qpos0[:, None]
        coef = np.empty((K, 3, N))                                        # (1, c1, c2) per frame
        coef[:, 0] = 1.0
        np.cos(theta, out=coef[:, 1])
        np.sin(theta, out=coef[:, 2])
        if len(self._slide):
            coef[self._slide, 1] = theta[self._slide]
            coef[self._slide, 2] = 0.0
        F = np.empty((K + 1, 4, 3, N)) if out is None else out
        F[K] = _WORLD_T[:, :, None]
        for lo, hi, parent in self._levels:
            # rows (m, col) of Y: (T_parent @ B_m) transposed, columns (row, state)
            Y = np.matmul(self._BT[lo:hi], F[parent].reshape(hi - lo, 4, 3 * N))
            np.einsum("kmcrn,kmn->kcrn", Y.reshape(hi - lo, 3, 4, 3, N), coef[lo:hi], out=F[lo:hi])
        return F

    def attach(self, geom_index, local_h) -> AttachedVectors:
        """Vectors fixed to geoms: ``local_h`` (V, 4) homogeneous (w = 1 a point, 0 a direction) in the
        frames of geoms ``self.geoms[geom_index]``, grouped by kinematic frame for :meth:`world`."""
        geom_index = np.asarray(geom_index, int)
        frame = self._geom_frame[geom_index]
        in_frame = np.einsum("vij,vj->vi", self._geom_local[geom_index], np.asarray(local_h, float))
        count = np.bincount(frame, minlength=self.n_frames + 1)
        narrow = np.flatnonzero((count[:-1] > 0) & (count[:-1] <= _NARROW))
        width = int(count[narrow].max(initial=1))
        start = np.zeros(self.n_frames + 1, int)           # first row of each frame
        start[narrow] = np.arange(len(narrow)) * width
        row, wide = len(narrow) * width, []
        for f in np.flatnonzero(count[:-1] > _NARROW):
            start[f] = row
            wide.append((int(f), row, row + int(count[f])))
            row += int(count[f])
        start[self.n_frames] = row
        still = slice(row, row + int(count[-1]))
        local = np.zeros((still.stop, 4))
        slots = np.empty(len(frame), int)
        used = start.copy()
        for v, f in enumerate(frame.tolist()):
            slots[v] = used[f]
            local[used[f]] = in_frame[v]
            used[f] += 1
        return AttachedVectors(local, narrow, width, tuple(wide), still, local[still, :3].copy(), slots)

    @staticmethod
    def world(frames: np.ndarray, vectors: AttachedVectors, out: np.ndarray | None = None) -> np.ndarray:
        """World coordinates of attached vectors in every state: (rows, 3, N), vector v in row
        ``vectors.slots[v]``: one stacked product for the narrow frames, one per wide frame (not one
        product with a map that is zero outside each frame: at those sizes OpenBLAS spreads over
        threads, slow on a busy machine)."""
        N = frames.shape[-1]
        X = np.empty((len(vectors.local), 3 * N)) if out is None else out.reshape(len(vectors.local), 3 * N)
        k, w = len(vectors.narrow), vectors.width
        if k:
            np.matmul(vectors.local[:k * w].reshape(k, w, 4), frames[vectors.narrow].reshape(k, 4, 3 * N),
                      out=X[:k * w].reshape(k, w, 3 * N))
        for f, lo, hi in vectors.wide:
            np.matmul(vectors.local[lo:hi], frames[f].reshape(4, 3 * N), out=X[lo:hi])
        X = X.reshape(len(vectors.local), 3, N)
        X[vectors.still] = vectors.still_m[:, :, None]
        return X

    def geom_poses(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions (N, G, 3), rotations (N, G, 3, 3)) of ``self.geoms``: MuJoCo's ``geom_xpos``
        and ``geom_xmat`` (reshaped)."""
        X = self.world(self.frames(np.atleast_2d(states)), self._poses)
        X = X[self._poses.slots].reshape(len(self.geoms), 4, 3, -1).transpose(3, 0, 2, 1)  # N, G, xyz, o|axes
        return np.ascontiguousarray(X[..., 0]), np.ascontiguousarray(X[..., 1:])


# ---------------------------------------------------------------------------- distances
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



# ---------------------------------------------------------------------------- the bounds
_XYZ = np.arange(3)
_ROUND, _BOX, _PLANE = 0, 1, 2   # a geom's solid: its capsule; a box (capsule and faces); a half-space


class _Scratch(threading.local):
    """Per-thread work arrays, reused across calls (fresh large arrays cost page faults)."""

    def __init__(self):
        self.flat: dict[tuple[str, type], np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
        size = math.prod(shape)
        buf = self.flat.get((name, dtype))
        if buf is None or buf.size < size:
            buf = self.flat[(name, dtype)] = np.empty(max(size, 2 * (0 if buf is None else buf.size)), dtype)
        return buf[:size].reshape(shape)


class GeomBounds:
    """Lower bounds on the true distance of every checked pair of a :class:`ClearanceChecker`, for
    many states at once (see the module docstring for why they are lower bounds).

    ``kinematics`` poses the geoms; ``pairs`` (P, 2) are geom ids (the checker's, in its order);
    ``capsules`` one :class:`BoundingCapsule` (None for a plane) and ``boxes`` one
    :class:`BoundingBox` or None per geom of ``kinematics.geoms``, each containing its geom.
    Thread-safe (scratch arrays are per thread).
    """

    def __init__(self, kinematics: GeomKinematics, pairs: np.ndarray, capsules, boxes):
        self.kinematics = kinematics
        self.pairs = np.asarray(pairs, int).reshape(-1, 2)
        self.capsules, self.boxes = tuple(capsules), tuple(boxes)
        G = len(kinematics.geoms)
        slot = {int(g): i for i, g in enumerate(kinematics.geoms.tolist())}
        plane = np.array([c is None for c in self.capsules], bool)
        box = np.array([b is not None for b in self.boxes], bool) & ~plane
        self._kind = kind = np.where(plane, _PLANE, np.where(box, _BOX, _ROUND))
        self._radius = np.array([0.0 if c is None else c.radius_m for c in self.capsules])
        self._box_half = np.array([b.half_m if k == _BOX else np.zeros(3)
                                   for b, k in zip(self.boxes, kind, strict=True)]).reshape(-1, 3)
        # a ball around each capsule's centre that holds the geom: the capsule's, or the box's
        # (its half diagonal, grown by how far the box's centre is off the capsule's)
        ball = np.full(G, np.inf)
        for i, (cap, bx) in enumerate(zip(self.capsules, self.boxes, strict=True)):
            if cap is not None:
                ball[i] = np.linalg.norm(cap.half_axis_m) + cap.radius_m
                if box[i]:
                    off = np.linalg.norm(np.asarray(bx.center_m) - cap.center_m)
                    ball[i] = min(ball[i], np.linalg.norm(bx.half_m) + off)
        # attached vectors: 2i the capsule's centre (a point), 2i + 1 its half axis (a plane's
        # origin and normal in their place); then per box its centre and three unit axes
        geom_index, local = [], []
        for i, cap in enumerate(self.capsules):
            geom_index += [i, i]
            if cap is None:
                local += [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
            else:
                local += [[*cap.center_m, 1.0], [*cap.half_axis_m, 0.0]]
        self._box_slots = np.full((G, 4), -1)       # centre, x, y, z
        for i in np.flatnonzero(box):
            self._box_slots[i] = len(local) + np.arange(4)
            geom_index += [i] * 4
            local += [[*self.boxes[i].center_m, 1.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0],
                      [0.0, 0.0, 1.0, 0.0]]
        vectors = kinematics.attach(np.array(geom_index), np.array(local))
        self._vectors = vectors
        self._cap_slots = vectors.slots[:2 * G].reshape(G, 2)          # centre, half axis
        self._box_slots = np.where(box[:, None], vectors.slots[np.maximum(self._box_slots, 0)], 0)
        # pairs oriented so the first geom's kind is the larger (box before capsule, plane first),
        # then sorted by kind: solids (capsule–capsule, box–capsule, box–box), then planes (with a
        # capsule, a box, a plane); each kind is a run of rows
        ia = np.array([slot[int(g)] for g in self.pairs[:, 0]], int)
        ib = np.array([slot[int(g)] for g in self.pairs[:, 1]], int)
        static = kinematics.static_geoms()
        swap = (kind[ia] < kind[ib]) | ((kind[ia] == kind[ib]) & static[ib] & ~static[ia])
        ia, ib = np.where(swap, ib, ia), np.where(swap, ia, ib)
        rank = kind[ia] * 3 + kind[ib]
        order = np.argsort(rank, kind="stable")
        solid = kind[ia[order]] != _PLANE
        self._solid_ids, self._plane_ids = order[solid], order[~solid]
        self._sa, self._sb = ia[self._solid_ids], ib[self._solid_ids]
        self._pa, self._pb = ia[self._plane_ids], ib[self._plane_ids]
        # rows where box–capsule and box–box pairs start; plane rows where plane–box, plane–plane start
        box_rank, plane_rank = 3 * _BOX + np.array([_ROUND, _BOX]), 3 * _PLANE + np.array([_BOX, _PLANE])
        self._solid_cuts = tuple(np.searchsorted(rank[self._solid_ids], box_rank))
        self._plane_cuts = tuple(np.searchsorted(rank[self._plane_ids], plane_rank))
        self._sphere_sum = ball[self._sa] + ball[self._sb]
        # still faces: the three face normals of every box that stands still (a table, a torso) and
        # the normal of every still plane (the floor), in the world; one dense test of every geom's
        # capsule against them prefilters the rows of those geoms (pairs stand to the side of a face)
        normals, offsets, halves, sided = [], [], [], []
        face_of: dict[int, int] = {}
        for i in np.flatnonzero(static & (kind != _ROUND)):
            pose = kinematics.geom_local([i])[0]
            face_of[int(i)] = len(normals)
            if kind[i] == _BOX:
                origin = pose[:3, :3] @ self.boxes[i].center_m + pose[:3, 3]
                for k in range(3):
                    normals.append(pose[:3, k])
                    offsets.append(pose[:3, k] @ origin)
                    halves.append(self._box_half[i, k])
                    sided.append(True)
            else:
                normals.append(pose[:3, 2])
                offsets.append(pose[:3, 2] @ pose[:3, 3])
                halves.append(0.0)
                sided.append(False)
        self._faces = np.array(normals, float).reshape(-1, 3)
        self._face_offset = np.array(offsets, float)
        self._face_two_sided = np.array(sided, bool)[:, None]
        # reach of each geom's capsule beyond a face's slab: (G, faces)
        self._face_reach = np.array(halves, float)[None, :] + self._radius[:, None]

        def faces(first: np.ndarray, rows: np.ndarray) -> np.ndarray:
            f = np.array([face_of[int(i)] for i in first[rows]], int).reshape(-1, 1)
            # a box: its three faces; a plane: its one face, three times
            return f + np.where(kind[first[rows]] == _BOX, 1, 0)[:, None] * np.arange(3)

        self._fixed_rows = np.flatnonzero((kind[self._sa] == _BOX) & static[self._sa])
        self._fixed_faces = faces(self._sa, self._fixed_rows)
        self._planes_still = bool(static[self._pa].all()) and self._plane_cuts[1] == len(self._pa)
        self._plane_faces = faces(self._pa, np.arange(len(self._pa))) if self._planes_still else None
        self._box_reach = self._box_half[self._sa] + self._radius[self._sb][:, None]   # box–capsule rows
        # the other rows take the balls' test first
        self._ball_rows = np.setdiff1d(np.arange(len(self._solid_ids)), self._fixed_rows)
        self._ball_a, self._ball_b = self._sa[self._ball_rows], self._sb[self._ball_rows]
        self._scratch = _Scratch()

    @classmethod
    def for_checker(cls, checker) -> GeomBounds:
        """Bounds for ``checker.pairs``, posed as ``checker`` poses them (its base, its held object)."""
        model = checker.model
        kin = GeomKinematics.for_checker(checker)
        caps = [bounding_capsule(model, int(g)) for g in kin.geoms]
        boxes = [bounding_box(model, int(g)) for g in kin.geoms]
        return cls(kin, checker.pairs, caps, boxes)

    # ------------------------------------------------------------------ internals
    def _world(self, Q: np.ndarray) -> np.ndarray:
        """(rows, 3, N): the attached vectors in the world in every state (rows: their slots)."""
        kin, scratch, N = self.kinematics, self._scratch, len(Q)
        F = kin.frames(Q, out=scratch.get("frames", (kin.n_frames + 1, 4, 3, N)))
        return kin.world(F, self._vectors, out=scratch.get("world", (len(self._vectors.local), 3, N)))

    @staticmethod
    def _gather(X: np.ndarray, slots: np.ndarray, n: np.ndarray) -> np.ndarray:
        """(3, K, M) world vectors ``X[slots[k, m], :, n[m]]`` (one flat take)."""
        N = X.shape[2]
        base = slots * (3 * N) + n
        return np.take(X.reshape(-1), base + _XYZ[:, None, None] * N)

    def _solid_bounds(self, X: np.ndarray, j: np.ndarray, n: np.ndarray,
                      clearance_m: float | None = None) -> np.ndarray:
        """Bounds (M,) of solid rows ``j`` (ascending) in states ``n``: the larger of the balls' and the
        capsules' distance; for a pair with a box, the largest gap along the boxes' face normals if
        larger. With ``clearance_m``, an entry whose gap already reaches it skips its capsules (the
        gap is its bound)."""
        i1, i2 = np.searchsorted(j, self._solid_cuts)
        M = len(j)
        bound = np.empty(M)
        if i1 < M:
            bound[i1:] = self._box_gaps(X, j[i1:], n[i1:], i2 - i1)
        if clearance_m is None or i1 == M:
            rows = None
            jr, nr = j, n
        else:     # capsule–capsule rows, and box rows whose gap does not reach the clearance
            rows = np.concatenate([np.arange(i1), i1 + np.flatnonzero(bound[i1:] < clearance_m + ROUNDING_M)])
            jr, nr = j[rows], n[rows]
        a, b = self._sa[jr], self._sb[jr]
        g = self._gather(X, np.concatenate([self._cap_slots[a].T, self._cap_slots[b].T]), nr)
        cap = segment_distances_m(g[:, 0], g[:, 1], g[:, 2], g[:, 3])
        cap -= self._radius[a] + self._radius[b]
        gap = g[:, 0] - g[:, 2]                                # the balls around the capsules' centres
        np.maximum(cap, np.sqrt(np.einsum("xm,xm->m", gap, gap)) - self._sphere_sum[jr], out=cap)
        if rows is None:
            bound[:i1] = cap[:i1]
            np.maximum(bound[i1:], cap[i1:], out=bound[i1:])
        else:
            bound[:i1] = cap[:i1]
            box_rows = rows[i1:]
            bound[box_rows] = np.maximum(bound[box_rows], cap[i1:])
        bound -= ROUNDING_M
        return bound

    def _box_gaps(self, X: np.ndarray, j: np.ndarray, n: np.ndarray, n_one: int) -> np.ndarray:
        """The largest face-normal gap (M,) of box rows ``j`` in states ``n``: the first ``n_one``
        box–capsule, the rest box–box."""
        a, b = self._sa[j], self._sb[j]
        out = np.empty(len(j))
        if n_one:            # box–capsule: the capsule's reach along each face normal
            g = self._gather(X, np.concatenate([self._box_slots[a[:n_one]].T, self._cap_slots[b[:n_one]].T]),
                             n[:n_one])                               # (xyz, o u1 u2 u3 c w, M1)
            g[:, 4] -= g[:, 0]
            proj = np.abs(np.einsum("xkm,xvm->kvm", g[:, 1:4], g[:, 4:6]))  # (k, centre|half axis, M1)
            gap = proj[:, 0] - proj[:, 1]
            gap -= self._box_reach[j[:n_one]].T                      # half size + capsule radius
            np.maximum(np.maximum(gap[0], gap[1], out=out[:n_one]), gap[2], out=out[:n_one])
        if n_one < len(j):   # box–box: each box (and each one's capsule) along the other's face normals
            a2, b2 = a[n_one:], b[n_one:]
            g = self._gather(X, np.concatenate([self._box_slots[a2].T, self._box_slots[b2].T,
                                                self._cap_slots[a2].T, self._cap_slots[b2].T]), n[n_one:])
            axes = g[:, [1, 2, 3, 5, 6, 7]]                           # (xyz, u1 u2 u3 v1 v2 v3, M2)
            R = np.abs(np.einsum("xkm,xlm->klm", axes[:, :3], axes[:, 3:]))   # |u_k·v_l|
            # along u: the boxes' centres, b's capsule centre and half axis; along v: likewise for a
            vec = np.stack([g[:, 4] - g[:, 0], g[:, 10] - g[:, 0], g[:, 11], g[:, 8] - g[:, 4], g[:, 9]],
                           axis=1)
            proj = np.abs(np.einsum("xkm,xvm->kvm", axes, vec))      # (6 axes, 5 vectors, M2)
            ea, eb = self._box_half[a2].T, self._box_half[b2].T
            gap = np.empty((4, 3, len(a2)))
            gap[0] = proj[:3, 0] - ea - np.einsum("klm,lm->km", R, eb)
            gap[1] = proj[3:, 0] - eb - np.einsum("klm,km->lm", R, ea)
            gap[2] = proj[:3, 1] - proj[:3, 2] - ea - self._radius[b2]
            gap[3] = proj[3:, 3] - proj[3:, 4] - eb - self._radius[a2]
            out[n_one:] = gap.reshape(12, -1).max(axis=0)
        return out

    def _face_gaps(self, X: np.ndarray) -> np.ndarray:
        """(G, faces, N): how far each geom's capsule is beyond each still face (from a box's slab,
        on the open side of a plane)."""
        if not len(self._faces):
            return np.zeros((len(self.capsules), 0, X.shape[2]))
        gap = np.matmul(self._faces, X[self._cap_slots[:, 0]])          # (G, faces, N)
        gap -= self._face_offset[:, None]
        np.abs(gap, out=gap, where=self._face_two_sided)
        gap -= np.abs(np.matmul(self._faces, X[self._cap_slots[:, 1]]))
        gap -= self._face_reach[:, :, None]
        return gap

    @staticmethod
    def _largest(gaps: np.ndarray, other: np.ndarray, faces: np.ndarray) -> np.ndarray:
        """(rows, N): the largest of each row's three face gaps (``gaps[other, faces[:, k]]``)."""
        g = gaps[other[:, None], faces]                                  # (rows, 3, N)
        return np.maximum(np.maximum(g[:, 0], g[:, 1]), g[:, 2])

    def _plane_bounds(self, X: np.ndarray) -> np.ndarray:
        """(plane rows, N): how far the other solid's lowest point is above each plane (its capsule's;
        its box's if higher), in every state."""
        a, b = self._pa, self._pb
        centre, axis = self._cap_slots[:, 0], self._cap_slots[:, 1]
        origin, normal, cb, wb = X[centre[a]], X[axis[a]], X[centre[b]], X[axis[b]]      # (Pp, 3, N)
        bound = (np.einsum("pxn,pxn->pn", normal, cb - origin) - np.abs(np.einsum("pxn,pxn->pn", normal, wb))
                 - self._radius[b][:, None])
        i1, i2 = self._plane_cuts
        if i2 > i1:
            rows = slice(i1, i2)
            ob = X[self._box_slots[b[rows], 0]]
            v = X[self._box_slots[b[rows], 1:]]                                             # (Pb, 3, 3, N)
            nb = normal[rows]
            reach = np.einsum("plxn,pxn->pln", v, nb)
            np.abs(reach, out=reach)
            reach = np.einsum("pln,pl->pn", reach, self._box_half[b[rows]])
            np.maximum(bound[rows], np.einsum("pxn,pxn->pn", nb, ob - origin[rows]) - reach, out=bound[rows])
        bound[i2:] = -np.inf            # two planes cross unless parallel
        bound -= ROUNDING_M
        return bound

    # ------------------------------------------------------------------ public API
    def pair_lower_bounds(self, states: np.ndarray) -> np.ndarray:
        """(N, P): for each state (row of ``states``, (N, D) joint values in the checker's order) and
        each checked pair (``pairs`` order), a lower bound (m) on the pair's true signed distance (the
        best of the sphere, capsule, separating-axis and half-space bounds)."""
        Q = np.atleast_2d(np.asarray(states, float))
        N, P = len(Q), len(self.pairs)
        out = np.full((P, N), -np.inf)
        if not N or not P:
            return out.T
        X = self._world(Q)
        S = len(self._solid_ids)
        if S:
            j = np.repeat(np.arange(S), N)
            n = np.broadcast_to(np.arange(N), (S, N)).reshape(-1)
            out[self._solid_ids] = self._solid_bounds(X, j, n).reshape(S, N)
        if len(self._plane_ids):
            out[self._plane_ids] = self._plane_bounds(X)
        return out.T

    def clear(self, states: np.ndarray, clearance_m: float) -> np.ndarray:
        """(N,) bool: True where every checked pair is proven at least ``clearance_m`` apart (such a
        state is valid; False says nothing)."""
        Q = np.atleast_2d(np.asarray(states, float))
        N = len(Q)
        alive = np.ones(N, bool)
        if not N or not len(self.pairs):
            return alive
        X = self._world(Q)
        scratch, S = self._scratch, len(self._solid_ids)
        gaps = self._face_gaps(X) if len(self._faces) else None
        if len(self._plane_ids):       # 1. the half-spaces (few pairs, all states)
            ok = None
            if self._planes_still:     # the capsules first; a box's own corners if that fails
                ok = self._largest(gaps, self._pb, self._plane_faces) >= clearance_m + ROUNDING_M
            if ok is None or not ok.all():
                ok = self._plane_bounds(X) >= clearance_m
            alive &= ok.all(axis=0)
        if S and alive.any():
            open_ = scratch.get("open", (S, N), bool)
            # 2. the pairs' balls, in float32 with room for its rounding
            rows, B = self._ball_rows, len(self._ball_rows)
            C = scratch.get("centres", (len(self.capsules), 3, N), np.float32)
            np.copyto(C, X[self._cap_slots[:, 0]], casting="same_kind")
            slack = SPHERE_SLACK * (1.0 + float(np.abs(C).max()))
            need = ((self._sphere_sum[rows] + (clearance_m + slack)) ** 2).astype(np.float32)
            d = np.take(C, self._ball_a, axis=0, out=scratch.get("d", (B, 3, N), np.float32))
            d -= np.take(C, self._ball_b, axis=0, out=scratch.get("e", (B, 3, N), np.float32))
            d *= d
            d2 = np.add(d[:, 0], d[:, 1], out=scratch.get("d2", (B, N), np.float32))
            d2 += d[:, 2]
            open_[rows] = d2 < need[:, None]
            # 3. still boxes (a table, a torso): the other's capsule against their faces
            if len(self._fixed_rows):
                fixed = self._largest(gaps, self._sb[self._fixed_rows], self._fixed_faces)
                open_[self._fixed_rows] = fixed < clearance_m + ROUNDING_M
            # 4. all bounds where those cannot decide, in states not yet disproved
            open_ &= alive
            j, n = np.divmod(np.flatnonzero(open_), N)
            if len(j):
                fail = self._solid_bounds(X, j, n, clearance_m) < clearance_m
                alive[n[fail]] = False
        return alive
