"""The peg calibration's arm motions around the spots: the pick (with the form-fit grip's seating
and the picks again), the way back and the set-down, and home around a dropped peg."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from core.errors import PerceptionError, PlanningError
from stages.arms.calibration.settings import PegCalibrationSettings
from stages.arms.calibration.spots import SpotLog
from stages.arms.reset.plan import ResetPlanner
from stages.arms.reset.rig import ResetRig
from stages.arms.reset.task import TaskSpec


class PegMotions:
    """The motions of one calibration on ``rig`` with ``planner``; the seating goes to ``spots.seating``."""

    def __init__(self, rig: ResetRig, planner: ResetPlanner, settings: PegCalibrationSettings, spots: SpotLog,
                 log: logging.Logger):
        self.rig, self.planner, self.settings, self.spots, self.log = rig, planner, settings, spots, log

    def pick(self, arm: str, task: TaskSpec, half: np.ndarray, width: float, rng):
        """Find the peg, pick it with ``arm`` and lift it; with a form-fit grip, until it seats (set down
        and picked again, ``regrasps`` times). Returns the peg's estimate, the plan, the lift's index in
        it, the group carrying the peg and the arm's joints."""
        s, rig, planner = self.settings, self.rig, self.planner
        for attempt in range(1 + s.regrasps):
            est, _ = rig.perceive(rng)
            qpos = rig.believed_qpos(est.T_world_obj)
            plan = planner.plan(qpos, est.T_world_obj, half, task, s.surface_z, rng, arms=(arm,),
                                grasp_positions=s.grasp_positions)
            lift = [seg.name for seg in plan.segments].index("lift")
            self.log.info("arm %s picks the peg (%s grasp, %d segments planned)", arm, plan.grasp_name,
                          len(plan.segments))
            rig.execute(dataclasses.replace(plan, segments=plan.segments[:lift + 1]), rng, width_m=width,
                        log=self.log)
            q_lift = plan.segments[lift].trajectory.positions[-1]
            carrying = planner.group(qpos, allowed=planner.hand_peg(arm), held=plan.held)
            q, seated = self.seat(carrying, arm, q_lift, rng)
            if seated:
                break
            if attempt == s.regrasps:   # held, but not in a way one constant grasp describes
                raise PerceptionError(
                    f"extrinsics: the peg did not seat in arm {arm!r}'s grip in {attempt + 1} pick(s) "
                    f"(fingers at {self.spots.seating[-1]['opening_after_mm']:.2f} mm, seated below "
                    f"{s.seat_opening_m * 1000:.1f}); see spots.json seating")
            self.log.warning("arm %s sets the peg down to pick it again", arm)
            self.set_down(carrying, arm, plan, lift, q, rng)
        return est, plan, lift, carrying, q

    def seat(self, carrying, arm: str, q, rng) -> tuple[np.ndarray, bool]:
        """With a form-fit grip (``scene=calib_cell``): unless the fingers' opening is already below
        ``seat_opening_m`` (the pads' studs in the peg's pockets, where it stays put; on the ribs the
        fingers stand wider), swing the wrist (joint 6, ``seat_swing_rad`` out and back, at most
        ``seat_swings`` times) until it is. Returns the arm's joints and whether it seated (True
        without seating); the outcome goes to ``spots.seating``."""
        s, rig = self.settings, self.rig
        if not s.seat_swings:
            return q, True
        home = np.asarray(q[carrying.arm_slice(arm)], float)
        out = home.copy()
        room_up = rig.world.robot.arm(arm).upper[5] - home[5] > s.seat_swing_rad + 0.05
        out[5] += s.seat_swing_rad if room_up else -s.seat_swing_rad
        before = rig.finger_opening_m(arm)
        record = {"arm": arm, "seated": before < s.seat_opening_m, "swings": 0,
                  "opening_before_mm": before * 1000}
        try:
            for swing in range(0 if record["seated"] else s.seat_swings):
                for target in (out, home):
                    r = carrying.plan_to_joints({arm: target}, q, rng)
                    traj = self.planner.timed(carrying, r.path, "seat", r.time_s).trajectory
                    rig.move(traj, "seat")
                    q = traj.positions[-1]
                record["swings"] = swing + 1
                if rig.finger_opening_m(arm) < s.seat_opening_m:
                    record["seated"] = True
                    break
        except PlanningError as e:
            record["reason"] = str(e)[:300]
        record["opening_after_mm"] = rig.finger_opening_m(arm) * 1000
        self.spots.seating.append(record)
        (self.log.info if record["seated"] else self.log.warning)(
            "arm %s: the peg %s in the grip after %d swing(s) (fingers %.2f -> %.2f mm)", arm,
            "seated" if record["seated"] else "did not seat", record["swings"],
            record["opening_before_mm"], record["opening_after_mm"])
        return q, record["seated"]

    def set_down(self, carrying, arm: str, plan, lift: int, q, rng) -> None:
        """Back to where the peg was lifted, then the planned carry, place, open, retreat, home."""
        rig, planner = self.rig, self.planner
        q_lift = plan.segments[lift].trajectory.positions[-1]
        back = carrying.plan_to_joints({arm: q_lift[carrying.arm_slice(arm)]}, q, rng)
        rig.move(planner.timed(carrying, back.path, "back", back.time_s).trajectory, "back")
        for seg in plan.segments[lift + 1:]:
            if seg.kind == "gripper":
                rig.gripper(*seg.gripper)
            else:
                rig.move(seg.trajectory, seg.name)
        rig.wait_sim(0.3)

    def home_after_drop(self, arm: str, q, q_home, T_world_peg_picked, rng) -> None:  # noqa: N803
        """Open the hand and go home around the peg where the camera finds it (out of view or
        under the hand: planned as if it lay where it was picked; the next arm looks again). The hand
        may start against the peg it dropped: its pairs with the peg are not checked."""
        rig, planner = self.rig, self.planner
        rig.gripper(arm, "open")
        try:
            T_world_peg = rig.perceive(rng)[0].T_world_obj
        except PerceptionError:
            T_world_peg = T_world_peg_picked
        free = planner.group(rig.believed_qpos(T_world_peg), allowed=planner.hand_peg(arm))
        r = free.plan_to_joints({arm: q_home[free.arm_slice(arm)]}, q, rng)
        rig.move(planner.timed(free, r.path, "home", r.time_s).trajectory, "home")
