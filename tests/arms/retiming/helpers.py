"""Random joint paths and polyline geometry shared by the retiming/verification tests."""

from __future__ import annotations

import numpy as np

from stages.arms.planning.path import JointPath

# Franka Emika Panda (published datasheet): rad/s and rad/s², one arm; two arms = 14 DoF.
PANDA_VEL = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61])
PANDA_ACC = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])
TWIN_VEL = np.concatenate([PANDA_VEL, PANDA_VEL])
TWIN_ACC = np.concatenate([PANDA_ACC, PANDA_ACC])


def names(dof: int) -> tuple[str, ...]:
    return tuple(f"joint{i}" for i in range(dof))


def random_walk_path(rng: np.random.Generator, n: int, dof: int, step: float = 0.6) -> JointPath:
    return JointPath(names(dof), np.cumsum(rng.uniform(-step, step, (n, dof)), axis=0))


def smooth_path(rng: np.random.Generator, n: int, dof: int) -> JointPath:
    t = np.linspace(0.0, 1.0, n)[:, None]
    amp, freq, phase = rng.uniform(0.3, 1.5, dof), rng.uniform(0.5, 1.5, dof), rng.uniform(0, 6, dof)
    return JointPath(names(dof), amp * np.sin(2 * np.pi * freq * t + phase))


def distance_to_polyline(points: np.ndarray, waypoints: np.ndarray) -> np.ndarray:
    """Euclidean distance from each point (M×D) to the polyline through ``waypoints``."""
    best = np.full(points.shape[0], np.inf)
    for a, b in zip(waypoints[:-1], waypoints[1:], strict=True):
        ab = b - a
        denom = float(ab @ ab)
        t = np.zeros(points.shape[0]) if denom == 0 else np.clip((points - a) @ ab / denom, 0, 1)
        best = np.minimum(best, np.linalg.norm(points - a - t[:, None] * ab, axis=1))
    return best
