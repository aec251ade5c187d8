"""Stages of the crossing benchmark: the independent baseline and the group-vs-baseline comparison."""

from __future__ import annotations

import numpy as np

from stages.artifacts import JsonFile, NpzFile, PngFigure
from stages.graph import Stage, StageContext, StageResult
from stages.planning.checker import ClearanceChecker
from stages.planning.independent import colliding_frames, detour_m, gripper_paths, plan_independent
from stages.planning.stage import make_group, planner_settings
from stages.retiming.retime import retime_with_report
from stages.retiming.stage import limits_for


def _touch_checker(world, joint_names):
    return ClearanceChecker.for_world(world, joint_names, 0.0)


def _clear_checker(world, joint_names):
    return ClearanceChecker.for_world(world, joint_names, world.clearance_m)


class Independent(Stage):
    """Plans each arm alone to the group's goal, runs them on one clock, counts touching frames."""

    outputs = ("independent",)

    def __init__(self, frames: int = 210, planner=None, rate_hz: float = 125.0,
                 max_deviation_rad: float = 0.02):
        self.frames = int(frames)
        self.settings = planner_settings(planner)
        self.rate_hz, self.max_deviation_rad = float(rate_hz), float(max_deviation_rad)

    def run(self, ctx: StageContext, world, path) -> StageResult:
        group = make_group(world, None, self.settings)
        vel, acc = limits_for(world, group.joint_names)
        index = {j: i for i, j in enumerate(group.joint_names)}

        def retime(p):
            cols = [index[j] for j in p.joint_names]
            return retime_with_report(p, [vel[c] for c in cols], [acc[c] for c in cols], self.rate_hz,
                                      max_deviation_rad=self.max_deviation_rad).trajectory

        start, goal = path.waypoints[0], path.waypoints[-1]
        plan = plan_independent(group, start, goal, ctx.rng, retime)
        frames = plan.at(np.linspace(0.0, plan.duration_s, self.frames))
        touching = colliding_frames(_touch_checker(world, group.joint_names), frames)
        within = colliding_frames(_clear_checker(world, group.joint_names), frames)
        ctx.log.info("independent plans run together: %d of %d frames touch", touching.sum(), self.frames)
        return StageResult(
            outputs={"independent": plan},
            metrics={"frames": self.frames, "colliding_frames": int(touching.sum()),
                     "frames_within_clearance": int(within.sum()), "duration_s": plan.duration_s,
                     **{f"{a}_duration_s": d for a, d in plan.durations_s.items()}},
            files={"frames.npz": NpzFile({"joint_names": list(plan.joint_names), "frames": frames,
                                          "colliding": touching}),
                   **{f"{a}_path.npz": NpzFile({"joint_names": list(p.joint_names),
                                                "waypoints": p.waypoints}) for a, p in plan.paths.items()}},
        )


class GroupVsIndependent(Stage):
    """The group trajectory on the same number of frames: touching frames, clearance, detour."""

    outputs = ()

    def __init__(self, frames: int = 210):
        self.frames = int(frames)

    def run(self, ctx: StageContext, world, trajectory, independent, report) -> StageResult:
        group = make_group(world)
        times = np.linspace(0.0, float(trajectory.times[-1]), self.frames)
        frames = np.stack([np.interp(times, trajectory.times, trajectory.positions[:, j])
                           for j in range(trajectory.positions.shape[1])], axis=1)
        touching = colliding_frames(_touch_checker(world, trajectory.joint_names), frames)
        grip_group = gripper_paths(group, trajectory.positions)
        grip_indep = gripper_paths(group, independent.positions)
        detours = detour_m(grip_group, grip_indep)
        worst_arm = max(detours, key=detours.get)
        ctx.log.info("group plan: %d of %d frames touch; detour %.3f m (%s)", touching.sum(),
                     self.frames, detours[worst_arm], worst_arm)
        return StageResult(
            metrics={"frames": self.frames, "colliding_frames": int(touching.sum()),
                     "min_clearance_m": float(report["min_clearance_m"]),
                     "detour_m": detours[worst_arm], "detour_arm": worst_arm,
                     **{f"{a}_detour_m": d for a, d in detours.items()},
                     "duration_s": float(trajectory.times[-1])},
            files={"gripper_paths.png": PngFigure(gripper_paths_figure(grip_group, grip_indep)),
                   "detour.json": JsonFile(detours)},
        )


def gripper_paths_figure(group_paths, baseline_paths):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    colours = {"left": "tab:blue", "right": "tab:orange"}
    for arm, pts in group_paths.items():
        c = colours.get(arm)
        base = baseline_paths[arm]
        for ax, (i, j, lab) in zip(axes, [(1, 0, "top view: y (m) → x (m)"), (1, 2, "front view: y → z")],
                                   strict=True):
            ax.plot(pts[:, i], pts[:, j], "-", color=c, lw=2, label=f"{arm}: ArmGroup")
            ax.plot(base[:, i], base[:, j], "--", color=c, lw=1, label=f"{arm}: independent")
            ax.plot(pts[0, i], pts[0, j], "o", color=c)
            ax.plot(pts[-1, i], pts[-1, j], "s", color=c)
            ax.set_title(lab, fontsize=9)
            ax.set_aspect("equal")
            ax.grid(alpha=0.3)
    axes[0].invert_xaxis()
    axes[1].invert_xaxis()
    axes[0].legend(fontsize=7)
    fig.suptitle("gripper paths (o start, ■ goal)")
    return fig
