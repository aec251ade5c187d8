"""Camera pose and joint zeros from a tag plate on each hand (``pipeline=calibrate``).

The arms carry a calibration target rigidly attached to the hand over a grid of spots in physics,
with hidden joint zero offsets; one fit (:func:`stages.arms.perception.extrinsics.fit_extrinsics`)
recovers the camera pose and the offsets -> ``extrinsics/calibration.yaml``. The tagged-peg
procedure is :mod:`stages.arms.calibration.peg`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.artifacts import JsonFile, PngFigure, PngImage
from core.errors import ConfigError, PerceptionError
from core.se3 import axis_rotation, matrix_to_quat
from stages.api import Stage, StageContext, StageResult
from stages.arms.perception.plots import residual_plot
from stages.arms.perception.scene_state import scene_object


@dataclass(frozen=True)
class Spot:
    arm: str
    name: str
    pose: np.ndarray       # ee-site target [x, y, z, qw, qx, qy, qz] (world)
    q: np.ndarray          # nominal IK solution


class PlateExtrinsics(Stage):
    """Camera pose and joint zero offsets from spots the arms visit, in physics.

    **The target.** Each arm carries a *tag plate rigidly attached to its hand* (scene object
    ``targets.<arm>``, kind ``hardware.models.peg:add_tag_plate``) — a calibration target real
    cells use too. The procedure with the tagged peg itself, picked and held over the board, is
    :class:`stages.arms.calibration.peg.PegExtrinsics` (``pipeline=calibrate_peg``; not yet
    as accurate). Everything else is the real procedure: the arm is driven by its position
    actuators with ``mj_step`` (no pose is set), the simulated robot's joints sit at
    ``commanded + hidden offset`` (the actuator targets are offset: the robot does not know its
    true zeros), the arm's belief is its encoder reading minus the hidden offset, the camera
    image is rendered and the plate's pose estimated from its tags, and one fit
    (:func:`stages.arms.perception.extrinsics.fit_extrinsics`) recovers the offsets and the camera pose.

    Spots: per arm a ``grid`` over ``region.<arm>`` (``center`` [x, y], ``size`` [sx, sy]) of the
    gripper site, at ``heights_m`` in turn, the gripper pointing down then turned by a random
    yaw (± ``yaw_deg``), pitch (``pitch_deg`` range; negative tilts the plate up toward the
    camera) and roll (± ``roll_deg``), and a random elbow (joint 3 seed ± ``elbow_rad``) — varied
    so that every joint's axis moves between spots (a joint whose axis never moves cannot be told
    from the camera moving). Spots whose plate would face away from the camera (by the rough
    MJCF camera position, used for planning only) are skipped; IK solutions that bring any
    geometry within ``spot_clearance_m`` (arm-self, arm-arm, arm-scene; the planner's checker)
    are replaced by other solutions, or the spot is skipped. Every move is planned with
    the :class:`~stages.arms.planning.group.ArmGroup` (on the nominal model, as the robot believes it
    is; ``plan_padding_m`` of extra clearance covers the true pose differing by the hidden
    offsets) and executed through the position actuators; every step is watched for contact
    (an ExecutionError if the arm touches anything).

    ``hidden_offsets_deg``: ``{arm: [7 values]}``; null = uniform in ± ``hidden_offsets_max_deg``
    from the stage's seed. Metrics against the hidden truth: ``joint_offset_error_deg_max``,
    ``camera_position_error_m``, ``camera_rotation_error_deg``; and ``spots``, ``residual_rms_m``,
    ``condition_number``, ``unobservable_joints``.
    """

    outputs = ("calibration",)

    def __init__(self, scene: dict, arms: Sequence[str] = ("left", "right"),
                 targets: Mapping[str, str] | None = None, camera: str = "scene_camera",
                 grid: Sequence[int] = (4, 4), region: Mapping[str, Mapping] | None = None,
                 heights_m: Sequence[float] = (0.9, 1.02), yaw_deg: float = 30.0,
                 pitch_deg: Sequence[float] = (-35.0, 5.0), roll_deg: float = 25.0,
                 elbow_rad: float = 0.5, hidden_offsets_deg: Mapping[str, Sequence[float]] | None = None,
                 hidden_offsets_max_deg: float = 1.0, speed_rad_s: float = 0.8,
                 settle_s: float = 0.6, image: dict | None = None, fit: dict | None = None,
                 max_incidence_deg: float = 60.0, min_confidence: float = 0.3,
                 spot_clearance_m: float | None = None, plan_padding_m: float = 0.018,
                 plan_budget_s: float = 10.0, save_spots: int = 4):
        from core.tag_layouts import layout_from_config
        from stages.arms.perception.camera import ImageEffects

        self.arms = [str(a) for a in arms]
        if not self.arms:
            raise ConfigError("extrinsics.arms must name at least one arm")
        targets = dict(targets or {a: f"{a}_hand_tags" for a in self.arms})
        missing = [a for a in self.arms if a not in targets]
        if missing:
            raise ConfigError(f"extrinsics.targets has no target for arm(s) {missing}")
        self.targets = {a: targets[a] for a in self.arms}
        self.layouts = {a: layout_from_config(scene_object(scene, t, f"arm {a}'s calibration target",
                                                      (":add_tag_plate",)), t)
                        for a, t in self.targets.items()}
        dictionaries = {lay.dictionary for lay in self.layouts.values()}
        if len(dictionaries) != 1:
            raise ConfigError(f"extrinsics: the targets use different dictionaries {dictionaries}")
        self.camera = camera
        gx, gy = (int(v) for v in grid)
        if gx < 1 or gy < 1 or gx * gy < 3:
            raise ConfigError(f"extrinsics.grid must be [nx, ny] with at least 3 spots, got {list(grid)}")
        self.grid = (gx, gy)
        default_region = {"left": {"center": [0.55, 0.23], "size": [0.22, 0.22]},
                          "right": {"center": [0.55, -0.23], "size": [0.22, 0.22]}}
        region = {**default_region, **dict(region or {})}
        self.region = {}
        for a in self.arms:
            if a not in region:
                raise ConfigError(f"extrinsics.region has no entry for arm {a!r}")
            r = dict(region[a])
            self.region[a] = (np.asarray(r.get("center"), float), np.asarray(r.get("size"), float))
        self.heights = [float(h) for h in heights_m]
        self.yaw, self.roll = float(yaw_deg), float(roll_deg)
        self.pitch = tuple(float(v) for v in pitch_deg)
        self.elbow = float(elbow_rad)
        self.hidden_cfg = None if hidden_offsets_deg is None else {
            str(a): [float(v) for v in vals] for a, vals in dict(hidden_offsets_deg).items()}
        self.hidden_max = float(hidden_offsets_max_deg)
        self.speed, self.settle_s = float(speed_rad_s), float(settle_s)
        self.effects = ImageEffects.from_config(image, "extrinsics.image")
        fit = dict(fit or {})
        allowed = {"rotation_weight_m", "depth_weight", "loss", "f_scale", "residual",
                   "observability_threshold"}
        unknown = sorted(set(fit) - allowed)
        if unknown:
            raise ConfigError(f"extrinsics.fit: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
        self.fit_kw = fit
        self.max_incidence_deg, self.min_confidence = float(max_incidence_deg), float(min_confidence)
        self.save_spots = int(save_spots)
        self.spot_clearance_m = None if spot_clearance_m is None else float(spot_clearance_m)
        self.plan_padding_m, self.plan_budget_s = float(plan_padding_m), float(plan_budget_s)
        self._check_data = None

    # ------------------------------------------------------------------ planning the spots
    def _hidden(self, robot, rng) -> dict[str, np.ndarray]:
        out = {}
        for a in self.arms:
            n = robot.arm(a).dof
            if self.hidden_cfg is not None:
                if a not in self.hidden_cfg or len(self.hidden_cfg[a]) != n:
                    raise ConfigError(f"extrinsics.hidden_offsets_deg.{a} must list {n} values")
                out[a] = np.radians(self.hidden_cfg[a])
            else:
                out[a] = np.radians(rng.uniform(-self.hidden_max, self.hidden_max, n))
        return out

    def _spots(self, world, arm_name: str, rng, cam_pos: np.ndarray, fk,
               valid) -> tuple[list[Spot], list]:
        """The arm's spots: nominal IK solutions that ``valid(q)`` accepts, plate facing the camera."""
        from core.errors import PlanningError
        from stages.arms.planning.ik import ArmIK

        arm = world.robot.arm(arm_name)
        home_q = world.home_qpos()
        ik = ArmIK(world.model, arm.joints, arm.ee_site, np.asarray(arm.lower) + 0.05,
                   np.asarray(arm.upper) - 0.05, base_qpos=home_q)
        R_down = np.asarray(ik.forward(np.asarray(arm.home))[3:], float)
        import mujoco

        Rd = np.zeros(9)
        mujoco.mju_quat2Mat(Rd, R_down)
        Rd = Rd.reshape(3, 3)
        center, size = self.region[arm_name]
        gx, gy = self.grid
        xs = center[0] + (np.linspace(-0.5, 0.5, gx) if gx > 1 else np.zeros(1)) * size[0]
        ys = center[1] + (np.linspace(-0.5, 0.5, gy) if gy > 1 else np.zeros(1)) * size[1]
        spots, skipped = [], []
        q_prev = np.asarray(arm.home, float)
        k = 0
        for i, x in enumerate(xs):
            for y in (ys if i % 2 == 0 else ys[::-1]):  # snake order: neighbours are close
                z = self.heights[k % len(self.heights)]
                name = f"{arm_name}{k:02d}"
                k += 1
                yaw = rng.uniform(-self.yaw, self.yaw)
                pitch = rng.uniform(*self.pitch)
                roll = rng.uniform(-self.roll, self.roll)
                R = axis_rotation("z", yaw) @ axis_rotation("y", pitch) @ axis_rotation("x", roll) @ Rd
                pose = np.concatenate([[x, y, z], matrix_to_quat(R)])
                seed = q_prev.copy()
                seed[2] = np.clip(seed[2] + rng.uniform(-self.elbow, self.elbow), arm.lower[2],
                                  arm.upper[2])
                sol = ik.solve_once(pose, seed) or ik.solve_once(pose, q_prev)
                if sol is None or not valid(sol.q):
                    try:  # other solutions (elbow, wrist) that keep their distance
                        sol = ik.solve(pose, q_prev, rng, max_solutions=1, restarts=30,
                                       accept=valid)[0]
                    except PlanningError as e:
                        skipped.append({"spot": name, "reason": str(e)})
                        continue
                T_target = fk(arm_name, sol.q)
                n = T_target[:3, 2]  # the plate's normal
                to_cam = cam_pos - T_target[:3, 3]
                inc = float(np.degrees(np.arccos(np.clip(n @ to_cam / np.linalg.norm(to_cam), -1, 1))))
                if inc > self.max_incidence_deg:
                    skipped.append({"spot": name, "reason": f"plate {inc:.0f} deg from facing the camera"})
                    continue
                spots.append(Spot(arm_name, name, pose, np.asarray(sol.q, float)))
                q_prev = np.asarray(sol.q, float)
        return spots, skipped

    def _go(self, group, arm: str, q_from, q_to, model, data, actuators, offsets, watch, rng,
            hold_s: float) -> np.ndarray:
        """Plan ``arm`` from ``q_from`` to ``q_to`` with the ArmGroup (the other arms hold still at
        home, where they are), then drive the actuators along the path, offset by the hidden
        joint zeros. Returns ``q_to`` (the new commanded configuration)."""
        from stages.arms.perception.sim import move_joints

        start = np.concatenate([np.asarray(group.arms[n].home, float) for n in group.arms])
        sl = group.arm_slice(arm)
        start[sl] = q_from
        path = group.plan_to_joints({arm: list(q_to)}, start, rng).path.waypoints[:, sl]
        for k in range(1, len(path)):
            dur = max(0.4, float(np.max(np.abs(path[k] - path[k - 1]))) / self.speed)
            move_joints(model, data, actuators, path[k - 1] + offsets, path[k] + offsets, dur,
                        hold_s if k == len(path) - 1 else 0.0, watch)
        return np.asarray(q_to, float)

    # ------------------------------------------------------------------ running
    def run(self, ctx: StageContext, world, intrinsics=None) -> StageResult:
        import mujoco

        from core.errors import PlanningError
        from core.se3 import rotation_angle_deg
        from stages.arms.perception.calibration import Calibration, CalibrationFile, now_iso
        from stages.arms.perception.camera import SceneCamera
        from stages.arms.perception.detection import TagDetector
        from stages.arms.perception.extrinsics import Observation, fit_extrinsics
        from stages.arms.perception.peg_pose import draw_overlay, estimate_pose
        from stages.arms.perception.sim import MujocoTargetFK, arm_body_ids
        from stages.arms.planning.checker import ClearanceChecker
        from stages.arms.planning.goals import make_group
        from stages.arms.planning.group import PlannerSettings

        t_start = time.perf_counter()
        model, robot = world.model, world.robot
        rng = ctx.rng
        for a in self.arms:
            robot.arm(a)  # ConfigError listing the arms when unknown
        hidden = self._hidden(robot, rng)
        fk = MujocoTargetFK(model, robot, self.targets, world.home_qpos())
        data = mujoco.MjData(model)
        data.qpos[:] = world.home_qpos()
        for a in self.arms:  # the robot really stands at home + its (unknown) offsets
            arm = robot.arm(a)
            data.qpos[list(arm.qpos_indices)] = np.asarray(arm.home) + hidden[a]
        mujoco.mj_forward(model, data)
        from stages.arms.perception.sim import hold_actuators_at_qpos

        hold_actuators_at_qpos(model, data)
        cam = SceneCamera(model, self.camera, self.effects)
        true_cam = cam.model_at(data)
        est_cam = true_cam
        if intrinsics is not None:
            cal_in = intrinsics.calibration if hasattr(intrinsics, "calibration") else intrinsics
            est_cam = true_cam.with_intrinsics(cal_in.camera_matrix, cal_in.distortion)
        detector = TagDetector(next(iter(self.layouts.values())).dictionary)
        group = make_group(world, self.arms, PlannerSettings(padding_m=self.plan_padding_m,
                                                             time_budget_s=self.plan_budget_s))
        home_group = np.concatenate([np.asarray(robot.arm(n).home, float) for n in group.arms])
        spot_clearance = (self.spot_clearance_m if self.spot_clearance_m is not None
                          else world.clearance_m + self.plan_padding_m + 0.001)  # what plans need
        spot_checker = ClearanceChecker.for_world(world, group.joint_names, spot_clearance)
        observations, rejected, spot_files = [], [], {}
        spot_log, skipped_all = [], []
        try:
            for a in self.arms:
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

                spots, skipped = self._spots(world, a, rng, true_cam.T_world_cam[:3, 3], fk, valid)
                skipped_all += skipped
                ctx.log.info("arm %s: %d spots planned (%d skipped)", a, len(spots), len(skipped))
                for sk in skipped:
                    ctx.log.debug("skipped spot %s: %s", sk["spot"], sk["reason"])
                cmd = np.asarray(arm.home, float)
                for spot in ctx.progress(spots, desc=f"extrinsics {a}"):
                    try:
                        cmd = self._go(group, a, cmd, spot.q, model, data, acts, hidden[a], watch,
                                       rng, self.settle_s)
                    except PlanningError as e:
                        skipped_all.append({"spot": spot.name, "reason": f"no plan: {e}"})
                        continue
                    ctx.metrics["spots_visited"] = ctx.metrics.get("spots_visited", 0) + 1
                    q_believed = data.qpos[list(arm.qpos_indices)] - hidden[a]  # encoder reading
                    image = cam.render(data, rng)
                    dets = detector.detect(image)
                    layout = self.layouts[a]
                    entry = {"spot": spot.name, "arm": a, "q_believed": q_believed.tolist(),
                             "target_pose": spot.pose.tolist()}
                    try:
                        est = estimate_pose(dets, layout, est_cam, None, max_incidence_deg=80.0)
                    except PerceptionError as e:
                        rejected.append({"spot": spot.name, "reason": str(e)})
                        spot_log.append({**entry, "rejected": str(e)})
                        continue
                    partial = len(est.tag_ids) < len(layout.ids)
                    if est.ambiguous or est.confidence < self.min_confidence or partial:
                        reason = (f"{len(est.tag_ids)}/{len(layout.ids)} tags, confidence "
                                  f"{est.confidence:.2f}, resolved by {est.resolved_by}")
                        rejected.append({"spot": spot.name, "reason": reason})
                        spot_log.append({**entry, "rejected": reason})
                        continue
                    ids = list(est.tag_ids)
                    obj = layout.corners(ids).reshape(-1, 3)
                    by_id = {int(i): c for i, c in zip(dets.ids, dets.corners, strict=True)}
                    img_pts = np.concatenate([by_id[i] for i in ids])
                    observations.append(Observation(a, q_believed, est.T_cam_obj, 1.0, spot.name,
                                                    obj, img_pts))
                    true_T = true_cam.T_cam_world @ fk(a, data.qpos[list(arm.qpos_indices)])
                    entry.update({"T_cam_target": est.T_cam_obj.tolist(), "tag_ids": ids,
                                  "image_points": img_pts.tolist(),
                                  "reprojection_px": est.reprojection_px, "confidence": est.confidence,
                                  "perception_position_error_m": float(np.linalg.norm(
                                      est.T_cam_obj[:3, 3] - true_T[:3, 3])),
                                  "perception_rotation_error_deg": rotation_angle_deg(
                                      est.T_cam_obj[:3, :3], true_T[:3, :3])})
                    spot_log.append(entry)
                    if len(spot_files) < self.save_spots:
                        spot_files[f"spot_{spot.name}.png"] = PngImage(
                            draw_overlay(image, layout, est_cam, est, dets))
                self._go(group, a, cmd, np.asarray(arm.home, float), model, data, acts, hidden[a],
                         watch, rng, 0.2)
        finally:
            cam.close()
        ctx.metrics.update({"spots": len(observations), "spots_rejected": len(rejected),
                            "spots_skipped": len(skipped_all)})
        if rejected:
            ctx.log.warning("%d spots rejected, e.g. %s", len(rejected), rejected[:2])
        joint_names = {a: list(robot.arm(a).joints) for a in self.arms}
        kw = dict(self.fit_kw)
        fit = fit_extrinsics(observations, fk, {a: robot.arm(a).dof for a in self.arms},
                             joint_names=joint_names, camera_matrix=est_cam.K,
                             distortion=est_cam.dist, **kw)
        for w in fit.warnings:
            ctx.log.warning("extrinsics: %s", w)
        # scores against the hidden truth
        off_err = max(float(np.max(np.abs(np.degrees(fit.joint_offsets_rad[a] - hidden[a]))))
                      for a in self.arms)
        T_true = true_cam.T_world_cam
        cam_pos_err = float(np.linalg.norm(fit.T_world_cam[:3, 3] - T_true[:3, 3]))
        cam_rot_err = rotation_angle_deg(fit.T_world_cam[:3, :3], T_true[:3, :3])
        metrics = {"spots": len(observations), "spots_rejected": len(rejected),
                   "spots_skipped": len(skipped_all), "residual_rms_m": fit.residual_rms_m,
                   "residual_rms_deg": fit.residual_rms_deg,
                   **({"residual_rms_px": fit.residual_rms_px} if fit.residual_rms_px is not None else {}),
                   "joint_offset_error_deg_max": off_err, "camera_position_error_m": cam_pos_err,
                   "camera_rotation_error_deg": cam_rot_err,
                   "condition_number": fit.condition_number,
                   "condition_number_fitted": fit.condition_number_fitted,
                   "unobservable_joints": len(fit.unobservable),
                   "min_observability": float(min(np.min(v) for v in fit.observability.values())),
                   "offset_std_deg_max": float(max(np.max(v) for v in fit.offset_std_deg.values())),
                   "time_s": time.perf_counter() - t_start}
        ctx.log.info("extrinsics: %d spots, residual %.2f mm / %.3f deg; offsets max error %.3f deg; "
                     "camera %.2f mm, %.3f deg; cond %.0f", len(observations),
                     fit.residual_rms_m * 1000, fit.residual_rms_deg, off_err, cam_pos_err * 1000,
                     cam_rot_err, fit.condition_number)
        report = fit.summary(joint_names)
        report.update({
            "hidden_offsets_deg": {a: np.degrees(v).tolist() for a, v in hidden.items()},
            "offset_errors_deg": {a: np.degrees(fit.joint_offsets_rad[a] - hidden[a]).tolist()
                                  for a in self.arms},
            "true_T_world_cam": T_true.tolist(), "camera_position_error_m": cam_pos_err,
            "camera_rotation_error_deg": cam_rot_err, "spots": spot_log, "rejected": rejected,
            "skipped": skipped_all,
            "observed_target": "tag plate rigidly on each hand"})
        cal = Calibration(est_cam.K, est_cam.dist, (est_cam.width, est_cam.height), fit.T_world_cam,
                          {a: fit.joint_offsets_rad[a] for a in self.arms}, joint_names,
                          date=now_iso(), source_run=str(ctx.out_dir.parent), camera_name=self.camera,
                          method="joint fit of camera pose and joint zero offsets (hand tag plates)",
                          metrics={"residual_rms_m": fit.residual_rms_m,
                                   "condition_number": min(fit.condition_number, 1e300),
                                   "spots": len(observations)})
        files = {"report.json": JsonFile(report), "residuals.png": PngFigure(residual_plot(fit)),
                 **spot_files}
        return StageResult(outputs={"calibration": CalibrationFile(cal)}, metrics=metrics, files=files)
