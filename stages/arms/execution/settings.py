"""The ``hardware`` config group: how the simulated robot runs and what faults it carries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.settings import require


@dataclass(frozen=True)
class FaultSettings:
    """Faults injected into one arm's driver (hardware.arms.faults.FaultyDriver); all off by default."""

    send_latency_s: float = 0.0   # every goal reaches the arm this late (wall s)
    send_jitter_s: float = 0.0    # plus a uniform random share of this
    fail_at_s: float | None = None  # the arm reports a failure this far into its motion
    reject: bool = False          # the arm rejects its goal
    hang: bool = False            # the arm never answers

    def active(self) -> dict[str, Any]:
        """The faults that do something, as FaultyDriver's keyword arguments."""
        return {k: v for k, v in vars(self).items() if v not in (None, 0, 0.0, False)}


@dataclass(frozen=True)
class HardwareSettings:
    """The simulated robot: both arms in one MuJoCo simulation, one driver per arm."""

    driver: Literal["mujoco"] = "mujoco"  # the ROS 2 adapter (hardware.arms.ros2) needs a real robot
    clock: Literal["sim", "wall"] = "sim"  # sim: virtual time, as fast as the CPU allows and the same
    #                                        under any load; wall: paced to wall time × speed (watching)
    speed: float = 1.0                # wall clock only: sim seconds per wall second (4 = 4× real time)
    start_buffer_s: float = 0.1       # lead of the shared start stamp (sim s; wall s on the wall clock)
    max_start_lead_s: float = 1.0     # a stamp that passes before every goal arrived is retried up to this
    ack_timeout_s: float = 2.0        # a goal not back this long after its motion should end times out
    timestep_s: float | None = None   # the physics step; None = the model's own
    joint_offsets_deg: dict[str, tuple[float, ...]] | None = None  # hidden zero offsets per arm
    faults: dict[str, FaultSettings] = field(default_factory=dict)

    def __post_init__(self):
        require(self.speed > 0, "speed", self.speed, "> 0")
        require(self.start_buffer_s > 0, "start_buffer_s", self.start_buffer_s, "> 0 (wall s)")
        require(self.ack_timeout_s > 0, "ack_timeout_s", self.ack_timeout_s, "> 0 (wall s)")
        require(self.timestep_s is None or 0 < self.timestep_s <= 0.01, "timestep_s", self.timestep_s,
                "the physics step in seconds, in (0, 0.01], or null for the model's own")
        for arm, values in (self.joint_offsets_deg or {}).items():
            require(all(abs(v) <= 10.0 for v in values), f"joint_offsets_deg.{arm}", list(values),
                    "hidden zero offsets are small (|offset| <= 10 deg)")

    def faults_of(self, arm: str) -> dict[str, Any]:
        """The active faults of ``arm`` (FaultyDriver's keyword arguments); empty when none."""
        faults = self.faults.get(arm)
        return faults.active() if faults is not None else {}
