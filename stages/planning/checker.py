"""Clearance checking: is every pair of geometry that may not touch at least ``clearance_m`` apart?

The fast test runs MuJoCo's own collision pipeline on a private copy of the model in
which every collision geom carries a margin of ``clearance_m / 2``. MuJoCo adds the
two geoms' margins, so a contact is generated exactly for the pairs closer than
``clearance_m`` (not 2×, the classic mistake). Each candidate contact is then
confirmed with ``mj_geomDistance``, so the answer is the true distance.

Which pairs may not touch is :func:`hardware.geometry.collision_pairs`: MuJoCo's own
filters on the collision geoms (``contype``/``conaffinity``, weld groups, parent–child,
``<exclude>``) plus adjacent links on a static base. MuJoCo tests a superset of those
pairs; contacts of other pairs are ignored.
That leaves arm–arm, arm–self (non-adjacent links), arm–scene and, with a held
object, object–everything but the gripper holding it (``allowed_pairs``).

Thread safety: the model copy is read-only after construction and every thread
gets its own ``MjData`` (MuJoCo releases the GIL, so threads check in parallel).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

DISTMAX_M = 1.0  # distances are reported up to this; farther pairs report DISTMAX_M


@dataclass(frozen=True)
class HeldObject:
    """A free body carried by a gripper: its pose follows ``attach_body`` at a fixed offset.

    ``T_attach_obj`` is the object's pose in the attaching body's frame (4×4), measured
    at the grasp. The checker moves the object with the arm, so the object is checked
    against everything but ``allowed_pairs`` (its fingers).
    """

    body: str
    attach_body: str
    T_attach_obj: np.ndarray
    body_id: int = -1
    attach_id: int = -1
    qpos_adr: int = -1

    def bind(self, model) -> HeldObject:
        import mujoco

        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, self.body)
        a = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, self.attach_body)
        if b < 0 or a < 0 or model.body_jntnum[b] != 1 or \
                model.jnt_type[model.body_jntadr[b]] != mujoco.mjtJoint.mjJNT_FREE:
            raise ValueError(f"held object {self.body!r} must be a free body and {self.attach_body!r} a body")
        return HeldObject(self.body, self.attach_body, np.asarray(self.T_attach_obj, float), b, a,
                          int(model.jnt_qposadr[model.body_jntadr[b]]))

    def place(self, model, data) -> None:
        import mujoco

        T = np.eye(4)
        T[:3, :3] = data.xmat[self.attach_id].reshape(3, 3)
        T[:3, 3] = data.xpos[self.attach_id]
        W = T @ self.T_attach_obj
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, W[:3, :3].reshape(-1))
        data.qpos[self.qpos_adr:self.qpos_adr + 3] = W[:3, 3]
        data.qpos[self.qpos_adr + 3:self.qpos_adr + 7] = quat


@dataclass(frozen=True)
class Proximity:
    """The closest pair of geometry at one configuration."""

    distance_m: float
    geom1: str
    geom2: str


class ClearanceChecker:
    """Checks configurations of a set of joints for clearance against everything else.

    Parameters
    ----------
    model: the compiled scene (not modified; a private copy is made).
    joint_names: the configuration's joints, in order (e.g. both arms' 14 joints).
    clearance_m: minimum true distance between geometry that may not touch.
    base_qpos: positions of every other joint (held still), default ``qpos0``.
    disabled_bodies: bodies whose geoms are ignored entirely (e.g. the other arm
        for the independent baseline).
    allowed_pairs: extra (geom, geom) name pairs that may touch (a grasped object
        and its fingers).
    """

    def __init__(
        self,
        model,
        joint_names: Sequence[str],
        clearance_m: float,
        base_qpos: np.ndarray | None = None,
        disabled_bodies: Iterable[str] = (),
        allowed_pairs: Iterable[tuple[str, str]] = (),
        held: HeldObject | None = None,
    ):
        import mujoco

        if not clearance_m >= 0:
            raise ValueError(f"clearance_m must be >= 0, got {clearance_m}")
        self.clearance_m = float(clearance_m)
        self.joint_names = tuple(joint_names)
        self.model = _copy_model(model)
        m = self.model
        self.qpos_adr = np.array(
            [m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in joint_names]
        )
        self.base_qpos = np.array(m.qpos0 if base_qpos is None else base_qpos, dtype=float)
        disabled = {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in disabled_bodies}
        collide = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
        for g in range(m.ngeom):
            if m.geom_bodyid[g] in disabled:
                collide[g] = False
                m.geom_contype[g] = m.geom_conaffinity[g] = 0
        self.geoms = np.flatnonzero(collide)
        m.geom_margin[:] = 0.0
        m.geom_margin[self.geoms] = self.clearance_m / 2.0
        m.geom_gap[:] = 0.0
        self._allowed = {
            frozenset((mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, a),
                       mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, b)))
            for a, b in allowed_pairs
        }
        self.held = held.bind(m) if held is not None else None
        self.pairs = self._checked_pairs()
        self._pair_set = {tuple(p) for p in self.pairs.tolist()}
        self._local = threading.local()
        self._count_lock = threading.Lock()
        self.checks = 0

    # ------------------------------------------------------------------ internals
    def _checked_pairs(self) -> np.ndarray:
        """Every pair of collision geoms that may not touch (hardware.geometry's rule) and that the
        configuration's joints can change (a pair of two geoms no joint here moves is constant)."""
        from hardware.geometry import collision_pairs

        m = self.model
        pairs = collision_pairs(m, self.geoms)
        moved = _moved_bodies(m, self.qpos_adr)
        if self.held is not None:
            moved.add(self.held.body_id)
        keep = [tuple(p) for p in pairs.tolist() if frozenset(p) not in self._allowed
                and (m.geom_bodyid[p[0]] in moved or m.geom_bodyid[p[1]] in moved)]
        return np.array(keep, dtype=int).reshape(-1, 2)

    @property
    def data(self):
        """This thread's MjData."""
        d = getattr(self._local, "data", None)
        if d is None:
            import mujoco

            d = self._local.data = mujoco.MjData(self.model)
        return d

    def _set(self, q: np.ndarray):
        import mujoco

        d = self.data
        d.qpos[:] = self.base_qpos
        d.qpos[self.qpos_adr] = q
        mujoco.mj_kinematics(self.model, d)
        if self.held is not None:
            self.held.place(self.model, d)
            mujoco.mj_kinematics(self.model, d)
        return d

    def _count(self, n: int = 1) -> None:
        with self._count_lock:
            self.checks += n

    # ------------------------------------------------------------------ public API
    def is_valid(self, q: np.ndarray) -> bool:
        """True when every checked pair is at least ``clearance_m`` apart."""
        import mujoco

        self._count()
        d = self._set(q)
        full = d.warning[int(mujoco.mjtWarning.mjWARN_CONTACTFULL)].number
        mujoco.mj_collision(self.model, d)
        if d.warning[int(mujoco.mjtWarning.mjWARN_CONTACTFULL)].number != full:
            return self._valid_brute_force(d)  # contacts were dropped: do not trust the list
        for c in d.contact[: d.ncon]:
            g1, g2 = sorted((int(c.geom[0]), int(c.geom[1])))
            if (g1, g2) not in self._pair_set:
                continue
            if c.dist < self.clearance_m and self._exact(d, g1, g2) < self.clearance_m:
                return False
        return True

    def _valid_brute_force(self, d) -> bool:
        import mujoco

        return all(mujoco.mj_geomDistance(self.model, d, int(a), int(b), self.clearance_m, None)
                   >= self.clearance_m for a, b in self.pairs)

    def _exact(self, d, g1: int, g2: int) -> float:
        import mujoco

        return float(mujoco.mj_geomDistance(self.model, d, g1, g2, DISTMAX_M, None))

    def proximity(self, q: np.ndarray) -> Proximity:
        """The true smallest distance over all checked pairs (capped at DISTMAX_M) and its pair."""
        import mujoco

        d = self._set(q)
        best, pair = DISTMAX_M, (-1, -1)
        for g1, g2 in self.pairs:
            dist = float(mujoco.mj_geomDistance(self.model, d, g1, g2, DISTMAX_M, None))
            if dist < best:
                best, pair = dist, (g1, g2)
        names = tuple(
            mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom{g}" if g >= 0 else ""
            for g in pair
        )
        return Proximity(best, *names)

    def pair_distances(self, q: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """True distances of the given (P, 2) geom pairs at ``q``."""
        import mujoco

        d = self._set(q)
        return np.array([mujoco.mj_geomDistance(self.model, d, int(a), int(b), DISTMAX_M, None)
                         for a, b in pairs])

    def geom_name(self, g: int) -> str:
        import mujoco

        return mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, int(g)) or f"geom{g}"


def _copy_model(model):
    import copy

    return copy.deepcopy(model)


def _moved_bodies(model, qpos_adr) -> set[int]:
    """Bodies moved by the joints at ``qpos_adr`` (the joints' bodies and everything below them)."""
    roots = {int(model.jnt_bodyid[j]) for j in range(model.njnt) if model.jnt_qposadr[j] in set(qpos_adr)}
    moved = set()
    for b in range(model.nbody):
        a = b
        while a != 0 and a not in roots:
            a = int(model.body_parentid[a])
        if a in roots:
            moved.add(b)
    return moved
