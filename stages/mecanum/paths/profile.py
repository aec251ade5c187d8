"""The planned speed profile: a forward pass over the entry-speed table.

From ``start_speed_in_s`` the robot speeds up as hard as the budget allows
(``accel_at(v)``, less what a corner arc spends on centripetal acceleration:
one friction circle) and never exceeds ``table.speed_limit_at(s)``; where the
limit falls it brakes. This is the ideal the control loop aims for (its preview
and the figures), and it doubles as the forward simulation that checks the table:
its braking never exceeds ``brake_accel_in_s2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from stages.mecanum.paths.precompute import EntrySpeedTable


@dataclass(frozen=True, eq=False)
class SpeedProfile:
    s_in: np.ndarray  # arc length samples
    speed_in_s: np.ndarray
    time_s: np.ndarray

    @property
    def duration_s(self) -> float:
        return float(self.time_s[-1])

    def accel_in_s2(self) -> np.ndarray:
        """Tangential acceleration between samples (v dv/ds)."""
        return np.diff(self.speed_in_s**2) / (2.0 * np.diff(self.s_in))


def forward_profile(table: EntrySpeedTable, start_speed_in_s: float = 0.0,
                    ds_in: float = 0.25) -> SpeedProfile:
    """Sample the fastest feasible motion every ``ds_in`` inches (and at every vertex)."""
    n = max(2, int(np.ceil(table.length_in / ds_in)) + 1)
    s = np.unique(np.r_[np.linspace(0.0, table.length_in, n), table.cum_length_in])
    limit = table.speed_limit_at(s)
    kappa = table.curvature_at(s)
    kappa = np.maximum(kappa[:-1], kappa[1:]).tolist()  # the sharper end of each step
    lim, ds, cap = table.limits, np.diff(s).tolist(), limit.tolist()
    v = [min(float(start_speed_in_s), cap[0])]
    for k in range(len(s) - 1):
        budget = lim.accel_at(v[k])
        a_t = math.sqrt(max(budget * budget - (v[k] * v[k] * kappa[k]) ** 2, 0.0))
        v.append(min(cap[k + 1], math.sqrt(v[k] * v[k] + 2.0 * a_t * ds[k])))
    v = np.array(v)
    mean = 0.5 * (v[1:] + v[:-1])
    with np.errstate(divide="ignore"):
        dt = np.where(mean > 0, np.diff(s) / mean, 0.0)
    return SpeedProfile(s, v, np.r_[0.0, np.cumsum(dt)])
