"""The bring-up stage: runs the bring-up checklist (:mod:`stages.arms.execution.bringup`) on the robot.

``choreograph pipeline=bringup`` runs it on the simulated robot; faults and latency are
injected per arm with ``hardware.faults.<arm>.{send_latency_s, send_jitter_s, fail_at_s,
reject, hang}``, and every criterion is a parameter of the stage, e.g.
``pipeline.stages.bringup.speed_fraction=0.1`` or
``pipeline.stages.bringup.synchronized.max_start_skew_s=0.001``.

Writes ``bringup/report.md`` (step, criterion, measured, pass/fail), ``bringup/report.json``
``bringup/states.npz`` (the physics recording on the simulator) and ``bringup/motion_bag/`` (a
rosbag2: every trajectory sent, the states at 50 Hz), and the metrics
``bringup.<step>_pass`` / ``bringup.<step>_status`` plus every measured value. When a step
fails the report is saved first, then the stage fails with an ``ExecutionError`` naming it.

With ``hardware.driver=ros2`` (which the ``hardware`` settings do not accept yet: only
``mujoco``) it runs on the real robot through
:class:`hardware.arms.ros2.Ros2Connection` (settings under ``hardware.ros2``); those drivers are
real, so every moving step needs ``pipeline.stages.bringup.confirm=true`` (or per step).
``treat_as_real=true`` rehearses that on the simulator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import JsonFile, NpzFile, TextFile
from core.errors import ExecutionError
from hardware.arms.ros2 import Ros2Connection
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.bringup import ArmLimitsSpec, BringUpProtocol, MarkedReal
from stages.arms.execution.bringup_checks import motion_validator, touching_counter
from stages.arms.execution.bringup_drivers import GoalLog, moves_of
from stages.arms.execution.bringup_settings import BringUpSettings
from stages.arms.execution.rig import hardware_settings, simulated_robot
from stages.arms.recording.rosbag import BAG_STATE_RATE_HZ, write_motion_bag


class BringUp(Stage):
    """The hardware-in-the-loop bring-up protocol, against the configured driver."""

    outputs = ("report",)

    def __init__(self, hardware: Mapping[str, Any] | None = None, treat_as_real: bool = False,
                 **settings: Any):
        # the protocol is the real robot's: it waits and records on wall time, so the simulator it
        # rehearses on is paced to the wall clock (at hardware.speed) whatever hardware.clock says
        self.hw = dataclasses.replace(hardware_settings(hardware), clock="wall")
        self.treat_as_real = bool(treat_as_real)
        self.settings = BringUpSettings.from_config(
            {**settings, "clock_speed": self.hw.speed, "start_buffer_s": self.hw.start_buffer_s,
             "max_start_lead_s": self.hw.max_start_lead_s, "ack_timeout_s": self.hw.ack_timeout_s})

    def _robot(self, world, seed: int):
        """(context manager that runs the robot, drivers, physics sim or None)."""
        if self.hw.driver == "ros2":   # unreachable today: HardwareSettings allows only "mujoco"
            conn = Ros2Connection(world.robot, getattr(self.hw, "ros2", None))
            return conn, None, None
        sim, drivers = simulated_robot(world, world.robot.home(), world.robot.joint_names(), self.hw, seed)
        return sim, drivers, sim

    def run(self, ctx: StageContext, world) -> StageResult:
        names = world.robot.joint_names()
        running, drivers, sim = self._robot(world, ctx.seed)
        with running:
            if sim is None:          # a ROS 2 connection: its drivers exist once it has started
                drivers = running.drivers
            return self._run(ctx, world, names, drivers, sim)

    def _run(self, ctx, world, names, drivers, sim) -> StageResult:
        if self.treat_as_real:
            drivers = {a: MarkedReal(d) for a, d in drivers.items()}
        goals: list = []   # every trajectory sent, for the motion bag
        drivers = {a: GoalLog(d, goals) for a, d in drivers.items()}
        arms = {a.name: ArmLimitsSpec.from_arm_spec(a) for a in world.robot.arms}
        protocol = BringUpProtocol(drivers, arms, self.settings, validate=motion_validator(world),
                                   count_touching=touching_counter(world), log=ctx.log)
        try:
            report = protocol.run()
        finally:   # saved before the stage fails, and on Ctrl-C (what ran so far)
            if protocol.report is not None:
                ctx.metrics.update(protocol.report.metrics())
                ctx.save("report.md", TextFile(protocol.report.to_markdown(), ".md"))
                ctx.save("report.json", JsonFile(protocol.report.to_json()))
            if sim is not None:
                times, qpos = sim.recorded()
                ctx.save("states.npz", NpzFile({"times": times, "qpos": qpos,
                                                "positions": qpos[:, world.robot.qpos_indices()]
                                                if len(qpos) else np.zeros((0, len(names))),
                                                "joint_names": names}))
                write_motion_bag(ctx.out_dir / "motion_bag", world, moves_of(goals), times, qpos, names,
                                 state_rate_hz=BAG_STATE_RATE_HZ)
        ctx.log.info(report.summary())
        if not report.passed:
            raise ExecutionError(report.summary())
        return StageResult(outputs={"report": report.to_json()}, metrics=report.metrics())
