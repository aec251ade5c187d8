"""Edge checking with a guaranteed resolution.

Moving joint j by Δq_j moves any point of the geometry below it by at most
r_j·|Δq_j|, where r_j bounds the distance from joint j's axis to that geometry
(chord ≤ arc; slide joints move points by |Δq_j|). By the triangle inequality a
straight joint-space edge moves no point of any geometry by more than
Σ_j r_j·|Δq_j|. Checking states spaced so that this sum is at most ``step_m``
means no geometry moves more than ``step_m`` between two checked states: with
``step_m`` at most the clearance, nothing can pass through anything between checks.

``r_j`` is bounded from the kinematic tree alone (sum of body offsets down to each
geom, plus the geom's bounding radius), so the bound holds in every configuration.

**Clearance bubbles** (fewer checks, same guarantee). The distance between two geoms
changes only through the joints that move one of them and not the other (a joint above
both moves them rigidly together), so along an edge it drops by at most
``w_p·|Δq|`` with ``w_p`` = ``r`` masked to those joints. A state where the checker bounds
every pair's distance (:meth:`ClearanceChecker.clearance_query`: pair ``p`` at least
``d_p``, all others at least ``horizon_m``) therefore proves every state within
``min_p (d_p − clearance)/w_p·|Δq|`` of it valid without checking it. The edge check
walks the same states as before — spaced ``step_m`` of geometry motion apart, in
bisection order — but skips those a bubble has already proven valid. Every one of those
states is valid at the clearance, checked or proven, exactly as before.
"""

from __future__ import annotations

import functools
import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from stages.arms.planning.bounds import CLEAR, UNDECIDED

MIN_PROVEN_SHARE = 0.2   # the compiled walk where the bounds prove at least this share of valid states


def geom_reach(model, joint_names: Sequence[str], held=None) -> np.ndarray:
    """(ngeom, D): how far (m) any point of geom g can be from joint k's axis when joint k moves it
    (0 when it does not): the anchor's offset, the body offsets down the chain, the geom's offset and
    its bounding radius; 1 for a slide joint (a point moves by exactly the slide). ``held`` (a
    :class:`~stages.arms.planning.held.HeldObject`) counts the carried object's geoms as part of the
    body holding it (at its offset)."""
    import mujoco

    if held is not None and held.body_id < 0:
        held = held.bind(model)
    # below[b, a]: the body offsets from body b up to its ancestor a (a itself excluded), NaN if a is not
    # b or above it
    nb = model.nbody
    offset = np.linalg.norm(model.body_pos, axis=1)
    below = np.full((nb, nb), np.nan)
    for b in range(nb):
        x, acc = b, 0.0
        while True:
            below[b, x] = acc
            if x == 0:
                break
            acc += offset[x]
            x = int(model.body_parentid[x])
    body = model.geom_bodyid.copy()
    own = np.linalg.norm(model.geom_pos, axis=1) + model.geom_rbound
    if held is not None:                      # it rides on the hand, at its grasp offset
        carried = body == held.body_id
        own[carried] += float(np.linalg.norm(np.asarray(held.T_attach_obj, float)[:3, 3]))
        body[carried] = held.attach_id
    out = np.zeros((model.ngeom, len(joint_names)))
    for k, name in enumerate(joint_names):
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        chain = below[body, int(model.jnt_bodyid[j])]
        moved = ~np.isnan(chain)
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE:
            out[moved, k] = 1.0
        else:
            out[moved, k] = own[moved] + chain[moved] + float(np.linalg.norm(model.jnt_pos[j]))
    return out


def joint_radii(model, joint_names: Sequence[str], held=None) -> np.ndarray:
    """Per joint, an upper bound on how far (m) any geometry moved by it is from its axis (the largest
    :func:`geom_reach` of the joint)."""
    return geom_reach(model, joint_names, held).max(axis=0, initial=0.0)


def pair_motion_weights(checker, reach: np.ndarray) -> np.ndarray:
    """(P, D): for each of ``checker.pairs``, how fast its distance can change per unit of each joint:
    the moved geom's :func:`geom_reach` for the configuration's joints that move one geom of the pair
    and not the other (only those change the pair's distance)."""
    pairs = checker.pairs.reshape(-1, 2)
    return checker.pair_joint_masks() * (reach[pairs[:, 0]] + reach[pairs[:, 1]])


def _proven_share(checker, bounds, samples: int = 64) -> float:
    """The share of valid states, uniform over the joints' ranges (a fixed seed), the bounds prove."""
    m = checker.model
    lo, hi = np.full(len(checker.qpos_adr), -np.pi), np.full(len(checker.qpos_adr), np.pi)
    for k, adr in enumerate(checker.qpos_adr):
        j = int(np.flatnonzero(m.jnt_qposadr == adr)[0])
        if m.jnt_limited[j]:
            lo[k], hi[k] = m.jnt_range[j]
    states = np.random.default_rng(0).uniform(lo, hi, (samples, len(lo)))
    return bounds.proven_share(states, [checker.is_valid(q) for q in states], checker.clearance_m)


def van_der_corput(n: int) -> np.ndarray:
    """Order 1..n-1 so that early checks are spread out (bisection order)."""
    return _van_der_corput(int(n)).copy()


@functools.lru_cache(maxsize=4096)
def _van_der_corput(n: int) -> np.ndarray:
    idx = np.arange(1, n)
    rev = np.zeros(n - 1)
    base, scale = idx.copy(), 0.5
    while base.any():
        rev += (base & 1) * scale
        base >>= 1
        scale /= 2
    return idx[np.argsort(rev, kind="stable")]


@functools.lru_cache(maxsize=4096)
def _fractions(n: int) -> np.ndarray:
    """The interior fractions i/n in bisection order, as a column (read-only, cached)."""
    t = (_van_der_corput(n) / n)[:, None]
    t.setflags(write=False)
    return t


class EdgeChecker:
    """``motion_valid(a, b)``: every state along the straight edge, at a spacing of
    ``step_m`` of geometry motion, is valid at the checker's clearance. ``walk``: use the compiled walk
    (None: where the checker's bounds prove at least ``MIN_PROVEN_SHARE`` of valid states).

    With ``bubbles`` (and a checker offering ``clearance_query``) states inside a clearance
    bubble of a checked state are proven valid instead of checked (module docstring)."""

    def __init__(self, checker, radii: np.ndarray, step_m: float, bubbles: bool = True, batch=None,
                 walk: bool | None = None):
        if step_m <= 0:
            raise ValueError("step_m must be positive")
        self.checker, self.batch = checker, batch
        self.radii = np.asarray(radii, float)
        self.step_m = float(step_m)
        # the compiled walk (the checker's pre-test proves the bubbles), else MuJoCo's clearance queries;
        # the walk only where the bounds prove most states (else it gets no bubbles: Fetch's torso and
        # shoulder meshes are always closer than their containers allow)
        bounds = getattr(checker, "bounds", None)
        if walk is None and bubbles and batch is None and bounds is not None:
            walk = _proven_share(checker, bounds) >= MIN_PROVEN_SHARE
        self.compiled = bool(bubbles and batch is None and bounds is not None and walk)
        self.weights = None
        if bubbles and batch is None and hasattr(checker, "clearance_query"):
            reach = geom_reach(checker.model, checker.joint_names, checker.held)
            self.weights = np.ascontiguousarray(pair_motion_weights(checker, reach))

    def motion_m(self, a: np.ndarray, b: np.ndarray) -> float:
        """Upper bound on how far any geometry moves along the edge a → b."""
        return float(self.radii @ np.abs(np.subtract(b, a)))

    def steps(self, a: np.ndarray, b: np.ndarray) -> int:
        return max(1, int(np.ceil(self.motion_m(a, b) / self.step_m)))

    def interior(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(n - 1, D): the edge's interior states at the resolution, in bisection order (coarse to fine)."""
        a = np.asarray(a, float)
        return a + _fractions(self.steps(a, b)) * (np.asarray(b, float) - a)

    def motion_valid(self, a: np.ndarray, b: np.ndarray, a_info=None, b_info=None) -> bool:
        """Both ends are assumed checked already; the interior states are checked here (in one
        batch with a ``batch`` checker: pre-tested together, the rest coarse to fine).

        ``a_info``/``b_info``: the ends' ``clearance_query`` results ``(valid, pair_ids,
        bounds)`` when the caller kept them (their bubbles then cover the states near them)."""
        n = self.steps(a, b)
        if n == 1:
            return True
        a, b = np.asarray(a, float), np.asarray(b, float)
        if self.compiled:
            return self._compiled_valid(a, b, n)
        if self.weights is not None:
            return self._bubble_valid(a, b, n, a_info, b_info)
        states = a + _fractions(n) * (b - a)   # all interior states at once, bisection order
        if self.batch is not None:
            return self.batch.first_invalid(states) < 0
        is_valid = self.checker.is_valid
        for q in states:
            if not is_valid(q):
                return False
        return True

    def _compiled_valid(self, a, b, n) -> bool:
        """The compiled walk of the edge with the pre-test's bubbles, MuJoCo judging the states it leaves
        undecided, coarse to fine: first up to the first undecided state (an edge into a collision
        the bounds cannot prove usually meets it there), then, if MuJoCo finds that one valid, the
        whole walk and every other undecided state."""
        ck = self.checker

        def walk(stop_after: int):
            status, undecided, posed = ck.bounds.edge_walk(a, b, n, ck.clearance_m, self.weights, stop_after)
            ck.count(posed - 2 - len(undecided))   # the ends were checked by the caller; undecided below
            return status, undecided.tolist()

        def valid(i: int) -> bool:
            return ck.is_valid(a + (b - a) * (i / n))

        status, undecided = walk(1)
        if status != UNDECIDED:
            return status == CLEAR
        first = undecided[0]
        if not valid(first):
            return False
        status, undecided = walk(0)
        if status != UNDECIDED:
            return status == CLEAR
        return all(valid(i) for i in undecided if i != first)

    def _bubble_valid(self, a, b, n, a_info, b_info) -> bool:
        delta = b - a
        absd = np.abs(delta)
        clearance = self.checker.clearance_m
        # per unit of the edge parameter: how fast any geometry / each pair's distance can change
        far = (self.checker.horizon_m - clearance) / float(self.radii @ absd)
        # per pair; a pair no joint of this edge changes keeps its distance (rate ~0: no limit)
        rate = np.maximum(self.weights @ absd, 1e-300)

        def reach(info) -> float:
            """How many of the n steps around a checked state its bubble proves valid."""
            pid, bound = info[1], info[2]
            r = min(far, float(((bound - clearance) / rate[pid]).min())) if pid.size else far
            return max(r, 0.0) * n * (1.0 - 1e-9)

        lo, hi = 1, n - 1   # grid states i/n not yet proven valid: lo..hi
        if a_info is not None:
            lo = max(lo, math.floor(reach(a_info)) + 1)
        if b_info is not None:
            hi = min(hi, n - math.floor(reach(b_info)) - 1)
        if lo > hi:
            return True
        query = self.checker.clearance_query
        todo = deque([(lo, hi)])
        while todo:
            u, v = todo.popleft()
            i = (u + v) // 2
            info = query(a + delta * (i / n))
            if not info[0]:
                return False
            r = reach(info)
            left, right = min(i - 1, math.ceil(i - r) - 1), max(i + 1, math.floor(i + r) + 1)
            if left >= u:
                todo.append((u, left))
            if right <= v:
                todo.append((right, v))
        return True
