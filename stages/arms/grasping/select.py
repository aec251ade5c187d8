"""Choose, over every arm, the reachable grasp with the least joint travel.

For each candidate and each arm: IK for the pre-grasp from the arm's current
configuration and from random seeds (several IK branches), the grasp solved from each
pre-grasp (same branch), both within joint limits and checked at clearance with
the whole group present (the fingers may touch the object, nothing else may). The
travel of a candidate is the joint-space distance (sum of |Δq|, rad) from the current
configuration to the pre-grasp, over the valid branches. Every rejected candidate keeps
the reason its last branch failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from core.errors import PlanningError
from core.se3 import pose7
from stages.arms.grasping.candidates import GraspCandidate


@dataclass(frozen=True)
class GraspChoice:
    arm: str
    candidate: GraspCandidate
    q_pregrasp: np.ndarray   # group configuration
    q_grasp: np.ndarray      # group configuration
    travel_rad: float


@dataclass
class GraspReport:
    choice: GraspChoice | None
    ranked: list[GraspChoice] = field(default_factory=list)   # every reachable one, least travel first
    rejected: list[dict] = field(default_factory=list)
    in_order: list[GraspChoice] = field(default_factory=list)


def choose_grasp(group, candidates: list[GraspCandidate], start_q: np.ndarray, rng: np.random.Generator,
                 pregrasp_m: float = 0.10, grasp_checker=None, arms=None, ik_seeds: int = 10,
                 site_frames: Mapping[str, tuple[np.ndarray, float]] | None = None) -> GraspReport:
    """``site_frames``: per arm, its gripper's axes in its ee site's frame and how much deeper its
    site goes (:meth:`GraspCandidate.for_site_axes`; default: the candidates' own frame); the
    choices carry each arm's own candidate pose.
    ``grasp_checker`` checks the grasp state itself (the fingers may touch the object);
    the pre-grasp is checked with the group's own checker. Each candidate is solved from the
    current configuration and ``ik_seeds`` random ones; of the IK branches found, the valid
    one with the least travel counts (a first solution with a folded wrist is not the arm's
    last word)."""
    grasp_checker = grasp_checker or group.checker
    report = GraspReport(None)
    for arm in arms or list(group.arms):
        sl = group.arm_slice(arm)
        ik = group._ik[arm]
        seeds = [start_q[sl]] + [rng.uniform(ik.lower, ik.upper) for _ in range(ik_seeds)]
        axes, deeper_m = (site_frames or {}).get(arm, (np.eye(3), 0.0))
        for cand in (c.for_site_axes(axes, deeper_m) for c in candidates):
            best, why = _best_branch(group, grasp_checker, ik, sl, cand, start_q, seeds, pregrasp_m)
            if best is not None:
                report.ranked.append(GraspChoice(arm, cand, *best))
            else:
                report.rejected.append({"arm": arm, "candidate": cand.name, "reason": why})
    report.in_order = list(report.ranked)   # as enumerated: "the first reachable grasp" baseline
    report.ranked.sort(key=lambda c: c.travel_rad)
    report.choice = report.ranked[0] if report.ranked else None
    return report


def _best_branch(group, grasp_checker, ik, sl, cand, start_q, seeds, pregrasp_m):
    """((q_pregrasp, q_grasp, travel), None) for the least-travel valid IK branch, or (None, why)."""
    pre_target = np.array(pose7(cand.offset(pregrasp_m)))
    grasp_target = np.array(pose7(cand.T_world_grip))
    found, best, why = [], None, "pre-grasp out of reach within joint limits"
    for seed in seeds:
        sol_pre = ik.solve_once(pre_target, seed)
        if sol_pre is None or any(np.abs(sol_pre.q - f).max() < 0.1 for f in found):
            continue
        found.append(sol_pre.q)
        q_pre = start_q.copy()
        q_pre[sl] = sol_pre.q
        if not group.checker.is_valid(q_pre):
            why = "pre-grasp closer than the clearance to something: " + group._why(q_pre, "it")
            continue
        sol = ik.solve_once(grasp_target, sol_pre.q)
        if sol is None:
            why = "grasp out of reach within joint limits"
            continue
        if np.abs(sol.q - sol_pre.q).max() > 0.6:
            why = "grasp and pre-grasp are on different IK branches"
            continue
        q_grasp = q_pre.copy()
        q_grasp[sl] = sol.q
        if not grasp_checker.is_valid(q_grasp):
            prox = grasp_checker.proximity(q_grasp)
            why = (f"grasp closer than the clearance to something: {prox.geom1} – {prox.geom2} "
                   f"at {prox.distance_m * 1000:.1f} mm")
            continue
        travel = float(np.abs(q_pre - start_q).sum())
        if best is None or travel < best[2]:
            best = (q_pre, q_grasp, travel)
    return best, (None if best is not None else why)


def no_grasp_error(report: GraspReport, n_candidates: int) -> PlanningError:
    reasons = sorted({r["reason"].split(":")[0] for r in report.rejected})
    return PlanningError("unreachable", f"none of {n_candidates} grasps is reachable by any arm "
                         f"({len(report.rejected)} rejections: {'; '.join(reasons)})")
