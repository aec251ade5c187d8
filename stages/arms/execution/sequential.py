"""The sequential baseline: the old execution layer's way, one arm's trajectory after the other's,
on the simulated robot without faults; its recorded states are then checked for contact."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from stages.arms.execution.executor import SynchronizedExecutor, split_trajectory
from stages.arms.execution.replay import colliding_states
from stages.arms.execution.rig import arm_columns, moving_arms, simulated_robot
from stages.arms.execution.settings import HardwareSettings


@dataclass(frozen=True)
class SequentialRun:
    times: np.ndarray              # recorded physics states (sim s)
    qpos: np.ndarray               # full qpos per state
    joint_names: list[str]         # the moving arms' joints, in the robot's order
    checked_colliding: np.ndarray  # per checked state (every check_every-th): does geometry touch?
    outcomes: dict[str, str]       # per arm, its goal's outcome

    @property
    def duration_s(self) -> float:
        return float(self.times[-1] - self.times[0])


def run_sequential(world, trajectory, hw: HardwareSettings, seed: int, check_every: int) -> SequentialRun:
    """Send each arm its share of ``trajectory`` after the previous arm's ended; check every
    ``check_every``-th recorded state for contact."""
    names = tuple(trajectory.joint_names)
    arms = moving_arms(world, names)
    per_arm = split_trajectory(trajectory, arms)
    hw = dataclasses.replace(hw, faults={})
    sim, drivers = simulated_robot(world, trajectory.positions[0], names, hw, seed)
    outcomes = {}
    with sim:
        for arm, tr in per_arm.items():
            executor = SynchronizedExecutor.from_hardware({arm: drivers[arm]}, hw)
            outcomes[arm] = executor.run({arm: tr}).results[arm].outcome.value
        sim.run_until_idle(1.0)
    times, qpos = sim.recorded()
    adr, joint_names = arm_columns(world, arms)
    colliding = colliding_states(world, joint_names, qpos[::check_every, adr])
    return SequentialRun(times, qpos, joint_names, colliding, outcomes)
