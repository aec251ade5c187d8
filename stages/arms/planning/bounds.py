"""The clearance checker's pre-test: proven lower bounds on every checked pair's distance, computed in
compiled code (:mod:`~stages.arms.planning.kernels`), so most states are decided without MuJoCo.

For each state and each pair of ``ClearanceChecker.pairs`` the kernels give a number (m) at most the
true distance ``mj_geomDistance`` reports whenever the pair is apart. A state whose every bound
reaches the clearance is valid; a pair whose bound is its *exact* distance (below) and below the
clearance makes the state invalid; every other pair below the clearance goes to MuJoCo. Why every
bound is a lower bound:

- **Containment.** Every geom lies inside simpler solids built from the compiled model
  (:mod:`~stages.arms.planning.bounding_volumes`): the union of a few capsules (a sphere or capsule
  is its own; a box, cylinder or ellipsoid lies in one along its longest axis; a mesh's convex hull,
  which is what MuJoCo collides, in up to four capsules fitted to slabs of it; any other geom in the
  ball of ``geom_rbound``), for boxes, cylinders, ellipsoids and meshes also a box, and a ball
  around all of it. If A ⊂ ∪ A_i and B ⊂ ∪ B_j, A and B are at least min_ij d(A_i, B_j) apart,
  and at least as far as any two containers of theirs.
- **Triangle inequality.** Points of two capsules (segments S1, S2, radii r1, r2) lie within r1
  and r2 of S1 and S2, so the capsules are at least ``|S1 S2| - r1 - r2`` apart (the segments'
  distance from Ericson's clamped closest points). A ball is a capsule of zero length.
- **Separating axes.** A box of half sizes e lies in the slab ``|u_k·(x - o)| <= e_k`` along each
  of its axes u_k; a solid whose extent along u_k ends ``g`` beyond the slab is at least ``g`` away.
  A pair with a box takes the largest such gap over its faces (both boxes' faces for two boxes).
  A plane is its half-space: the bound is the other solid's lowest point above it.

Exact pairs: two spheres or capsules (their capsules *are* the geoms: the bound is the segments'
distance less the radii, MuJoCo's own formula), a plane and a sphere, capsule or box (the lowest
point). Such a pair more than ``EXACT_TOL_M`` below the clearance proves the state invalid with no
MuJoCo call; every other undecided pair is measured by ``mj_geomDistance``.

Poses: the kernels replay ``mj_kinematics`` for hinge and slide joints from
:class:`~stages.arms.planning.geom_kinematics.GeomKinematics`' frames (MuJoCo's to 1e-9 in the
tests). Every bound is lowered by ``ROUNDING_M``. The tests compare the bounds with
``mj_geomDistance`` on random states of every shipped robot, a held peg included.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import mujoco
import numpy as np

from stages.arms.planning import kernels
from stages.arms.planning.bounding_volumes import bounding_box, bounding_capsules
from stages.arms.planning.geom_kinematics import GeomKinematics
from stages.arms.planning.kernels import CLEAR, PLANE, ROUND, ROUNDING_M, UNDECIDED, VIOLATED

__all__ = ["CLEAR", "GeomBounds", "ROUNDING_M", "UNDECIDED", "VIOLATED"]

_BOX = kernels.BOX


class GeomBounds:
    """Lower bounds on the distance of every checked pair of a :class:`ClearanceChecker`, compiled.

    ``kinematics`` poses the geoms; ``pairs`` (P, 2) are geom ids (the checker's, in its order);
    ``capsules`` per geom of ``kinematics.geoms`` a list of :class:`BoundingCapsule` whose union
    holds it (None for a plane), ``boxes`` a :class:`BoundingBox` or None; ``exact`` per geom: its
    capsules are the geom itself (a sphere, a capsule) or, for a plane partner, its box is (a box).
    Thread-safe: the packed model is read-only and the kernels release the GIL.
    """

    def __init__(self, kinematics: GeomKinematics, pairs: np.ndarray, capsules, boxes, exact=None):
        self.kinematics = kinematics
        self.pairs = np.asarray(pairs, int).reshape(-1, 2)
        self.capsules = tuple(None if c is None else tuple(c) for c in capsules)
        self.boxes = tuple(boxes)
        G = len(kinematics.geoms)
        exact = np.zeros(G, bool) if exact is None else np.asarray(exact, bool)
        slot = {int(g): i for i, g in enumerate(kinematics.geoms.tolist())}
        plane = np.array([c is None for c in self.capsules], bool)
        kind = np.where(plane, PLANE, np.where([b is not None for b in self.boxes], _BOX, ROUND))
        local = kinematics.geom_local(np.arange(G))               # geom frame -> kinematic frame
        cap_a, cap_b, cap_r, cap_frame, cap_start = [], [], [], [], [0]
        ball_c, ball_r = np.zeros((G, 3)), np.full(G, np.inf)
        box_o, box_ax, box_e = np.zeros((G, 3)), np.tile(np.eye(3), (G, 1, 1)), np.zeros((G, 3))
        frame = kinematics.geom_frames()
        for i in range(G):
            R, t = local[i, :3, :3], local[i, :3, 3]
            if kind[i] == PLANE:
                box_o[i], box_ax[i] = t, R
            else:
                pts = []
                for c in self.capsules[i]:
                    cap_a.append(R @ c.a_m + t)
                    cap_b.append(R @ c.b_m + t)
                    cap_r.append(c.radius_m)
                    cap_frame.append(frame[i])
                    pts += [(cap_a[-1], c.radius_m), (cap_b[-1], c.radius_m)]
                lo = np.min([p for p, _ in pts], axis=0)
                hi = np.max([p for p, _ in pts], axis=0)
                ball_c[i] = (lo + hi) / 2.0
                ball_r[i] = max(np.linalg.norm(p - ball_c[i]) + r for p, r in pts)
                if kind[i] == _BOX:
                    bx = self.boxes[i]
                    box_o[i], box_ax[i], box_e[i] = R @ bx.center_m + t, R, bx.half_m
                    r_box = float(np.linalg.norm(bx.half_m))
                    if r_box < ball_r[i]:
                        ball_c[i], ball_r[i] = box_o[i], r_box
            cap_start.append(len(cap_a))
        # pairs oriented so the first geom's container is the richer (plane, box, capsules)
        ia = np.array([slot[int(g)] for g in self.pairs[:, 0]], int)
        ib = np.array([slot[int(g)] for g in self.pairs[:, 1]], int)
        swap = kind[ia] < kind[ib]
        ia, ib = np.where(swap, ib, ia), np.where(swap, ia, ib)
        pair_exact = np.where(kind[ia] == PLANE, (kind[ib] != PLANE) & exact[ib],
                              (kind[ia] == ROUND) & (kind[ib] == ROUND) & exact[ia] & exact[ib])
        self.exact_pairs = pair_exact.astype(bool)
        # the kernels' order: by the kinds of the two containers (capsules, box–capsules, box–box, then
        # the pairs with a plane): a run of each, so the branches predict
        order = np.argsort(kind[ia] * 3 + kind[ib], kind="stable")
        ia, ib = ia[order], ib[order]
        floats = dict(B=kinematics.frame_basis, q0=kinematics.frame_qpos0, cap_a=cap_a, cap_b=cap_b,
                      cap_r=cap_r, ball_c=ball_c, box_o=box_o, box_ax=box_ax, box_e=box_e,
                      rsum=np.where(kind[ia] == PLANE, ball_r[ib], ball_r[ia] + ball_r[ib]))
        ints = dict(parent=kinematics.frame_parent, qidx=kinematics.frame_joint,
                    hinge=kinematics.frame_hinge, cap_frame=cap_frame, cap_start=cap_start,
                    geom_frame=frame, kind=kind, pair_a=ia, pair_b=ib, pair_exact=pair_exact[order],
                    pair_index=order)
        self.pieces = np.diff(cap_start)
        self._fd, self._ix = _pack(kinematics.n_frames, len(cap_r), G, int((kind[ia] != PLANE).sum()),
                                   floats, ints)
        self._scratch = threading.local()

    @classmethod
    def for_checker(cls, checker) -> GeomBounds:
        """Bounds for ``checker.pairs``, posed as ``checker`` poses them (its base, its held object)."""
        model = checker.model
        kin = GeomKinematics.for_checker(checker)
        T = mujoco.mjtGeom
        types = model.geom_type[kin.geoms]
        exact = np.isin(types, [T.mjGEOM_SPHERE, T.mjGEOM_CAPSULE, T.mjGEOM_BOX])
        return cls(kin, checker.pairs, [bounding_capsules(model, int(g)) for g in kin.geoms],
                   [bounding_box(model, int(g)) for g in kin.geoms], exact)

    # ------------------------------------------------------------------ single states
    def _undecided(self) -> np.ndarray:
        """This thread's buffer for decide: the undecided pairs, then the pair to try first."""
        buf = getattr(self._scratch, "pairs", None)
        if buf is None:
            buf = self._scratch.pairs = np.zeros(len(self.pairs) + 1, np.int64)
        return buf

    def decide(self, q: np.ndarray, clearance_m: float) -> tuple[int, np.ndarray]:
        """(CLEAR, VIOLATED or UNDECIDED, the undecided pairs' indices) for one state."""
        buf = self._undecided()
        q = _arg(q)
        status, n = kernels.decide(q, float(clearance_m), self._fd, self._ix, buf)
        return status, buf[:n]

    def proven_share(self, states: np.ndarray, valid: np.ndarray, clearance_m: float) -> float:
        """The share of the ``valid`` ones of ``states`` that the bounds prove (1 when none is valid):
        where it is small (a pair always closer than its containers allow, as Fetch's torso and shoulder
        meshes), walks that lean on the bounds' bubbles are not worth it."""
        valid = np.asarray(valid, bool)
        return float(self.clear(np.asarray(states)[valid], clearance_m).mean()) if valid.any() else 1.0

    # ------------------------------------------------------------------ many states
    def pair_lower_bounds(self, states: np.ndarray) -> np.ndarray:
        """(N, P): for each state and each checked pair (``pairs`` order), a lower bound (m) on the
        pair's true distance (every bound in full; -inf for two planes)."""
        Q = _arg(np.atleast_2d(states))
        out = np.empty((len(Q), len(self.pairs)))
        kernels.lower_bounds(Q, self._fd, self._ix, out)
        return out

    def classify(self, states: np.ndarray, clearance_m: float, threads: int = 1,
                 pool: ThreadPoolExecutor | None = None) -> np.ndarray:
        """(N,) int8: CLEAR, VIOLATED or UNDECIDED per state, spread over ``threads`` threads (a block
        each; ``pool`` runs the extra ones); after the first VIOLATED state every thread stops and the
        states not reached keep -1."""
        Q = _arg(np.atleast_2d(states))
        status = np.full(len(Q), -1, np.int8)
        stop = np.zeros(1, np.int8)
        lanes = max(1, min(threads, len(Q) // 8))
        clearance_m = float(clearance_m)
        if lanes == 1 or pool is None:
            kernels.classify(Q, np.arange(len(Q)), clearance_m, self._fd, self._ix, stop, status)
            return status
        # one contiguous block per thread (interleaved states share cache lines of ``status``)
        blocks = np.array_split(np.arange(len(Q)), lanes)
        futures = [pool.submit(kernels.classify, Q, block, clearance_m, self._fd, self._ix, stop, status)
                   for block in blocks[1:]]
        kernels.classify(Q, blocks[0], clearance_m, self._fd, self._ix, stop, status)
        for f in futures:
            f.result()
        return status

    def clear(self, states: np.ndarray, clearance_m: float) -> np.ndarray:
        """(N,) bool: True where every checked pair is proven at least ``clearance_m`` apart."""
        return np.array([self.decide(q, clearance_m)[0] == CLEAR for q in np.atleast_2d(states)], bool)

    def edge_walk(self, a, b, n: int, clearance_m: float, weights: np.ndarray,
                  stop_after: int = 0) -> tuple[int, np.ndarray, int]:
        """The edge a → b in ``n`` steps (:func:`kernels.edge_walk`): (VIOLATED, [i], posed) at a state
        proven too close, else (CLEAR or UNDECIDED, the undecided states' indices coarse to fine, posed);
        ``stop_after`` > 0 stops the walk at that many undecided states."""
        buf = np.empty(n + 1, np.int64)
        status, k = kernels.edge_walk(_arg(a), _arg(b), int(n), float(clearance_m), _arg(weights),
                                      int(stop_after), self._fd, self._ix, buf)
        posed = int(buf[-1])
        return (status, np.array([k]), posed) if status == VIOLATED else (status, buf[:k].copy(), posed)


def _arg(x) -> np.ndarray:
    """An array as the kernels were compiled for: float64, C-contiguous, writeable (numba types a
    read-only array, e.g. a JointPath's waypoint, apart: another ~5 s compile)."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous and x.flags.writeable:
        return x                              # the common case: 0.6 µs against np.require's 2
    return np.array(x, np.float64, order="C")


def _pack(K: int, S: int, G: int, NS: int, floats: dict, ints: dict) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' two flat arrays: every float section in ``F_SECTIONS`` order, every int section in
    ``I_SECTIONS`` order, after a header of (K, S, G, NS, the float offsets, the int offsets)."""
    f_parts = [np.asarray(floats[k], float).reshape(-1) for k in kernels.F_SECTIONS]
    i_parts = [np.asarray(ints[k]).astype(np.int64).reshape(-1) for k in kernels.I_SECTIONS]
    f_off = np.concatenate([[0], np.cumsum([len(x) for x in f_parts])])
    header = 4 + len(f_off) + len(i_parts) + 1
    i_off = header + np.concatenate([[0], np.cumsum([len(x) for x in i_parts])])
    ix = np.concatenate([[K, S, G, NS], f_off, i_off, *i_parts]).astype(np.int64)
    fd = np.concatenate(f_parts) if f_parts else np.zeros(0)
    return np.ascontiguousarray(fd), np.ascontiguousarray(ix)
