"""The clearance checker's throughput against the floor of any Python-driven check.

:func:`checker_throughput` times the checker's ``is_valid`` and a bare ``mj_kinematics`` +
``mj_collision`` loop over the same states on the same model (best of ``repeats``, interleaved),
each in one thread and split over two (one ``MjData`` per thread); :func:`batch_throughput` the
batch checker (the compiled pre-test, MuJoCo on the rest) on one thread and on two.
:func:`threads_agree` checks the property the two-thread speed-up relies on.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np


def checker_throughput(checker, states: np.ndarray, repeats: int = 5) -> dict[str, float]:
    """The checker's is_valid and a bare mj_kinematics + mj_collision loop over the same states
    on the same model (best of ``repeats``), and both split over two threads."""
    import mujoco

    model = checker._collide_model   # the model is_valid runs MuJoCo on
    adr = checker.qpos_adr

    def bare(chunk):
        d = mujoco.MjData(model)
        d.qpos[:] = checker.base_qpos
        qpos = d.qpos
        for q in chunk:
            qpos[adr] = q
            mujoco.mj_kinematics(model, d)
            mujoco.mj_collision(model, d)

    def ours(chunk):
        valid = checker.is_valid
        for q in chunk:
            valid(q)

    def query(chunk):
        q_fn = checker.clearance_query
        for q in chunk:
            q_fn(q)

    def once(fn, threads: int) -> float:
        chunks = [states[i::threads] for i in range(threads)]
        if threads == 1:
            t0 = time.perf_counter()
            fn(chunks[0])
            return time.perf_counter() - t0
        workers = [threading.Thread(target=fn, args=(c,)) for c in chunks]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.perf_counter() - t0

    ours(states[:50])   # warm up this thread's MjData
    query(states[:50])
    runs = {"bare": (bare, 1), "ours": (ours, 1), "query": (query, 1), "bare2": (bare, 2), "ours2": (ours, 2)}
    best = dict.fromkeys(runs, np.inf)
    for _ in range(repeats):   # interleaved, best of each: other load on the machine hits all alike
        for key, (fn, threads) in runs.items():
            best[key] = min(best[key], once(fn, threads))
    n = len(states)
    return {"states": n, "states_per_s": n / best["ours"], "bare_states_per_s": n / best["bare"],
            "throughput_ratio": best["bare"] / best["ours"], "query_states_per_s": n / best["query"],
            "threads2_speedup": best["ours"] / best["ours2"],
            "bare_threads2_speedup": best["bare"] / best["bare2"]}


def batch_throughput(checker, states: np.ndarray, chunk: int = 64, repeats: int = 5) -> dict[str, float]:
    """Batches as the planner's batch checks see them: the valid ``states`` in batches of ``chunk``
    through :class:`BatchChecker` (the compiled pre-test, MuJoCo on what it leaves undecided) on one
    thread and on two (best of ``repeats``, interleaved)."""
    from stages.arms.planning.batch import BatchChecker

    states = np.asarray([q for q in states if checker.is_valid(q)])
    batches = [states[i:i + chunk] for i in range(0, len(states), chunk)]
    checkers = {1: BatchChecker(checker, 1), 2: BatchChecker(checker, 2)}
    best = dict.fromkeys(checkers, np.inf)
    for _ in range(repeats):
        for key, batch in checkers.items():
            t0 = time.perf_counter()
            for b in batches:
                batch.first_invalid(b)
            best[key] = min(best[key], time.perf_counter() - t0)
    proven = checkers[1].proven / (repeats * len(states)) if len(states) else float("nan")
    for batch in checkers.values():
        batch.close()
    n = len(states)
    return {"batch_states": n, "batch_states_per_s": n / best[1], "batch_threads2_speedup": best[1] / best[2],
            "batch_proven_fraction": proven}


def threads_agree(checker, states: np.ndarray) -> bool:
    """Two threads give the same answers as one (the property the speed-up relies on)."""
    single = [checker.is_valid(q) for q in states]
    out: dict[int, list[bool]] = {}

    def work(k):
        out[k] = [checker.is_valid(q) for q in states[k::2]]

    workers = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    merged = [None] * len(states)
    merged[0::2], merged[1::2] = out[0], out[1]
    return merged == single


def load_average() -> float:
    """The 1-minute load average (other work on the machine skews the times), NaN where unknown."""
    try:
        return float(os.getloadavg()[0])
    except OSError:   # pragma: no cover - not on every platform
        return float("nan")
