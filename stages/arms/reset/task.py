"""The peg-insertion task: where the reset must put the peg, and how close counts.

The peg is a square-section box (tags on every face), so "lying on a long face with
its long axis along ``yaw_rad``" is one start pose whichever long face is down and
whichever end points which way; the landing check compares the position on the table
and the long axis' direction (an angle in [0°, 90°]).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import PlanningError
from core.settings import from_config, require
from stages.arms.grasping.resting import resting_pose


@dataclass(frozen=True)
class TaskSpec:
    """The ``task`` config group: the start pose the reset must reach (``start_xy`` m, required),
    the landing tolerances, the scene objects involved, and when the peg counts as inserted."""

    start_xy: tuple[float, float]
    start_yaw_rad: float = 0.0
    tolerance_m: float = 0.005
    tolerance_deg: float = 5.0
    fixture: str = "fixture"
    peg: str = "peg"
    long_axis: int = 2             # the peg's long axis in its own frame
    insert_depth_m: float = 0.03   # how deep in the hole counts as inserted
    hole_tolerance_m: float = 0.01

    def __post_init__(self):
        require(self.long_axis in (0, 1, 2), "long_axis", self.long_axis, "0, 1 or 2 (the peg's own x, y, z)")

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | TaskSpec | None) -> TaskSpec:
        """The ``task`` group; a missing ``start_xy`` or a wrong key, type or value names ``task.<key>``."""
        return from_config(cls, cfg, "task")

    def placed_pose(self, T_world_peg: np.ndarray, half_extents, surface_z: float) -> np.ndarray:
        """Where to put the peg as it is now held: the same face down (a top grasp cannot turn it
        over), turned about the vertical so its long axis is at ``start_yaw_rad``."""
        R = np.asarray(T_world_peg, float)[:3, :3]
        rest = resting_pose(R, max_tilt_deg=90.0)
        if rest.down_axis == self.long_axis:
            raise PlanningError("unreachable", "the peg stands on its end: a top grasp cannot lay it down "
                                "in the start pose")
        snapped = np.zeros((3, 3))   # exactly face-down: the peg settles flat on the table
        snapped[:, rest.down_axis] = [0.0, 0.0, -float(rest.down_sign)]
        axis = R[:, self.long_axis].copy()
        axis[2] = 0.0
        snapped[:, self.long_axis] = axis / np.linalg.norm(axis)
        k = 3 - rest.down_axis - self.long_axis
        snapped[:, k] = np.cross(snapped[:, (k + 1) % 3], snapped[:, (k + 2) % 3])
        yaw = np.arctan2(snapped[1, self.long_axis], snapped[0, self.long_axis])
        d = self.start_yaw_rad - yaw
        Rz = np.array([[np.cos(d), -np.sin(d), 0.0], [np.sin(d), np.cos(d), 0.0], [0.0, 0.0, 1.0]])
        T = np.eye(4)
        T[:3, :3] = Rz @ snapped
        T[:3, 3] = [*self.start_xy, surface_z + float(np.asarray(half_extents)[rest.down_axis])]
        return T

    def landing_error(self, T_world_peg: np.ndarray) -> tuple[float, float]:
        """(horizontal position error m, long-axis angle error deg) against the start pose."""
        p = np.asarray(T_world_peg)[:3, 3]
        pos_err = float(np.hypot(p[0] - self.start_xy[0], p[1] - self.start_xy[1]))
        axis = np.asarray(T_world_peg)[:3, self.long_axis]
        target = np.array([np.cos(self.start_yaw_rad), np.sin(self.start_yaw_rad), 0.0])
        ang = float(np.degrees(np.arccos(np.clip(abs(axis @ target), 0.0, 1.0))))
        return pos_err, ang

    def landed(self, T_world_peg: np.ndarray) -> bool:
        pos, ang = self.landing_error(T_world_peg)
        return pos <= self.tolerance_m and ang <= self.tolerance_deg
