"""Compare our retimer with TOPP-RA (``toppra``) on the same geometric path.

TOPP-RA gets exactly the :class:`BlendedPath` we time (not its own spline through the
waypoints), split at the path's rest points (corners it must pass at rest), on a fine grid
that contains every piece junction. Its duration there is the reference for "near
time-optimal". ``toppra`` is a dev/bench dependency, imported only inside these functions.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import RetimingError
from stages.arms.planning.path import JointPath
from stages.arms.retiming.blended_path import BlendedPath
from stages.arms.retiming.retime import retime_with_report


def _import_toppra():
    try:
        import toppra
        import toppra.algorithm
        import toppra.constraint
        import toppra.interpolator
        import toppra.parametrizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RetimingError(
            "the TOPP-RA comparison needs the 'toppra' package: pip install toppra "
            "(or pip install -e \".[dev]\")"
        ) from exc
    return toppra


def _sections(path: BlendedPath) -> list[tuple[float, float]]:
    rest = path.rest_points
    return list(zip(rest[:-1].tolist(), rest[1:].tolist(), strict=True))


def _gridpoints(path: BlendedPath, s0: float, s1: float, max_step: float, per_piece: int):
    edges = np.concatenate([path.starts, [path.length]])
    edges = edges[(edges >= s0 - 1e-12) & (edges <= s1 + 1e-12)]
    grid = [np.array([s0])]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        n = max(per_piece, int(np.ceil((b - a) / max_step)))
        grid.append(np.linspace(a, b, n + 1)[1:])
    g = np.concatenate(grid) - s0
    g[-1] = s1 - s0
    return g


def _toppra_sections(path, velocity_limits, acceleration_limits, max_step, per_piece):
    """One solved TOPP-RA instance per rest-to-rest section: [(section path, grid, sd)]."""
    toppra = _import_toppra()
    vlim = np.asarray(velocity_limits, float)
    alim = np.asarray(acceleration_limits, float)

    class _Section(toppra.interpolator.AbstractGeometricPath):
        def __init__(self, s0: float, s1: float):
            self.s0, self.s1 = s0, s1

        def __call__(self, s, order=0):
            return path(np.asarray(s, dtype=float) + self.s0, order)

        @property
        def dof(self):
            return path.dof

        @property
        def path_interval(self):
            return np.array([0.0, self.s1 - self.s0])

    out = []
    for s0, s1 in _sections(path):
        section = _Section(s0, s1)
        grid = None if max_step is None else _gridpoints(path, s0, s1, max_step, per_piece)
        constraints = [
            toppra.constraint.JointVelocityConstraint(np.stack([-vlim, vlim], axis=1)),
            toppra.constraint.JointAccelerationConstraint(np.stack([-alim, alim], axis=1)),
        ]
        instance = toppra.algorithm.TOPPRA(constraints, section, gridpoints=grid,
                                           parametrizer="ParametrizeConstAccel")
        _, sd, _ = instance.compute_parameterization(0.0, 0.0)
        if sd is None or np.any(np.isnan(sd)):
            raise RetimingError(f"TOPP-RA failed on the section s ∈ [{s0:.4g}, {s1:.4g}]")
        out.append((section, instance.gridpoints, np.maximum(np.asarray(sd, float), 0.0)))
    return out


def _duration(grid: np.ndarray, sd: np.ndarray) -> float:
    return float(np.sum(2.0 * np.diff(grid) / (sd[:-1] + sd[1:])))


def toppra_duration(
    geometric_path: BlendedPath,
    velocity_limits,
    acceleration_limits,
    *,
    max_step: float | None = 0.005,
    per_piece: int = 16,
) -> float:
    """TOPP-RA's time-optimal duration (s) on ``geometric_path``, rest to rest at its stops.

    The grid has a node at every piece junction, at most ``max_step`` apart and at least
    ``per_piece`` intervals per piece; ``max_step=None`` lets toppra choose its own grid
    (``propose_gridpoints`` defaults). TOPP-RA's duration converges from above as the grid is
    refined (its piecewise-constant ``s̈`` cannot switch between nodes). Raises
    ``RetimingError`` if toppra is not installed.
    """
    sections = _toppra_sections(geometric_path, velocity_limits, acceleration_limits,
                                max_step, per_piece)
    return sum(_duration(grid, sd) for _, grid, sd in sections)


def toppra_sampled_ratios(
    geometric_path: BlendedPath,
    velocity_limits,
    acceleration_limits,
    rate_hz: float = 125.0,
    *,
    max_step: float | None = 0.005,
    per_piece: int = 16,
) -> tuple[float, float]:
    """TOPP-RA's own trajectory sampled at ``rate_hz``: (max |q̇|/v, max |q̈|/a) over samples.

    Uses TOPP-RA's constant-acceleration output between its grid points (its exact solution).
    """
    toppra = _import_toppra()
    vlim = np.asarray(velocity_limits, float)
    alim = np.asarray(acceleration_limits, float)
    v_worst = a_worst = 0.0
    for section, grid, sd in _toppra_sections(geometric_path, vlim, alim, max_step, per_piece):
        traj = toppra.parametrizer.ParametrizeConstAccel(section, grid, sd)
        t = np.arange(0.0, traj.duration, 1.0 / rate_hz)
        v_worst = max(v_worst, float(np.max(np.abs(traj(t, 1)) / vlim)))
        a_worst = max(a_worst, float(np.max(np.abs(traj(t, 2)) / alim)))
    return v_worst, a_worst


@dataclass(frozen=True)
class BenchmarkRow:
    """One path: our retimer against TOPP-RA on the same blended path.

    ``toppra_*``: TOPP-RA on the fine junction-aligned grid (``toppra_max_step``), the
    duration reference. ``toppra_default_grid_*``: TOPP-RA on the grid it picks itself
    (``propose_gridpoints``), as it is usually run.
    """

    waypoints: int
    dof: int
    duration_s: float              # ours, on the 1/rate_hz grid
    optimal_duration_s: float      # ours before the stretch onto the sample grid
    toppra_duration_s: float
    ratio: float                   # duration_s / toppra_duration_s
    compute_s: float               # median wall time of our whole retime call
    toppra_compute_s: float        # median wall time of TOPP-RA (constraints + solve)
    max_velocity_ratio: float      # ours, max |q̇|/v over samples (≤ 1)
    max_acceleration_ratio: float  # ours, max |q̈|/a over samples (≤ 1)
    toppra_max_velocity_ratio: float      # TOPP-RA's own solution sampled at rate_hz
    toppra_max_acceleration_ratio: float
    toppra_default_grid_duration_s: float
    toppra_default_grid_compute_s: float
    toppra_default_grid_max_acceleration_ratio: float
    max_deviation_rad: float

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _median_time(fn, repeats: int):
    times, value = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return value, float(np.median(times))


def retime_benchmark(
    paths: Sequence[JointPath],
    velocity_limits,
    acceleration_limits,
    rate_hz: float = 125.0,
    repeats: int = 5,
    toppra_max_step: float = 0.005,
    **retime_options: Any,
) -> list[BenchmarkRow]:
    """For each path: our duration and TOPP-RA's, their ratio, median compute times.

    Paths that do not move (one waypoint) are skipped. Compute times are wall times of one
    call, median over ``repeats``; run it warm (toppra's first call in a process is slow).
    """
    vlim, alim = velocity_limits, acceleration_limits
    rows = []
    for path in paths:
        result, ours_s = _median_time(
            lambda p=path: retime_with_report(p, vlim, alim, rate_hz, **retime_options), repeats)
        gpath = result.geometric_path
        if gpath is None:
            continue
        ref, ref_s = _median_time(
            lambda g=gpath: toppra_duration(g, vlim, alim, max_step=toppra_max_step), repeats)
        dflt, dflt_s = _median_time(
            lambda g=gpath: toppra_duration(g, vlim, alim, max_step=None), repeats)
        tv, ta = toppra_sampled_ratios(gpath, vlim, alim, rate_hz, max_step=toppra_max_step)
        _, dflt_a = toppra_sampled_ratios(gpath, vlim, alim, rate_hz, max_step=None)
        rows.append(BenchmarkRow(
            waypoints=path.num_waypoints, dof=path.dof,
            duration_s=result.duration_s, optimal_duration_s=result.optimal_duration_s,
            toppra_duration_s=ref, ratio=result.duration_s / ref,
            compute_s=ours_s, toppra_compute_s=ref_s,
            max_velocity_ratio=result.max_velocity_ratio,
            max_acceleration_ratio=result.max_acceleration_ratio,
            toppra_max_velocity_ratio=tv, toppra_max_acceleration_ratio=ta,
            toppra_default_grid_duration_s=dflt, toppra_default_grid_compute_s=dflt_s,
            toppra_default_grid_max_acceleration_ratio=dflt_a,
            max_deviation_rad=result.max_deviation_rad,
        ))
    return rows
