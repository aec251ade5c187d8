"""Re-check every sample of a trajectory for clearance: the true smallest distance per sample."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ClearanceReport:
    """Per-sample smallest distance and, at the worst sample, the geom pair."""

    clearance_m: float
    distances_m: np.ndarray  # (T,)
    pairs: tuple[tuple[str, str], ...]  # closest pair at each sample
    times_s: np.ndarray

    @property
    def violations(self) -> int:
        return int(np.sum(self.distances_m < self.clearance_m))

    @property
    def worst_sample(self) -> int:
        return int(np.argmin(self.distances_m))

    @property
    def min_clearance_m(self) -> float:
        return float(self.distances_m.min())

    def first_violation(self) -> int | None:
        bad = np.flatnonzero(self.distances_m < self.clearance_m)
        return int(bad[0]) if bad.size else None

    def summary(self) -> dict[str, Any]:
        w = self.worst_sample
        return {"clearance_m": self.clearance_m, "samples": int(self.distances_m.size),
                "violations": self.violations, "worst_sample": w, "worst_time_s": float(self.times_s[w]),
                "worst_pair": list(self.pairs[w]), "min_clearance_m": self.min_clearance_m}


def check_clearance(checker, trajectory, progress=lambda it, **_: it) -> ClearanceReport:
    """``checker`` is a ClearanceChecker at the true clearance over the trajectory's joints."""
    dist, pairs = [], []
    for q in progress(trajectory.positions, desc="verify clearance"):
        prox = checker.proximity(q)
        dist.append(prox.distance_m)
        pairs.append((prox.geom1, prox.geom2))
    return ClearanceReport(checker.clearance_m, np.array(dist), tuple(pairs),
                           np.asarray(trajectory.times))
