"""The follow benchmark's metrics, exactly as SPEC section 4 defines them.

From a run's per-tick positions, velocities and wheel data, against the flattened path:

* ``max_deviation_in``: the largest distance from the robot's centre to the nearest
  point of the flattened path, over every tick.
* ``end_error_in``: the distance from where the robot comes to rest (its last logged
  position, after the loop's settle time) to the path's end point.
* ``time_to_stop_s``: from the start until the robot, past 90 % of the path's length,
  falls below 1 in/s and 0.05 rad/s and stays there (to the end of the log). Progress
  along the path is tracked forward from the start (a window from the last projection),
  so a path that crosses itself or ends where it starts is measured in order. A robot
  that never does gets the run's duration and ``stopped = false``.
* ``overshoot_in``: the farthest the robot gets past the end along the path's final
  tangent, ``max((p − end)·t_end, 0)``, over the ticks past 90 % of the path (a path that
  ends where it started, a figure eight, passes its end point earlier on).
* ``peak_traction_fraction``: the largest share of a wheel's friction limit used at any
  tick (the simulator's ``traction_fraction``; 1.0 = the wheel slipped).
* ``saturated_ticks``: ticks at which some wheel was commanded beyond full power (the
  command was clipped at the battery's voltage).

Also reported: ``slip_ticks`` (ticks with a slipping wheel), ``duration_s``,
``mean_deviation_in``, ``max_speed_in_s``, ``stopped``.
"""

from __future__ import annotations

import numpy as np

STOP_SPEED_IN_S, STOP_RATE_RAD_S, STOP_FRACTION = 1.0, 0.05, 0.9


def polyline_distance(points: np.ndarray, polyline: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """Distance from each point to the nearest point of a polyline (chunked)."""
    pts = np.asarray(points, dtype=float)[:, :2]
    a, d = polyline[:-1], np.diff(polyline, axis=0)
    dd = np.maximum(np.einsum("ij,ij->i", d, d), 1e-300)
    out = np.empty(len(pts))
    for k in range(0, len(pts), chunk):
        rel = pts[k:k + chunk, None, :] - a[None]
        s = np.clip(np.einsum("pij,ij->pi", rel, d) / dd, 0.0, 1.0)
        gap = rel - s[..., None] * d[None]
        out[k:k + chunk] = np.sqrt(np.einsum("pij,pij->pi", gap, gap).min(axis=1))
    return out


def track_progress(points: np.ndarray, polyline: np.ndarray, window_in: float = 24.0
                   ) -> np.ndarray:
    """Arc length of each point's projection, searched forward from the previous one."""
    pts = np.asarray(points, dtype=float)[:, :2]
    a, d = polyline[:-1], np.diff(polyline, axis=0)
    L = np.hypot(d[:, 0], d[:, 1])
    cum = np.r_[0.0, np.cumsum(L)]
    unit = d / L[:, None]
    i0, s_prev = 0, 0.0
    out = np.empty(len(pts))
    for k, p in enumerate(pts):
        j = min(max(int(np.searchsorted(cum, s_prev + window_in, side="right")), i0 + 2), len(L))
        rel = p - a[i0:j]
        x = np.clip(np.einsum("ij,ij->i", rel, unit[i0:j]), 0.0, L[i0:j])
        gap = rel - x[:, None] * unit[i0:j]
        m = int(np.argmin(np.einsum("ij,ij->i", gap, gap)))
        i0, s_prev = i0 + m, float(cum[i0 + m] + x[m])
        out[k] = s_prev
    return out


def follow_metrics(time_s: np.ndarray, pose: np.ndarray, velocity: np.ndarray,
                   traction: np.ndarray, saturated: np.ndarray, slipping: np.ndarray,
                   path_points: np.ndarray) -> dict[str, float | bool]:
    t = np.asarray(time_s, dtype=float)
    pose, vel = np.asarray(pose, dtype=float), np.asarray(velocity, dtype=float)
    path = np.asarray(path_points, dtype=float)
    end = path[-1]
    d_end = path[-1] - path[-2]
    t_end = d_end / np.hypot(*d_end)
    dev = polyline_distance(pose, path)
    length = float(np.sum(np.hypot(*np.diff(path, axis=0).T)))
    progress = track_progress(pose, path)
    speed = np.hypot(vel[:, 0], vel[:, 1])
    ok = (progress >= STOP_FRACTION * length) & (speed < STOP_SPEED_IN_S) \
        & (np.abs(vel[:, 2]) < STOP_RATE_RAD_S)
    stopped = bool(ok[-1])
    if stopped:
        bad = np.flatnonzero(~ok)
        first = int(bad[-1]) + 1 if len(bad) else 0
        time_to_stop = float(t[first] - t[0])
    else:
        time_to_stop = float(t[-1] - t[0])
    final = progress >= STOP_FRACTION * length  # the final approach (a closed path passes
    over = float(np.max(((pose[:, :2] - end) @ t_end)[final], initial=0.0))  # its end earlier)
    return {
        "max_deviation_in": float(dev.max()),
        "mean_deviation_in": float(dev.mean()),
        "end_error_in": float(np.hypot(*(pose[-1, :2] - end))),
        "time_to_stop_s": time_to_stop,
        "overshoot_in": max(over, 0.0),
        "peak_traction_fraction": float(np.max(traction)),
        "saturated_ticks": int(np.count_nonzero(saturated)),
        "slip_ticks": int(np.count_nonzero(slipping)),
        "max_speed_in_s": float(speed.max()),
        "duration_s": float(t[-1] - t[0]),
        "stopped": stopped,
    }


METRIC_KEYS = ("max_deviation_in", "end_error_in", "time_to_stop_s", "overshoot_in",
               "peak_traction_fraction", "saturated_ticks")
