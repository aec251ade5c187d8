"""Virtual time: the clock moves only while every actor waits, and a wait ends on its own step."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from hardware.arms.clock import ClockStopped, SimClock, WallClock


class Counter:
    """A stand-in simulation: each step adds 1 ms."""

    def __init__(self):
        self.steps = 0
        self.lock = threading.Lock()

    def now(self) -> float:
        with self.lock:
            return self.steps * 1e-3

    def step(self) -> None:
        with self.lock:
            self.steps += 1


@pytest.fixture
def clock():
    sim = Counter()
    c = SimClock(sim.now, sim.step)
    c.start()
    yield c, sim
    c.stop()


def test_a_wait_ends_on_the_step_that_reaches_it_and_the_clock_then_stands_still(clock):
    c, sim = clock
    c.wait_for(until=0.010)
    assert sim.steps == 10
    time.sleep(0.05)   # nothing pending: no steps pass on their own
    assert sim.steps == 10
    assert c.sleep(0.005) is False and sim.steps == 15


def test_the_clock_does_not_move_while_an_actor_runs(clock):
    c, sim = clock
    seen = []

    def actor():
        seen.append(c.now())
        time.sleep(0.1)          # wall time spent computing: no simulated time passes
        seen.append(c.now())
        c.wait_for(until=c.now() + 0.002)
        seen.append(c.now())

    t = c.thread(actor, "actor")
    c.wait_for(until=0.050)      # a guest waiter asks for 50 ms meanwhile
    t.join()
    assert seen[0] == seen[1] == 0.0 and seen[2] == pytest.approx(0.002)


def test_interleaved_actors_see_the_same_times_whatever_the_wall_delays():
    def run(delays) -> list[tuple[str, float]]:
        sim = Counter()
        c = SimClock(sim.now, sim.step)
        events, lock = [], threading.Lock()
        rng = np.random.default_rng(delays)

        def actor(name, period):
            for _ in range(5):
                time.sleep(float(rng.uniform(0, 0.004)))   # a random wall delay before each act
                with lock:
                    events.append((name, round(c.now(), 9)))
                c.sleep(period)

        c.start()
        with c.actor():   # no time passes while both start
            threads = [c.thread(actor, n, (n, p)) for n, p in (("a", 0.003), ("b", 0.005))]
        c.wait_for(lambda: not any(t.is_alive() for t in threads))
        c.stop()
        return sorted(events)

    assert run(1) == run(2) == run(3)


def test_an_event_set_by_an_actor_ends_a_wait_on_the_same_step(clock):
    c, sim = clock
    ev = threading.Event()

    def setter():
        c.sleep(0.004)
        ev.set()

    c.thread(setter, "setter")
    assert c.wait_for(ev.is_set)
    assert sim.steps == 4


def test_a_wait_on_a_clock_that_does_not_step_fails_typed():
    sim = Counter()
    c = SimClock(sim.now, sim.step)
    with pytest.raises(ClockStopped, match="not stepping"):
        c.wait_for(until=0.01)
    c.start()
    c.stop()
    with pytest.raises(ClockStopped, match="not stepping"):   # stopped: a wait fails typed, never hangs
        c.wait_for(until=0.01)


def test_the_wall_clock_polls_its_own_time():
    t0 = time.perf_counter()
    w = WallClock(lambda: time.perf_counter() - t0, speed=1.0)
    assert w.wait_for(until=0.02) is False and w.now() >= 0.02
    assert w.wait_for(lambda: True) is True
