"""Stage execute: the synchronized executor runs a trajectory on every arm from one start stamp."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile, Mp4Video, NpzFile
from core.errors import ExecutionError
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.executor import SynchronizedExecutor, split_trajectory
from stages.arms.execution.replay import colliding_states, render_states, tracking_errors
from stages.arms.execution.rig import arm_columns, hardware_settings, moving_arms, simulated_robot
from stages.arms.recording import record_executed
from stages.arms.recording.rosbag import write_motion_bag


class Execute(Stage):
    """Runs the verified trajectory on the simulated drivers, all arms from one start stamp."""

    outputs = ("states",)

    def __init__(self, hardware: Mapping[str, Any] | None = None, video: bool = True,
                 camera: str = "overview", fps: float = 30.0):
        self.hw = hardware_settings(hardware)
        self.video, self.camera, self.fps = bool(video), camera, float(fps)

    def run(self, ctx: StageContext, world, trajectory) -> StageResult:
        names = tuple(trajectory.joint_names)
        arms = moving_arms(world, names)
        per_arm = split_trajectory(trajectory, arms)
        sim, drivers = simulated_robot(world, trajectory.positions[0], names, self.hw, ctx.seed)
        executor = SynchronizedExecutor.from_hardware(drivers, self.hw)
        with sim:
            report = executor.run(per_arm)
            sim.run_until_idle(1.0)
        result = self._record(ctx, world, sim, report, trajectory, arms)
        times, qpos = sim.recorded()
        write_motion_bag(ctx.out_dir / "motion_bag", world, [(report.start_stamp, per_arm)], times, qpos,
                         arm_columns(world, arms)[1])
        if not report.ok:
            raise ExecutionError(report.failure() + (f"; others cancelled ({report.cancel_reason})"
                                                      if report.cancel_reason else ""))
        return result

    def _record(self, ctx, world, sim, report, trajectory, arms) -> StageResult:
        times, qpos = sim.recorded()
        adr, names = arm_columns(world, arms)
        positions = qpos[:, adr]
        starts = {a: r.started_s for a, r in report.results.items()}
        colliding = colliding_states(world, names, positions)
        m: dict[str, Any] = {
            "start_skew_s": report.start_skew_s, "states": int(len(times)),
            "colliding_states": int(colliding.sum()), "start_buffer_s": report.start_buffer_s,
            "start_lead_s": report.start_buffer_s, "stamp_retries": report.stamp_retries,
            "ok": report.ok,
            **{f"{a}_outcome": r.outcome.value for a, r in report.results.items()},
            **{f"{a}_send_latency_s": v for a, v in report.send_latency_s.items()},
        }
        if report.cancel_latency_s is not None:
            m["cancel_latency_s"] = report.cancel_latency_s
        m.update(tracking_errors(trajectory, report.start_stamp, times, positions, names))
        ctx.metrics.update(m)
        record_executed(ctx.recorder, world, times - report.start_stamp, qpos, names, positions, colliding)
        states = NpzFile({"times": times, "positions": positions, "joint_names": names, "qpos": qpos,
                          "colliding": colliding, "start_stamp": report.start_stamp,
                          **{f"{a}_start_s": s for a, s in starts.items()}})
        ctx.save("states.npz", states)
        ctx.save("results.json", JsonFile({a: {"outcome": r.outcome.value, "reason": r.reason,
                                                "started_s": r.started_s, "ended_s": r.ended_s,
                                                "send_latency_s": r.send_latency_s}
                                            for a, r in report.results.items()}))
        if self.video:
            frames = render_states(world.model, times, qpos, self.camera, self.fps)
            ctx.save("execute.mp4", Mp4Video(frames, self.fps))
        return StageResult(outputs={"states": {"times": times, "positions": positions, "names": names}},
                           metrics=m)
