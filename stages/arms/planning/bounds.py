"""A cheap pre-test for the clearance checker: proven lower bounds on every checked pair's distance,
for many states at once, in numpy (no call into MuJoCo's collision pipeline).

For each state and each pair of ``ClearanceChecker.pairs``, :meth:`GeomBounds.pair_lower_bounds`
gives a number (m) at most the true signed distance ``mj_geomDistance`` reports. A state whose
every bound reaches the clearance is valid (:meth:`GeomBounds.clear`); the others go to the exact
check. Why every bound is a lower bound:

- **Containment.** Every geom lies inside simpler solids built from the compiled model: a capsule
  (:mod:`~stages.arms.planning.bounding_volumes`: a sphere or capsule is its own; a box, cylinder or
  ellipsoid lies in one along its longest axis; a mesh in one fitted to its vertices; any other geom
  in the ball of ``geom_rbound`` around its frame) and, for boxes, cylinders, ellipsoids and meshes,
  a box. A mesh's convex hull, which is what MuJoCo collides, lies in any
  convex solid that holds its vertices (``mesh_vert``, kept in the geom's frame). If A ⊂ A' and B ⊂
  B', A and B are at least as far apart as A' and B'; when they overlap, a translation that
  separates A' and B' also separates A and B, so A and B penetrate no deeper. A bound on the
  containers' signed distance is therefore one on the geoms'.
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
every shipped robot. Poses come from :class:`~stages.arms.planning.geom_kinematics.GeomKinematics`,
MuJoCo's ``mj_kinematics`` for hinge and slide joints replayed in numpy for all states at once
(MuJoCo's to 1e-9 in the tests). Every bound is lowered by ``ROUNDING_M`` for float64 rounding.

Speed: :meth:`GeomBounds.clear` poses every geom once for all states (one small matrix product
per level of the kinematic tree), then proves what it can densely: planes and boxes that stand
still (a floor, a table, a torso) against every geom's capsule, the other pairs by their two balls
(float32, with room for its rounding: ``SPHERE_SLACK``); only the (pair, state) entries those leave
open, in states not yet disproved, get the capsule and box bounds.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from stages.arms.planning.bounding_volumes import bounding_box, bounding_capsule
from stages.arms.planning.geom_kinematics import GeomKinematics
from stages.arms.planning.segment_distance import segment_distances_m

ROUNDING_M = 1e-10
"""Subtracted from every bound: float64 rounding of poses and distances (about 1e-15 m) with room."""

SPHERE_SLACK = 4e-6
"""The float32 ball test proves a pair only ``SPHERE_SLACK * (1 + largest coordinate, m)`` beyond
the clearance: float32 rounding of coordinates, distances and threshold stays below a quarter of it
(about 9e-7 of the largest coordinate)."""


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
