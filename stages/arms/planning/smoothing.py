"""Shortcutting: vertices first, then rounds of chords checked lazily, a stop when no longer shorter.

First, from the start, each kept vertex is joined straight to the farthest later vertex a valid edge
reaches (tried farthest first). Then each round draws ``candidates`` random chords between two
points of the path (on its edges, so corners get cut, not only vertices) and drops those that would
save at most ``min_gain_rad`` of joint-space length. The rest are checked in the order of the length
they save, lazily: the first valid one replaces its sub-path and the round ends (the others were
drawn on a path that is gone). A chord is checked as the planner's edges are: with the compiled
pre-test, its ends checked and its edge walked with the bounds' bubbles; with MuJoCo's clearance
bubbles, its ends queried and its edge walked with theirs; with batched edges (MuJoCo over threads),
its states (both ends, then the interior at the edge resolution, coarse to fine) in one batch.
Smoothing stops when ``patience`` rounds in a row shorten the path by less than ``min_rel_gain`` of
its length, after ``rounds`` rounds, or at the deadline.

Measured on the crossing (README, ``pipeline=bench_plan``): the earlier 300 one-at-a-time random
shortcuts were ~80 % of the plan time; most of them saved nothing.
"""

from __future__ import annotations

import time

import numpy as np


def shortcut(path, edges, batch, rng: np.random.Generator, deadline: float, min_gain_rad: float = 0.0,
                     candidates: int = 8, rounds: int = 60, patience: int = 3,
                     min_rel_gain: float = 0.002) -> tuple[list[np.ndarray], int]:
    """``path`` shortened by valid chords, and the rounds it took. ``edges``: the planner's
    :class:`EdgeChecker`; ``batch``: its :class:`BatchChecker` (used when the edges are batched)."""
    path = [np.asarray(p, float) for p in path]
    path = _reduce_vertices(path, edges, batch, deadline)
    stale = done = 0
    while done < rounds and len(path) >= 3 and stale < patience and time.perf_counter() < deadline:
        done += 1
        cum = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
        chords = []
        for s1, s2 in np.sort(rng.uniform(0.0, cum[-1], (candidates, 2)), axis=1):
            i, j = (min(int(np.searchsorted(cum, s, side="right")) - 1, len(path) - 2) for s in (s1, s2))
            if i == j:
                continue
            qa, qb = _point_at(path, cum, i, s1), _point_at(path, cum, j, s2)
            gain = (s2 - s1) - float(np.linalg.norm(qb - qa))
            if gain > min_gain_rad:
                chords.append((gain, i, j, qa, qb))
        chords.sort(key=lambda c: -c[0])
        best = _first_valid(chords, edges, batch)
        if best is None:
            stale += 1
            continue
        gain, i, j, qa, qb = best
        path = _drop_duplicates(path[: i + 1] + [qa, qb] + path[j + 1:])
        stale = 0 if gain > min_rel_gain * cum[-1] else stale + 1
    return path, done


def _first_valid(chords, edges, batch):
    """The first valid chord of ``chords`` (gain, i, j, qa, qb), in their order, or None."""
    if not chords:
        return None
    if edges.compiled:               # the compiled pre-test: ends, then the edge's walk
        valid = edges.checker.is_valid

        def ok(chord) -> bool:
            qa, qb = chord[3], chord[4]
            return valid(qa) and valid(qb) and edges.motion_valid(qa, qb)

        lanes = batch.threads if batch is not None and batch.pool is not None else 1
        for k in range(0, len(chords), lanes):   # with threads, that many chords at once (no GIL in
            group = chords[k:k + lanes]          # the walks); the first valid one in order wins
            rest = [batch.pool.submit(ok, chord) for chord in group[1:]] if lanes > 1 else []
            verdicts = [ok(group[0])] + [f.result() for f in rest]
            for chord, good in zip(group, verdicts, strict=True):
                if good:
                    return chord
        return None
    if edges.weights is not None:    # clearance bubbles
        query = edges.checker.clearance_query
        for chord in chords:
            qa, qb = chord[3], chord[4]
            ia = query(qa)
            ib = query(qb) if ia[0] else None
            if ia[0] and ib[0] and edges.motion_valid(qa, qb, ia, ib):
                return chord
        return None
    for chord in chords:               # MuJoCo alone, edges in batches over threads
        if batch.first_invalid(np.vstack([chord[3], chord[4], edges.interior(chord[3], chord[4])])) < 0:
            return chord
    return None


def _point_at(path, cum, i, s):
    seg = cum[i + 1] - cum[i]
    t = 0.0 if seg <= 0 else (s - cum[i]) / seg
    return path[i] + (path[i + 1] - path[i]) * t


def _drop_duplicates(path, tol: float = 1e-9):
    out = [path[0]]
    for q in path[1:]:
        if np.linalg.norm(q - out[-1]) > tol:
            out.append(q)
    return out


def _reduce_vertices(path, edges, batch, deadline: float) -> list[np.ndarray]:
    """From each kept vertex, straight to the farthest later vertex a valid edge reaches (at the
    deadline, the rest of the path as it is)."""
    out, i = [path[0]], 0
    while i < len(path) - 1:
        j = len(path) - 1
        while j > i + 1 and time.perf_counter() < deadline:
            chord = (0.0, i, j, path[i], path[j])
            if _first_valid([chord], edges, batch) is not None:
                break
            j -= 1
        if j > i + 1 and time.perf_counter() >= deadline:
            return out + path[i + 1:]
        out.append(path[j])
        i = j
    return out
