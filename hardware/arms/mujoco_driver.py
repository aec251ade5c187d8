"""The simulated arm driver: one arm's joints in a shared :class:`PhysicsSim`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hardware.arms.mujoco_sim import PhysicsSim
from hardware.arms.protocol import ArmTrajectory, CancelEvent, GoalResult, JointState, Outcome


class MujocoArmDriver:
    """Commands one arm in the shared simulation; safe to call from any thread."""

    is_real = False

    def __init__(self, sim: PhysicsSim, name: str, joint_names: Sequence[str],
                 joint_offsets_rad: Sequence[float] | None = None):
        """``joint_offsets_rad``: hidden joint zero offsets (physics runs at commanded + offset;
        commands and readings stay the believed angles). None = none."""
        self.sim, self.name, self.joint_names = sim, name, tuple(joint_names)
        self.timing = sim.timing
        sim.add_arm(name, self.joint_names, joint_offsets_rad)

    def clock(self) -> float:
        return self.sim.clock()

    def read_state(self) -> JointState:
        return self.sim.read_state(self.name)

    def execute(self, trajectory: ArmTrajectory, start_stamp: float, cancel: CancelEvent,
                on_sent: Callable[[], None] | None = None) -> GoalResult:
        t0 = self.timing.stopwatch()
        if tuple(trajectory.joint_names) != self.joint_names:
            return GoalResult(self.name, Outcome.REJECTED,
                              f"trajectory joints {list(trajectory.joint_names)} are not this arm's "
                              f"{list(self.joint_names)}")
        if cancel.is_set():
            return GoalResult(self.name, Outcome.CANCELLED, "cancelled before sending")
        goal = self.sim.submit(self.name, trajectory, start_stamp)
        latency = self.timing.stopwatch() - t0
        sent = self.sim.clock()
        if on_sent is not None and goal.outcome is None:
            on_sent()
        cancel.subscribe(lambda: self.sim.cancel(goal, cancel.reason or "cancelled"))
        self.timing.wait_for(goal.done.is_set)
        return GoalResult(self.name, goal.outcome or Outcome.FAILED, goal.reason, sent,
                          goal.started_s if goal.started_s is not None else float("nan"),
                          goal.ended_s if goal.ended_s is not None else float("nan"), latency,
                          goal.stopped_at if goal.stopped_at is not None else float("nan"))
