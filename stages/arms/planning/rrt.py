"""Bidirectional RRT-Connect over any state validity test (shortcutting: smoothing.py).

Pure algorithm: states are NumPy vectors, validity comes from callables, randomness
from the Generator passed in, so a fixed seed gives the same path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.errors import PlanningError


@dataclass(frozen=True)
class RRTStats:
    iterations: int
    nodes: int
    time_s: float


class _Tree:
    def __init__(self, root: np.ndarray, capacity: int = 1024):
        self.nodes = np.empty((capacity, root.size))
        self.parent = np.empty(capacity, dtype=int)
        self.nodes[0], self.parent[0], self.size = root, -1, 1

    def add(self, q: np.ndarray, parent: int) -> int:
        if self.size == len(self.nodes):
            self.nodes = np.concatenate([self.nodes, np.empty_like(self.nodes)])
            self.parent = np.concatenate([self.parent, np.empty_like(self.parent)])
        self.nodes[self.size], self.parent[self.size] = q, parent
        self.size += 1
        return self.size - 1

    def nearest(self, q: np.ndarray) -> int:
        diff = self.nodes[: self.size] - q
        return int(np.argmin(np.einsum("ij,ij->i", diff, diff)))

    def branch(self, i: int) -> list[np.ndarray]:
        out = []
        while i >= 0:
            out.append(self.nodes[i].copy())
            i = self.parent[i]
        return out  # from node i back to the root


def rrt_connect(
    start: np.ndarray,
    goal: np.ndarray,
    sample: Callable[[], np.ndarray],
    valid: Callable[[np.ndarray], bool],
    motion_valid: Callable[[np.ndarray, np.ndarray], bool],
    max_step: float,
    deadline: float,
    query: Callable[[np.ndarray], tuple] | None = None,
) -> tuple[list[np.ndarray], RRTStats]:
    """A path start → goal (both assumed valid) or PlanningError('timeout') at ``deadline``
    (a ``time.perf_counter()`` value).

    With ``query(q) -> (valid, ...)`` (e.g. ``ClearanceChecker.clearance_query``, dearer than
    ``valid`` but it also bounds the clearance around ``q``), edges are checked with
    ``motion_valid(a, b, info_a, info_b)``: a new state is first checked with the cheap
    ``valid`` (most rejected samples stop there), and a tree node is queried once, the first
    time an edge grows from it; its answer is kept with the node for every later edge."""
    t0 = time.perf_counter()
    start, goal = np.asarray(start, float), np.asarray(goal, float)
    if query is None:
        def edge(a, b, ia, ib):
            return motion_valid(a, b)
    else:
        edge = motion_valid
    infos: list[list] = [[None], [None]]
    if query is not None:
        infos = [[query(start)], [query(goal)]]
    if edge(start, goal, infos[0][0], infos[1][0]):
        return [start, goal], RRTStats(0, 2, time.perf_counter() - t0)
    trees = [_Tree(start), _Tree(goal)]
    start_tree = trees[0]
    info_of = {id(trees[0]): infos[0], id(trees[1]): infos[1]}
    iterations = 0

    def extend(tree: _Tree, target: np.ndarray) -> tuple[str, int]:
        near = tree.nearest(target)
        q_near = tree.nodes[near]
        delta = target - q_near
        dist = float(np.linalg.norm(delta))
        reached = dist <= max_step
        q_new = target if reached else q_near + delta * (max_step / dist)
        if not valid(q_new):
            return "trapped", near
        node_infos = info_of[id(tree)]
        if query is not None and node_infos[near] is None:
            node_infos[near] = query(q_near)
        if not edge(q_near, q_new, node_infos[near], None):
            return "trapped", near
        i = tree.add(q_new, near)
        node_infos.append(None)
        return ("reached" if reached else "advanced"), i

    while time.perf_counter() < deadline:
        iterations += 1
        a, b = trees
        status, i_new = extend(a, sample())
        if status != "trapped":
            target = a.nodes[i_new].copy()
            while True:
                status_b, j = extend(b, target)
                if status_b != "advanced" or time.perf_counter() >= deadline:
                    break
            if status_b == "reached":
                from_start, from_goal = a.branch(i_new), b.branch(j)
                if a is not start_tree:
                    from_start, from_goal = from_goal, from_start
                path = from_start[::-1] + from_goal[1:]
                stats = RRTStats(iterations, trees[0].size + trees[1].size, time.perf_counter() - t0)
                return path, stats
        trees.reverse()
    raise PlanningError("timeout", f"RRT-Connect found no path within its time budget "
                                   f"({iterations} iterations, {trees[0].size + trees[1].size} nodes)")


def path_length(path) -> float:
    path = np.asarray(path)
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) if len(path) > 1 else 0.0
