"""Clearance checking: is every pair of geometry that may not touch at least ``clearance_m`` apart?

By default a state is first put to the compiled pre-test (:mod:`~stages.arms.planning.bounds`):
proven lower bounds on every pair's distance decide most states without MuJoCo, and
``mj_geomDistance`` measures only the pairs they leave undecided. Without it (``pretest=False``,
or while the kernels compile in a fresh environment) the test below decides every state.

The MuJoCo test runs MuJoCo's own collision pipeline on a private copy of the model in
which every collision geom carries a margin of ``clearance_m / 2``. MuJoCo adds the
two geoms' margins, so a contact is generated for the pairs closer than
``clearance_m`` (not 2×, the classic mistake). Each candidate contact is then
confirmed with ``mj_geomDistance``, so the answer is the true distance.

Two MuJoCo details make that hold (both measured against ``mj_geomDistance`` on every
pair, tests/arms/planning/test_checker.py):

- the broad phase reads ``body_margin`` (the largest geom margin of each body, filled
  in at compile time), so it is refreshed after the margins change; with a stale 0 the
  broad phase drops pairs a few mm apart (a finger 1.7 mm from the torso passed);
- box–box contacts come from ``mjc_BoxBox``, which misreads the distance of *separated*
  boxes by up to several mm (``mj_geomDistance`` uses GJK for them). The collision copy
  therefore grows every box by ``clearance_m / 2`` on each half-size: two boxes closer
  than the clearance then overlap (a cube of half-width r contains the ball of radius r),
  which box–box detects; a box near a capsule or plane is likewise reported. Every
  contact that involves a box is confirmed on the unscaled geometry. Broad-phase
  bounds (``geom_rbound``/``geom_aabb``) stay those of the true geometry plus margin,
  which still contain every pair closer than the clearance.

The fast path does no Python work per contact unless a checked pair is in contact:
joint values go into ``qpos`` as contiguous slices, and the contact list is filtered
with one table look-up over ``contact.geom``.

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

import mujoco
import numpy as np

from core.errors import ConfigError
from hardware.geometry import collision_pairs, geom_name
from stages.arms.planning.bounds import CLEAR, UNDECIDED, GeomBounds
from stages.arms.planning.collision_model import (
    collide_checked_pairs_only,
    contiguous_runs,
    copy_model,
    moved_bodies,
    refresh_body_margins,
)
from stages.arms.planning.held import HeldObject
from stages.arms.planning.horizon import Horizon, build_horizon
from stages.arms.planning.warm_up import kernels_ready, preload

DISTMAX_M = 1.0  # distances are reported up to this; farther pairs report DISTMAX_M
preload()        # the compiled kernels from numba's cache, in the background, long before the first plan


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
    held: an object carried by a gripper (moves with it, checked against everything).
    horizon_m: how far :meth:`clearance_query` reports distances (default clearance + 5 cm).
    bounds: the pre-test of a checker of the same pairs (another clearance), to share rather than
        build again.
    pretest: decide states by the compiled lower bounds first (:mod:`~stages.arms.planning.bounds`),
        MuJoCo only on the pairs they leave undecided; False: MuJoCo's collision pipeline on every
        state (the baseline the benchmarks compare against). While the kernels are still compiling in
        a fresh environment (:mod:`~stages.arms.planning.warm_up`), a new checker uses MuJoCo alone.
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
        horizon_m: float | None = None,
        pretest: bool = True,
        bounds: GeomBounds | None = None,
    ):
        if not clearance_m >= 0:
            raise ValueError(f"clearance_m must be >= 0, got {clearance_m}")
        self.clearance_m = float(clearance_m)
        self.joint_names = tuple(joint_names)
        self.model = copy_model(model)
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
        refresh_body_margins(m)

        def geom_id(g) -> int:   # a name, or an id (the collision matrix's pairs: meshes are often unnamed)
            if isinstance(g, int | np.integer):
                return int(g)
            return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g)

        self._allowed = {frozenset((geom_id(a), geom_id(b))) for a, b in allowed_pairs}
        self.held = held.bind(m) if held is not None else None
        self.pairs = self._checked_pairs()
        self._pair_set = {tuple(p) for p in self.pairs.tolist()}
        # collision copy: boxes grown by clearance/2 (see the module docstring)
        self._collide_model = copy_model(m)
        boxes = self.geoms[m.geom_type[self.geoms] == mujoco.mjtGeom.mjGEOM_BOX]
        self._collide_model.geom_size[boxes] += self.clearance_m / 2.0
        collide_checked_pairs_only(self._collide_model, self.pairs, self._moved)
        # per (geom, geom): 0 = not checked, 1 = checked (a contact is a candidate violation)
        self._kind = np.zeros((m.ngeom, m.ngeom), np.int8)
        if len(self.pairs):
            self._kind[self.pairs[:, 0], self.pairs[:, 1]] = 1
            self._kind[self.pairs[:, 1], self.pairs[:, 0]] = 1
        self._runs = contiguous_runs(self.qpos_adr)
        self._full = int(mujoco.mjtWarning.mjWARN_CONTACTFULL)
        self.horizon_m = float(self.clearance_m + 0.05 if horizon_m is None else horizon_m)
        if not self.horizon_m > self.clearance_m:
            raise ValueError(f"horizon_m must exceed clearance_m ({self.clearance_m}), got {horizon_m}")
        self._horizon = None   # built on the first clearance_query
        self.pretest = bool(pretest) and kernels_ready()   # decided once: a checker never switches paths
        self._bounds = bounds if self.pretest else None   # else built on the first check with the pre-test
        self._local = threading.local()
        self._count_lock = threading.Lock()
        self._tallies: list[_Tally] = []   # one per thread that checked (outlives its MjData)

    @classmethod
    def for_world(cls, world, joint_names: Sequence[str], clearance_m: float, **kw) -> ClearanceChecker:
        """A checker of ``joint_names`` in a scene stage's world: every other joint held at the robot's
        home, the pairs its collision matrix allows (``world.allowed_pairs``) not checked."""
        kw.setdefault("base_qpos", world.home_qpos())
        kw["allowed_pairs"] = (*world.allowed_pairs, *kw.get("allowed_pairs", ()))
        return cls(world.model, joint_names, clearance_m, **kw)

    # ------------------------------------------------------------------ internals
    def _checked_pairs(self) -> np.ndarray:
        """Every pair of collision geoms that may not touch (hardware.geometry's rule) and that the
        configuration's joints can change (a pair of two geoms no joint here moves is constant)."""

        m = self.model
        pairs = collision_pairs(m, self.geoms)
        moved = self._moved = moved_bodies(m, self.qpos_adr)
        if self.held is not None:
            moved.add(self.held.body_id)
        keep = [tuple(p) for p in pairs.tolist() if frozenset(p) not in self._allowed
                and (m.geom_bodyid[p[0]] in moved or m.geom_bodyid[p[1]] in moved)]
        return np.array(keep, dtype=int).reshape(-1, 2)

    def _state(self) -> _ThreadState:
        """This thread's MjData (over the collision copy) and its counters."""
        st = getattr(self._local, "st", None)
        if st is None:
            d = mujoco.MjData(self._collide_model)
            d.qpos[:] = self.base_qpos   # joints outside the configuration never change
            st = self._local.st = _ThreadState(d, d.qpos, d.warning[self._full])
            with self._count_lock:
                self._tallies.append(st.tally)
        return st

    @property
    def data(self):
        """This thread's MjData."""
        return self._state().data

    @property
    def checks(self) -> int:
        """States checked by ``is_valid`` so far, over all threads."""
        with self._count_lock:
            return sum(t.n for t in self._tallies)

    @checks.setter
    def checks(self, value: int) -> None:
        with self._count_lock:
            for t in self._tallies:
                t.n = 0
            if self._tallies:
                self._tallies[0].n = int(value)
            elif value:
                raise ValueError("no thread has checked yet; checks can only be reset to 0")

    def _set(self, q: np.ndarray):
        st = self._state()
        qpos = st.qpos
        for dst, src in self._runs:
            qpos[dst] = q[src]
        mujoco.mj_kinematics(self._collide_model, st.data)
        if self.held is not None:
            self.held.place(self.model, st.data)
            mujoco.mj_kinematics(self._collide_model, st.data)
        return st.data

    def count(self, n: int = 1) -> None:
        """Adds ``n`` states to this thread's check count (states decided elsewhere, e.g. in an edge walk)."""
        self._state().tally.n += n

    @property
    def bounds(self) -> GeomBounds | None:
        """The compiled pre-test over this checker's pairs (None without ``pretest``), built once."""
        if self._bounds is None and self.pretest:
            with self._count_lock:
                if self._bounds is None and self.pretest:
                    try:
                        self._bounds = GeomBounds.for_checker(self)
                    except ConfigError:   # a ball or free joint moves with the configuration
                        self.pretest = False
        return self._bounds

    # ------------------------------------------------------------------ public API
    def is_valid(self, q: np.ndarray) -> bool:
        """True when every checked pair is at least ``clearance_m`` apart."""
        st = getattr(self._local, "st", None) or self._state()
        st.tally.n += 1
        bounds = self._bounds or self.bounds
        if bounds is not None:
            return self._proven_or_measured(q, bounds)
        return self._valid_by_collision(st, q)

    def _proven_or_measured(self, q: np.ndarray, bounds: GeomBounds) -> bool:
        """The pre-test's answer, or MuJoCo's ``mj_geomDistance`` on the pairs it leaves undecided."""
        status, undecided = bounds.decide(q, self.clearance_m)
        if status != UNDECIDED:
            return status == CLEAR
        d = self._set(q)
        c = self.clearance_m
        pairs = self.pairs
        for k in undecided.tolist():
            if mujoco.mj_geomDistance(self.model, d, int(pairs[k, 0]), int(pairs[k, 1]), c, None) < c:
                return False
        return True

    def _valid_by_collision(self, st: _ThreadState, q: np.ndarray) -> bool:
        """MuJoCo's collision pipeline on the collision copy, every candidate contact measured."""
        d, qpos = st.data, st.qpos
        for dst, src in self._runs:
            qpos[dst] = q[src]
        model = self._collide_model
        mujoco.mj_kinematics(model, d)
        if self.held is not None:
            self.held.place(self.model, d)
            mujoco.mj_kinematics(model, d)
        full = st.warn.number
        mujoco.mj_collision(model, d)
        if not d.ncon:
            return True
        if st.warn.number != full:
            return self._valid_brute_force(d)  # contacts were dropped: do not trust the list
        geom = d.contact.geom
        hits = np.flatnonzero(self._kind[geom[:, 0], geom[:, 1]])
        if not hits.size:
            return True
        seen = set()
        for i in hits.tolist():
            g1, g2 = int(geom[i, 0]), int(geom[i, 1])
            if (g1, g2) in seen:
                continue
            seen.add((g1, g2))
            if self._exact(d, g1, g2) < self.clearance_m:
                return False
        return True

    def clearance_query(self, q: np.ndarray) -> tuple[bool, np.ndarray, np.ndarray]:
        """One check that also bounds how far things are: ``(valid, pair_ids, lower_bounds_m)``.

        ``valid`` is ``is_valid(q)``. For every ``i``, checked pair ``pairs[pair_ids[i]]`` is at
        least ``lower_bounds_m[i]`` apart (true distance; a pair may appear several times;
        contacts of pairs that are not checked come as ``pair_id -1`` with bound ``inf``);
        every checked pair not listed is at least ``horizon_m`` apart. Counts as one check.

        It runs the collision pipeline on a third copy with margins of ``horizon_m / 2`` and
        boxes grown by ``horizon_m / 2`` (as the fast test does at the clearance). A contact
        between capsules, spheres or planes carries the true distance; one between such a
        geom and a grown box is a lower bound once ``horizon_m / 2`` is added back (the grown
        box contains the true box's ``horizon_m / 2`` neighbourhood) while they are apart; any
        other contact (overlapping, box–box, meshes, cylinders, ...) is measured with
        ``mj_geomDistance``, as is every bound below the clearance before it decides anything.
        """
        hz = self._horizon or self._build_horizon()
        st = getattr(self._local, "st", None) or self._state()
        st.tally.n += 1
        d = st.hdata
        if d is None:
            d = st.hdata = mujoco.MjData(hz.model)
            d.qpos[:] = self.base_qpos
            st.hwarn = d.warning[self._full]
        qpos = d.qpos
        for dst, src in self._runs:
            qpos[dst] = q[src]
        mujoco.mj_kinematics(hz.model, d)
        if self.held is not None:
            self.held.place(self.model, d)
            mujoco.mj_kinematics(hz.model, d)
        warn = st.hwarn
        full = warn.number
        mujoco.mj_collision(hz.model, d)
        if not d.ncon:
            return True, _NO_PAIRS, _NO_DISTANCES
        if warn.number != full:   # contacts were dropped: the valid answer only, no distances
            return (self._valid_brute_force(d), np.arange(len(self.pairs)),
                    np.full(len(self.pairs), self.clearance_m))
        key = d.contact.geom @ hz.stride          # g1 * ngeom + g2, one look-up per table
        pid = hz.pair_id.take(key)
        dist = d.contact.dist
        bound = dist + hz.offset.take(key)
        inside = dist < 0   # penetration depths of grown boxes are no bound: measure those
        if inside.any():
            bound[inside & (pid >= 0)] = -np.inf
        low = np.flatnonzero(bound < self.clearance_m)
        valid = True
        if low.size:
            exact: dict[int, float] = {}
            for i in low.tolist():
                k = int(pid[i])
                if k not in exact:
                    a, b = self.pairs[k]
                    exact[k] = e = self._exact(d, int(a), int(b))
                    valid = valid and e >= self.clearance_m
                bound[i] = exact[k]
        return valid, pid, bound

    def pair_joint_masks(self) -> np.ndarray:
        """(P, D) bool: configuration joint ``j`` moves exactly one geom of ``pairs[p]`` (a joint
        above both moves them together; a pair with no such joint keeps its distance)."""
        m = self.model
        joint_body = {int(m.jnt_qposadr[j]): int(m.jnt_bodyid[j]) for j in range(m.njnt)}
        bodies = [joint_body[int(a)] for a in self.qpos_adr]
        above = np.zeros((m.nbody, len(bodies)), bool)   # above[b, k]: joint k is on b's chain
        for b in range(m.nbody):
            chain, x = {b}, b
            while x != 0:
                x = int(m.body_parentid[x])
                chain.add(x)
            above[b] = [jb in chain for jb in bodies]
        if self.held is not None:
            above[self.held.body_id] = above[self.held.attach_id]
        pairs = self.pairs.reshape(-1, 2)
        return above[m.geom_bodyid[pairs[:, 0]]] ^ above[m.geom_bodyid[pairs[:, 1]]]

    def _build_horizon(self) -> Horizon:
        """The horizon copy and its tables (once, shared by all threads)."""
        with self._count_lock:
            if self._horizon is None:
                self._horizon = build_horizon(self)
            return self._horizon

    def _valid_brute_force(self, d) -> bool:
        return all(mujoco.mj_geomDistance(self.model, d, int(a), int(b), self.clearance_m, None)
                   >= self.clearance_m for a, b in self.pairs)

    def _exact(self, d, g1: int, g2: int) -> float:
        return float(mujoco.mj_geomDistance(self.model, d, g1, g2, DISTMAX_M, None))

    def proximity(self, q: np.ndarray) -> Proximity:
        """The true smallest distance over all checked pairs (capped at DISTMAX_M) and its pair.

        With the pre-test, pairs are measured in the order of their lower bounds and the rest skipped
        once a bound (apart, so at most the pair's distance) reaches the best distance found; a pair
        whose bound is negative is always measured (its containers overlap: the bound is no bound on
        how deep it goes)."""
        d = self._set(q)
        best, pair = DISTMAX_M, (-1, -1)
        bounds = self._bounds or self.bounds
        order = range(len(self.pairs))
        low = None
        if bounds is not None:
            low = bounds.pair_lower_bounds(q)[0]
            order = np.argsort(low, kind="stable").tolist()
        for k in order:
            if low is not None and low[k] >= max(best, 0.0):
                break
            g1, g2 = self.pairs[k]
            dist = self._exact(d, g1, g2)
            if dist < best:
                best, pair = dist, (g1, g2)
        return Proximity(best, *(self.geom_name(g) if g >= 0 else "" for g in pair))

    def pair_distances(self, q: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """True distances of the given (P, 2) geom pairs at ``q``."""
        d = self._set(q)
        return np.array([self._exact(d, int(a), int(b)) for a, b in pairs])

    def geom_name(self, g: int) -> str:
        return geom_name(self.model, g)


class _ThreadState:
    """One thread's MjData, its qpos view, its contact-overflow warning and its check tally
    (and its MjData over the horizon copy, once :meth:`ClearanceChecker.clearance_query` ran)."""

    __slots__ = ("data", "qpos", "warn", "tally", "hdata", "hwarn")

    def __init__(self, data, qpos, warn):
        self.data, self.qpos, self.warn, self.tally = data, qpos, warn, _Tally()
        self.hdata = self.hwarn = None


class _Tally:
    """A thread's check count; the checker keeps it after the thread (and its MjData) is gone."""

    __slots__ = ("n",)

    def __init__(self):
        self.n = 0


_NO_PAIRS = np.zeros(0, np.int32)
_NO_DISTANCES = np.zeros(0)
_NO_PAIRS.setflags(write=False)
_NO_DISTANCES.setflags(write=False)
