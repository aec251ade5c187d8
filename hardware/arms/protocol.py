"""What an arm driver does: run a trajectory from a given start stamp, cancel it, report state.

One driver per arm. ``execute`` blocks in the caller's thread: it sends the goal
(which may take a while: a real driver talks over a network), calls ``on_sent`` once
the goal is acknowledged, waits for the motion to finish, and returns how it ended. Setting
the ``cancel`` event stops the arm mid-motion (it holds where it is) and makes ``execute``
return CANCELLED. Stamps are in the driver's clock (``driver.clock()``), shared by every arm of one robot.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


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
    send_latency_s: float = float("nan")  # wall time the send took
    stopped_wall_s: float = float("nan")  # perf_counter time the arm was commanded to hold (cancel)

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.SUCCEEDED


class CancelEvent(threading.Event):
    """The shared cancel: an Event that also calls its subscribers the moment it is set.

    Drivers subscribe a callback that stops their arm, so a cancel reaches every arm
    from the thread that raised it — no polling, no waiting for a thread to wake.
    """

    def __init__(self):
        super().__init__()
        self._callbacks: list = []
        self._cb_lock = threading.Lock()
        self.reason = ""
        self.set_wall_s: float | None = None

    def subscribe(self, callback) -> None:
        with self._cb_lock:
            fire = self.is_set()
            if not fire:
                self._callbacks.append(callback)
        if fire:
            callback()

    def set(self, reason: str = "cancelled") -> None:  # type: ignore[override]
        import time

        with self._cb_lock:
            if self.is_set():
                return
            self.reason, self.set_wall_s = reason, time.perf_counter()
            super().set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb()


@runtime_checkable
class ArmDriver(Protocol):
    name: str
    joint_names: tuple[str, ...]
    is_real: bool  # a real robot: the bring-up protocol asks for explicit confirmation

    def clock(self) -> float: ...

    def read_state(self) -> JointState: ...

    def execute(self, trajectory: ArmTrajectory, start_stamp: float, cancel: CancelEvent,
                on_sent: Callable[[], None] | None = None) -> GoalResult: ...


class DriverWrapper:
    """Base of drivers that wrap another one: identity, clock and state are the inner driver's."""

    def __init__(self, inner: ArmDriver):
        self.inner = inner
        self.name, self.joint_names, self.is_real = inner.name, inner.joint_names, inner.is_real

    def clock(self) -> float:
        return self.inner.clock()

    def read_state(self) -> JointState:
        return self.inner.read_state()
