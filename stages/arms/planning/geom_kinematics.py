"""MuJoCo's ``mj_kinematics`` for hinge and slide joints, replayed in numpy for many states at once.

:class:`GeomKinematics` poses the collision geoms a checker needs for an (N, D) array of
configurations: one small matrix product per level of the kinematic tree across all states,
joints at ``qpos - qpos0`` about their anchors and axes, every joint outside the configuration held
at ``base_qpos``, a held object at its attaching body's pose times ``T_attach_obj``. A ball or free
joint on a moved body is refused (``ConfigError``). The tests hold its poses to MuJoCo's to 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ConfigError


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


def z_axis_frame(axis) -> np.ndarray:
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
                A = z_axis_frame(model.jnt_axis[j])
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
        # the compiled kernels' copy: frame k = frame parent[k] @ (B0 + c1·B1 + c2·B2), parents first
        self.frame_parent, self.frame_basis, self.frame_hinge = sorted_parents, B, is_hinge
        self.frame_joint, self.frame_qpos0 = self._index, self._qpos0
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

    def geom_frames(self) -> np.ndarray:
        """(G,): each geom's kinematic frame (``n_frames``: the world, a geom no joint moves)."""
        return self._geom_frame.copy()

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
