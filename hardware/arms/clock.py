"""How a robot's time passes: read it, wait on it, and run the threads that act on it.

Two clocks keep one interface (:class:`Clock`):

- :class:`WallClock`: the driver's own clock (a real robot's, or a simulation paced to wall time at
  ``speed`` clock seconds per wall second); waits are wall-time waits that poll it.
- :class:`SimClock`: virtual time. The simulation advances only by stepping, and it steps only while
  every thread that acts on it (an *actor*: an arm's sending thread, the executor, a fault watcher)
  is blocked in :meth:`SimClock.wait_for` and none of their waits is over — a discrete-event
  scheduler. Nothing that happens between steps (planning, perception, a slow send, a busy
  machine) moves the clock, so the same inputs give the same physics, step for step, under any
  load; and while something waits, the stepping runs as fast as the CPU allows. When nothing is
  pending (no goal, no wait), the clock stands still.

Every wait of an actor goes through ``wait_for(predicate, until=…, timeout_s=…)``: it returns
when ``predicate()`` is true or the clock reaches ``until`` (or ``timeout_s`` more of it passed).
Predicates are cheap reads (``event.is_set``, a count); the stepper evaluates them after each step,
so a wait ends on the very step its condition came true.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from core.errors import ExecutionError

Predicate = Callable[[], bool]


def _never() -> bool:
    return False


@runtime_checkable
class Clock(Protocol):
    simulated: bool   # True: virtual time (SimClock); False: time that passes by itself
    speed: float      # clock seconds per stopwatch second (a wall clock at 4x: 4; virtual time: 1)

    def now(self) -> float: ...

    def stopwatch(self) -> float:
        """A reading to time durations with: wall seconds for a wall clock, the clock itself for
        virtual time (so a send that takes no simulated time measures 0)."""
        ...

    def wait_for(self, predicate: Predicate = _never, until: float | None = None,
                 timeout_s: float | None = None) -> bool: ...

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> bool: ...

    def thread(self, target: Callable[..., None], name: str, args: tuple = ()) -> threading.Thread: ...

    def actor(self) -> contextlib.AbstractContextManager: ...


class WallClock:
    """A clock that advances by itself; waits poll it against wall time.

    ``timeout_s`` of :meth:`wait_for` is wall seconds; ``until`` is on the clock (``now``). Given a
    ``step`` (one physics step of ``step_s``), :meth:`start` steps it in a thread paced to wall time
    × ``speed``; without one (a real robot), the clock passes by itself.
    """

    simulated = False
    POLL_S = 0.0005
    MAX_LAG_S = 0.005   # wall seconds the stepping may fall behind its pace before the pace restarts

    def __init__(self, now: Callable[[], float], speed: float = 1.0, step: Callable[[], None] | None = None,
                 step_s: float = 0.002):
        self._now, self.speed = now, float(speed)
        self._step, self._step_s = step, float(step_s)
        self._stepper: threading.Thread | None = None
        self._stopping = threading.Event()
        self.on_error: Callable[[BaseException], None] | None = None

    def start(self) -> None:
        if self._step is None or self._stepper is not None:
            return
        self._stopping.clear()
        self._stepper = threading.Thread(target=self._run, name="physics", daemon=True)
        self._stepper.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._stepper is not None:
            self._stepper.join()
            self._stepper = None

    def _run(self) -> None:
        wall0, sim0 = time.perf_counter(), self._now()
        try:
            while not self._stopping.is_set():
                self._step()
                ahead = (self._now() - sim0) / self.speed - (time.perf_counter() - wall0)
                if ahead > 0:
                    time.sleep(min(ahead, self._step_s / self.speed))   # below real time a step waits longer
                elif ahead < -self.MAX_LAG_S:
                    # a stall (a busy machine, the GIL held by planning) is not caught up by stepping at
                    # full speed: the clock, like a robot's, never runs faster than its pace, so a start
                    # stamp computed "now + lead" is not overrun by a burst of catch-up steps
                    wall0, sim0 = time.perf_counter(), self._now()
        except BaseException as exc:  # noqa: BLE001 - surfaced to the drivers
            if self.on_error is not None:
                self.on_error(exc)

    def now(self) -> float:
        return self._now()

    def stopwatch(self) -> float:
        return time.perf_counter()

    def wait_for(self, predicate: Predicate = _never, until: float | None = None,
                 timeout_s: float | None = None) -> bool:
        deadline = None if timeout_s is None else time.perf_counter() + timeout_s
        while not predicate():
            if until is not None and self._now() >= until:
                return predicate()
            if deadline is not None and time.perf_counter() >= deadline:
                return predicate()
            time.sleep(self.POLL_S)
        return True

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> bool:
        """Wait ``seconds`` of the clock (the wall share of it at ``speed``); True when cancelled."""
        if cancel is not None:
            return cancel.wait(seconds / self.speed)
        time.sleep(seconds / self.speed)
        return False

    def thread(self, target: Callable[..., None], name: str, args: tuple = ()) -> threading.Thread:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        t.start()
        return t

    @contextlib.contextmanager
    def actor(self) -> Iterator[None]:
        yield


@dataclass
class _Wait:
    predicate: Predicate
    until: float | None

    def over(self, now: float) -> bool:
        return (self.until is not None and now >= self.until) or self.predicate()


class ClockStopped(ExecutionError):
    """Virtual time cannot pass: the simulation is not stepping (not started, stopped, or it raised)."""


class SimClock:
    """Virtual time advanced by ``step`` (one physics step) only when every actor waits.

    ``now`` reads the simulation's time; ``pending`` says whether the simulation has work without
    any waiter (a goal sent by a thread that is not an actor): then it steps too.
    """

    simulated = True
    speed = 1.0
    SAFETY_POLL_S = 0.05   # a waiter re-checks this often for a change made outside any actor

    def __init__(self, now: Callable[[], float], step: Callable[[], None], pending: Predicate = _never):
        self._now, self._step, self._pending = now, step, pending
        self._cond = threading.Condition()
        self._actors: set[int] = set()
        self._waits: dict[int, _Wait] = {}
        self._starting = 0          # threads started as actors that have not yet registered
        self._stepper: threading.Thread | None = None
        self._stopping = False
        self.error: BaseException | None = None
        self.on_error: Callable[[BaseException], None] | None = None
        self.steps = 0

    def now(self) -> float:
        return self._now()

    def stopwatch(self) -> float:
        return self._now()

    # ------------------------------------------------------------------ actors
    @contextlib.contextmanager
    def actor(self) -> Iterator[None]:
        """The calling thread acts on the simulation: the clock does not move while it runs."""
        me = threading.get_ident()
        with self._cond:
            nested = me in self._actors
            self._actors.add(me)
        try:
            yield
        finally:
            if not nested:
                with self._cond:
                    self._actors.discard(me)
                    self._cond.notify_all()

    def thread(self, target: Callable[..., None], name: str, args: tuple = ()) -> threading.Thread:
        """Start ``target`` in a thread that is an actor from before it starts until it returns."""
        def run() -> None:
            me = threading.get_ident()
            with self._cond:
                self._actors.add(me)
                self._starting -= 1
            try:
                target(*args)
            finally:
                with self._cond:
                    self._actors.discard(me)
                    self._cond.notify_all()

        with self._cond:
            self._starting += 1
        t = threading.Thread(target=run, name=name, daemon=True)
        t.start()
        return t

    # ------------------------------------------------------------------ waiting
    def wait_for(self, predicate: Predicate = _never, until: float | None = None,
                 timeout_s: float | None = None) -> bool:
        """Block until ``predicate()`` or the clock reaches ``until`` / ``timeout_s`` from now;
        returns ``predicate()``. A thread that is not an actor is one for the wait."""
        me = threading.get_ident()
        with self._cond:
            now = self._now()
            if timeout_s is not None:
                until = now + timeout_s if until is None else min(until, now + timeout_s)
            wait = _Wait(predicate, until)
            if wait.over(now):
                return predicate()
            if self.error is not None:
                raise ClockStopped(f"the simulation stopped: {self.error}")
            guest = me not in self._actors
            self._actors.add(me)
            self._waits[me] = wait
            self._cond.notify_all()   # the stepper may go on now
            try:
                while not wait.over(self._now()):
                    if self.error is not None:
                        raise ClockStopped(f"the simulation stopped: {self.error}")
                    if self._stepper is None or self._stopping:
                        raise ClockStopped("the simulation is not stepping (not started, or stopped)")
                    self._cond.wait(self.SAFETY_POLL_S)
            finally:
                del self._waits[me]
                if guest:
                    self._actors.discard(me)
                self._cond.notify_all()
            return predicate()

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> bool:
        """Wait ``seconds`` of simulated time; True when ``cancel`` was set first."""
        return self.wait_for(cancel.is_set if cancel is not None else _never, timeout_s=seconds)

    def notify(self) -> None:
        """Something a waiter may wait on changed outside any actor: have the waits look again."""
        with self._cond:
            self._cond.notify_all()

    # ------------------------------------------------------------------ stepping
    def _may_step(self) -> bool:
        if self._starting or (self._actors - self._waits.keys()):
            return False
        now = self._now()
        if any(w.over(now) for w in self._waits.values()):
            return False
        return bool(self._waits) or self._pending()

    def start(self) -> None:
        if self._stepper is not None:
            return
        self._stopping = False
        self._stepper = threading.Thread(target=self._run, name="physics", daemon=True)
        self._stepper.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._stepper is not None:
            self._stepper.join()
            self._stepper = None

    def _run(self) -> None:
        cond = self._cond
        try:
            while True:
                with cond:
                    while not self._stopping and not self._may_step():
                        # someone is running, a wait just ended, or nothing is pending
                        if any(w.over(self._now()) for w in self._waits.values()):
                            cond.notify_all()
                        cond.wait(self.SAFETY_POLL_S)
                    if self._stopping:
                        return
                self._step()
                self.steps += 1
        except BaseException as exc:  # noqa: BLE001 - surfaced to every waiter
            with cond:
                self.error = exc
                cond.notify_all()
            if self.on_error is not None:
                self.on_error(exc)
