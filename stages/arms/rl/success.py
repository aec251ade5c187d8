"""Automatic success detection: is the peg in the slot, and how deep?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InsertionCheck:
    inserted: bool
    depth_m: float          # slot rim height minus the peg's lowest point
    offset_m: tuple[float, float]   # peg centre in the slot frame (along, across)
    axis_error_deg: float


def check_insertion(T_world_peg: np.ndarray, T_world_slot: np.ndarray, slot_size_m, depth_m: float,
                    half_extents, long_axis: int = 2, min_depth_m: float = 0.025,
                    tolerance_m: float = 0.01) -> InsertionCheck:
    """Inserted when the peg lies along the slot, inside its outline, at least ``min_depth_m`` deep."""
    T_slot_peg = np.linalg.inv(T_world_slot) @ np.asarray(T_world_peg)
    along, across = T_slot_peg[0, 3], T_slot_peg[1, 3]
    R = np.asarray(T_world_peg)[:3, :3]
    half = np.asarray(half_extents, float)
    lowest = float(np.asarray(T_world_peg)[2, 3] - np.abs(R[2, :]) @ half)   # lowest corner of the box
    depth = float(T_world_slot[2, 3] + depth_m - lowest)
    axis = R[:, long_axis]
    slot_axis = np.asarray(T_world_slot)[:3, 0]
    ang = float(np.degrees(np.arccos(np.clip(abs(axis @ slot_axis), 0, 1))))
    width, length = slot_size_m
    inside = (abs(along) <= (length / 2 - half[long_axis]) + tolerance_m
              and abs(across) <= (width / 2) + tolerance_m)
    # fully down: its lowest point at the slot floor and the whole box below the rim by min_depth
    top = float(np.asarray(T_world_peg)[2, 3] + np.abs(R[2, :]) @ half)
    level = top - lowest <= 2 * np.sort(half)[0] + 0.01   # lying flat, not propped on the rim
    return InsertionCheck(bool(inside and depth >= min_depth_m and level), depth,
                          (float(along), float(across)), ang)
