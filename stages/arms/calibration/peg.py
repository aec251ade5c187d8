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
offset error is reported over the fitted joints. In simulation the same images are restated with
the peg's true place in the hand at every spot (as if it never moved there) and fitted twice more:
with that place known (``known_grasp_*`` metrics: what the spots and the camera give) and with it
unknown, fitted as above (``rigid_grasp_*``: what fitting the grasp costs even when nothing slips)
— the error's split between the camera, the grasp's unknowns and the slip.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngFigure, PngImage
from core.errors import ConfigError, PerceptionError, PlanningError
from core.se3 import axis_rotation
from stages.api import Stage, StageContext, StageResult


class PegExtrinsics(Stage):
    """Spots: per arm a ``grid`` [nx, ny] over ``region.<arm>`` (``center`` [x, y], ``size``
    [sx, sy], on the board); the peg lying as picked, turned by a random yaw (± ``yaw_deg``),
    tilted by ± ``tilt_deg`` about x and y, its lowest point ``gaps_m`` (in turn) above
    ``surface_z``. Spots the planner cannot reach holding the peg are skipped (listed). A peg that
    falls (the fingers close on nothing at a spot) ends that arm's spots — those since its last view
    of the reference are left out — and the hand opens and goes home around it; the next arm finds
    it where it lies. A peg that jumps in the fingers (its tag
    corners more than ``max_revisit_shift_px`` apart between two views of the reference) leaves
    the arm's spots since the last view out and ends them. A form-fit grip that does not seat is
    set down and picked again (``regrasps`` times), then fails the run typed. A fit leaving more than
    ``max_residual_px`` on the tag corners of its median spot fails (PerceptionError) rather than
    save a calibration; a few spots where the peg slipped are the robust loss's outliers."""

    outputs = ("calibration",)

    def __init__(self, scene: Mapping[str, Any], planner: Mapping[str, Any] | None = None,
                 hardware: Mapping[str, Any] | None = None, camera: Mapping[str, Any] | None = None,
                 reset: Mapping[str, Any] | None = None, arms: Sequence[str] = ("left", "right"),
                 grid: Sequence[int] = (4, 4), region: Mapping[str, Mapping] | None = None,
                 gaps_m: Sequence[float] = (0.02, 0.1, 0.18), yaw_deg: float = 80.0, tilt_deg: float = 30.0,
                 surface_z: float = 0.753, hidden_offsets_max_deg: float = 1.0, settle_s: float = 0.5,
                 fit: Mapping[str, Any] | None = None, min_confidence: float = 0.2, min_tags: int = 1,
                 grasp_positions: Sequence[float] = (0.0,), save_spots: int = 4,
                 max_residual_px: float = 2.0, revisit_every: int = 0, frames: int = 1,
                 hold_noslip_iterations: int = 0, reference_gap_m: float | None = None,
                 reference_turns_deg: Sequence[float] = (50.0, -50.0, 35.0, -35.0),
                 max_revisit_shift_px: float | None = None, seat_swings: int = 0, seat_swing_rad: float = 0.5,
                 seat_opening_m: float = 0.0415, regrasps: int = 0):
        from stages.arms.execution.rig import hardware_settings
        from stages.arms.planning.goals import planner_settings
        from stages.arms.reset.setup import reset_settings

        self.scene = dict(scene)
        self.planner = planner_settings(planner)
        self.hw = hardware_settings(hardware)
        self.camera = dict(camera or {})
        self.settings = reset_settings(reset)
        self.arms = [str(a) for a in arms]
        if not self.arms:
            raise ConfigError("extrinsics.arms must name at least one arm")
        gx, gy = (int(v) for v in grid)
        if gx < 1 or gy < 1 or gx * gy < 3:
            raise ConfigError(f"extrinsics.grid must be [nx, ny] with at least 3 spots, got {list(grid)}")
        self.grid = (gx, gy)
        region = dict(region or {})
        missing = [a for a in self.arms if a not in region]
        if missing:
            raise ConfigError(f"extrinsics.region has no entry for arm(s) {missing}")
        self.region = {a: (np.asarray(region[a]["center"], float), np.asarray(region[a]["size"], float))
                       for a in self.arms}
        self.gaps = [float(g) for g in gaps_m]
        self.yaw, self.tilt = float(yaw_deg), float(tilt_deg)
        self.surface_z, self.hidden_max = float(surface_z), float(hidden_offsets_max_deg)
        self.settle_s = float(settle_s)
        self.fit_kw = dict(fit or {})
        allowed = {"rotation_weight_m", "depth_weight", "loss", "f_scale", "residual",
                   "observability_threshold", "grasp_free", "grasp_creep", "grasp_knots"}
        unknown = sorted(set(self.fit_kw) - allowed)
        if unknown:
            raise ConfigError(f"extrinsics.fit: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
        self.min_confidence, self.min_tags = float(min_confidence), int(min_tags)
        self.save_spots = int(save_spots)
        self.max_residual_px = float(max_residual_px)
        self.grasp_positions = tuple(float(v) for v in grasp_positions)
        self.revisit_every = int(revisit_every)
        if self.revisit_every < 0:
            raise ConfigError(f"extrinsics.revisit_every must be >= 0 (0: never), got {revisit_every}")
        self.hold_noslip_iterations = int(hold_noslip_iterations)
        if self.hold_noslip_iterations < 0:
            raise ConfigError(f"extrinsics.hold_noslip_iterations must be >= 0 (0: off), got "
                              f"{hold_noslip_iterations}")
        self.frames = int(frames)
        if self.frames < 1:
            raise ConfigError(f"extrinsics.frames must be >= 1 (frames averaged per view), got {frames}")
        self.reference_gap_m = None if reference_gap_m is None else float(reference_gap_m)
        self.reference_turns = [float(t) for t in reference_turns_deg]
        self.max_revisit_shift_px = None if max_revisit_shift_px is None else float(max_revisit_shift_px)
        if self.max_revisit_shift_px is not None and not self.max_revisit_shift_px > 0:
            raise ConfigError(f"extrinsics.max_revisit_shift_px must be > 0 px (null: no check), got "
                              f"{max_revisit_shift_px}")
        self.seat_swings, self.seat_swing_rad = int(seat_swings), float(seat_swing_rad)
        self.seat_opening_m = float(seat_opening_m)
        self.regrasps = int(regrasps)
        if self.regrasps < 0:
            raise ConfigError(f"extrinsics.regrasps must be >= 0 (picks again when the grip does not seat), "
                              f"got {regrasps}")
        if self.seat_swings < 0 or not 0 < self.seat_swing_rad <= 1.5 or not self.seat_opening_m > 0:
            raise ConfigError(f"extrinsics: seat_swings must be >= 0 (0: no seating), seat_swing_rad in "
                              f"(0, 1.5] rad and seat_opening_m > 0; got {seat_swings}, {seat_swing_rad}, "
                              f"{seat_opening_m}")
        self.grasp_knots = bool(self.fit_kw.pop("grasp_knots", False))
        if self.grasp_knots and not self.revisit_every:
            raise ConfigError("extrinsics.fit.grasp_knots needs revisits (extrinsics.revisit_every >= 1): "
                              "the knots sit at the reference revisits")
        if self.grasp_knots and self.fit_kw.get("grasp_creep"):
            raise ConfigError("extrinsics.fit: grasp_knots and grasp_creep are two models of the same "
                              "drift; set one")

    # ------------------------------------------------------------------ pieces
    def _hidden(self, robot, rng) -> dict[str, list[float]]:
        given = self.hw.get("joint_offsets_deg")
        if given:
            return {a.name: list(map(float, given.get(a.name, [0.0] * a.dof))) for a in robot.arms}
        return {a.name: rng.uniform(-self.hidden_max, self.hidden_max, a.dof).tolist() for a in robot.arms}

    def _spot_poses(self, arm: str, R_flat: np.ndarray, half: np.ndarray,
                    rng) -> list[tuple[str, np.ndarray]]:
        center, size = self.region[arm]
        gx, gy = self.grid
        xs = center[0] + (np.linspace(-0.5, 0.5, gx) if gx > 1 else np.zeros(1)) * size[0]
        ys = center[1] + (np.linspace(-0.5, 0.5, gy) if gy > 1 else np.zeros(1)) * size[1]
        out, k = [], 0
        for i, x in enumerate(xs):
            for y in (ys if i % 2 == 0 else ys[::-1]):   # snake order: neighbours are close
                R = (axis_rotation("z", rng.uniform(-self.yaw, self.yaw))
                     @ axis_rotation("x", rng.uniform(-self.tilt, self.tilt))
                     @ axis_rotation("y", rng.uniform(-self.tilt, self.tilt)) @ R_flat)
                gap = self.gaps[k % len(self.gaps)]
                out.append((f"{arm}{k:02d}", self._over_board(R, (x, y), half, gap)))
                k += 1
        return out

    def _over_board(self, R: np.ndarray, xy, half: np.ndarray, gap_m: float) -> np.ndarray:
        """The peg's pose turned by ``R`` over the board at ``xy``, its lowest point ``gap_m`` up."""
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = [*xy, self.surface_z + float(np.abs(R[2, :]) @ half) + gap_m]
        return T

    def _free_end_toward(self, R_flat, T_grip_peg, long_axis: int, cam_pos) -> np.ndarray:
        """``R_flat`` turned about the vertical so the peg's free end (away from the fingers) points
        at the camera: its end face and the free half of its other faces stay in view."""
        grip_in_peg = np.linalg.inv(T_grip_peg)[:3, 3]
        free_end = -(np.sign(grip_in_peg[long_axis]) or -1.0) * R_flat[:, long_axis]   # centred: +axis
        center, _ = self.region[next(iter(self.region))]   # all regions lie on one board: the first's centre
        to_cam = np.asarray(cam_pos[:2], float) - center
        turn = np.arctan2(to_cam[1], to_cam[0]) - np.arctan2(free_end[1], free_end[0])
        return axis_rotation("z", float(np.degrees(turn))) @ R_flat

    # ------------------------------------------------------------------ running
    def run(self, ctx: StageContext, world, intrinsics=None) -> StageResult:
        from stages.arms.perception.extrinsics import fit_extrinsics
        from stages.arms.perception.peg_pose import PoseEstimator
        from stages.arms.perception.sim import MujocoTargetFK
        from stages.arms.reset.plan import ResetPlanner
        from stages.arms.reset.setup import build_rig

        t_start = time.perf_counter()
        rng, robot = ctx.rng, world.robot
        for a in self.arms:
            robot.arm(a)   # ConfigError listing the arms when unknown
        hidden_deg = self._hidden(robot, rng)
        rig, half = build_rig(world, self.scene, {**self.hw, "joint_offsets_deg": hidden_deg}, self.camera,
                              None, ctx.seed, self.hold_noslip_iterations)
        true_cam = rig.estimator.camera
        est_cam = true_cam
        if intrinsics is not None:
            cal_in = getattr(intrinsics, "calibration", intrinsics)
            est_cam = true_cam.with_intrinsics(cal_in.camera_matrix, cal_in.distortion)
        rig.estimator = PoseEstimator(rig.layout, est_cam)
        planner = ResetPlanner(world, self.planner, self.settings)
        fk = MujocoTargetFK(world.model, robot, {a: planner.hand_body[a] for a in self.arms},
                            world.home_qpos())
        log = _SpotLog()
        grasps = {}
        try:
            with rig.sim:
                for a in self.arms:
                    grasps[a] = self._arm_spots(ctx, rig, planner, a, half, fk, log, rng)
        finally:
            rig.close()
            ctx.metrics.update({**log.counts(), "stamp_retries": rig.stamp_retries})
            ctx.save("spots.json", JsonFile({"spots": log.entries, "rejected": log.rejected,   # kept on
                                             "skipped": log.skipped, "dropped": log.dropped,   # failure
                                             "jumped": log.jumped, "seating": log.seating}))
        for a in self.arms:
            if not any(o.arm == a for o in log.observations):
                raise PerceptionError(f"extrinsics: no spot of arm {a!r} was seen "
                                      f"({len(log.rejected)} rejected, {len(log.skipped)} skipped)")
        joint_names = {a: list(robot.arm(a).joints) for a in self.arms}
        dofs = {a: robot.arm(a).dof for a in self.arms}
        common = dict(joint_names=joint_names, camera_matrix=est_cam.K, distortion=est_cam.dist)
        knots = None
        if self.grasp_knots:   # at the reference visits, and the arm's last spot (held beyond)
            knots = {a: sorted({*(o.time_s for o in log.references.get(a, [])),
                                max(o.time_s for o in log.observations if o.arm == a)}) for a in self.arms}
        fit = fit_extrinsics(log.observations, fk, dofs, grasps=grasps, grasp_knots=knots, **common,
                             **self.fit_kw)
        for w in fit.warnings:
            ctx.log.warning("extrinsics: %s", w)
        median_px = fit.spot_median_px or 0.0
        if median_px > self.max_residual_px:   # the median spot: a peg that slipped once is an outlier
            ctx.save("report.json", JsonFile(fit.summary(joint_names)))
            raise PerceptionError(f"extrinsics: the fit leaves {median_px:.1f} px on the median spot's tag "
                                  f"corners (max_residual_px {self.max_residual_px}): the spots disagree "
                                  "(a peg moving in the hand? see report.json, spots.json)")
        # simulation only, the error budget's split: the same images restated with the peg's true
        # place in the hand at every spot (as if it never moved there), fitted with the grasp known
        # (what the spots and the camera give) and with the grasp unknown as above (what fitting the
        # grasp costs, slip or no slip)
        in_hand = [_in_hand(o, log.true_grasps[o.name]) for o in log.observations]
        at_hand = {a: np.eye(4) for a in self.arms}
        no_grasp_kw = {k: v for k, v in self.fit_kw.items() if k not in ("grasp_free", "grasp_creep")}
        diagnostics = {
            "known_grasp": fit_extrinsics(in_hand, fk, dofs, grasps=at_hand, grasp_free=(), **common,
                                          **no_grasp_kw),
            "rigid_grasp": fit_extrinsics(in_hand, fk, dofs, grasps=at_hand, grasp_knots=knots, **common,
                                          **self.fit_kw)}
        return self._result(ctx, fit, diagnostics, log, hidden_deg, true_cam, est_cam, joint_names, t_start)

    def _arm_spots(self, ctx, rig, planner, arm, half, fk, log, rng) -> np.ndarray:
        """Pick the peg with ``arm``, visit its spots, set the peg down; returns the planned grasp."""
        from core.se3 import pose7
        from stages.arms.reset.task import TaskSpec

        center, _ = self.region[arm]
        task = TaskSpec(start_xy=(float(center[0]), float(center[1])), start_yaw_rad=0.0)
        width = 2 * float(np.sort(half)[0])
        for attempt in range(1 + self.regrasps):   # pick; with a form-fit grip, until it seats
            est, _ = rig.perceive(rng)
            qpos = rig.believed_qpos(est.T_world_obj)
            plan = planner.plan(qpos, est.T_world_obj, half, task, self.surface_z, rng, arms=(arm,),
                                grasp_positions=self.grasp_positions)
            lift = [s.name for s in plan.segments].index("lift")
            ctx.log.info("arm %s picks the peg (%s grasp, %d segments planned)", arm, plan.grasp_name,
                         len(plan.segments))
            rig.execute(dataclasses.replace(plan, segments=plan.segments[:lift + 1]), rng, width_m=width,
                        log=ctx.log)
            q_lift = plan.segments[lift].trajectory.positions[-1]
            carrying = planner.group(qpos, allowed=planner.hand_peg(arm), held=plan.held)
            q, seated = self._seat(ctx, rig, planner, carrying, arm, q_lift, log, rng)
            if seated:
                break
            if attempt == self.regrasps:   # held, but not in a way one constant grasp describes
                raise PerceptionError(
                    f"extrinsics: the peg did not seat in arm {arm!r}'s grip in {attempt + 1} pick(s) "
                    f"(fingers at {log.seating[-1]['opening_after_mm']:.2f} mm, seated below "
                    f"{self.seat_opening_m * 1000:.1f}); see spots.json seating")
            ctx.log.warning("arm %s sets the peg down to pick it again", arm)
            self._set_down(rig, planner, carrying, arm, plan, lift, q, rng)
        T_grip_peg = plan.T_grip_peg
        R_flat = self._free_end_toward(task.placed_pose(est.T_world_obj, half, self.surface_z)[:3, :3],
                                       T_grip_peg, task.long_axis, rig.estimator.camera.T_world_cam[:3, 3])

        def visit(name, T_peg, q):   # plan, move, observe: (joints, seen; None: dropped)
            try:
                r = carrying.plan_to_poses({arm: pose7(T_peg @ np.linalg.inv(T_grip_peg))}, q, rng)
                seg = planner.timed(carrying, r.path, name, r.time_s)
            except PlanningError as e:
                log.skipped.append({"spot": name, "reason": str(e)[:300]})
                ctx.log.info("spot %s skipped: %s", name, str(e)[:200])
                return q, False
            rig.move(seg.trajectory, name)
            seen = self._observe(ctx, rig, arm, name, T_peg, fk, log, rng, width)
            return seg.trajectory.positions[-1], seen

        ref, seen, seen_since = None, True, 0
        if self.revisit_every and self.reference_gap_m is not None:
            ref, q, seen = self._reference(arm, R_flat, half, q, log, visit, ctx.log)
        spots = self._spot_poses(arm, R_flat, half, rng) if seen is not None else []
        for name, T_peg in ctx.progress(spots, desc=f"extrinsics {arm}"):
            q, seen = visit(name, T_peg, q)
            if seen and ref is None:   # the reference: the first seen spot, revisited
                ref = (q, T_peg, name)
                log.references[arm] = [log.observations[-1]]
            elif seen and self.revisit_every:
                seen_since += 1
                if seen_since >= self.revisit_every:
                    q, seen = self._revisit(ctx, rig, planner, carrying, arm, ref, q, fk, log, rng, width)
                    seen_since = 0
            if seen is None or any(j["arm"] == arm for j in log.jumped):
                break
        if seen is None:   # dropped: it slid out at some moment since the last view of the reference
            if self.revisit_every and arm in log.references:
                log.dropped[-1]["spots_left_out"] = _leave_out_since_reference(arm, log)
            self._home_after_drop(rig, planner, arm, q, plan.segments[0].trajectory.positions[0],
                                  est.T_world_obj, rng)
            return np.asarray(plan.held.T_attach_obj, float)
        self._set_down(rig, planner, carrying, arm, plan, lift, q, rng)
        return np.asarray(plan.held.T_attach_obj, float)

    @staticmethod
    def _set_down(rig, planner, carrying, arm, plan, lift, q, rng) -> None:
        """Back to where the peg was lifted, then the planned carry, place, open, retreat, home."""
        q_lift = plan.segments[lift].trajectory.positions[-1]
        back = carrying.plan_to_joints({arm: q_lift[carrying.arm_slice(arm)]}, q, rng)
        rig.move(planner.timed(carrying, back.path, "back", back.time_s).trajectory, "back")
        for seg in plan.segments[lift + 1:]:
            if seg.kind == "gripper":
                rig.gripper(*seg.gripper)
            else:
                rig.move(seg.trajectory, seg.name)
        rig.wait_sim(0.3)

    def _seat(self, ctx, rig, planner, carrying, arm, q, log, rng) -> tuple[np.ndarray, bool]:
        """With a form-fit grip (``scene=calib_cell``): unless the fingers' opening is already below
        ``seat_opening_m`` (the pads' studs in the peg's pockets, where it stays put; on the ribs the
        fingers stand wider), swing the wrist (joint 6, ``seat_swing_rad`` out and back, at most
        ``seat_swings`` times) until it is. Returns the arm's joints and whether it seated (True
        without seating); the outcome goes to ``log.seating``."""
        if not self.seat_swings:
            return q, True
        home = np.asarray(q[carrying.arm_slice(arm)], float)
        out = home.copy()
        room_up = rig.world.robot.arm(arm).upper[5] - home[5] > self.seat_swing_rad + 0.05
        out[5] += self.seat_swing_rad if room_up else -self.seat_swing_rad
        before = rig.finger_opening_m(arm)
        record = {"arm": arm, "seated": before < self.seat_opening_m, "swings": 0,
                  "opening_before_mm": before * 1000}
        try:
            for swing in range(0 if record["seated"] else self.seat_swings):
                for target in (out, home):
                    r = carrying.plan_to_joints({arm: target}, q, rng)
                    traj = planner.timed(carrying, r.path, "seat", r.time_s).trajectory
                    rig.move(traj, "seat")
                    q = traj.positions[-1]
                record["swings"] = swing + 1
                if rig.finger_opening_m(arm) < self.seat_opening_m:
                    record["seated"] = True
                    break
        except PlanningError as e:
            record["reason"] = str(e)[:300]
        record["opening_after_mm"] = rig.finger_opening_m(arm) * 1000
        log.seating.append(record)
        (ctx.log.info if record["seated"] else ctx.log.warning)(
            "arm %s: the peg %s in the grip after %d swing(s) (fingers %.2f -> %.2f mm)", arm,
            "seated" if record["seated"] else "did not seat", record["swings"],
            record["opening_before_mm"], record["opening_after_mm"])
        return q, record["seated"]

    def _reference(self, arm, R_flat, half, q, log, visit, logger):
        """The spot revisited after every spot, chosen for how well the camera sees the peg there: over
        the region's centre, ``reference_gap_m`` up, turned about the vertical by each of
        ``reference_turns_deg`` in turn (0: its free end toward the camera; 90: broadside, where
        the near finger hides the near face's tags), the first view showing two tags or more
        (else the one showing most). Every view is also a spot. Returns (joints, pose, name) or
        None (none seen), the arm's joints, and True (None: the peg was dropped)."""
        center, _ = self.region[arm]
        best = None   # (tags seen, (joints, pose, name), observation)
        for turn in self.reference_turns:
            T = self._over_board(axis_rotation("z", turn) @ R_flat, center, half, self.reference_gap_m)
            name = f"{arm}ref{turn:+.0f}"
            q, seen = visit(name, T, q)
            if seen is None:
                return None, q, None
            if seen:
                tags = len(log.entries[-1]["tag_ids"])
                if best is None or tags > best[0]:
                    best = (tags, (q, T, name), log.observations[-1])
                if tags >= 2:
                    break
        if best is None:
            logger.warning("arm %s: no reference view seen; the first seen spot is revisited instead", arm)
            return None, q, True
        log.references[arm] = [best[2]]
        return best[1], q, True

    def _revisit(self, ctx, rig, planner, carrying, arm, ref, q, fk, log, rng, width):
        """Back to the reference spot's joints and look again: the same kinematics, so what the
        camera sees change there is the peg moving in the fingers. Returns (joints, seen)."""
        q_ref, T_ref, ref_name = ref
        name = f"{ref_name}r{len(log.references[arm]):02d}"
        try:
            r = carrying.plan_to_joints({arm: q_ref[carrying.arm_slice(arm)]}, q, rng)
            traj = planner.timed(carrying, r.path, name, r.time_s).trajectory
        except PlanningError as e:
            log.skipped.append({"spot": name, "reason": str(e)[:300]})
            return q, False
        rig.move(traj, name)
        seen = self._observe(ctx, rig, arm, name, T_ref, fk, log, rng, width)
        if seen and not self._jumped(arm, log, ctx.log):
            log.references[arm].append(log.observations[-1])
        return traj.positions[-1], seen

    def _jumped(self, arm, log, logger) -> bool:
        """Did the peg jump in the fingers since the arm's last reference view? The arm is at the
        same joints, so the tag corners both views show should sit on the same pixels; more than
        ``max_revisit_shift_px`` apart (median), the peg moved by more than a drift (brushing the
        board, say). Where in between is unknown: the arm's spots since that view are left out and
        it takes no more (``log.jumped``)."""
        if self.max_revisit_shift_px is None:
            return False
        now = log.observations[-1]
        last = log.references[arm][-1]
        shift = _corner_shift_px(last, now)
        if not shift > self.max_revisit_shift_px:   # NaN (no common tag) is no evidence
            return False
        left_out = _leave_out_since_reference(arm, log)
        log.jumped.append({"arm": arm, "between": [last.name, now.name], "shift_px": shift,
                           "spots_left_out": left_out})
        logger.warning("arm %s: the peg jumped in the fingers between %s and %s (its tag corners "
                       "%.1f px apart at the same joints); spots %s are left out and the arm takes no more",
                       arm, last.name, now.name, shift, left_out)
        return True

    def _observe(self, ctx, rig, arm, name, T_peg, fk, log, rng, width) -> bool | None:
        """Settle, check the fingers, read the joints, render and detect: True seen, False rejected,
        None the peg was dropped (the fingers closed on nothing)."""
        from core.se3 import invert, rotation_angle_deg
        from stages.arms.perception.extrinsics import Observation
        from stages.arms.perception.peg_pose import draw_overlay, estimate_pose

        rig.wait_sim(self.settle_s)
        opening = rig.finger_opening_m(arm)
        if opening < 0.5 * width:
            log.dropped.append({"spot": name, "arm": arm, "finger_opening_mm": opening * 1000})
            ctx.log.warning("arm %s dropped the peg on the way to spot %s (fingers at %.1f mm); its "
                            "remaining spots are left out", arm, name, opening * 1000)
            return None
        state = rig.drivers[arm].read_state()
        q_believed = np.asarray(state.positions, float)
        image = rig.render(rng, self.frames)
        dets = rig.estimator.detector.detect(image)
        entry = {"spot": name, "arm": arm, "time_s": float(state.stamp), "q_believed": q_believed.tolist(),
                 "peg_target": T_peg.tolist()}
        try:
            seen = estimate_pose(dets, rig.layout, rig.estimator.camera, None)
            # a single tag's pose may be ambiguous, its corners are not: the corner fit keeps it
            ambiguous = seen.ambiguous and self.fit_kw.get("residual", "corners") != "corners"
            if ambiguous or seen.confidence < self.min_confidence or len(seen.tag_ids) < self.min_tags:
                raise PerceptionError(f"{len(seen.tag_ids)} tags, confidence {seen.confidence:.2f}, "
                                      f"ambiguous {seen.ambiguous}")
        except PerceptionError as e:
            log.rejected.append({"spot": name, "reason": str(e)})
            ctx.log.info("spot %s rejected: %s", name, e)
            log.entries.append({**entry, "rejected": str(e)})
            return False
        ids = list(seen.tag_ids)
        by_id = {int(i): c for i, c in zip(dets.ids, dets.corners, strict=True)}
        img_pts = np.concatenate([by_id[i] for i in ids])
        obj = rig.layout.corners(ids).reshape(-1, 3)
        log.observations.append(Observation(arm, q_believed, seen.T_cam_obj, 1.0, name, obj, img_pts,
                                            time_s=state.stamp))
        T_peg_true = rig.true_peg_pose()
        T_cam_true = invert(rig.estimator.camera.T_world_cam) @ T_peg_true   # the simulator's camera
        T_hand_true = fk(arm, rig.sim.snapshot()[1][list(rig.world.robot.arm(arm).qpos_indices)])
        log.true_grasps[name] = invert(T_hand_true) @ T_peg_true
        entry.update({"tag_ids": ids, "reprojection_px": seen.reprojection_px,
                      "confidence": seen.confidence, "ambiguous": bool(seen.ambiguous),
                      "perception_position_error_m": float(np.linalg.norm(seen.T_cam_obj[:3, 3]
                                                                          - T_cam_true[:3, 3])),
                      "perception_rotation_error_deg": rotation_angle_deg(seen.T_cam_obj[:3, :3],
                                                                          T_cam_true[:3, :3]),
                      "T_hand_peg_true": log.true_grasps[name].tolist()})
        log.entries.append(entry)
        if len(log.images) < self.save_spots:
            log.images[f"spot_{name}.png"] = PngImage(
                draw_overlay(image, rig.layout, rig.estimator.camera, seen, dets))
        return True

    @staticmethod
    def _home_after_drop(rig, planner, arm, q, q_home, T_world_peg_picked, rng) -> None:
        """Open the hand and go home around the peg where the camera finds it (out of view or
        under the hand: planned as if it lay where it was picked; the next arm looks again)."""
        rig.gripper(arm, "open")
        try:
            T_world_peg = rig.perceive(rng)[0].T_world_obj
        except PerceptionError:
            T_world_peg = T_world_peg_picked
        free = planner.group(rig.believed_qpos(T_world_peg))
        r = free.plan_to_joints({arm: q_home[free.arm_slice(arm)]}, q, rng)
        rig.move(planner.timed(free, r.path, "home", r.time_s).trajectory, "home")

    def _result(self, ctx, fit, diagnostics, log, hidden_deg, true_cam, est_cam, joint_names, t_start):
        from stages.arms.perception.calibration import Calibration, CalibrationFile, now_iso
        from stages.arms.perception.plots import residual_plot

        hidden = {a: np.radians(hidden_deg[a]) for a in self.arms}
        T_true = true_cam.T_world_cam
        errors = {a: np.degrees(fit.joint_offsets_rad[a] - hidden[a]) for a in self.arms}
        offset_err, cam_pos_err, cam_rot_err = _scored(fit, hidden, T_true)
        scored = {k: _scored(d, hidden, T_true) for k, d in diagnostics.items()}
        drift = _grasp_drift_m(log)
        metrics = {**log.counts(), "residual_rms_m": fit.residual_rms_m,
                   "residual_rms_deg": fit.residual_rms_deg, "residual_rms_px": fit.residual_rms_px,
                   "residual_spot_median_px": fit.spot_median_px,
                   "joint_offset_error_deg_max": offset_err,
                   "joint_offset_error_deg_max_all": float(max(np.abs(e).max() for e in errors.values())),
                   "camera_position_error_m": cam_pos_err, "camera_rotation_error_deg": cam_rot_err,
                   "condition_number": fit.condition_number,
                   "condition_number_fitted": fit.condition_number_fitted,
                   "unobservable_joints": len(fit.unobservable),
                   "grasp_slip_m_max": drift, "time_s": time.perf_counter() - t_start}
        for k, (err, pos, rot) in scored.items():
            metrics.update({f"{k}_joint_offset_error_deg_max": err, f"{k}_camera_position_error_m": pos,
                            f"{k}_camera_rotation_error_deg": rot})
        ctx.log.info("extrinsics: %d spots, residual %.2f px; offsets max error %.3f deg (fitted joints); "
                     "camera %.2f mm, %.3f deg; cond %.0f; the same spots with the peg rigid in the hand: "
                     "%.3f deg with its place known, %.3f deg fitted", metrics["spots"],
                     fit.residual_rms_px or 0.0, offset_err, cam_pos_err * 1000, cam_rot_err,
                     fit.condition_number, scored["known_grasp"][0], scored["rigid_grasp"][0])
        report = fit.summary(joint_names)
        report.update({"hidden_offsets_deg": hidden_deg,
                       "offset_errors_deg": {a: e.tolist() for a, e in errors.items()},
                       "true_T_world_cam": T_true.tolist(), "spots": log.entries, "rejected": log.rejected,
                       "skipped": log.skipped, "grasp_slip_m_max": drift,
                       **{f"{k}_fit": {**d.summary(joint_names), "offset_errors_deg": {
                           a: np.degrees(d.joint_offsets_rad[a] - hidden[a]).tolist() for a in self.arms}}
                          for k, d in diagnostics.items()},
                       "observed_target": "the tagged peg, held by each arm over the board"})
        cal = Calibration(est_cam.K, est_cam.dist, (est_cam.width, est_cam.height), fit.T_world_cam,
                          {a: fit.joint_offsets_rad[a] for a in self.arms}, joint_names, date=now_iso(),
                          source_run=str(ctx.out_dir.parent),
                          camera_name=self.camera.get("name", "scene_camera"),
                          method="joint fit of camera pose, joint zero offsets and grasps (tagged peg)",
                          metrics={"residual_rms_m": fit.residual_rms_m,
                                   "condition_number": min(fit.condition_number, 1e300),
                                   "spots": len(log.observations)})
        files = {"report.json": JsonFile(report), "residuals.png": PngFigure(residual_plot(fit)),
                 **log.images}
        return StageResult(outputs={"calibration": CalibrationFile(cal)}, metrics=metrics, files=files)


@dataclasses.dataclass
class _SpotLog:
    observations: list = dataclasses.field(default_factory=list)
    entries: list = dataclasses.field(default_factory=list)
    rejected: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    dropped: list = dataclasses.field(default_factory=list)
    images: dict = dataclasses.field(default_factory=dict)
    true_grasps: dict = dataclasses.field(default_factory=dict)   # spot -> T_hand_peg (simulation truth)
    references: dict = dataclasses.field(default_factory=dict)   # arm -> its views of the reference, in turn
    jumped: list = dataclasses.field(default_factory=list)   # the peg jumped in an arm's fingers
    seating: list = dataclasses.field(default_factory=list)   # per arm: did the form-fit grip seat

    def counts(self) -> dict[str, int]:
        final = {r["arm"]: r["seated"] for r in self.seating}   # each arm's last pick
        return {"spots": len(self.observations), "spots_rejected": len(self.rejected),
                "spots_skipped": len(self.skipped), "spots_dropped": len(self.dropped),
                "spots_left_out": sum(len(e.get("spots_left_out", [])) for e in self.jumped + self.dropped),
                "revisits": sum(len(v) - 1 for v in self.references.values()),
                "unseated_arms": sum(not seated for seated in final.values()),
                "regrasps": len(self.seating) - len(final)}


def _leave_out_since_reference(arm: str, log: _SpotLog) -> list[str]:
    """Take the arm's spots since its last view of the reference out of the fit (the peg moved in
    the fingers at some moment after it); returns their names."""
    t = log.references[arm][-1].time_s
    left_out = [o.name for o in log.observations if o.arm == arm and o.time_s > t]
    log.observations = [o for o in log.observations if o.arm != arm or o.time_s <= t]
    return left_out


def _corner_shift_px(a, b) -> float:
    """The median distance (px) between the image points of the tag corners two observations share
    (matched by their place on the target); NaN when they share none."""
    def key(p):
        return tuple(np.round(p, 9))

    seen = {key(p): q for p, q in zip(a.object_points, a.image_points, strict=True)}
    d = [float(np.linalg.norm(np.subtract(q, seen[key(p)])))
         for p, q in zip(b.object_points, b.image_points, strict=True) if key(p) in seen]
    return float(np.median(d)) if d else float("nan")


def _in_hand(o, T_hand_peg: np.ndarray):
    """An observation restated with the hand as its target (the peg's corners in the hand frame)."""
    R, t = T_hand_peg[:3, :3], T_hand_peg[:3, 3]
    return dataclasses.replace(o, T_cam_target=o.T_cam_target @ np.linalg.inv(T_hand_peg),
                               object_points=np.asarray(o.object_points) @ R.T + t)


def _scored(fit, hidden_rad: Mapping[str, np.ndarray],
            T_world_cam_true: np.ndarray) -> tuple[float, float, float]:  # noqa: N803
    """Against the simulator's truth: the worst offset error over the fitted joints (deg) and the
    camera's position (m) and rotation (deg) errors."""
    from core.se3 import rotation_angle_deg

    held = set(fit.unobservable)
    fitted = [abs(float(np.degrees(fit.joint_offsets_rad[a][i] - hidden_rad[a][i])))
              for a in fit.joint_offsets_rad for i in range(len(hidden_rad[a])) if (a, i) not in held]
    return (max(fitted) if fitted else float("nan"),
            float(np.linalg.norm(fit.T_world_cam[:3, 3] - T_world_cam_true[:3, 3])),
            rotation_angle_deg(fit.T_world_cam[:3, :3], T_world_cam_true[:3, :3]))


def _grasp_drift_m(log: _SpotLog) -> float:
    """The largest move of the peg in the hand (truth) from an arm's first seen spot: how far the
    grasp strays from one set of unknowns."""
    first, out = {}, 0.0
    for o in log.observations:
        p = log.true_grasps[o.name][:3, 3]
        out = max(out, float(np.linalg.norm(p - first.setdefault(o.arm, p))))
    return out
