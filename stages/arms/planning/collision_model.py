"""The checker's own copy of the model: only the pairs it checks collide, margins that reach the clearance."""

from __future__ import annotations

import numpy as np


def copy_model(model):
    import copy

    return copy.deepcopy(model)


def refresh_body_margins(model) -> None:
    """``body_margin`` (what the broad phase reads) = the largest margin of the body's geoms."""
    model.body_margin[:] = 0.0
    np.maximum.at(model.body_margin, model.geom_bodyid, model.geom_margin)


def contiguous_runs(adr: np.ndarray) -> list[tuple[slice, slice]]:
    """(qpos slice, configuration slice) pairs covering ``adr`` in runs of consecutive addresses."""
    runs, start = [], 0
    for i in range(1, len(adr) + 1):
        if i == len(adr) or adr[i] != adr[i - 1] + 1:
            runs.append((slice(int(adr[start]), int(adr[i - 1]) + 1), slice(start, i)))
            start = i
    return runs


def collide_checked_pairs_only(model, pairs: np.ndarray, moved: set[int]) -> None:
    """Let MuJoCo's collision pipeline (on the collision copy) produce contacts for checked pairs only.

    A geom in no checked pair takes part in none; of the others, a geom the configuration moves gets
    ``contype = 1, conaffinity = 3`` and one it does not ``contype = 2, conaffinity = 0``: moving pairs
    (1 & 3) and moving-still pairs (2 & 3) collide, still pairs (never checked: nothing here moves them
    apart) are not even tested. Every checked pair has a moving geom, so every candidate still comes."""
    active = np.unique(pairs) if len(pairs) else np.zeros(0, int)
    model.geom_contype[:] = 0
    model.geom_conaffinity[:] = 0
    moving = np.isin(model.geom_bodyid[active], list(moved))
    model.geom_contype[active] = np.where(moving, 1, 2)
    model.geom_conaffinity[active] = np.where(moving, 3, 0)


def moved_bodies(model, qpos_adr) -> set[int]:
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
