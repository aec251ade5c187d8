"""What bring-up puts around the arm drivers: a wrapper that marks a driver real, a tap that sees
the shared start stamp, a log of the trajectories sent, a thread that records every arm's state, a
read that cannot hang, and a wait on the driver clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hardware.arms.protocol import ArmDriver, DriverWrapper, GoalResult
from stages.arms.execution.bringup_report import StepFailed


class MarkedReal(DriverWrapper):
    """Wraps a driver and marks it real (rehearse the operator-confirmation path on a simulator)."""

    def __init__(self, inner: ArmDriver):
        super().__init__(inner)
        self.is_real = True

    def execute(self, trajectory, start_stamp, cancel, on_sent=None) -> GoalResult:
        return self.inner.execute(trajectory, start_stamp, cancel, on_sent)


class StampTap(DriverWrapper):
    """Passes through to ``inner`` and remembers the shared start stamp it was sent."""

    def __init__(self, inner: ArmDriver, on_stamp: Callable[[float], None], on_goal: Callable[[], None]):
        super().__init__(inner)
        self._on_stamp, self._on_goal = on_stamp, on_goal

    def execute(self, trajectory, start_stamp, cancel, on_sent=None) -> GoalResult:
        self._on_stamp(float(start_stamp))
        self._on_goal()
        return self.inner.execute(trajectory, start_stamp, cancel, on_sent)


class GoalLog(DriverWrapper):
    """Passes through to ``inner`` and keeps every trajectory it was sent with its start stamp
    (:func:`moves_of` groups them into the moves a motion bag holds)."""

    def __init__(self, inner: ArmDriver, goals: list):
        super().__init__(inner)
        self._goals = goals

    def execute(self, trajectory, start_stamp, cancel, on_sent=None) -> GoalResult:
        self._goals.append((float(start_stamp), self.name, trajectory))
        return self.inner.execute(trajectory, start_stamp, cancel, on_sent)


def moves_of(goals: Sequence[tuple[float, str, Any]]) -> list[tuple[float, dict[str, Any]]]:
    """(start stamp, each arm's trajectory) per shared start stamp, in the order they ran."""
    moves: dict[float, dict[str, Any]] = {}
    for stamp, arm, trajectory in goals:
        moves.setdefault(stamp, {})[arm] = trajectory
    return sorted(moves.items(), key=lambda m: m[0])


class StateRecorder:
    """Polls every driver's ``read_state`` from a thread; one row per poll (all arms)."""

    def __init__(self, drivers: Mapping[str, ArmDriver], period_s: float = 0.002):
        self.drivers = dict(drivers)
        self.period_s = float(period_s)
        self.stamps: dict[str, list[float]] = {a: [] for a in self.drivers}
        self.positions: dict[str, list[np.ndarray]] = {a: [] for a in self.drivers}
        self.velocities: dict[str, list[np.ndarray]] = {a: [] for a in self.drivers}
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                states = {a: d.read_state() for a, d in self.drivers.items()}
            except Exception as exc:  # noqa: BLE001 - reported by the step
                self.error = exc
                return
            with self._lock:
                for a, st in states.items():
                    self.stamps[a].append(float(st.stamp))
                    self.positions[a].append(np.asarray(st.positions, float).copy())
                    self.velocities[a].append(np.asarray(st.velocities, float).copy())
            self._stop.wait(self.period_s)

    def __enter__(self) -> StateRecorder:
        self._thread = threading.Thread(target=self._loop, name="bringup-recorder", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)

    def arrays(self, arm: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with self._lock:
            n = len(self.stamps[arm])
            dof = len(self.drivers[arm].joint_names)
            if n == 0:
                return np.zeros(0), np.zeros((0, dof)), np.zeros((0, dof))
            return (np.array(self.stamps[arm]), np.array(self.positions[arm]),
                    np.array(self.velocities[arm]))

    def rows(self, arms: Sequence[str]) -> np.ndarray:
        """Positions of ``arms`` side by side, one row per poll."""
        with self._lock:
            n = min(len(self.positions[a]) for a in arms)
            if n == 0:
                return np.zeros((0, sum(len(self.drivers[a].joint_names) for a in arms)))
            return np.hstack([np.array(self.positions[a][:n]) for a in arms])


def timed_read(driver: ArmDriver, timeout_s: float):
    """(state, seconds, error message or None): a read that hangs does not hang the protocol."""
    box: dict[str, Any] = {}

    def read():
        t0 = time.perf_counter()
        try:
            box["state"] = driver.read_state()
        except Exception as exc:  # noqa: BLE001 - reported as the check's measurement
            box["error"] = f"read_state raised {type(exc).__name__}: {exc}"
        box["seconds"] = time.perf_counter() - t0

    t = threading.Thread(target=read, name=f"read-{driver.name}", daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        return None, timeout_s, f"no answer within {timeout_s:g} s"
    if "error" in box:
        return None, box["seconds"], box["error"]
    return box["state"], box["seconds"], None


def wait_clock(clock: Callable[[], float], seconds: float, clock_speed: float) -> None:
    """Wait until the driver clock has advanced ``seconds`` (bounded in wall time)."""
    if seconds <= 0:
        return
    target = clock() + seconds
    deadline = time.perf_counter() + 2.0 * seconds / clock_speed + 1.0
    while True:
        remaining = target - clock()
        if remaining <= 0:
            return
        if time.perf_counter() > deadline:
            raise StepFailed(f"the driver clock stopped advancing (waited for {seconds:g} s of it)")
        time.sleep(min(0.005, remaining / clock_speed))
