"""The independent baseline: each arm planned alone, as if the others were absent.

This is how a one-arm-at-a-time planner handles a two-arm goal. Each plan is safe
on its own; run together on one clock they can still hit each other, which is what
it exists to measure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from stages.arms.planning.group import ArmGroup, arm_bodies
from stages.arms.planning.path import JointPath


@dataclass(frozen=True)
class IndependentPlan:
    """Per-arm paths (each planned alone) and their trajectories on one shared clock."""

    paths: dict[str, JointPath]
    durations_s: dict[str, float]
    joint_names: tuple[str, ...]
    times: np.ndarray  # shared clock at the trajectories' rate
    positions: np.ndarray  # (T, D) every arm, each holding its end once done

    @property
    def duration_s(self) -> float:
        return float(self.times[-1])

    def at(self, times: np.ndarray) -> np.ndarray:
        """Positions at arbitrary times (linear between samples, held at the end)."""
        return np.stack([np.interp(times, self.times, self.positions[:, j])
                         for j in range(self.positions.shape[1])], axis=1)


def plan_independent(group: ArmGroup, start: np.ndarray, goal: np.ndarray,
                     rng: np.random.Generator, retime: Callable) -> IndependentPlan:
    """Plan every arm of ``group`` alone from ``start`` to ``goal`` (group vectors).

    ``retime(path) -> Trajectory`` times each arm's path alone; the arms then share one
    clock starting at 0, each holding its last position once its own motion is done.
    """
    paths, trajs = {}, {}
    for arm, spec in group.arms.items():
        others = [b for a, s in group.arms.items() if a != arm for b in arm_bodies(group.model, s.joints)]
        alone = ArmGroup(group.model, {arm: spec}, group.clearance_m, group.settings,
                         base_qpos=_with(group, start), disabled_bodies=others)
        sl = group.arm_slice(arm)
        result = alone.plan_to_joints({arm: goal[sl]}, start[sl], rng)
        paths[arm] = result.path
        trajs[arm] = retime(result.path)
    dt = float(np.diff(next(iter(trajs.values())).times[:2])[0]) if any(
        t.num_samples > 1 for t in trajs.values()) else 1.0
    duration = max(t.duration_s for t in trajs.values())
    times = np.round(np.arange(int(round(duration / dt)) + 1) * dt, 12)
    columns = []
    for traj in trajs.values():
        for j in range(traj.positions.shape[1]):
            columns.append(np.interp(times, traj.times, traj.positions[:, j]))
    return IndependentPlan(paths, {a: t.duration_s for a, t in trajs.items()}, group.joint_names,
                           times, np.stack(columns, axis=1))


def _with(group: ArmGroup, q: np.ndarray) -> np.ndarray:
    """Full qpos with the group's joints at ``q`` (the base for a one-arm planner)."""
    full = group.base_qpos.copy()
    full[group.checker.qpos_adr] = q
    return full


def colliding_frames(checker, frames: np.ndarray) -> np.ndarray:
    """Boolean per frame: does any pair that may not touch actually touch (distance < 0)?"""
    return np.array([not checker.is_valid(q) for q in frames])


def gripper_paths(group: ArmGroup, frames: np.ndarray) -> dict[str, np.ndarray]:
    """Each arm's gripper position (N, 3) along the frames."""
    return {arm: np.array([group.ee_pose(arm, q)[:3] for q in frames]) for arm in group.arms}


def detour_m(group_paths: Mapping[str, np.ndarray], baseline_paths: Mapping[str, np.ndarray]) -> dict:
    """Per arm, the largest distance from a point of its group gripper path to its baseline path."""
    out = {}
    for arm, pts in group_paths.items():
        base = baseline_paths[arm]
        out[arm] = float(max(_point_to_polyline(p, base) for p in pts))
    return out


def _point_to_polyline(p: np.ndarray, line: np.ndarray) -> float:
    if len(line) == 1:
        return float(np.linalg.norm(p - line[0]))
    a, b = line[:-1], line[1:]
    ab = b - a
    denom = np.einsum("ij,ij->i", ab, ab)
    t = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.where(denom > 0, denom, 1), 0, 1)
    closest = a + ab * t[:, None]
    return float(np.min(np.linalg.norm(closest - p, axis=1)))
