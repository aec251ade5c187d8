"""The peg reset, for the recording: every attempt as a span, what the camera saw at each look,
the grasp candidates (reachable ones green, rejected ones red with their reason), the executed
physics states.

Entity paths (time: simulated seconds from the cell's start, the drop included)::

    reset/attempt                         a state lane: "attempt n" while it runs
    reset/log                             each attempt's result; each look's purpose
    world/executed/<body>/...             the robot and the peg posed by the physics states
    world/camera/...                      see stages.arms.recording.perception
    world/grasps/reachable                candidate grasp points, labelled "<arm>/<name> <travel> rad"
    world/grasps/rejected                 the rejected ones, labelled with their reason
"""

from __future__ import annotations

import numpy as np

from core.recording import Recorder
from stages.arms.recording.motion import record_robot_motion, thin
from stages.arms.recording.perception import record_camera, record_look

REACHABLE, REJECTED = (40, 200, 90), (230, 40, 40)


def record_reset(rec: Recorder, world, run) -> None:
    """Everything of one reset run (a :class:`~stages.arms.reset.run.ResetRun`)."""
    if not rec.enabled:
        return
    out = run.outcome
    if len(run.times_s):
        keep = thin(run.times_s, 60.0)
        record_robot_motion(rec, world, "world/executed", np.asarray(run.times_s)[keep],
                            np.asarray(run.qpos)[keep], collision=False)
    if run.camera is not None:
        record_camera(rec, run.camera)
        for t, _, image, est in out.looks:
            rec.set_time_s(t)
            record_look(rec, run.camera, run.layout, image, est)
    record_attempts(rec, out, float(run.times_s[-1]) if len(run.times_s) else 0.0)
    record_candidates(rec, out.candidates)


def record_attempts(rec: Recorder, outcome, last_t: float) -> None:
    """A reset's attempts as spans (an unfinished one ends at ``last_t``), each look's purpose and
    each attempt's result as log lines."""
    for t, purpose, *_ in outcome.looks:
        rec.set_time_s(t)
        rec.text("reset/log", purpose)
    for span in outcome.spans:
        rec.set_time_s(span["start_s"])
        rec.state("reset/attempt", f"attempt {span['attempt']}")
        rec.set_time_s(span["end_s"] if span["end_s"] is not None else last_t)
        rec.state("reset/attempt", None)
        rec.text("reset/log", f"attempt {span['attempt']}: {span['result']}",
                 "INFO" if span["result"] == "landed" else "WARN")


def record_candidates(rec: Recorder, candidates: dict) -> None:
    """Grasp candidates as labelled points (static): reachable with their travel, rejected with why."""
    points = (candidates or {}).get("grasp_points_m") or {}
    if not points:
        return
    ranked = candidates.get("ranked", [])
    rejected = candidates.get("rejected", [])
    if ranked:
        rec.points3d("world/grasps/reachable", [points[c["candidate"]] for c in ranked], colors=REACHABLE,
                     radii_m=0.004, static=True,
                     labels=[f"{c['arm']}/{c['candidate']} {c['travel_rad']:.2f} rad" for c in ranked])
    if rejected:
        rec.points3d("world/grasps/rejected", [points[r["candidate"]] for r in rejected], colors=REJECTED,
                     radii_m=0.003, labels=[f"{r['arm']}/{r['candidate']}: {r['reason']}" for r in rejected],
                     static=True)
