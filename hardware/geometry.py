"""Which geometry may not touch, and how far apart it is (true signed distances).

Correct and simple, not fast: the planner's checker (``stages.arms.planning.checker``) is the
fast one and follows the same rule. Use this to report and to cross-check.

**Collision geoms** are the geoms with ``contype`` or ``conaffinity`` non-zero (in the
built-in robot: class ``collision``/``pad``, group 3; visual geoms have both zero).

**Pairs that may not touch** (:func:`collision_pairs`) are the pairs of collision geoms that
MuJoCo's own contact filter would test, less adjacent links:

1. ``contype``/``conaffinity`` compatible: ``(ct1 & ca2) | (ct2 & ca1) != 0``;
2. on different weld groups (geoms rigidly attached to each other never move apart; this also
   drops every static-static pair such as torso-table);
3. not parent and child: MuJoCo's parent filter on weld groups (unless the model disables it)
   and, as the planner's checker does, parent-child *bodies* even where the parent is welded to
   the world (a link on a fixed base);
4. not excluded by a ``<contact><exclude>`` body pair.

That leaves arm-arm, arm-self (non-adjacent links), arm-scene and free object-everything.
Pairs that touch by design within a task (a held object and its fingers) are the caller's to
drop.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

DISTMAX_M = 1.0
"""mj_geomDistance reports at most this; pairs farther apart read as DISTMAX_M."""


@dataclass(frozen=True)
class Clearance:
    """The smallest distance over a set of geom pairs, and the pair it belongs to."""

    distance_m: float
    geom1: int
    geom2: int
    name1: str
    name2: str

    def __str__(self) -> str:
        return f"{self.distance_m * 1000:.2f} mm between {self.name1} and {self.name2}"


def geom_name(model, g: int) -> str:
    import mujoco

    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, int(g))
    if name:
        return name
    # meshes are often unnamed: name them by their body
    body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, int(model.geom_bodyid[g]))
    return f"{body or 'body'}:geom{int(g)}"


def collision_geoms(model) -> np.ndarray:
    """Ids of the geoms that take part in contacts (``contype`` or ``conaffinity`` non-zero)."""
    return np.flatnonzero((model.geom_contype != 0) | (model.geom_conaffinity != 0))


def excluded_body_pairs(model) -> set[frozenset[int]]:
    """Body pairs named by ``<contact><exclude>`` (signature = body1 << 16 | body2)."""
    return {frozenset((int(s) >> 16, int(s) & 0xFFFF)) for s in model.exclude_signature}


def may_touch(model, g1: int, g2: int, _excluded: set[frozenset[int]] | None = None) -> bool:
    """True when the two geoms are allowed to touch (they are *not* a checked pair)."""
    import mujoco

    excluded = excluded_body_pairs(model) if _excluded is None else _excluded
    ct, ca = model.geom_contype, model.geom_conaffinity
    if not ((ct[g1] & ca[g2]) or (ct[g2] & ca[g1])):
        return True
    b1, b2 = int(model.geom_bodyid[g1]), int(model.geom_bodyid[g2])
    w1, w2 = int(model.body_weldid[b1]), int(model.body_weldid[b2])
    if w1 == w2:
        return True
    parent = model.body_parentid
    filter_parent = not (model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_FILTERPARENT))
    if filter_parent:
        pw1, pw2 = int(model.body_weldid[parent[w1]]), int(model.body_weldid[parent[w2]])
        if w1 and w2 and (pw1 == w2 or pw2 == w1):
            return True
    if parent[b1] == b2 or parent[b2] == b1:
        return True
    return frozenset((b1, b2)) in excluded


def collision_pairs(model, geoms: Iterable[int] | None = None) -> np.ndarray:
    """All pairs of collision geoms that may not touch, as a sorted ``(P, 2)`` int array.

    ``geoms`` restricts the candidates (default: :func:`collision_geoms`).
    """
    ids = collision_geoms(model) if geoms is None else np.array(sorted(set(geoms)), dtype=int)
    excluded = excluded_body_pairs(model)
    pairs = [(int(a), int(b)) for i, a in enumerate(ids) for b in ids[i + 1:]
             if not may_touch(model, int(a), int(b), excluded)]
    return np.array(pairs, dtype=int).reshape(-1, 2)


def pair_distances(model, data, geom_pairs, distmax: float = DISTMAX_M) -> np.ndarray:
    """Signed distance of each pair (negative = penetration), via ``mujoco.mj_geomDistance``.

    ``data`` must hold current geom poses (after ``mj_kinematics`` or ``mj_forward``).
    """
    import mujoco

    pairs = np.asarray(geom_pairs, dtype=int).reshape(-1, 2)
    return np.array([mujoco.mj_geomDistance(model, data, int(a), int(b), distmax, None)
                     for a, b in pairs], dtype=float)


def min_clearance(model, data, geom_pairs=None, distmax: float = DISTMAX_M) -> Clearance:
    """The smallest true distance over ``geom_pairs`` (default :func:`collision_pairs`).

    ``data`` must hold current geom poses. With no pairs, the distance is ``distmax``.
    """
    pairs = collision_pairs(model) if geom_pairs is None else np.asarray(geom_pairs, dtype=int)
    pairs = pairs.reshape(-1, 2)
    if len(pairs) == 0:
        return Clearance(float(distmax), -1, -1, "", "")
    dist = pair_distances(model, data, pairs, distmax)
    k = int(np.argmin(dist))
    a, b = (int(x) for x in pairs[k])
    return Clearance(float(dist[k]), a, b, geom_name(model, a), geom_name(model, b))
