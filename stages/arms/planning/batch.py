"""Checking many states in one call: a cheap proof first, MuJoCo on the rest, on worker threads.

:class:`BatchChecker` answers for an array of states (an edge's interior states, a batch of
shortcut candidates) in two steps:

1. the pre-test (:class:`~stages.arms.planning.bounds.GeomBounds`): every collision geom's
   bounding capsule posed by vectorized forward kinematics, one numpy pass over all states;
   a state whose every checked pair is proven at least the clearance apart is valid, with no
   MuJoCo call;
2. the exact check (:meth:`ClearanceChecker.is_valid`: MuJoCo's collision pipeline and
   ``mj_geomDistance``) on the states the bound cannot decide, in the order given (an edge
   hands them over coarse to fine, so a collision is usually met early), spread over
   ``threads`` threads, each with its own ``MjData`` (MuJoCo releases the GIL). The first
   invalid state found stops every thread.

The answer (is every state valid?) does not depend on the thread count; which invalid state
is reported first, and how many states were checked before the stop, may.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MIN_PER_THREAD = 4   # undecided states per extra thread below which one thread checks them all


class BatchChecker:
    """``first_invalid(states)`` over ``checker`` (a :class:`ClearanceChecker`); ``bounds``: the
    pre-test (None: every state goes to MuJoCo); ``threads``: threads that run exact checks."""

    def __init__(self, checker, threads: int = 1, bounds=None):
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.checker, self.threads, self.bounds = checker, int(threads), bounds
        self.proven = 0   # states the pre-test proved valid (no MuJoCo call)
        self._pool = ThreadPoolExecutor(self.threads - 1, "checker") if self.threads > 1 else None

    def undecided(self, states: np.ndarray) -> np.ndarray:
        """(N,) bool: the states the pre-test cannot prove valid (all of them without one)."""
        states = np.asarray(states, float)
        if self.bounds is None or not len(states):
            return np.ones(len(states), bool)
        todo = ~self.bounds.clear(states, self.checker.clearance_m)
        self.proven += int(len(states) - todo.sum())
        return todo

    def first_invalid(self, states: np.ndarray, undecided: np.ndarray | None = None) -> int:
        """The index of an invalid state (the first met in the order given), or -1 when every state is
        valid. ``undecided``: the pre-test's answer when the caller already has it."""
        states = np.asarray(states, float)
        todo = np.flatnonzero(self.undecided(states) if undecided is None else undecided)
        return self.exact_first_invalid(states, todo)

    def exact_first_invalid(self, states: np.ndarray, order: np.ndarray) -> int:
        """MuJoCo's answer for ``states[order]``, in that order, over the threads."""
        if not len(order):
            return -1
        lanes = min(self.threads, max(1, len(order) // MIN_PER_THREAD))
        if lanes == 1:
            valid = self.checker.is_valid
            for i in order.tolist():
                if not valid(states[i]):
                    return i
            return -1
        stop = threading.Event()
        found: list[int] = []

        def lane(k: int) -> None:
            valid = self.checker.is_valid
            for i in order[k::lanes].tolist():   # interleaved: every lane works coarse to fine
                if stop.is_set():
                    return
                if not valid(states[i]):
                    found.append(i)
                    stop.set()
                    return

        futures = [self._pool.submit(lane, k) for k in range(1, lanes)]
        lane(0)
        for f in futures:
            f.result()
        return min(found, key=lambda i: int(np.argmax(order == i))) if found else -1

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
