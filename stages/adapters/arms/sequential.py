"""Stage sequential: the baseline that sends each arm its trajectory one after another."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import NpzFile
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.executor import SynchronizedExecutor, split_trajectory
from stages.arms.execution.replay import colliding_states
from stages.arms.execution.rig import hardware_settings, simulated_robot


class Sequential(Stage):
    """The old execution layer's way: one arm after the other; checks every ``check_every``-th state."""

    outputs = ()

    def __init__(self, hardware: Mapping[str, Any] | None = None, check_every: int = 4):
        self.hw = hardware_settings(hardware)
        self.check_every = int(check_every)

    def run(self, ctx: StageContext, world, trajectory) -> StageResult:
        names = tuple(trajectory.joint_names)
        arms = {a.name: a.joints for a in world.robot.arms if set(a.joints) <= set(names)}
        per_arm = split_trajectory(trajectory, arms)
        hw = {**self.hw, "faults": {}}
        sim, drivers = simulated_robot(world, trajectory.positions[0], names, hw, ctx.seed)
        outcomes = {}
        with sim:
            for arm, tr in per_arm.items():
                executor = SynchronizedExecutor.from_hardware({arm: drivers[arm]}, hw)
                outcomes[arm] = executor.run({arm: tr}).results[arm].outcome.value
            sim.run_until_idle(1.0)
        times, qpos = sim.recorded()
        adr = np.array([i for a in world.robot.arms if a.name in arms for i in a.qpos_indices])
        joint_names = [j for a in world.robot.arms if a.name in arms for j in a.joints]
        checked = qpos[:: self.check_every, adr]
        colliding = colliding_states(world, joint_names, checked)
        ctx.log.info("sequential replay: %d of %d checked states touch", colliding.sum(), len(checked))
        return StageResult(
            metrics={"states": int(len(times)), "checked_states": int(len(checked)),
                     "colliding_states": int(colliding.sum()), "duration_s": float(times[-1] - times[0]),
                     **{f"{a}_outcome": o for a, o in outcomes.items()}},
            files={"states.npz": NpzFile({"times": times, "qpos": qpos, "joint_names": joint_names,
                                          "checked_colliding": colliding})},
        )
