"""Simulation-only scoring: an estimated pose against the simulator's true one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.se3 import rotation_angle_deg


def resting_face(R: np.ndarray) -> str:
    """The body-frame face pointing down (world -z), e.g. ``"-x"``."""
    down = R.T @ np.array([0.0, 0.0, -1.0])
    k = int(np.argmax(np.abs(down)))
    return ("+" if down[k] > 0 else "-") + "xyz"[k]


@dataclass(frozen=True)
class PoseErrors:
    position_m: float          # distance between the two origins
    rotation_deg: float        # angle of the relative rotation
    resting_face_correct: bool  # the same face points down in both

    def metrics(self) -> dict[str, float | bool]:
        return {"position_error_m": self.position_m, "rotation_error_deg": self.rotation_deg,
                "resting_face_correct": self.resting_face_correct}


def pose_errors(T_estimate: np.ndarray, T_true: np.ndarray) -> PoseErrors:  # noqa: N803
    """How far ``T_estimate`` (4x4, world) is from ``T_true``."""
    T_estimate, T_true = np.asarray(T_estimate, float), np.asarray(T_true, float)
    return PoseErrors(float(np.linalg.norm(T_estimate[:3, 3] - T_true[:3, 3])),
                      float(rotation_angle_deg(T_estimate[:3, :3], T_true[:3, :3])),
                      resting_face(T_estimate[:3, :3]) == resting_face(T_true[:3, :3]))
