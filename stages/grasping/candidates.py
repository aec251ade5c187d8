"""Grasp candidates for a box lying on a support, as gripper-site poses.

The gripper site's z axis is the approach direction (into the object) and its y axis
the fingers' closing direction (the twin Panda's convention). Candidates approach
from above; the fingers close across each horizontal object axis narrow enough for
the gripper, at several positions along the other axis, in both finger orientations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.grasping.resting import RestingPose


@dataclass(frozen=True)
class GraspCandidate:
    name: str
    T_world_grip: np.ndarray   # 4×4 pose of the gripper site when closed on the object
    width_m: float             # object width between the fingers
    approach_world: np.ndarray # unit vector the gripper moves along to reach the grasp

    def offset(self, distance_m: float) -> np.ndarray:
        """The pose ``distance_m`` back along the approach (pre-grasp, or lifted)."""
        T = self.T_world_grip.copy()
        T[:3, 3] -= self.approach_world * distance_m
        return T


def top_grasps(T_world_obj: np.ndarray, half_extents, rest: RestingPose, max_width_m: float,
               positions: tuple[float, ...] = (-0.25, -0.1, 0.0, 0.1, 0.25), depth_m: float = 0.02) -> list[GraspCandidate]:
    """Top-down grasps: ``positions`` are fractions of the half-length along the gripped axis;
    ``depth_m`` is how far below the top face the fingertips' centre goes."""
    T = np.asarray(T_world_obj, float)
    R, p = T[:3, :3], T[:3, 3]
    half = np.asarray(half_extents, float)
    top_z = p[2] + half[rest.down_axis]
    z = np.array([0.0, 0.0, -1.0])
    out = []
    for across in (i for i in range(3) if i != rest.down_axis):
        along = 3 - rest.down_axis - across
        width = 2 * half[across]
        if width > max_width_m:
            continue
        y_dir = R[:, across].copy()
        y_dir[2] = 0.0
        y_dir /= np.linalg.norm(y_dir)
        along_dir = R[:, along]
        height = min(depth_m, half[rest.down_axis])
        for frac in positions:
            centre = p + along_dir * (frac * half[along])
            centre[2] = top_z - height
            for flip in (1, -1):
                y = y_dir * flip
                x = np.cross(y, z)
                pose = np.eye(4)
                pose[:3, :3] = np.column_stack([x, y, z])
                pose[:3, 3] = centre
                name = f"top_across{'xyz'[across]}_at{frac:+.2f}_{'a' if flip > 0 else 'b'}"
                out.append(GraspCandidate(name, pose, float(width), z))
    return out


def pose7(T: np.ndarray) -> list[float]:
    """4×4 → [x, y, z, qw, qx, qy, qz]."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(T[:3, :3]).as_quat()
    return [*map(float, T[:3, 3]), float(w), float(x), float(y), float(z)]
