"""Simulation only: the hidden truth a calibration in simulation is scored against.

The simulated drivers carry hidden joint zero offsets (given, or drawn here from the stage's
seed); at every spot the simulator knows where the target really is; a fit is scored against
both. For the peg, the error's split: the same images restated with the peg's true place in the
hand at every spot (as if it never moved there), fitted with that place known (``known_grasp``:
what the spots and the camera give) and with it fitted (``rigid_grasp``: what fitting the grasp
costs, slip or no slip).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from core.errors import ConfigError
from core.se3 import invert, rotation_angle_deg
from stages.arms.calibration.results import PegCalibrationFit, PegScores, Scores
from stages.arms.calibration.settings import PlateCalibrationSettings
from stages.arms.calibration.spots import SpotLog
from stages.arms.execution.settings import HardwareSettings
from stages.arms.perception.camera import CameraModel
from stages.arms.perception.extrinsics import fit_extrinsics
from stages.arms.perception.extrinsics_model import ForwardKinematics, Observation
from stages.arms.perception.extrinsics_result import ExtrinsicsFit


# ---------------------------------------------------------------------- the hidden offsets
def peg_hidden_offsets_deg(hardware: HardwareSettings, robot, max_deg: float,
                           rng: np.random.Generator) -> dict[str, list[float]]:
    """Every arm's hidden offsets (deg): ``hardware.joint_offsets_deg`` (arms not listed: zero), or
    uniform in ± ``max_deg`` when it is unset."""
    given = hardware.joint_offsets_deg
    if given:
        return {a.name: list(map(float, given.get(a.name, [0.0] * a.dof))) for a in robot.arms}
    return {a.name: rng.uniform(-max_deg, max_deg, a.dof).tolist() for a in robot.arms}


def plate_hidden_offsets_rad(settings: PlateCalibrationSettings, robot,
                             rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The calibrated arms' hidden offsets (rad): ``hidden_offsets_deg``, or uniform in
    ± ``hidden_offsets_max_deg`` when it is null."""
    out = {}
    for a in settings.arms:
        n = robot.arm(a).dof
        if settings.hidden_offsets_deg is not None:
            values = settings.hidden_offsets_deg.get(a)
            if values is None or len(values) != n:
                raise ConfigError(f"pipeline.stages.extrinsics.hidden_offsets_deg.{a} must list {n} values")
            out[a] = np.radians(values)
        else:
            limit = settings.hidden_offsets_max_deg
            out[a] = np.radians(rng.uniform(-limit, limit, n))
    return out


# ---------------------------------------------------------------------- the truth at a spot
def perception_errors(T_seen: np.ndarray, T_true: np.ndarray) -> dict[str, float]:  # noqa: N803
    """How far the camera's estimate of a target's pose is from the truth (m, deg)."""
    return {"perception_position_error_m": float(np.linalg.norm(T_seen[:3, 3] - T_true[:3, 3])),
            "perception_rotation_error_deg": rotation_angle_deg(T_seen[:3, :3], T_true[:3, :3])}


def true_peg_in_hand(rig, fk: ForwardKinematics, arm: str) -> tuple[np.ndarray, np.ndarray]:
    """The peg's true place in ``arm``'s hand (``T_hand_peg``) and in the camera (the simulator's)."""
    T_peg_true = rig.true_peg_pose()
    T_cam_true = invert(rig.estimator.camera.T_world_cam) @ T_peg_true
    T_hand_true = fk(arm, rig.sim.snapshot()[1][list(rig.world.robot.arm(arm).qpos_indices)])
    return invert(T_hand_true) @ T_peg_true, T_cam_true


# ---------------------------------------------------------------------- scores
def fitted_scores(fit: ExtrinsicsFit, hidden_rad: Mapping[str, np.ndarray],
                  T_world_cam_true: np.ndarray) -> Scores:  # noqa: N803
    """The worst offset error over the fitted joints (deg; the ones held at zero left out) and the
    camera's position (m) and rotation (deg) errors."""
    held = set(fit.unobservable)
    fitted = [abs(float(np.degrees(fit.joint_offsets_rad[a][i] - hidden_rad[a][i])))
              for a in fit.joint_offsets_rad for i in range(len(hidden_rad[a])) if (a, i) not in held]
    return Scores(max(fitted) if fitted else float("nan"),
                  float(np.linalg.norm(fit.T_world_cam[:3, 3] - T_world_cam_true[:3, 3])),
                  rotation_angle_deg(fit.T_world_cam[:3, :3], T_world_cam_true[:3, :3]))


def plate_scores(fit: ExtrinsicsFit, hidden_rad: Mapping[str, np.ndarray], T_world_cam_true: np.ndarray,  # noqa: N803
                 arms: Sequence[str]) -> Scores:
    """The worst offset error over every joint (deg) and the camera's errors (m, deg)."""
    off_err = max(float(np.max(np.abs(np.degrees(fit.joint_offsets_rad[a] - hidden_rad[a])))) for a in arms)
    return Scores(off_err, float(np.linalg.norm(fit.T_world_cam[:3, 3] - T_world_cam_true[:3, 3])),
                  rotation_angle_deg(fit.T_world_cam[:3, :3], T_world_cam_true[:3, :3]))


def in_hand(o: Observation, T_hand_peg: np.ndarray) -> Observation:  # noqa: N803
    """An observation restated with the hand as its target (the peg's corners in the hand frame)."""
    R, t = T_hand_peg[:3, :3], T_hand_peg[:3, 3]
    return dataclasses.replace(o, T_cam_target=o.T_cam_target @ np.linalg.inv(T_hand_peg),
                               object_points=np.asarray(o.object_points) @ R.T + t)


def grasp_drift_m(log: SpotLog) -> float:
    """The largest move of the peg in the hand (truth) from an arm's first seen spot: how far the
    grasp strays from one set of unknowns."""
    first, out = {}, 0.0
    for o in log.observations:
        p = log.true_grasps[o.name][:3, 3]
        out = max(out, float(np.linalg.norm(p - first.setdefault(o.arm, p))))
    return out


def error_split(result: PegCalibrationFit) -> dict[str, ExtrinsicsFit]:
    """The same images restated with the peg's true place in the hand at every spot, fitted with
    the grasp known (``known_grasp``) and unknown as the calibration fits it (``rigid_grasp``)."""
    log, s = result.spots, result.settings
    restated = [in_hand(o, log.true_grasps[o.name]) for o in log.observations]
    at_hand = {a: np.eye(4) for a in result.dofs}
    common = result.camera_options()
    return {"known_grasp": fit_extrinsics(restated, result.fk, result.dofs, grasps=at_hand, grasp_free=(),
                                          **common, **s.options()),
            "rigid_grasp": fit_extrinsics(restated, result.fk, result.dofs, grasps=at_hand,
                                          grasp_knots=result.knots, **common, **s.grasp_options())}


def peg_scores(result: PegCalibrationFit, hidden_deg: Mapping[str, Sequence[float]],
               true_camera: CameraModel) -> PegScores:
    """The peg calibration against the simulator's truth (the error split fitted here)."""
    hidden = {a: np.radians(hidden_deg[a]) for a in result.dofs}
    T_true = true_camera.T_world_cam
    split = error_split(result)
    return PegScores(
        hidden_offsets_deg={a: list(v) for a, v in hidden_deg.items()},
        offset_errors_deg={a: np.degrees(result.fit.joint_offsets_rad[a] - hidden[a]) for a in result.dofs},
        fit=fitted_scores(result.fit, hidden, T_true),
        split={k: (d, fitted_scores(d, hidden, T_true)) for k, d in split.items()},
        grasp_slip_m_max=grasp_drift_m(result.spots), true_T_world_cam=T_true)
