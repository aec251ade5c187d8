"""Camera pose and joint zeros from a tag plate on each hand (``pipeline=calibrate``).

**The target.** Each arm carries a *tag plate rigidly attached to its hand* (scene object
``targets.<arm>``, kind ``hardware.models.peg:add_tag_plate``) — a calibration target real
cells use too. The procedure with the tagged peg itself, picked and held over the board, is
:class:`stages.arms.calibration.peg_procedure.PegCalibration` (``pipeline=calibrate_peg``).
Everything else is the real procedure: the arm is driven by its position actuators with
``mj_step`` (no pose is set), the simulated robot's joints sit at ``commanded + hidden offset``
(the actuator targets are offset: the robot does not know its true zeros), the arm's belief is
its encoder reading minus the hidden offset, the camera image is rendered and the plate's pose
estimated from its tags, and one fit (:func:`stages.arms.perception.extrinsics.fit_extrinsics`)
recovers the offsets and the camera pose.

Spots (:class:`~stages.arms.calibration.settings.PlateCalibrationSettings`): varied so that every
joint's axis moves between spots (a joint whose axis never moves cannot be told from the camera
moving). Spots whose plate would face away from the camera (by the rough MJCF camera position,
used for planning only) are skipped; IK solutions that bring any geometry within
``spot_clearance_m`` (arm-self, arm-arm, arm-scene; the planner's checker) are replaced by other
solutions, or the spot is skipped. Every move is planned with the
:class:`~stages.arms.planning.group.ArmGroup` (on the nominal model, as the robot believes it
is; ``plan_padding_m`` of extra clearance covers the true pose differing by the hidden
offsets) and executed through the position actuators; every step is watched for contact
(an ExecutionError if the arm touches anything).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import ConfigError, PerceptionError, PlanningError
from core.se3 import axis_rotation, matrix_to_quat
from core.tag_layouts import TagLayout, layout_from_config
from stages.arms.calibration.results import CalibrationFit
from stages.arms.calibration.scoring import perception_errors
from stages.arms.calibration.settings import PlateCalibrationSettings
from stages.arms.calibration.spots import SpotLog, SpotView, grid_points, no_watcher
from stages.arms.perception.calibration import Calibration
from stages.arms.perception.camera import SceneCamera
from stages.arms.perception.detection import TagDetector
from stages.arms.perception.extrinsics import fit_extrinsics
from stages.arms.perception.extrinsics_model import Observation
from stages.arms.perception.peg_pose import draw_overlay, estimate_pose
from stages.arms.perception.scene_config import scene_object
from stages.arms.perception.sim import MujocoTargetFK, arm_body_ids, hold_actuators_at_qpos, move_joints
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.goals import make_group
from stages.arms.planning.ik import ArmIK
from stages.arms.planning.settings import PlannerSettings

LOG = logging.getLogger(__name__)


def _no_progress(items, total=None, desc=None):
    return items


@dataclass(frozen=True)
class Spot:
    arm: str
    name: str
    pose: np.ndarray       # ee-site target [x, y, z, qw, qx, qy, qz] (world)
    q: np.ndarray          # nominal IK solution


def plate_layouts(scene: Mapping[str, Any], settings: PlateCalibrationSettings) -> dict[str, TagLayout]:
    """Every arm's tag plate layout (``scene.objects.<target>``); one tag dictionary for all."""
    layouts = {a: layout_from_config(scene_object(scene, t, f"arm {a}'s calibration target",
                                                  (":add_tag_plate",)), t)
               for a, t in settings.arm_targets.items()}
    dictionaries = {lay.dictionary for lay in layouts.values()}
    if len(dictionaries) != 1:
        raise ConfigError(f"extrinsics: the targets use different dictionaries {dictionaries}")
    return layouts


class PlateCalibration:
    """The procedure in ``world`` (its model, the arms at home + ``hidden_rad``, in physics) for
    ``settings``, seen through ``intrinsics`` (None: the simulator's camera matrix).
    :meth:`observe` visits the spots and observes the plates (:attr:`visited` counts the spots
    reached so far, :attr:`spots` logs them), :meth:`fit` fits."""

    def __init__(self, world, settings: PlateCalibrationSettings, layouts: Mapping[str, TagLayout],
                 hidden_rad: Mapping[str, np.ndarray], intrinsics: Calibration | None = None,
                 log: logging.Logger = LOG, progress: Callable[..., Iterable] = _no_progress,
                 on_view: Callable[[SpotView], None] = no_watcher):
        self.world, self.settings, self.layouts, self.hidden = world, settings, dict(layouts), hidden_rad
        self.intrinsics, self.log, self.progress, self.on_view = intrinsics, log, progress, on_view
        self.spots = SpotLog()
        self.visited = 0
        self.fk = MujocoTargetFK(world.model, world.robot, settings.arm_targets, world.home_qpos())
        self.true_camera = self.camera = None   # the simulator's camera, and as seen through intrinsics

    def _spots(self, arm_name: str, rng, cam_pos: np.ndarray, fk, valid) -> tuple[list[Spot], list]:
        """The arm's spots: nominal IK solutions that ``valid(q)`` accepts, plate facing the camera."""
        import mujoco

        s, world = self.settings, self.world
        arm = world.robot.arm(arm_name)
        ik = ArmIK(world.model, arm.joints, arm.ee_site, np.asarray(arm.lower) + 0.05,
                   np.asarray(arm.upper) - 0.05, base_qpos=world.home_qpos())
        R_down = np.asarray(ik.forward(np.asarray(arm.home))[3:], float)
        Rd = np.zeros(9)
        mujoco.mju_quat2Mat(Rd, R_down)
        Rd = Rd.reshape(3, 3)
        spots, skipped = [], []
        q_prev = np.asarray(arm.home, float)
        for k, (x, y) in enumerate(grid_points(s.regions[arm_name], s.grid)):
            z = s.heights_m[k % len(s.heights_m)]
            name = f"{arm_name}{k:02d}"
            yaw = rng.uniform(-s.yaw_deg, s.yaw_deg)
            pitch = rng.uniform(*s.pitch_deg)
            roll = rng.uniform(-s.roll_deg, s.roll_deg)
            R = axis_rotation("z", yaw) @ axis_rotation("y", pitch) @ axis_rotation("x", roll) @ Rd
            pose = np.concatenate([[x, y, z], matrix_to_quat(R)])
            seed = q_prev.copy()
            seed[2] = np.clip(seed[2] + rng.uniform(-s.elbow_rad, s.elbow_rad), arm.lower[2], arm.upper[2])
            sol = ik.solve_once(pose, seed) or ik.solve_once(pose, q_prev)
            if sol is None or not valid(sol.q):
                try:  # other solutions (elbow, wrist) that keep their distance
                    sol = ik.solve(pose, q_prev, rng, max_solutions=1, restarts=30, accept=valid)[0]
                except PlanningError as e:
                    skipped.append({"spot": name, "reason": str(e)})
                    continue
            T_target = fk(arm_name, sol.q)
            n = T_target[:3, 2]  # the plate's normal
            to_cam = cam_pos - T_target[:3, 3]
            inc = float(np.degrees(np.arccos(np.clip(n @ to_cam / np.linalg.norm(to_cam), -1, 1))))
            if inc > s.max_incidence_deg:
                skipped.append({"spot": name, "reason": f"plate {inc:.0f} deg from facing the camera"})
                continue
            spots.append(Spot(arm_name, name, pose, np.asarray(sol.q, float)))
            q_prev = np.asarray(sol.q, float)
        return spots, skipped

    def _go(self, group, arm: str, q_from, q_to, data, actuators, offsets, watch, rng,
            hold_s: float) -> np.ndarray:
        """Plan ``arm`` from ``q_from`` to ``q_to`` with the ArmGroup (the other arms hold still at
        home, where they are), then drive the actuators along the path, offset by the hidden
        joint zeros. Returns ``q_to`` (the new commanded configuration)."""
        start = np.concatenate([np.asarray(group.arms[n].home, float) for n in group.arms])
        sl = group.arm_slice(arm)
        start[sl] = q_from
        path = group.plan_to_joints({arm: list(q_to)}, start, rng).path.waypoints[:, sl]
        for k in range(1, len(path)):
            dur = max(0.4, float(np.max(np.abs(path[k] - path[k - 1]))) / self.settings.speed_rad_s)
            move_joints(self.world.model, data, actuators, path[k - 1] + offsets, path[k] + offsets, dur,
                        hold_s if k == len(path) - 1 else 0.0, watch)
        return np.asarray(q_to, float)

    def observe(self, rng: np.random.Generator) -> None:
        """Visit every arm's spots in physics and observe the plates."""
        import mujoco

        s, world, log, hidden, fk = self.settings, self.world, self.spots, self.hidden, self.fk
        model, robot = world.model, world.robot
        data = mujoco.MjData(model)
        data.qpos[:] = world.home_qpos()
        for a in s.arms:  # the robot really stands at home + its (unknown) offsets
            arm = robot.arm(a)
            data.qpos[list(arm.qpos_indices)] = np.asarray(arm.home) + hidden[a]
        mujoco.mj_forward(model, data)
        hold_actuators_at_qpos(model, data)
        cam = SceneCamera(model, s.camera, s.image)
        self.true_camera = true_cam = cam.model_at(data)
        self.camera = est_cam = true_cam
        if self.intrinsics is not None:
            self.camera = est_cam = true_cam.with_intrinsics(self.intrinsics.camera_matrix,
                                                             self.intrinsics.distortion)
        detector = TagDetector(next(iter(self.layouts.values())).dictionary)
        group = make_group(world, s.arms, PlannerSettings(padding_m=s.plan_padding_m,
                                                          time_budget_s=s.plan_budget_s))
        home_group = np.concatenate([np.asarray(robot.arm(n).home, float) for n in group.arms])
        spot_clearance = (s.spot_clearance_m if s.spot_clearance_m is not None
                          else world.clearance_m + s.plan_padding_m + 0.001)  # what plans need
        spot_checker = ClearanceChecker.for_world(world, group.joint_names, spot_clearance)
        try:
            for a in s.arms:
                arm = robot.arm(a)
                acts = list(arm.joint_actuator_ids)
                if min(acts) < 0:
                    raise ConfigError(f"arm {a!r}: every joint needs a position actuator to run "
                                      "the calibration in physics")
                watch = arm_body_ids(model, arm)
                sl = group.arm_slice(a)

                def valid(q, sl=sl):
                    full = home_group.copy()
                    full[sl] = q
                    return spot_checker.is_valid(full)

                spots, skipped = self._spots(a, rng, true_cam.T_world_cam[:3, 3], fk, valid)
                log.skipped += skipped
                self.log.info("arm %s: %d spots planned (%d skipped)", a, len(spots), len(skipped))
                for sk in skipped:
                    self.log.debug("skipped spot %s: %s", sk["spot"], sk["reason"])
                cmd = np.asarray(arm.home, float)
                for spot in self.progress(spots, desc=f"extrinsics {a}"):
                    try:
                        cmd = self._go(group, a, cmd, spot.q, data, acts, hidden[a], watch, rng, s.settle_s)
                    except PlanningError as e:
                        log.skipped.append({"spot": spot.name, "reason": f"no plan: {e}"})
                        continue
                    self.visited += 1
                    self._observe(spot, cam, est_cam, detector, data, fk, rng)
                self._go(group, a, cmd, np.asarray(arm.home, float), data, acts, hidden[a], watch, rng, 0.2)
        finally:
            cam.close()

    def _observe(self, spot: Spot, cam, est_cam, detector, data, fk, rng) -> None:
        """Read the joints, render, detect and estimate the plate's pose; log the spot."""
        s, log, a = self.settings, self.spots, spot.arm
        arm = self.world.robot.arm(a)
        q_believed = data.qpos[list(arm.qpos_indices)] - self.hidden[a]  # encoder reading
        image = cam.render(data, rng)
        dets = detector.detect(image)
        layout = self.layouts[a]
        entry = {"spot": spot.name, "arm": a, "q_believed": q_believed.tolist(),
                 "target_pose": spot.pose.tolist()}
        try:
            est = estimate_pose(dets, layout, est_cam, None, max_incidence_deg=80.0)
        except PerceptionError as e:
            est, reason = None, str(e)
        else:
            partial = len(est.tag_ids) < len(layout.ids)
            reason = (f"{len(est.tag_ids)}/{len(layout.ids)} tags, confidence {est.confidence:.2f}, "
                      f"resolved by {est.resolved_by}"
                      if est.ambiguous or est.confidence < s.min_confidence or partial else None)
        view = SpotView(float(data.time), a, spot.name, image, dets, None if reason else est, layout, est_cam,
                        reason)
        self.on_view(view)
        if reason is not None:
            log.rejected.append({"spot": spot.name, "reason": reason})
            log.entries.append({**entry, "rejected": reason})
            return
        ids = list(est.tag_ids)
        obj = layout.corners(ids).reshape(-1, 3)
        by_id = {int(i): c for i, c in zip(dets.ids, dets.corners, strict=True)}
        img_pts = np.concatenate([by_id[i] for i in ids])
        log.observations.append(Observation(a, q_believed, est.T_cam_obj, 1.0, spot.name, obj, img_pts))
        true_T = self.true_camera.T_cam_world @ fk(a, data.qpos[list(arm.qpos_indices)])
        entry.update({"T_cam_target": est.T_cam_obj.tolist(), "tag_ids": ids,
                      "image_points": img_pts.tolist(),
                      "reprojection_px": est.reprojection_px, "confidence": est.confidence,
                      **perception_errors(est.T_cam_obj, true_T)})
        log.entries.append(entry)
        if len(log.images) < s.save_spots:
            log.images[f"spot_{spot.name}.png"] = draw_overlay(image, layout, est_cam, est, dets)

    def fit(self) -> CalibrationFit:
        """One fit of the camera pose and the joint offsets over the spots seen."""
        s, log, robot, fk, est_cam = self.settings, self.spots, self.world.robot, self.fk, self.camera
        if log.rejected:
            self.log.warning("%d spots rejected, e.g. %s", len(log.rejected), log.rejected[:2])
        joint_names = {a: list(robot.arm(a).joints) for a in s.arms}
        dofs = {a: robot.arm(a).dof for a in s.arms}
        fit = fit_extrinsics(log.observations, fk, dofs, joint_names=joint_names, camera_matrix=est_cam.K,
                             distortion=est_cam.dist, **s.fit.options())
        for w in fit.warnings:
            self.log.warning("extrinsics: %s", w)
        return CalibrationFit(fit, log, fk, dofs, joint_names, est_cam)
