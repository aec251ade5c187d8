"""One automatic reset: find the peg, plan the whole pick and place, run it, check the landing.

Retried up to ``max_attempts`` times: a peg not seen, a plan that cannot be made, a
missed or slipped grasp, or a landing out of tolerance each end an attempt with its
reason, and the next attempt starts by perceiving again. A peg that a top grasp cannot
take where it lies — standing on its end, or where no grasp can be planned (e.g. too
close to the fixture for the fingers) — is pushed into the open first (that attempt's
cause says which: "standing" or "blocked"). A peg leaning on something is grasped along
its top face.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from core.errors import ChoreographError, ExecutionError, PerceptionError, PlanningError
from stages.arms.grasping.resting import resting_pose
from stages.arms.perception.scoring import pose_errors


@dataclass
class ResetOutcome:
    success: bool
    attempts: int
    time_s: float
    failures: list[dict] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    candidates: dict = field(default_factory=dict)
    images: dict = field(default_factory=dict)
    spans: list[dict] = field(default_factory=list)   # per attempt: simulated start_s, end_s, result
    looks: list[tuple] = field(default_factory=list)  # (simulated s, what for, image, estimate) per look


def run_reset(rig, planner, task, half_extents, surface_z: float, rng: np.random.Generator,
              max_attempts: int = 3, log=None) -> ResetOutcome:
    t0 = time.perf_counter()
    out = ResetOutcome(False, 0, 0.0)
    for attempt in range(1, max_attempts + 1):
        out.attempts = attempt
        out.spans.append({"attempt": attempt, "start_s": rig.sim_time_s(), "end_s": None,
                          "result": "running"})
        try:
            est, image = _look(rig, rng, out, f"attempt {attempt}: find the peg")
            truth = rig.true_peg_pose()
            if attempt == 1:
                out.images["perception.png"] = (image, est)
                errors = pose_errors(est.T_world_obj, truth)
                out.metrics.update({
                    "perception.position_error_m": errors.position_m,
                    "perception.rotation_error_deg": errors.rotation_deg,
                    "perception.tags_seen": len(est.tag_ids),
                    "perception.reprojection_px": float(est.reprojection_px)})
            qpos = rig.believed_qpos(est.T_world_obj)
            cause, why, plan = _cannot_pick(est.T_world_obj, task.long_axis), None, None
            if cause is None:
                try:
                    plan = planner.plan(qpos, est.T_world_obj, half_extents, task, surface_z, rng)
                except PlanningError as exc:
                    if attempt == max_attempts:
                        raise
                    out.candidates = getattr(exc, "candidates", None) or out.candidates
                    cause, why = "blocked", f"no grasp could be planned where it lies ({exc})"
            if plan is None:
                why = why or "the peg stood on its end"
                push = planner.plan_push(qpos, est.T_world_obj, half_extents, task.long_axis, surface_z, rng)
                if log:
                    log.info("attempt %d: %s; the %s arm pushes it into the open (%s)", attempt, why,
                             push.arm, push.grasp_name)
                for seg in push.segments:
                    if seg.kind == "gripper":
                        rig.gripper(*seg.gripper)
                    else:
                        rig.move(seg.trajectory, seg.name)
                rig.wait_sim(0.5)
                out.failures.append({"attempt": attempt, "cause": cause, "reason": f"{why}: pushed it"[:600]})
                _end_span(out, rig, attempt, f"{cause}: pushed it")
                continue
            out.candidates = plan.candidates
            out.metrics.update({"grasp.arm": plan.arm, "grasp.travel_rad": plan.travel_rad,
                                "grasp.name": plan.grasp_name,
                                "grasp.candidates": (len(plan.candidates["ranked"])
                                                     + len(plan.candidates["rejected"])),
                                "grasp.reachable": len(plan.candidates["ranked"]),
                                "grasp.first_reachable_travel_rad": _first_reachable(plan.candidates),
                                "plan.segments": len(plan.segments), "plan.duration_s": plan.duration_s,
                                "plan.min_clearance_m": min(s.min_clearance_m for s in plan.segments
                                                            if s.kind == "move"),
                                "plan.time_s": sum(s.plan_time_s for s in plan.segments)})
            if log:
                log.info("attempt %d: %s grasp %s, travel %.2f rad, %d segments, %.1f s of motion", attempt,
                         plan.arm, plan.grasp_name, plan.travel_rad, len(plan.segments), plan.duration_s)
            rig.execute(plan, rng, width_m=2 * float(np.sort(half_extents)[0]), log=log)
            landed, image = _look(rig, rng, out, f"attempt {attempt}: check the landing")
            pos_err, ang_err = task.landing_error(landed.T_world_obj)
            true_pos, true_ang = task.landing_error(rig.true_peg_pose())
            out.images["landing.png"] = (image, landed)
            out.metrics.update({"landing.position_error_m": pos_err, "landing.rotation_error_deg": ang_err,
                                "landing.true_position_error_m": true_pos,
                                "landing.true_rotation_error_deg": true_ang,
                                "landing.detector_agrees": bool(task.landed(landed.T_world_obj)
                                                                == task.landed(rig.true_peg_pose()))})
            if task.landed(landed.T_world_obj):
                out.success = True
                _end_span(out, rig, attempt, "landed")
                break
            out.failures.append({"attempt": attempt, "cause": "landing", "reason":
                                 f"landed {pos_err * 1000:.1f} mm / {ang_err:.1f}° from the start pose"})
            _end_span(out, rig, attempt, "landing out of tolerance")
        except (PerceptionError, PlanningError, ExecutionError) as exc:
            cause = {PerceptionError: "perception", PlanningError: "planning",
                     ExecutionError: "execution"}[type(exc)]
            if getattr(exc, "candidates", None):
                out.candidates = exc.candidates
            out.failures.append({"attempt": attempt, "cause": cause,
                                 "reason": f"{type(exc).__name__}: {exc}"})
            if log:
                log.warning("attempt %d failed (%s): %s", attempt, cause, exc)
            _recover(rig, planner, rng, log)
            _end_span(out, rig, attempt, f"{cause} failed")
    out.time_s = time.perf_counter() - t0
    out.metrics.update({"reset.success": out.success, "reset.attempts": out.attempts,
                        "reset.time_s": out.time_s,
                        "reset.failure_causes": ",".join(f["cause"] for f in out.failures)})
    return out


def _end_span(out: ResetOutcome, rig, attempt: int, result: str) -> None:
    """The attempt's span ends now (simulated time) with ``result``."""
    span = out.spans[attempt - 1]
    span["end_s"], span["result"] = rig.sim_time_s(), result


def _look(rig, rng, out: ResetOutcome, purpose: str):
    """``rig.perceive``, keeping the image and the estimate (with the simulated time) for the recording."""
    t = rig.sim_time_s()
    est, image = rig.perceive(rng)
    out.looks.append((t, purpose, image, est))
    return est, image


def _recover(rig, planner, rng, log) -> None:
    """Open every gripper and bring the arms home before the next attempt."""
    for arm in rig.grippers:
        rig.gripper(arm, "open", settle_s=0.3)
    try:
        _, qpos = rig.sim.snapshot()
        group = planner.group(qpos)
        start = qpos[group.checker.qpos_adr]
        home = {a.name: list(a.home) for a in rig.world.robot.arms}
        if np.abs(start - group.compose(home, start)).max() < 1e-3:
            return
        result = group.plan_to_joints(home, start, rng)
        seg = planner.timed(group, result.path, "recover", result.time_s)
        rig.move(seg.trajectory, "recover")
    except ChoreographError as exc:
        if log:
            log.warning("recovery motion failed: %s", exc)


def _cannot_pick(T_world_peg: np.ndarray, long_axis: int) -> str | None:
    """"standing" when the peg stands on its end (no grasp from above can lay it down), else None.
    A peg leaning on something is planned like any other (with grasps along its top face)."""
    rest = resting_pose(np.asarray(T_world_peg)[:3, :3], max_tilt_deg=90.0)
    return "standing" if rest.down_axis == long_axis else None


def _first_reachable(candidates: dict) -> float:
    """Travel of the grasp a planner would take if it took the first reachable one it enumerated."""
    value = candidates.get("first_reachable_travel_rad")
    return float("nan") if value is None else float(value)

