"""What a calibration run reports: its metrics, the ``report.json`` contents, and the saved
:class:`~stages.arms.perception.calibration.Calibration` (the camera's intrinsics and fitted pose,
every arm's joint zero offsets)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from stages.arms.calibration.results import CalibrationFit, PegCalibrationFit, PegScores, Scores
from stages.arms.perception.calibration import Calibration, now_iso


def calibration_of(result: CalibrationFit, source_run: str, camera_name: str, method: str) -> Calibration:
    """The calibration file's contents from a fit."""
    fit, cam = result.fit, result.camera
    return Calibration(cam.K, cam.dist, (cam.width, cam.height), fit.T_world_cam,
                       {a: fit.joint_offsets_rad[a] for a in result.dofs}, result.joint_names,
                       date=now_iso(), source_run=source_run, camera_name=camera_name, method=method,
                       metrics={"residual_rms_m": fit.residual_rms_m,
                                "condition_number": min(fit.condition_number, 1e300),
                                "spots": len(result.spots.observations)})


def peg_outcome(result: PegCalibrationFit, scores: PegScores, time_s: float,
                log: logging.Logger) -> tuple[dict[str, Any], dict[str, Any]]:
    """The peg calibration's metrics and report (with its scores against the simulator's truth)."""
    fit, spots, arms, joint_names = result.fit, result.spots, list(result.dofs), result.joint_names
    hidden = {a: np.radians(scores.hidden_offsets_deg[a]) for a in arms}
    metrics = {**spots.counts(), "residual_rms_m": fit.residual_rms_m,
               "residual_rms_deg": fit.residual_rms_deg, "residual_rms_px": fit.residual_rms_px,
               "residual_spot_median_px": fit.spot_median_px,
               "joint_offset_error_deg_max": scores.fit.joint_offset_error_deg_max,
               "joint_offset_error_deg_max_all": float(max(np.abs(e).max()
                                                           for e in scores.offset_errors_deg.values())),
               "camera_position_error_m": scores.fit.camera_position_error_m,
               "camera_rotation_error_deg": scores.fit.camera_rotation_error_deg,
               "condition_number": fit.condition_number,
               "condition_number_fitted": fit.condition_number_fitted,
               "unobservable_joints": len(fit.unobservable),
               "grasp_slip_m_max": scores.grasp_slip_m_max, "time_s": time_s}
    for k, (_, s) in scores.split.items():
        metrics.update({f"{k}_joint_offset_error_deg_max": s.joint_offset_error_deg_max,
                        f"{k}_camera_position_error_m": s.camera_position_error_m,
                        f"{k}_camera_rotation_error_deg": s.camera_rotation_error_deg})
    log.info("extrinsics: %d spots, residual %.2f px; offsets max error %.3f deg (fitted joints); "
             "camera %.2f mm, %.3f deg; cond %.0f; the same spots with the peg rigid in the hand: "
             "%.3f deg with its place known, %.3f deg fitted", metrics["spots"],
             fit.residual_rms_px or 0.0, scores.fit.joint_offset_error_deg_max,
             scores.fit.camera_position_error_m * 1000, scores.fit.camera_rotation_error_deg,
             fit.condition_number, scores.split["known_grasp"][1].joint_offset_error_deg_max,
             scores.split["rigid_grasp"][1].joint_offset_error_deg_max)
    report = fit.summary(joint_names)
    report.update({"hidden_offsets_deg": scores.hidden_offsets_deg,
                   "offset_errors_deg": {a: e.tolist() for a, e in scores.offset_errors_deg.items()},
                   "true_T_world_cam": scores.true_T_world_cam.tolist(), "spots": spots.entries,
                   "rejected": spots.rejected, "skipped": spots.skipped,
                   "grasp_slip_m_max": scores.grasp_slip_m_max,
                   **{f"{k}_fit": {**d.summary(joint_names), "offset_errors_deg": {
                       a: np.degrees(d.joint_offsets_rad[a] - hidden[a]).tolist() for a in arms}}
                      for k, (d, _) in scores.split.items()},
                   "observed_target": "the tagged peg, held by each arm over the board"})
    return metrics, report


def plate_outcome(result: CalibrationFit, scores: Scores, hidden_rad: Mapping[str, np.ndarray],
                  true_T_world_cam: np.ndarray, time_s: float,  # noqa: N803
                  log: logging.Logger) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tag-plate calibration's metrics and report (with its scores against the simulator's truth)."""
    fit, spots, arms = result.fit, result.spots, list(result.dofs)
    metrics = {**spots.seen_counts(), "residual_rms_m": fit.residual_rms_m,
               "residual_rms_deg": fit.residual_rms_deg,
               **({"residual_rms_px": fit.residual_rms_px} if fit.residual_rms_px is not None else {}),
               "joint_offset_error_deg_max": scores.joint_offset_error_deg_max,
               "camera_position_error_m": scores.camera_position_error_m,
               "camera_rotation_error_deg": scores.camera_rotation_error_deg,
               "condition_number": fit.condition_number,
               "condition_number_fitted": fit.condition_number_fitted,
               "unobservable_joints": len(fit.unobservable),
               "min_observability": float(min(np.min(v) for v in fit.observability.values())),
               "offset_std_deg_max": float(max(np.max(v) for v in fit.offset_std_deg.values())),
               "time_s": time_s}
    log.info("extrinsics: %d spots, residual %.2f mm / %.3f deg; offsets max error %.3f deg; "
             "camera %.2f mm, %.3f deg; cond %.0f", len(spots.observations),
             fit.residual_rms_m * 1000, fit.residual_rms_deg, scores.joint_offset_error_deg_max,
             scores.camera_position_error_m * 1000, scores.camera_rotation_error_deg, fit.condition_number)
    report = fit.summary(result.joint_names)
    report.update({
        "hidden_offsets_deg": {a: np.degrees(v).tolist() for a, v in hidden_rad.items()},
        "offset_errors_deg": {a: np.degrees(fit.joint_offsets_rad[a] - hidden_rad[a]).tolist() for a in arms},
        "true_T_world_cam": true_T_world_cam.tolist(),
        "camera_position_error_m": scores.camera_position_error_m,
        "camera_rotation_error_deg": scores.camera_rotation_error_deg, "spots": spots.entries,
        "rejected": spots.rejected, "skipped": spots.skipped,
        "observed_target": "tag plate rigidly on each hand"})
    return metrics, report
