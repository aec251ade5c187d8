"""Retime a planned joint path: near time-optimal, at a fixed sample rate, zero violations.

1. Blend the polyline's corners within ``max_deviation_rad`` (:mod:`.blended_path`).
2. Solve TOPP on that path with the limits shrunk by ``safety_margin`` (:mod:`.topp`); the
   continuous solution respects the limits at every instant.
3. Stretch time uniformly so the duration is a whole number of sample periods
   (``t_k = k / rate_hz``; the last sample is the path's end, at rest). A uniform stretch by
   ``c ≤ 1`` scales velocities by ``c`` and accelerations by ``c²``: it can only help.
4. Check every sample against the true limits; where one is exceeded (only possible through
   round-off), shrink the limits of that piece by the excess and solve again.

A path whose waypoints are all the same point (including a one-waypoint path) is not an
error: it gives a one-sample trajectory at rest at that point.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import RetimingError
from stages.arms.planning.path import JointPath
from stages.arms.retiming.blended_path import BlendedPath, blend_polyline
from stages.arms.retiming.topp import solve_topp
from stages.arms.retiming.trajectory import Trajectory


@dataclass(frozen=True, eq=False)
class RetimeResult:
    """The trajectory and the figures that describe how it was made."""

    trajectory: Trajectory
    geometric_path: BlendedPath | None  # None for a trajectory at rest
    rate_hz: float
    duration_s: float              # trajectory duration, a multiple of 1 / rate_hz
    optimal_duration_s: float      # time-optimal duration on the blended path, before the stretch
    max_deviation_rad: float       # largest joint-space distance of the timed path to the polyline
    blends: int
    rest_stops: int                # interior corners where the motion stops (not blended)
    iterations: int                # solves needed for zero violations at the samples (usually 1)
    max_velocity_ratio: float      # max |q̇_j| / v_j over samples (≤ 1)
    max_acceleration_ratio: float  # max |q̈_j| / a_j over samples (≤ 1)
    compute_time_s: float

    def metrics(self) -> dict[str, Any]:
        return {
            "rate_hz": self.rate_hz,
            "duration_s": self.duration_s,
            "optimal_duration_s": self.optimal_duration_s,
            "max_deviation_rad": self.max_deviation_rad,
            "samples": self.trajectory.num_samples,
            "blends": self.blends,
            "rest_stops": self.rest_stops,
            "iterations": self.iterations,
            "max_velocity_ratio": self.max_velocity_ratio,
            "max_acceleration_ratio": self.max_acceleration_ratio,
            "compute_time_s": self.compute_time_s,
        }


def _limits(name: str, value: Any, dof: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(dof, float(arr))
    if arr.shape != (dof,):
        raise RetimingError(f"{name} must have one value per joint ({dof}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise RetimingError(f"{name} must be finite and > 0, got {arr.tolist()}")
    return arr


def _validate(path, rate_hz, max_deviation_rad, safety_margin):
    if not isinstance(path, JointPath):
        raise RetimingError(f"retime needs a JointPath, got {type(path).__name__}")
    if path.dof < 1:
        raise RetimingError("the path has no joints")
    if path.num_waypoints < 1:
        raise RetimingError("the path has no waypoints (need at least one)")
    if not np.all(np.isfinite(path.waypoints)):
        bad = np.argwhere(~np.isfinite(path.waypoints))[0]
        raise RetimingError(
            f"waypoint {bad[0]} joint {path.joint_names[bad[1]]!r} is not finite "
            f"({path.waypoints[bad[0], bad[1]]})"
        )
    if not (np.isfinite(rate_hz) and rate_hz > 0):
        raise RetimingError(f"rate_hz must be finite and > 0, got {rate_hz}")
    if not (np.isfinite(max_deviation_rad) and max_deviation_rad >= 0):
        raise RetimingError(f"max_deviation_rad must be finite and ≥ 0, got {max_deviation_rad}")
    if not 0 <= safety_margin < 0.5:
        raise RetimingError(f"safety_margin must be in [0, 0.5), got {safety_margin}")


def _sample(gpath: BlendedPath, profile, rate_hz: float):
    """Positions, velocities, accelerations at t_k = k / rate_hz, and each sample's piece."""
    n = max(1, int(np.ceil(profile.duration_s * rate_hz - 1e-9)))
    tau = np.arange(n + 1) * (profile.duration_s / n)  # profile time of each sample
    tau[-1] = profile.duration_s
    stretch = profile.duration_s * rate_hz / n           # c ≤ 1 (up to 1e-9)
    s, sd, sdd, piece = profile.sample(tau)
    q, dq, ddq = gpath.evaluate(s, piece)
    sd, sdd = sd * stretch, sdd * stretch**2
    vel = dq * sd[:, None]
    acc = dq * sdd[:, None] + ddq * (sd**2)[:, None]
    q[0], q[-1] = gpath.waypoints[0], gpath.waypoints[-1]
    vel[0], vel[-1] = 0.0, 0.0
    return np.arange(n + 1) / rate_hz, q, vel, acc, piece


def retime_with_report(
    path: JointPath,
    velocity_limits,
    acceleration_limits,
    rate_hz: float = 125.0,
    *,
    max_deviation_rad: float = 0.02,
    safety_margin: float = 1e-6,
    intervals_per_unit_turn: float = 16.0,
    blend_step: float = 0.02,
    max_iterations: int = 6,
) -> RetimeResult:
    """Retime ``path`` and report the figures; see :func:`retime`.

    ``max_deviation_rad``: corner blends stay this close to the polyline (0: no blends, stop
    at every corner). ``safety_margin``: relative shrink of the limits for the solve (covers
    round-off). ``intervals_per_unit_turn`` and ``blend_step``: grid resolution on blends.
    ``max_iterations``: solves allowed to remove violations found at the samples.
    """
    start = time.perf_counter()
    _validate(path, rate_hz, max_deviation_rad, safety_margin)
    vlim = _limits("velocity_limits", velocity_limits, path.dof)
    alim = _limits("acceleration_limits", acceleration_limits, path.dof)
    wp = path.waypoints
    if np.all(np.linalg.norm(wp - wp[0], axis=1) <= 1e-12):
        zeros = np.zeros((1, path.dof))
        traj = Trajectory(path.joint_names, np.zeros(1), wp[:1], zeros, zeros)
        return RetimeResult(traj, None, rate_hz, 0.0, 0.0, 0.0, 0, 0, 0, 0.0, 0.0,
                            time.perf_counter() - start)

    gpath = blend_polyline(wp, max_deviation_rad)
    vel_scale = np.full(gpath.num_pieces, 1.0 - safety_margin)
    acc_scale = vel_scale.copy()
    iterations = 0
    while True:
        iterations += 1
        try:
            profile = solve_topp(gpath, vlim * vel_scale[:, None], alim * acc_scale[:, None],
                                 intervals_per_unit_turn=intervals_per_unit_turn,
                                 blend_step=blend_step)
        except ZeroDivisionError as exc:
            raise RetimingError(f"could not time the path: {exc}") from exc
        times, q, vel, acc, piece = _sample(gpath, profile, rate_hz)
        v_ratio = np.max(np.abs(vel) / vlim, axis=1)
        a_ratio = np.max(np.abs(acc) / alim, axis=1)
        bad = (v_ratio > 1.0) | (a_ratio > 1.0)
        if not bad.any():
            break
        if iterations >= max_iterations:
            raise RetimingError(
                f"samples still exceed limits after {max_iterations} solves (worst velocity "
                f"ratio {v_ratio.max():.6g}, acceleration ratio {a_ratio.max():.6g})"
            )
        for k in np.unique(piece[bad]):  # tighten only the pieces where samples exceed
            here = bad & (piece == k)
            vel_scale[k] *= min(1.0, 1.0 / v_ratio[here].max()) * (1.0 - 1e-6)
            acc_scale[k] *= min(1.0, 1.0 / a_ratio[here].max()) * (1.0 - 1e-6)
    traj = Trajectory(path.joint_names, times, q, vel, acc)
    return RetimeResult(
        trajectory=traj,
        geometric_path=gpath,
        rate_hz=float(rate_hz),
        duration_s=traj.duration_s,
        optimal_duration_s=profile.duration_s,
        max_deviation_rad=gpath.max_deviation_rad,
        blends=int(gpath.is_blend.sum()),
        rest_stops=int(gpath.rest_at_start[1:].sum()),
        iterations=iterations,
        max_velocity_ratio=float(v_ratio.max()),
        max_acceleration_ratio=float(a_ratio.max()),
        compute_time_s=time.perf_counter() - start,
    )


def retime(
    path: JointPath,
    velocity_limits,
    acceleration_limits,
    rate_hz: float = 125.0,
    **options: Any,
) -> Trajectory:
    """Time-parameterize ``path`` under per-joint limits, sampled at ``t_k = k / rate_hz``.

    ``velocity_limits``/``acceleration_limits``: one positive value per joint (or one scalar
    for all), symmetric (±). The motion starts and ends at rest at the path's end waypoints
    and never leaves a tube of radius ``max_deviation_rad`` (joint-space Euclidean, default
    0.02) around the polyline; corners turning more than 175° are passed at rest. No sample
    exceeds a limit. Raises ``RetimingError`` on bad input. ``options`` are the keyword
    options of :func:`retime_with_report`, which also returns the duration, the deviation
    actually used and the other figures.
    """
    return retime_with_report(path, velocity_limits, acceleration_limits, rate_hz,
                              **options).trajectory
