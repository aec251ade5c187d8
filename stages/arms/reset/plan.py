"""Plan the whole pick and place before any arm moves.

approach → descend → close → lift → carry → place → open → retreat → home. Every
motion is planned with ArmGroup (both arms in the group: the idle arm holds still and
is checked against), retimed at 125 Hz and verified at every sample. While the peg is
held it moves with the gripper in the checker (a held object, checked against
everything but its fingers); on the straight lift and place the peg may touch what it rests
on or in (table, board, the fixture's slot: 4 mm each side, less than the clearance).
If a segment cannot be planned the next grasp is tried; if none works, the reasons of
every try are reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from core.errors import PlanningError
from core.se3 import pose7
from hardware.gripper import ParallelGripper, parallel_grippers
from stages.arms.grasping.candidates import DEPTH_M, site_pose, top_grasps
from stages.arms.grasping.resting import resting_pose
from stages.arms.grasping.select import choose_grasp
from stages.arms.planning.group import ArmGroup
from stages.arms.planning.held import HeldObject
from stages.arms.planning.path import JointPath
from stages.arms.reset.settings import ResetSettings
from stages.arms.retiming.retime import retime_with_report
from stages.arms.verification.clearance import check_clearance


@dataclass
class Segment:
    name: str
    kind: str                      # "move" or "gripper"
    trajectory: object = None      # Trajectory for moves
    gripper: tuple[str, float] | None = None   # (arm, command) for gripper actions
    plan_time_s: float = 0.0
    min_clearance_m: float = float("nan")


@dataclass
class ResetPlan:
    arm: str
    grasp_name: str
    travel_rad: float
    segments: list[Segment]
    T_grip_peg: np.ndarray
    candidates: dict = field(default_factory=dict)
    held: HeldObject | None = None     # the peg in the hand, as planned (None for a push)

    @property
    def duration_s(self) -> float:
        return float(sum(s.trajectory.times[-1] for s in self.segments if s.kind == "move"))


def _bodies_below(model, body_id: int) -> list[int]:
    out = []
    for b in range(model.nbody):
        a = b
        while a not in (0, body_id):
            a = int(model.body_parentid[a])
        if a == body_id:
            out.append(b)
    return out


def _geoms_of(model, bodies) -> list[int]:
    """The collision geoms of ``bodies``, by id (robot files often leave their meshes unnamed)."""
    bodies = set(bodies)
    return [g for g in range(model.ngeom)
            if model.geom_bodyid[g] in bodies and (model.geom_contype[g] or model.geom_conaffinity[g])]


class ResetPlanner:
    """Plans resets in one world; ``qpos`` is the believed state (the peg where it was seen)."""

    def __init__(self, world, settings_planner, settings: ResetSettings, peg_body: str = "peg",
                 surface_bodies: tuple[str, ...] = ("table", "board", "board_base", "fixture"),
                 hands: Mapping[str, ParallelGripper] | None = None):
        import mujoco

        self.world, self.model = world, world.model
        self.planner_settings, self.settings = settings_planner, settings
        self.peg_body = peg_body
        self.peg_id = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, peg_body)
        self.peg_geoms = _geoms_of(self.model, [self.peg_id])
        bodies = [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, b) for b in surface_bodies]
        self.surface_geoms = tuple(_geoms_of(self.model, [b for b in bodies if b >= 0]))
        self.hand_geoms, self.hand_body = {}, {}
        for arm in world.robot.arms:
            site_body = int(self.model.site_bodyid[arm.ee_site_id])
            self.hand_body[arm.name] = mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_BODY, site_body)
            self.hand_geoms[arm.name] = _geoms_of(self.model, _bodies_below(self.model, site_body))
        self.vel = world.robot.velocity_limits() * settings.velocity_scale
        self.acc = world.robot.acceleration_limits() * settings.acceleration_scale
        # the grippers as grasping sees them (robot.arms.<arm>.gripper), measured on the model (a rig
        # that has them already hands them over: measuring runs the physics)
        self.hands = hands if hands is not None else parallel_grippers(self.model, world.robot,
                                                                       world.home_qpos())

    # ------------------------------------------------------------------ helpers
    def site_frames(self, height_m: float) -> dict[str, tuple[np.ndarray, float]]:
        """Per arm: its gripper's axes in its ee site's frame, and how much deeper than the candidates'
        ``DEPTH_M`` its site goes on an object ``height_m`` tall (its fingertips kept off the support)."""
        return {arm: (hand.site_axes, hand.depth_for(height_m) - DEPTH_M) for arm, hand in self.hands.items()}

    def group(self, qpos, allowed=(), held=None) -> ArmGroup:
        specs = {a.name: a for a in self.world.robot.arms}
        return ArmGroup(self.model, specs, self.world.clearance_m, self.planner_settings, base_qpos=qpos,
                        allowed_pairs=(*self.world.allowed_pairs, *allowed), held=held)

    def hand_peg(self, arm):
        return [(h, p) for h in self.hand_geoms[arm] for p in self.peg_geoms]

    def _peg_surface(self):
        return [(p, s) for p in self.peg_geoms for s in self.surface_geoms]

    def timed(self, group: ArmGroup, path: JointPath, name: str, plan_time: float) -> Segment:
        """Retime at 125 Hz and verify every sample at clearance (repair: tighter blends, then none)."""
        last = None
        for deviation in (0.02, 0.005, 0.0):
            traj = retime_with_report(path, self.vel, self.acc, 125.0, max_deviation_rad=deviation).trajectory
            report = check_clearance(group.exact_checker, traj)
            if report.violations == 0:
                return Segment(name, "move", traj, plan_time_s=plan_time,
                               min_clearance_m=report.min_clearance_m)
            last = report
        i = last.first_violation()
        raise PlanningError("unreachable", f"segment {name!r}: sample {i} (t={last.times_s[i]:.3f} s) has "
                            f"{last.pairs[i][0]} – {last.pairs[i][1]} at {last.distances_m[i] * 1000:.1f} mm")

    # ------------------------------------------------------------------ the plan
    def plan(self, qpos: np.ndarray, T_world_peg: np.ndarray, half_extents, task, surface_z: float,
             rng: np.random.Generator, arms: tuple[str, ...] | None = None,
             grasp_positions: tuple[float, ...] | None = None) -> ResetPlan:
        """The whole pick and place; ``arms`` limits which arms may take the peg (default: any),
        ``grasp_positions`` where along the peg (fractions of its half-length; default: top_grasps')."""
        rest = resting_pose(T_world_peg[:3, :3], max_tilt_deg=90.0)   # leaning pegs get aligned grasps
        T_target = task.placed_pose(T_world_peg, half_extents, surface_z)
        group = self.group(qpos)
        start = qpos[group.checker.qpos_adr]
        max_width = max(hand.opening_open_m for hand in self.hands.values())
        candidates = top_grasps(T_world_peg, half_extents, rest, max_width * 0.9,
                                **({"positions": tuple(grasp_positions)} if grasp_positions else {}))
        if not candidates:
            raise PlanningError("unreachable", f"the peg lies on {rest.face_down}: no face narrow enough "
                                "for a top grasp")
        grasp_checker = self.group(qpos, allowed=self._hand_peg_all()).checker
        height = 2 * float(np.asarray(half_extents)[rest.down_axis])
        report = choose_grasp(group, candidates, start, rng, self.settings.pregrasp_m, grasp_checker,
                              arms=list(self.hands), site_frames=self.site_frames(height))
        record = {"resting_face": rest.face_down, "yaw_rad": rest.yaw_rad, "tilt_deg": rest.tilt_deg,
                  "ranked": [{"arm": c.arm, "candidate": c.candidate.name, "travel_rad": c.travel_rad}
                             for c in report.ranked],
                  "rejected": report.rejected, "tried": [],
                  "grasp_points_m": {c.name: c.T_world_grip[:3, 3].tolist() for c in candidates},
                  "approach": {c.name: c.approach_world.tolist() for c in candidates},
                  "first_reachable_travel_rad": report.in_order[0].travel_rad if report.in_order else None}
        errors = []
        # least travel first, but alternating arms in pairs: if one arm cannot finish the job
        # (e.g. reach the place pose), the other is tried before its worse grasps
        per_arm_rank = {}
        order = []
        for c in report.ranked:
            per_arm_rank[c.arm] = per_arm_rank.get(c.arm, -1) + 1
            order.append((per_arm_rank[c.arm] // 2, c.travel_rad, len(order), c))
        tries = [c for *_, c in sorted(order, key=lambda t: t[:3])
                 if arms is None or c.arm in arms]
        for choice in tries[: self.settings.max_grasps]:
            try:
                segments, T_grip_peg, held = self._plan_with(choice, qpos, T_world_peg, T_target, rng)
            except PlanningError as exc:
                errors.append(f"{choice.arm}/{choice.candidate.name}: {exc}")
                record["tried"].append({"arm": choice.arm, "candidate": choice.candidate.name,
                                        "failed": str(exc)})
                continue
            record["tried"].append({"arm": choice.arm, "candidate": choice.candidate.name, "failed": None})
            return ResetPlan(choice.arm, choice.candidate.name, choice.travel_rad, segments, T_grip_peg,
                             record, held)
        if errors:
            why = "; ".join(errors)
        else:
            reasons = sorted({f"{r['arm']}: {r['reason']}" for r in report.rejected})
            why = f"none of {len(candidates)} grasps is reachable by any arm ({'; '.join(reasons[:4])})"
        err = PlanningError("unreachable", f"no grasp could be planned end to end: {why}")
        err.candidates = record
        raise err

    def plan_push(self, qpos: np.ndarray, T_world_peg: np.ndarray, half_extents, long_axis: int,
                  surface_z: float, rng: np.random.Generator) -> ResetPlan:
        """Push the peg into the open with the closed gripper, when it cannot be picked where it is.

        A peg standing on its end (a top grasp cannot lay it down), leaning on something, or
        lying too close to the fixture for the fingers is pushed toward ``push_toward_xy``
        (the open middle of the table): the closed gripper comes down behind it — high on a
        standing peg, so it falls over; at mid-height otherwise, so it slides, then near its
        top, above low walls beside it, so it tips — and pushes through where it was.
        Directions are tried from straight at the free spot to ±45°, ±90°; the first one
        planned end to end (every segment at clearance but the hand
        against the peg) is kept. The next attempt perceives the peg where it came to rest.
        """
        half = np.asarray(half_extents, float)
        T = np.asarray(T_world_peg, float)
        p, R = T[:3, 3], T[:3, :3]
        standing = resting_pose(R, max_tilt_deg=90.0).down_axis == long_axis
        top = p[2] + float(np.abs(R[2, :]) @ half)
        # the fingertips' heights (the ee site sits each gripper's tip_past_site_m above them)
        heights = [top - 0.041] if standing else [max(p[2] - 0.011, surface_z + 0.014), top - 0.023]
        to_free = np.asarray(self.settings.push_toward_xy, float) - p[:2]
        base = float(np.arctan2(to_free[1], to_free[0]))
        errors = []
        for height in heights:
            for turn in (0.0, np.pi / 4, -np.pi / 4, np.pi / 2, -np.pi / 2):
                d = np.array([np.cos(base + turn), np.sin(base + turn), 0.0])
                back = float(np.abs(R.T @ d) @ half) + 0.03     # from the peg's centre to behind its face
                z = np.array([0.0, 0.0, -1.0])
                y = np.array([-d[1], d[0], 0.0])                 # fingers closed, across the push
                for arm, hand in self.hands.items():
                    start_pose = np.eye(4)
                    start_pose[:3, :3] = np.column_stack([np.cross(y, z), y, z])
                    start_pose[:3, 3] = [p[0] - d[0] * back, p[1] - d[1] * back,
                                         height + hand.tip_past_site_m]
                    end_pose = start_pose.copy()
                    end_pose[:3, 3] += d * (2 * back)
                    try:
                        segs, travel = self._push_with(arm, qpos, start_pose, end_pose, rng)
                    except PlanningError as exc:
                        errors.append(f"{arm} at {np.degrees(turn):+.0f}°, {height:.3f} m: {str(exc)[:120]}")
                        continue
                    name = f"{'standing' if standing else 'push'}_{np.degrees(base + turn):+.0f}deg"
                    return ResetPlan(arm, name, travel, segs, np.eye(4),
                                     {"push": {"direction_deg": float(np.degrees(base + turn)),
                                               "height_m": float(height), "standing": standing}})
        raise PlanningError("unreachable", "the peg cannot be picked where it lies and no arm can push it "
                            "into the open: " + "; ".join(errors))

    def _push_with(self, arm, qpos, start_pose, end_pose, rng):
        """``start_pose``/``end_pose`` in the candidates' frame (approach z, closing y): turned into
        this arm's ee site poses."""
        axes = self.hands[arm].site_axes
        start_pose, end_pose = site_pose(start_pose, axes), site_pose(end_pose, axes)
        free = self.group(qpos)
        start = qpos[free.checker.qpos_adr]
        above = start_pose.copy()
        above[2, 3] += 0.10
        segs = [Segment("close", "gripper", gripper=(arm, "closed"))]
        r = free.plan_to_poses({arm: pose7(above)}, start, rng)
        segs.append(self.timed(free, r.path, "push_approach", r.time_s))
        pushing = self.group(qpos, allowed=self.hand_peg(arm))   # the hand may touch the peg from here on
        r = pushing.plan_cartesian({arm: pose7(start_pose)}, r.path.waypoints[-1], rng)
        segs.append(self.timed(pushing, r.path, "push_lower", r.time_s))
        r = pushing.plan_cartesian({arm: pose7(end_pose)}, r.path.waypoints[-1], rng)
        segs.append(self.timed(pushing, r.path, "push", r.time_s))
        up = end_pose.copy()
        up[2, 3] += 0.10
        r = pushing.plan_cartesian({arm: pose7(up)}, r.path.waypoints[-1], rng)
        segs.append(self.timed(pushing, r.path, "push_retreat", r.time_s))
        r = pushing.plan_to_joints({arm: start[free.arm_slice(arm)]}, r.path.waypoints[-1], rng)
        segs.append(self.timed(pushing, r.path, "home", r.time_s))
        segs.append(Segment("open", "gripper", gripper=(arm, "open")))
        return segs, float(np.abs(segs[1].trajectory.positions[-1] - start).sum())

    def _hand_peg_all(self):
        return [p for arm in self.hand_geoms for p in self.hand_peg(arm)]

    def _plan_with(self, choice, qpos, T_world_peg, T_target, rng):
        import mujoco

        s, arm = self.settings, choice.arm
        free = self.group(qpos)
        start = qpos[free.checker.qpos_adr]
        segs: list[Segment] = []

        def add(name, group, plan_call):
            try:
                result = plan_call()
            except PlanningError as exc:
                raise PlanningError(exc.reason, f"segment {name!r}: {exc}") from exc
            segs.append(self.timed(group, result.path, name, result.time_s))
            return result.path.waypoints[-1]

        q = add("approach", free, lambda: free.plan_to_joints(
            {arm: choice.q_pregrasp[free.arm_slice(arm)]}, start, rng))
        touching = self.group(qpos, allowed=self.hand_peg(arm))
        q = add("descend", touching, lambda: touching.plan_cartesian(
            {arm: pose7(choice.candidate.T_world_grip)}, q, rng))
        segs.append(Segment("close", "gripper", gripper=(arm, "closed")))
        # the peg in the hand's frame, from where it was seen and where the hand is at the grasp
        d = mujoco.MjData(self.model)
        d.qpos[:] = qpos
        d.qpos[free.checker.qpos_adr] = q
        mujoco.mj_kinematics(self.model, d)
        hand = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, self.hand_body[arm])
        T_world_hand = np.eye(4)
        T_world_hand[:3, :3] = d.xmat[hand].reshape(3, 3)
        T_world_hand[:3, 3] = d.xpos[hand]
        T_hand_peg = np.linalg.inv(T_world_hand) @ T_world_peg
        T_grip_peg = np.linalg.inv(choice.candidate.T_world_grip) @ T_world_peg
        held = HeldObject(self.peg_body, self.hand_body[arm], T_hand_peg)
        lifting = self.group(qpos, allowed=self.hand_peg(arm) + self._peg_surface(), held=held)
        up = choice.candidate.offset(s.lift_m)
        q = add("lift", lifting, lambda: lifting.plan_cartesian({arm: pose7(up)}, q, rng))
        carrying = self.group(qpos, allowed=self.hand_peg(arm), held=held)
        place_grip, last = None, None
        for flip in (0.0, np.pi):   # the square peg lands the same with either end first
            target = T_target.copy()
            c, sn = np.cos(flip), np.sin(flip)
            target[:3, :3] = np.array([[c, -sn, 0], [sn, c, 0], [0, 0, 1]]) @ T_target[:3, :3]
            grip = target @ np.linalg.inv(T_grip_peg)
            grip[2, 3] += s.place_gap_m
            above = grip.copy()
            above[2, 3] += s.lift_m
            try:
                carry = carrying.plan_to_poses({arm: pose7(above)}, q, rng)
                place_grip = grip
                break
            except PlanningError as exc:
                last = exc
        if place_grip is None:
            raise last
        q = add("carry", carrying, lambda: carry)
        q = add("place", lifting, lambda: lifting.plan_cartesian({arm: pose7(place_grip)}, q, rng))
        segs.append(Segment("open", "gripper", gripper=(arm, "open")))
        # after release the peg is believed at the target: plan the retreat around it there
        placed = qpos.copy()
        placed[free.checker.qpos_adr] = q
        peg_adr = int(self.model.jnt_qposadr[self.model.body_jntadr[self.peg_id]])
        Tp = np.eye(4)
        Tp[:] = T_target
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, Tp[:3, :3].reshape(-1))
        placed[peg_adr:peg_adr + 3] = Tp[:3, 3]
        placed[peg_adr + 3:peg_adr + 7] = quat
        leaving = self.group(placed, allowed=self.hand_peg(arm))
        back = place_grip.copy()
        back[2, 3] += s.retreat_m
        q = add("retreat", leaving, lambda: leaving.plan_cartesian({arm: pose7(back)}, q, rng))
        home = self.group(placed)
        add("home", home, lambda: home.plan_to_joints({arm: start[home.arm_slice(arm)]}, q, rng))
        return segs, T_grip_peg, held
