"""One follower on the simulator along one path, and the run's metrics.

``simulate(follower, path, table, sim)`` starts the robot at the path's start (plus the
configured offset and velocity), runs the control loop (:func:`~stages.mecanum.control.loop.run_loop`)
and measures the follow benchmark (:mod:`stages.mecanum.control.metrics`) and the loop's cost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from hardware.mecanum.params import DriveParams
from hardware.mecanum.simulator import MecanumSimulator
from stages.mecanum.control.factory import build_follower, start_pose_of
from stages.mecanum.control.follow_settings import SimSettings
from stages.mecanum.control.loop import LoopLog, run_loop
from stages.mecanum.control.metrics import follow_metrics, polyline_distance, track_progress
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.paths.bundle import PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable


@dataclass
class FollowRun:
    name: str
    log: LoopLog
    metrics: dict
    deviation: np.ndarray  # distance to the flattened path at each tick
    wall_s: float


def simulate(follower_settings: FollowerSettings, path: PathBundle, table: EntrySpeedTable,
             sim: SimSettings, seed: int = 0, plant: DriveParams | None = None) -> FollowRun:
    """One follower on one path from the path's start (plus the configured offset). The
    follower plans and feeds forward on the path's drive model; ``plant`` is the robot the
    simulator runs (None: the same model; a fitted model's error shows on the true robot)."""
    start = start_pose_of(table, sim.start_offset, path.headings)
    follower = build_follower(follower_settings, drive=path.drive, table=table, chain=path.chain,
                              start_heading=float(start_pose_of(table, headings=path.headings)[2]),
                              dt_s=sim.dt_s, headings=path.headings, source_u=path.flat.source_u)
    simulator = MecanumSimulator(plant or path.drive, dt_s=sim.dt_s, substeps=sim.substeps, pose=start,
                                 velocity=sim.start_velocity, noise=sim.odometry_noise,
                                 seed=seed)
    t0 = time.perf_counter()
    log = run_loop(simulator, follower, max_time_s=sim.max_time_s, settle_s=sim.settle_s,
                   battery_reading_v=sim.battery_reading_v)
    wall = time.perf_counter() - t0
    m = follow_metrics(log["time_s"], log["pose"], log["velocity"], log["traction"],
                       log["saturated"], log["slipping"], table.points_in)
    compute, step = log["compute_s"], log["sim_s"][:-1]
    m.update({
        "follower": follower.name, "ticks": log.ticks,
        "compute_median_us": float(np.median(compute) * 1e6),
        "compute_p99_us": float(np.percentile(compute, 99) * 1e6),
        "sim_step_median_us": float(np.median(step) * 1e6) if len(step) else 0.0,
        "sim_realtime_factor": float(len(step) * sim.dt_s / max(step.sum(), 1e-12)),
        "loop_realtime_factor": float(m["duration_s"] / max(wall, 1e-12)),
    })
    m["accel_limit_in_s2"] = float(follower.params.max_profile_accel_in_s2
                                   if hasattr(follower, "profile") else table.limits.max_accel_in_s2)
    if hasattr(follower, "profile"):  # the baseline: how far behind its own plan it fell
        actual = track_progress(log["pose"], np.asarray(follower.path.points))
        m["max_lag_in"] = float(np.max(log["progress_in"] - actual))
        m["planned_time_s"] = follower.profile.duration_s
        m["planned_peak_centripetal_in_s2"] = float(np.max(
            follower.profile.v ** 2 * np.abs(follower.profile.curvature)))
    dev = polyline_distance(log["pose"], table.points_in)
    return FollowRun(follower.name, log, m, dev, wall)
