"""What the extrinsics fit returns (:func:`~stages.arms.perception.extrinsics.fit_extrinsics`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ExtrinsicsFit:
    T_world_cam: np.ndarray  # noqa: N815
    joint_offsets_rad: dict[str, np.ndarray]
    residuals: np.ndarray                 # (N, 6): position (m) and rotation (rad), camera frame
    residual_rms_m: float
    residual_rms_deg: float
    condition_number: float               # all parameters (what the spots constrain)
    condition_number_fitted: float        # the parameters actually fitted
    observability: dict[str, np.ndarray]  # per arm, per joint, 0..1 (at the solution)
    offset_std_deg: dict[str, np.ndarray]  # per arm, per joint: 1-sigma from the fit's covariance
    camera_std: dict[str, float]          # position (m) and rotation (deg) 1-sigma
    unobservable: list[tuple[str, int]]   # (arm, joint index) held at zero
    warnings: list[str]
    success: bool
    nfev: int
    observations: int
    names: list[str] = field(default_factory=list)
    residual_rms_px: float | None = None  # tag corners, when the observations carry them
    spot_rms_px: list[float] = field(default_factory=list)   # the same, per observation
    residual: str = "pose"
    grasps: dict[str, np.ndarray] = field(default_factory=dict)   # fitted T_hand_target per arm
    grasp_params: dict[str, dict[str, float]] = field(default_factory=dict)  # G (m, rad; creep: per s)

    @property
    def spot_median_px(self) -> float | None:
        """The median spot's corner RMS: robust to the few spots a held target slipped at."""
        return float(np.median(self.spot_rms_px)) if self.spot_rms_px else None

    def summary(self, joint_names: Mapping[str, Sequence[str]] | None = None) -> dict:
        def jn(arm, i):
            return joint_names[arm][i] if joint_names and arm in joint_names else f"{arm}[{i}]"

        return {
            "T_world_cam": self.T_world_cam.tolist(),
            "joint_offsets_deg": {a: np.degrees(v).tolist() for a, v in self.joint_offsets_rad.items()},
            "residual": self.residual, "residual_rms_m": self.residual_rms_m,
            "residual_rms_deg": self.residual_rms_deg, "residual_rms_px": self.residual_rms_px,
            "condition_number": self.condition_number,
            "condition_number_fitted": self.condition_number_fitted,
            "observability": {a: v.tolist() for a, v in self.observability.items()},
            "offset_std_deg": {a: v.tolist() for a, v in self.offset_std_deg.items()},
            "camera_std": self.camera_std,
            "unobservable": [jn(a, i) for a, i in self.unobservable],
            "warnings": self.warnings, "success": self.success, "nfev": self.nfev,
            "observations": self.observations,
            "grasp_corrections": self.grasp_params,
            "spot_median_px": self.spot_median_px,
            "per_observation": [
                {"name": n, "position_residual_m": float(np.linalg.norm(r[:3])),
                 "rotation_residual_deg": float(np.degrees(np.linalg.norm(r[3:]))),
                 **({"corner_rms_px": self.spot_rms_px[i]} if self.spot_rms_px else {})}
                for i, (n, r) in enumerate(zip(self.names, self.residuals, strict=False))],
        }
