"""Checking many states in one call: the compiled pre-test over threads, MuJoCo on what it leaves.

:class:`BatchChecker` answers for an array of states (an edge's interior states, a trajectory's
samples, a benchmark's batch) in two steps:

1. the checker's compiled pre-test (:meth:`GeomBounds.classify`), the states split over
   ``threads`` threads that hold no GIL: each state proven valid, proven invalid (the first such
   state stops every thread) or undecided;
2. the exact check (:meth:`ClearanceChecker.is_valid`: MuJoCo) on the undecided states, in the
   order given (an edge hands them over coarse to fine, so a collision is usually met early), spread
   over the threads, each with its own ``MjData``; the first invalid state stops every thread.

Without a pre-test (``planner.pretest=false``) every state goes to step 2. The answer (is every
state valid?) does not depend on the thread count; which invalid state is reported, and how many
states were checked before the stop, may.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from stages.arms.planning.bounds import CLEAR, VIOLATED

MIN_PER_THREAD = 4   # undecided states per extra thread below which one thread checks them all


class BatchChecker:
    """``first_invalid(states)`` over ``checker`` (a :class:`ClearanceChecker`) on ``threads`` threads."""

    def __init__(self, checker, threads: int = 1):
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.checker, self.threads = checker, int(threads)
        self.proven = 0   # states the pre-test decided (no MuJoCo call)
        self._pool = ThreadPoolExecutor(self.threads - 1, "checker") if self.threads > 1 else None

    @property
    def pool(self) -> ThreadPoolExecutor | None:
        """The worker threads (None with one thread): smoothing checks its chords on them too."""
        return self._pool

    def first_invalid(self, states: np.ndarray) -> int:
        """The index of an invalid state (the first met in the order given), or -1 when every state is
        valid."""
        states = np.asarray(states, float)
        bounds = self.checker.bounds
        if bounds is None or not len(states):
            return self.exact_first_invalid(states, np.arange(len(states)))
        status = bounds.classify(states, self.checker.clearance_m, self.threads, self._pool)
        decided = (status == CLEAR) | (status == VIOLATED)
        self.proven += int(decided.sum())
        self.checker.count(int(decided.sum()))    # the undecided ones count in is_valid
        hit = np.flatnonzero(status == VIOLATED)
        if hit.size:
            return int(hit[0])
        return self.exact_first_invalid(states, np.flatnonzero(~decided))

    def exact_first_invalid(self, states: np.ndarray, order: np.ndarray) -> int:
        """The checker's answer for ``states[order]``, in that order, over the threads."""
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
