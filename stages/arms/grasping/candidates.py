"""Grasp candidates for a box lying on a support, as gripper-site poses.

Candidates are written in one frame: its z axis the approach direction (into the object), its
y axis the fingers' closing direction; :meth:`GraspCandidate.for_site_axes` turns one into the
pose of a gripper whose ee site carries those axes elsewhere (``robot.arms.<arm>.gripper``'s
``closing_axis``/``approach_axis``, :attr:`hardware.gripper.ParallelGripper.site_axes`). Candidates approach
from above (straight down, or along the top face's normal for a leaning box); the
fingers close across each horizontal object axis narrow enough for the gripper, at
several positions along the other axis, in both finger orientations.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from stages.arms.grasping.resting import RestingPose


def site_pose(T_world_frame: np.ndarray, site_axes: np.ndarray) -> np.ndarray:
    """The ee site's pose for a pose written in the candidates' frame (approach z, closing y), the
    site's (closing × approach, closing, approach) axes being the columns of ``site_axes``."""
    T = np.array(T_world_frame, float)
    T[:3, :3] = T[:3, :3] @ np.asarray(site_axes, float).T
    return T


@dataclass(frozen=True)
class GraspCandidate:
    name: str
    T_world_grip: np.ndarray   # 4×4 pose of the gripper site when closed on the object
    width_m: float             # object width between the fingers
    approach_world: np.ndarray # unit vector the gripper moves along to reach the grasp

    def for_site_axes(self, site_axes: np.ndarray, deeper_m: float = 0.0) -> GraspCandidate:
        """This grasp for an ee site whose (closing × approach, closing, approach) axes, in its own
        frame, are the columns of ``site_axes`` (the identity: the candidate frame's own), the site
        ``deeper_m`` farther along the approach (a gripper whose site sits elsewhere on its fingers)."""
        if np.array_equal(site_axes, np.eye(3)) and deeper_m == 0.0:
            return self
        T = site_pose(self.T_world_grip, site_axes)
        T[:3, 3] += self.approach_world * deeper_m
        return replace(self, T_world_grip=T)

    def offset(self, distance_m: float) -> np.ndarray:
        """The pose ``distance_m`` back along the approach (pre-grasp, or lifted)."""
        T = self.T_world_grip.copy()
        T[:3, 3] -= self.approach_world * distance_m
        return T


DEPTH_M = 0.02   # the gripper site this far below the top face, unless a gripper says otherwise


def top_grasps(T_world_obj: np.ndarray, half_extents, rest: RestingPose, max_width_m: float,
               positions: tuple[float, ...] = (-0.25, -0.1, 0.0, 0.1, 0.25), depth_m: float = DEPTH_M,
               aligned_above_deg: float = 12.0) -> list[GraspCandidate]:
    """Grasps from above: ``positions`` are fractions of the half-length along the gripped axis;
    ``depth_m`` is how far below the top face the fingertips' centre goes.

    A box lying flat (tilted at most ``aligned_above_deg``) is approached straight down; one
    leaning on something is approached along its top face's normal ("aligned" grasps), so
    the fingers still close on two of its faces.
    """
    T = np.asarray(T_world_obj, float)
    R, p = T[:3, :3], T[:3, 3]
    half = np.asarray(half_extents, float)
    up = -rest.down_sign * R[:, rest.down_axis]           # the top face's outward normal
    aligned = rest.tilt_deg > aligned_above_deg
    z = -up if aligned else np.array([0.0, 0.0, -1.0])
    kind = "aligned" if aligned else "top"
    out = []
    for across in (i for i in range(3) if i != rest.down_axis):
        along = 3 - rest.down_axis - across
        width = 2 * half[across]
        if width > max_width_m:
            continue
        y_dir = R[:, across] - z * (R[:, across] @ z)       # across the box, square to the approach
        y_dir /= np.linalg.norm(y_dir)
        height = min(depth_m * (0.6 if aligned else 1.0), half[rest.down_axis])   # shallow when leaning
        for frac in positions:
            centre = p + R[:, along] * (frac * half[along])
            if aligned:
                centre = centre + up * (half[rest.down_axis] - height)
            else:
                centre[2] = p[2] + half[rest.down_axis] - height
            for flip in (1, -1):
                y = y_dir * flip
                pose = np.eye(4)
                pose[:3, :3] = np.column_stack([np.cross(y, z), y, z])
                pose[:3, 3] = centre
                name = f"{kind}_across{'xyz'[across]}_at{frac:+.2f}_{'a' if flip > 0 else 'b'}"
                out.append(GraspCandidate(name, pose, float(width), z))
    return out


