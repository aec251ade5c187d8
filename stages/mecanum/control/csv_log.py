"""A control run's per-tick log as CSV (``log.csv``: one row per 10 ms tick)."""

from __future__ import annotations

import csv
import io
import math

import numpy as np

from stages.mecanum.control.loop import LoopLog

LOG_COLUMNS = ("time_s", "x_in", "y_in", "heading_rad", "vx_in_s", "vy_in_s", "omega_rad_s",
               "speed_in_s", "ax_in_s2", "ay_in_s2", "power_lf", "power_lb", "power_rb",
               "power_rf", "volts_lf", "volts_lb", "volts_rb", "volts_rf", "wheel_lf_in_s",
               "wheel_lb_in_s", "wheel_rb_in_s", "wheel_rf_in_s", "traction_max", "slipping",
               "saturated", "deviation_in", "cross_track_in", "heading_error_rad",
               "target_speed_in_s", "progress_in", "segment", "mode", "active", "compute_us")


def log_csv(log: LoopLog, deviation: np.ndarray) -> str:
    """The log's rows under :data:`LOG_COLUMNS`; ``deviation`` is each tick's distance to the path."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(LOG_COLUMNS)
    p, v, a = log["pose"], log["velocity"], log["accel"]
    for k in range(log.ticks):
        w.writerow([f"{log['time_s'][k]:.3f}", *(f"{x:.4f}" for x in p[k]),
                    *(f"{x:.4f}" for x in v[k]), f"{math.hypot(v[k, 0], v[k, 1]):.4f}",
                    *(f"{x:.3f}" for x in a[k, :2]), *(f"{x:.4f}" for x in log["power"][k]),
                    *(f"{x:.3f}" for x in log["volts"][k]),
                    *(f"{x:.3f}" for x in log["wheel_speed_in_s"][k]),
                    f"{log['traction'][k].max():.3f}", int(log["slipping"][k]),
                    int(log["saturated"][k]), f"{deviation[k]:.4f}",
                    f"{log['cross_track_in'][k]:.4f}", f"{log['heading_error_rad'][k]:.5f}",
                    f"{log['target_speed_in_s'][k]:.3f}", f"{log['progress_in'][k]:.3f}",
                    int(log["segment"][k]), log.mode[k], log.active[k],
                    f"{log['compute_s'][k] * 1e6:.1f}"])
    return buf.getvalue()
