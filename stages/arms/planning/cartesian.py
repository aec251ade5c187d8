"""Lockstep Cartesian paths: every gripper follows its straight line on one shared parameter.

At s ∈ [0, 1] each named arm's target is the linear interpolation of its start and
goal positions and the slerp of its orientations. Steps are small enough that no
gripper moves more than ``cartesian_step_m`` (or turns more than
``cartesian_step_rad``) between two of them; each step is solved by IK from the
previous one, checked at clearance, and the joint-space edge between consecutive
steps is checked at the edge resolution.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from core.errors import PlanningError
from core.se3 import quat_angle
from stages.arms.planning.ik import pose_array


def slerp(q0: np.ndarray, q1: np.ndarray, s: float) -> np.ndarray:
    """Shortest-arc interpolation of unit quaternions (w, x, y, z)."""
    dot = float(q0 @ q1)
    if dot < 0:
        q1, dot = -q1, -dot
    if dot > 0.9995:
        q = q0 + s * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = np.arccos(np.clip(dot, -1, 1))
    return (np.sin((1 - s) * theta) * q0 + np.sin(s * theta) * q1) / np.sin(theta)


def line_poses(start_pose: np.ndarray, goal_pose: np.ndarray, s: float) -> np.ndarray:
    return np.concatenate([start_pose[:3] + s * (goal_pose[:3] - start_pose[:3]),
                           slerp(start_pose[3:], goal_pose[3:], s)])


def lockstep_path(group, goals: Mapping[str, Sequence[float]], start: np.ndarray,
                  deadline: float, max_joint_jump_rad: float = 0.3) -> list[np.ndarray]:
    """Dense group waypoints along the lockstep lines, or PlanningError."""
    group.compose({}, start)
    unknown = set(goals) - set(group.arms)
    if unknown:
        raise PlanningError("invalid_goal", f"goal.cartesian names arm(s) {sorted(unknown)}; "
                            f"the group's arms are {list(group.arms)}")
    s_cfg = group.settings
    lines = {}
    n_steps = 1
    for arm, goal in goals.items():
        goal = pose_array(goal, f"goal.cartesian.{arm}")
        begin = group.ee_pose(arm, start)
        lines[arm] = (begin, goal)
        dist = float(np.linalg.norm(goal[:3] - begin[:3]))
        turn = quat_angle(begin[3:], goal[3:])
        n_steps = max(n_steps, int(np.ceil(dist / s_cfg.cartesian_step_m)),
                      int(np.ceil(turn / s_cfg.cartesian_step_rad)))
    waypoints = [np.asarray(start, float)]
    q = waypoints[0].copy()
    for k in range(1, n_steps + 1):
        if time.perf_counter() >= deadline:
            raise PlanningError("timeout", f"lockstep path: time budget ran out at step {k}/{n_steps}")
        s = k / n_steps
        q_next = q.copy()
        for arm, (begin, goal) in lines.items():
            sl = group.arm_slice(arm)
            target = line_poses(begin, goal, s)
            sol = group._ik[arm].solve_once(target, q[sl])
            if sol is None:
                raise PlanningError("unreachable", f"lockstep path: arm {arm!r} cannot follow its line "
                                    f"at s={s:.3f} (pose {np.round(target, 4).tolist()})")
            jump = float(np.max(np.abs(sol.q - q[sl])))
            if jump > max_joint_jump_rad:
                raise PlanningError("unreachable", f"lockstep path: arm {arm!r} would jump {jump:.2f} rad "
                                    f"between s={s - 1 / n_steps:.3f} and s={s:.3f} (a singularity "
                                    "or a joint limit lies on its line)")
            q_next[sl] = sol.q
        if not group.checker.is_valid(q_next):
            raise PlanningError("goal_in_collision" if k == n_steps else "unreachable",
                                f"lockstep path blocked at s={s:.3f}: " + group._why(q_next, "that step"))
        if not group.edges.motion_valid(q, q_next):
            raise PlanningError("unreachable", f"lockstep path: the motion into s={s:.3f} comes closer "
                                "than the clearance to something")
        waypoints.append(q_next)
        q = q_next
    return waypoints
