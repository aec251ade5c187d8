"""How a box-shaped object is lying: which face is down, its yaw, and whether it can rest so."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import PerceptionError

FACES = ("+x", "-x", "+y", "-y", "+z", "-z")


@dataclass(frozen=True)
class RestingPose:
    face_down: str          # the object's face touching the support, e.g. "-z"
    down_axis: int          # 0, 1, 2: the object axis along world vertical
    down_sign: int          # +1 if the object's +axis points down
    tilt_deg: float         # angle between that axis and world vertical
    yaw_rad: float          # heading of the object's first horizontal axis about world z


def resting_pose(R_world_obj: np.ndarray, max_tilt_deg: float = 12.0) -> RestingPose:
    """Classify from a rotation matrix; a pose no box can rest in raises PerceptionError."""
    R = np.asarray(R_world_obj, float).reshape(3, 3)
    down = np.array([0.0, 0.0, -1.0])
    dots = R.T @ down                     # each object axis' component along world-down
    axis = int(np.argmax(np.abs(dots)))
    sign = int(np.sign(dots[axis])) or 1
    tilt = float(np.degrees(np.arccos(np.clip(abs(dots[axis]), -1, 1))))
    if tilt > max_tilt_deg:
        raise PerceptionError(f"the peg is tilted {tilt:.1f}° from any face-down pose "
                              f"(limit {max_tilt_deg}°): it cannot be resting on the table; "
                              "it may be leaning on something")
    horizontal = [i for i in range(3) if i != axis][0]
    h = R[:, horizontal]
    yaw = float(np.arctan2(h[1], h[0]))
    face = ("+" if sign > 0 else "-") + "xyz"[axis]
    return RestingPose(face, axis, sign, tilt, yaw)
