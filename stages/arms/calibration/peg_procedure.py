"""Camera pose and joint zeros from the tagged peg, carried by each arm over the board.

The procedure a real cell runs, on the reset's code path (``stages.arms.reset``: the ResetRig's
physics drivers, grippers and camera; the ResetPlanner's pick, planned whole and verified):
each arm in turn finds the peg with the camera, picks it up, and holds it over the board at a
grid of spots — turned about the vertical, tilted and raised, so every joint moves between
spots — then sets it down for the next arm. In ``scene=calib_cell`` (the pipeline's default) the
grip is form-fit (:mod:`hardware.models.grip`: studs on the pads in pockets of the peg; after
the lift the arm swings its wrist until the fingers' opening shows them seated, ``seat_*``), so
the peg stays put in the fingers and one constant grasp per arm is fitted. Held by friction
alone (``scene=reset_cell``) it walks and creeps there (MuJoCo's friction holds velocities, not
places); for that grip, after every ``revisit_every``
seen spots the arm goes back to the joints of a reference spot and looks again: the kinematics
there are the same, so whatever the camera sees change is the peg moving in the fingers. The
reference is chosen first, for how well the camera sees the peg there (``reference_gap_m``,
``reference_turns_deg``; else the first seen spot). At every spot the arm's belief (its driver's
joint readings, nominal zeros) is paired with the peg's pose and tag corners as the camera sees
them, in the mean of a burst of ``frames`` images (the still scene: the pixel noise falls as
1/sqrt(frames)). In simulation, ``hold_noslip_iterations`` runs MuJoCo's noslip post-solver while
the peg is held lifted (``ResetRig.set_holding``): soft friction alone lets it creep centimetres
in the fingers under its own weight over a run, which no real grip does. The simulated driver
carries hidden joint zero offsets (``hardware.joint_offsets_deg``; random in
± ``hidden_offsets_max_deg`` when unset): the physics runs at commanded + offset, the readings
are what the robot believes.

One fit (:func:`stages.arms.perception.extrinsics.fit_extrinsics`) estimates the camera pose, every
arm's joint offsets and, per arm, where its fingers really hold the peg (along the peg, along the
approach, the pivot about the closing axis; nominal: the planned grasp) and, with
``fit.grasp_creep``, the steady rate at which the peg creeps there (friction under a steady load;
each spot carries its time) or, with ``fit.grasp_knots``, a piecewise-linear drift with a knot
at every reference view. Joints the spots do not constrain are held at zero and named; the
offset error is reported over the fitted joints. The scoring against the simulator's truth, and
the error's split between the camera, the grasp's unknowns and the slip, is
:mod:`stages.arms.calibration.scoring`; the pick, the seating and the set-down are
:mod:`stages.arms.calibration.peg_motions`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable

import numpy as np

from core.errors import PerceptionError, PlanningError
from core.se3 import axis_rotation, invert, pose7
from stages.arms.calibration.peg_motions import PegMotions
from stages.arms.calibration.results import PegCalibrationFit
from stages.arms.calibration.scoring import perception_errors, true_peg_in_hand
from stages.arms.calibration.settings import PegCalibrationSettings
from stages.arms.calibration.spots import (
    SpotLog,
    SpotView,
    free_end_toward,
    leave_out_since_reference,
    no_watcher,
    over_board,
    peg_spot_poses,
    record_jump,
    turned_again,
)
from stages.arms.perception.calibration import Calibration
from stages.arms.perception.extrinsics import fit_extrinsics
from stages.arms.perception.extrinsics_model import Observation
from stages.arms.perception.peg_pose import PoseEstimator, draw_overlay, estimate_pose
from stages.arms.perception.sim import MujocoTargetFK
from stages.arms.reset.plan import ResetPlanner
from stages.arms.reset.rig import ResetRig
from stages.arms.reset.task import TaskSpec

LOG = logging.getLogger(__name__)


def grip_frame(world, arm: str, gripper) -> np.ndarray:
    """``T_hand_grip``: the hand body's frame turned onto the gripper's axes (closing x approach,
    closing, approach; :attr:`hardware.gripper.ParallelGripper.site_axes`), same origin. The
    identity where the hand's axes are the gripper's (the built-in robot's)."""
    import mujoco

    model = world.model
    site = world.robot.arm(arm).ee_site_id
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    body = int(model.site_bodyid[site])
    T = np.eye(4)
    R = data.xmat[body].reshape(3, 3).T @ data.site_xmat[site].reshape(3, 3) @ gripper.site_axes
    T[:3, :3] = np.round(R, 12)   # exact where the axes agree: the same numbers as without it
    return T


Progress = Callable[..., Iterable]


def _no_progress(items, total=None, desc=None):
    return items


class FitRejected(PerceptionError):
    """The fit does not explain the spots; ``report`` is its summary (to keep beside the spots)."""

    def __init__(self, message: str, report: dict):
        super().__init__(message)
        self.report = report


class PegCalibration:
    """The procedure on a ``rig`` (its drivers carrying the hidden offsets) with a ``planner``,
    for ``settings`` (:class:`~stages.arms.calibration.settings.PegCalibrationSettings`); ``half``:
    the peg's half extents; ``intrinsics``: a calibration whose camera matrix and distortion the
    camera is seen through (None: the simulator's). :meth:`collect` runs the arms (the record in
    :attr:`spots`, also when it fails), :meth:`fit` fits.

    Spots the planner cannot reach holding the peg are skipped (listed). A peg that falls (the
    fingers close on nothing at a spot) ends that arm's spots — those since its last view of the
    reference are left out — and the hand opens and goes home around it; the next arm finds it
    where it lies. A peg that jumps in the fingers (its tag corners more than
    ``max_revisit_shift_px`` apart between two views of the reference) leaves the arm's spots
    since the last view out and ends them. A form-fit grip that does not seat is set down and
    picked again (``regrasps`` times), then fails typed. A fit leaving more than
    ``max_residual_px`` on the tag corners of its median spot fails (:class:`FitRejected`) rather
    than give a calibration; a few spots where the peg slipped are the robust loss's outliers."""

    def __init__(self, rig: ResetRig, planner: ResetPlanner, half: np.ndarray,
                 settings: PegCalibrationSettings, intrinsics: Calibration | None = None,
                 log: logging.Logger = LOG, progress: Progress = _no_progress,
                 on_view: Callable[[SpotView], None] = no_watcher):
        self.rig, self.planner, self.settings, self.log = rig, planner, settings, log
        self.half, self.progress, self.on_view = half, progress, on_view
        self.true_camera = rig.estimator.camera
        self.camera = self.true_camera
        if intrinsics is not None:
            self.camera = self.true_camera.with_intrinsics(intrinsics.camera_matrix, intrinsics.distortion)
        rig.estimator = PoseEstimator(rig.layout, self.camera)
        world = rig.world
        # the grasp's free directions (along the peg, along the approach, the pivot) are the gripper's
        # axes, wherever the hand body's own axes point (the Franka's link 7 is turned 45° to them)
        self.T_hand_grip = {a: grip_frame(world, a, rig.hands[a]) for a in settings.arms}
        self.fk = MujocoTargetFK(world.model, world.robot, {a: planner.hand_body[a] for a in settings.arms},
                                 world.home_qpos(), frames=self.T_hand_grip)
        self.spots = SpotLog()
        self.motions = PegMotions(rig, planner, settings, self.spots, log)
        self.grasps: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ the arms
    def collect(self, rng: np.random.Generator) -> None:
        """Every arm in turn: pick the peg, visit its spots, set it down."""
        with self.rig.sim:
            for a in self.settings.arms:
                self.grasps[a] = self._arm_spots(a, rng)

    def _arm_spots(self, arm: str, rng) -> np.ndarray:
        """Pick the peg with ``arm``, visit its spots, set the peg down; returns the planned grasp."""
        s, rig, planner, log = self.settings, self.rig, self.planner, self.spots
        center = s.region[arm].center
        task = TaskSpec(start_xy=(float(center[0]), float(center[1])), start_yaw_rad=0.0)
        width = 2 * float(np.sort(self.half)[0])
        est, plan, lift, carrying, q = self.motions.pick(arm, task, self.half, width, rng)
        T_grip_peg = plan.T_grip_peg
        R_flat = free_end_toward(task.placed_pose(est.T_world_obj, self.half, s.surface_z)[:3, :3],
                                 T_grip_peg, task.long_axis, rig.estimator.camera.T_world_cam[:3, 3],
                                 s.region[s.arms[0]].center)   # all regions lie on one board: the first's

        def visit(name, T_peg, q):   # plan, move, observe: (joints, seen (None: dropped), the pose held)
            for attempt in range(1, s.spot_tries + 1):   # a turn it cannot reach: another turn
                try:
                    r = carrying.plan_to_poses({arm: pose7(T_peg @ np.linalg.inv(T_grip_peg))}, q, rng)
                    seg = planner.timed(carrying, r.path, name, r.time_s)
                    break
                except PlanningError as e:
                    if attempt == s.spot_tries:
                        log.skipped.append({"spot": name, "tries": attempt, "reason": str(e)[:300]})
                        self.log.info("spot %s skipped: %s", name, str(e)[:200])
                        return q, False, T_peg
                    T_peg = turned_again(s, T_peg, R_flat, self.half, rng)
            rig.move(seg.trajectory, name)
            seen = self._observe(arm, name, T_peg, rng, width)
            return seg.trajectory.positions[-1], seen, T_peg

        ref, seen, seen_since = None, True, 0
        if s.revisit_every and s.reference_gap_m is not None:
            ref, q, seen = self._reference(arm, R_flat, q, visit)
        spots = peg_spot_poses(s, arm, R_flat, self.half, rng) if seen is not None else []
        for name, T_peg in self.progress(spots, desc=f"extrinsics {arm}"):
            q, seen, T_peg = visit(name, T_peg, q)
            if seen and ref is None:   # the reference: the first seen spot, revisited
                ref = (q, T_peg, name)
                log.references[arm] = [log.observations[-1]]
            elif seen and s.revisit_every:
                seen_since += 1
                if seen_since >= s.revisit_every:
                    q, seen = self._revisit(carrying, arm, ref, q, rng, width)
                    seen_since = 0
            if seen is None or any(j["arm"] == arm for j in log.jumped):
                break
        if seen is None:   # dropped: it slid out at some moment since the last view of the reference
            if s.revisit_every and arm in log.references:
                log.dropped[-1]["spots_left_out"] = leave_out_since_reference(arm, log)
            q_home = plan.segments[0].trajectory.positions[0]
            self.motions.home_after_drop(arm, q, q_home, est.T_world_obj, rng)
            return invert(self.T_hand_grip[arm]) @ np.asarray(plan.held.T_attach_obj, float)
        self.motions.set_down(carrying, arm, plan, lift, q, rng)
        return invert(self.T_hand_grip[arm]) @ np.asarray(plan.held.T_attach_obj, float)

    def _reference(self, arm, R_flat, q, visit):  # noqa: N803
        """The spot revisited after every spot, chosen for how well the camera sees the peg there: over
        the region's centre, ``reference_gap_m`` up, turned about the vertical by each of
        ``reference_turns_deg`` in turn (0: its free end toward the camera; 90: broadside, where
        the near finger hides the near face's tags), the first view showing two tags or more
        (else the one showing most). Every view is also a spot. Returns (joints, pose, name) or
        None (none seen), the arm's joints, and True (None: the peg was dropped)."""
        s, log = self.settings, self.spots
        center = s.region[arm].center
        best = None   # (tags seen, (joints, pose, name), observation)
        for turn in s.reference_turns_deg:
            T = over_board(axis_rotation("z", turn) @ R_flat, center, self.half, s.reference_gap_m,
                           s.surface_z)
            name = f"{arm}ref{turn:+.0f}"
            q, seen, T = visit(name, T, q)
            if seen is None:
                return None, q, None
            if seen:
                tags = len(log.entries[-1]["tag_ids"])
                if best is None or tags > best[0]:
                    best = (tags, (q, T, name), log.observations[-1])
                if tags >= 2:
                    break
        if best is None:
            self.log.warning("arm %s: no reference view seen; the first seen spot is revisited instead", arm)
            return None, q, True
        log.references[arm] = [best[2]]
        return best[1], q, True

    def _revisit(self, carrying, arm, ref, q, rng, width):
        """Back to the reference spot's joints and look again: the same kinematics, so what the
        camera sees change there is the peg moving in the fingers. Returns (joints, seen)."""
        log = self.spots
        q_ref, T_ref, ref_name = ref
        name = f"{ref_name}r{len(log.references[arm]):02d}"
        try:
            r = carrying.plan_to_joints({arm: q_ref[carrying.arm_slice(arm)]}, q, rng)
            traj = self.planner.timed(carrying, r.path, name, r.time_s).trajectory
        except PlanningError as e:
            log.skipped.append({"spot": name, "reason": str(e)[:300]})
            return q, False
        self.rig.move(traj, name)
        seen = self._observe(arm, name, T_ref, rng, width)
        if seen and not self.jumped(arm):
            log.references[arm].append(log.observations[-1])
        return traj.positions[-1], seen

    def jumped(self, arm: str) -> bool:
        """Did the peg jump in the fingers since the arm's last reference view
        (:func:`~stages.arms.calibration.spots.record_jump`)? Then the arm takes no more spots: a
        turn about the approach axis is the last joint's zero to the fit, so no view after it
        describes the grasp the fit assumes."""
        s = self.settings
        jump = record_jump(arm, self.spots, s.max_revisit_shift_px, s.max_revisit_turn_deg)
        if jump is not None:
            self.log.warning("arm %s: the peg jumped in the fingers between %s and %s (its tag corners "
                             "%.1f px apart, its pose turned %.2f deg, at the same joints); spots %s are "
                             "left out and the arm takes no more", arm, *jump["between"], jump["shift_px"],
                             jump["turn_deg"], jump["spots_left_out"])
        return jump is not None

    def _observe(self, arm, name, T_peg, rng, width) -> bool | None:  # noqa: N803
        """Settle, check the fingers, read the joints, render and detect: True seen, False rejected,
        None the peg was dropped (the fingers closed on nothing)."""
        s, rig, log = self.settings, self.rig, self.spots
        rig.wait_sim(s.settle_s)
        opening = rig.finger_opening_m(arm)
        if opening < 0.5 * width:
            log.dropped.append({"spot": name, "arm": arm, "finger_opening_mm": opening * 1000})
            self.log.warning("arm %s dropped the peg on the way to spot %s (fingers at %.1f mm); its "
                             "remaining spots are left out", arm, name, opening * 1000)
            return None
        state = rig.drivers[arm].read_state()
        q_believed = np.asarray(state.positions, float)
        image = rig.render(rng, s.frames)
        dets = rig.estimator.detector.detect(image)
        entry = {"spot": name, "arm": arm, "time_s": float(state.stamp), "q_believed": q_believed.tolist(),
                 "peg_target": T_peg.tolist()}
        view = SpotView(float(state.stamp), arm, name, image, dets, None, rig.layout, rig.estimator.camera)
        try:
            seen = estimate_pose(dets, rig.layout, rig.estimator.camera, None)
            # a single tag's pose may be ambiguous, its corners are not: the corner fit keeps it
            ambiguous = seen.ambiguous and s.fit.residual != "corners"
            if ambiguous or seen.confidence < s.min_confidence or len(seen.tag_ids) < s.min_tags:
                raise PerceptionError(f"{len(seen.tag_ids)} tags, confidence {seen.confidence:.2f}, "
                                      f"ambiguous {seen.ambiguous}")
        except PerceptionError as e:
            log.rejected.append({"spot": name, "reason": str(e)})
            self.log.info("spot %s rejected: %s", name, e)
            log.entries.append({**entry, "rejected": str(e)})
            self.on_view(dataclasses.replace(view, reason=str(e)))
            return False
        ids = list(seen.tag_ids)
        by_id = {int(i): c for i, c in zip(dets.ids, dets.corners, strict=True)}
        img_pts = np.concatenate([by_id[i] for i in ids])
        obj = rig.layout.corners(ids).reshape(-1, 3)
        log.observations.append(Observation(arm, q_believed, seen.T_cam_obj, 1.0, name, obj, img_pts,
                                            time_s=state.stamp))
        log.true_grasps[name], T_cam_true = true_peg_in_hand(rig, self.fk, arm)
        entry.update({"tag_ids": ids, "reprojection_px": seen.reprojection_px,
                      "confidence": seen.confidence, "ambiguous": bool(seen.ambiguous),
                      **perception_errors(seen.T_cam_obj, T_cam_true),
                      "T_hand_peg_true": log.true_grasps[name].tolist()})
        log.entries.append(entry)
        self.on_view(dataclasses.replace(view, estimate=seen))
        if len(log.images) < s.save_spots:
            log.images[f"spot_{name}.png"] = draw_overlay(image, rig.layout, rig.estimator.camera, seen, dets)
        return True

    # ------------------------------------------------------------------ the fit
    def fit(self) -> PegCalibrationFit:
        """One fit of the camera pose, the joint offsets and the grasps; :class:`FitRejected` when
        the median spot keeps more than ``max_residual_px``."""
        s, log, robot = self.settings, self.spots, self.rig.world.robot
        for a in s.arms:
            if not any(o.arm == a for o in log.observations):
                raise PerceptionError(f"extrinsics: no spot of arm {a!r} was seen "
                                      f"({len(log.rejected)} rejected, {len(log.skipped)} skipped)")
        knots = None
        if s.fit.grasp_knots:   # at the reference visits, and the arm's last spot (held beyond)
            knots = {a: sorted({*(o.time_s for o in log.references.get(a, [])),
                                max(o.time_s for o in log.observations if o.arm == a)}) for a in s.arms}
        joint_names = {a: list(robot.arm(a).joints) for a in s.arms}
        dofs = {a: robot.arm(a).dof for a in s.arms}

        def fit_spots(**kw):   # the spots kept so far
            return fit_extrinsics(log.observations, self.fk, dofs, grasps=self.grasps, grasp_knots=knots,
                                  joint_names=joint_names, camera_matrix=self.camera.K,
                                  distortion=self.camera.dist, **s.fit.grasp_options(), **kw)

        fit = fit_spots()
        far = {n: px for n, px in zip(fit.names, fit.spot_rms_px, strict=True)
               if s.outlier_px is not None and px > s.outlier_px}
        if far:   # a spot the fit cannot explain (the peg pressed on something there, then back): out
            log.outliers.extend({"spot": n, "corner_rms_px": px} for n, px in far.items())
            log.observations = [o for o in log.observations if o.name not in far]
            self.log.warning("extrinsics: spots %s leave %s px on their corners (outlier_px %s): fitted "
                             "again without them", list(far), [round(px, 1) for px in far.values()],
                             s.outlier_px)
            fit = fit_spots(T_world_cam_guess=fit.T_world_cam)
        for w in fit.warnings:
            self.log.warning("extrinsics: %s", w)
        median_px = fit.spot_median_px or 0.0
        if median_px > s.max_residual_px:   # the median spot: a peg that slipped once is an outlier
            raise FitRejected(f"extrinsics: the fit leaves {median_px:.1f} px on the median spot's tag "
                              f"corners (max_residual_px {s.max_residual_px}): the spots disagree "
                              "(a peg moving in the hand? see report.json, spots.json)",
                              fit.summary(joint_names))
        return PegCalibrationFit(fit, log, self.fk, dofs, joint_names, self.camera, self.grasps, knots, s.fit)
