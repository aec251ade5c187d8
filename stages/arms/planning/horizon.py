"""The clearance checker's horizon: a copy of the model whose collision pass reports every checked
pair closer than ``horizon_m``, and the tables that turn its contacts into distance bounds
(:meth:`stages.arms.planning.checker.ClearanceChecker.clearance_query`)."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from hardware.geometry import DISTMAX_M
from stages.arms.planning.collision_model import copy_model, refresh_body_margins


@dataclass(frozen=True)
class Horizon:
    model: object             # margins horizon/2, boxes grown by horizon/2
    stride: np.ndarray        # (ngeom, 1): contact.geom @ stride = flat (g1, g2) index
    pair_id: np.ndarray       # flat (ngeom²): index into ClearanceChecker.pairs, -1 = not checked
    offset: np.ndarray        # flat: added to contact.dist for a lower bound; -inf = measure it,
                              # +inf = pair not checked


def build_horizon(checker) -> Horizon:
    """The horizon copy of ``checker``'s model and its per-(geom, geom) tables."""
    m, h = checker.model, checker.horizon_m
    hm = copy_model(m)
    hm.geom_margin[checker.geoms] = h / 2.0
    refresh_body_margins(hm)
    t = m.geom_type
    box = t == mujoco.mjtGeom.mjGEOM_BOX
    exact_kind = np.isin(t, [mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_SPHERE,
                             mujoco.mjtGeom.mjGEOM_CAPSULE])
    hm.geom_size[checker.geoms[box[checker.geoms]]] += h / 2.0
    ng = m.ngeom
    pair_id = np.full((ng, ng), -1, np.int32)
    offset = np.full((ng, ng), np.inf)     # not checked: never a bound that matters
    # pairs no configuration joint can move apart (two fingers of one hand) keep the
    # distance they have: once clear, they need no measuring at every query
    constant = ~checker.pair_joint_masks().any(axis=1)
    d0 = mujoco.MjData(m)
    d0.qpos[:] = checker.base_qpos
    mujoco.mj_kinematics(m, d0)
    if checker.held is not None:
        checker.held.place(m, d0)
        mujoco.mj_kinematics(m, d0)
    for k, (a, b) in enumerate(checker.pairs.tolist()):
        if constant[k] and mujoco.mj_geomDistance(m, d0, a, b, DISTMAX_M, None) >= checker.clearance_m:
            continue
        pair_id[a, b] = pair_id[b, a] = k
        if exact_kind[a] and exact_kind[b]:
            off = 0.0                        # the contact's distance is the true one
        elif (box[a] and exact_kind[b]) or (box[b] and exact_kind[a]):
            off = h / 2.0                    # distance to the grown box + horizon/2
        else:
            off = -np.inf                    # no bound: always measured
        offset[a, b] = offset[b, a] = off
    return Horizon(hm, np.array([ng, 1], np.int32), pair_id.ravel(), offset.ravel())
