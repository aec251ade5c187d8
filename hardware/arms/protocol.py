"""What an arm driver does: run a trajectory from a given start stamp, cancel it, report state.

One driver per arm. ``execute`` blocks in the caller's thread: it sends the goal
(which may take a while: a real driver talks over a network), calls ``on_sent`` once
the goal is acknowledged, waits for the motion to finish, and returns how it ended. Setting
the ``cancel`` event stops the arm mid-motion (it holds where it is) and makes ``execute``
return CANCELLED. Stamps are in the driver's clock (``driver.clock()``), shared by every arm of
one robot; ``driver.timing`` says how that clock passes and is waited on (virtual time in
simulation, wall time on a robot).
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from hardware.arms.clock import Clock


class Outcome(enum.StrEnum):
    SUCCEEDED = "succeeded"
    CANCELLED = "cancelled"
    FAILED = "failed"
    REJECTED = "rejected"
    TIMEOUT = "timeout"
    LATE = "late"   # the start stamp had passed when the goal arrived; the arm did not move


@dataclass(frozen=True)
class ArmTrajectory:
    """One arm's share of a group trajectory; ``times`` from the start stamp (s)."""

    joint_names: tuple[str, ...]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray | None = None


@dataclass(frozen=True)
class JointState:
    stamp: float
    positions: np.ndarray
    velocities: np.ndarray


@dataclass(frozen=True)
class GoalResult:
    arm: str
    outcome: Outcome
    reason: str = ""
    sent_s: float = float("nan")      # clock time when the goal was acknowledged
    started_s: float = float("nan")   # clock time of the first control step on the trajectory
    ended_s: float = float("nan")     # clock time the arm finished or stopped
    send_latency_s: float = float("nan")  # how long the send took, on the clock's stopwatch
    stopped_at: float = float("nan")      # the clock's stopwatch when the arm was commanded to hold
    #                                       (cancel): wall s on a wall clock, simulated s on virtual time

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.SUCCEEDED


class CancelEvent(threading.Event):
    """The shared cancel: an Event that also calls its subscribers the moment it is set.

    Drivers subscribe a callback that stops their arm, so a cancel reaches every arm
    from the thread that raised it — no polling, no waiting for a thread to wake.
    """

    def __init__(self, stopwatch: Callable[[], float] = time.perf_counter):
        super().__init__()
        self._callbacks: list = []
        self._cb_lock = threading.Lock()
        self.reason = ""
        self.stopwatch = stopwatch       # the drivers' clock's stopwatch (Clock.stopwatch)
        self.set_at: float | None = None  # its reading when the cancel was raised

    def subscribe(self, callback) -> None:
        with self._cb_lock:
            fire = self.is_set()
            if not fire:
                self._callbacks.append(callback)
        if fire:
            callback()

    def set(self, reason: str = "cancelled") -> None:  # type: ignore[override]
        with self._cb_lock:
            if self.is_set():
                return
            self.reason, self.set_at = reason, self.stopwatch()
            super().set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb()


@runtime_checkable
class ArmDriver(Protocol):
    name: str
    joint_names: tuple[str, ...]
    is_real: bool  # a real robot: the bring-up protocol asks for explicit confirmation
    timing: Clock  # how its clock passes and is waited on (hardware.arms.clock)

    def clock(self) -> float: ...

    def read_state(self) -> JointState: ...

    def execute(self, trajectory: ArmTrajectory, start_stamp: float, cancel: CancelEvent,
                on_sent: Callable[[], None] | None = None) -> GoalResult: ...


class DriverWrapper:
    """Base of drivers that wrap another one: identity, clock and state are the inner driver's."""

    def __init__(self, inner: ArmDriver):
        self.inner = inner
        self.name, self.joint_names, self.is_real = inner.name, inner.joint_names, inner.is_real
        self.timing = inner.timing

    def clock(self) -> float:
        return self.inner.clock()

    def read_state(self) -> JointState:
        return self.inner.read_state()
