"""What the calibration procedures return, and what their simulation-only scoring adds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from stages.arms.calibration.settings import PegFitSettings
from stages.arms.calibration.spots import SpotLog
from stages.arms.perception.camera import CameraModel
from stages.arms.perception.extrinsics_model import ForwardKinematics
from stages.arms.perception.extrinsics_result import ExtrinsicsFit


@dataclass(frozen=True)
class CalibrationFit:
    """A calibration's fit and what it was fitted from: the spots, the target's kinematics ``fk``,
    the arms' joint counts and names, the camera (its intrinsics as estimated, its pose as fitted)."""

    fit: ExtrinsicsFit
    spots: SpotLog
    fk: ForwardKinematics
    dofs: dict[str, int]
    joint_names: dict[str, list[str]]
    camera: CameraModel

    def camera_options(self) -> dict[str, Any]:
        """``fit_extrinsics``'s joint names and the camera's intrinsics."""
        return {"joint_names": self.joint_names, "camera_matrix": self.camera.K,
                "distortion": self.camera.dist}


@dataclass(frozen=True)
class PegCalibrationFit(CalibrationFit):
    """The peg calibration's fit, with the grasp model it used: the planned grasp per arm (the
    nominal ``T_hand_peg``), the knot times (``fit.grasp_knots``) and the fit's settings."""

    grasps: dict[str, np.ndarray]
    knots: dict[str, list[float]] | None
    settings: PegFitSettings


@dataclass(frozen=True)
class Scores:
    """A fit against the simulator's truth: the worst joint offset error (deg), the camera's
    position (m) and rotation (deg) errors."""

    joint_offset_error_deg_max: float
    camera_position_error_m: float
    camera_rotation_error_deg: float


@dataclass(frozen=True)
class PegScores:
    """The peg calibration against the simulator's truth: the hidden offsets, every joint's error,
    the fit's scores over the fitted joints, the error split (``known_grasp``: the same images
    restated with the peg's true place in the hand, the grasp known; ``rigid_grasp``: the same,
    the grasp fitted) and the peg's largest move in the hand (m)."""

    hidden_offsets_deg: dict[str, list[float]]
    offset_errors_deg: dict[str, np.ndarray]
    fit: Scores
    split: dict[str, tuple[ExtrinsicsFit, Scores]]
    grasp_slip_m_max: float
    true_T_world_cam: np.ndarray  # noqa: N815
