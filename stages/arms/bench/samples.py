"""A planned path as it would run: retimed at the rate, every sample re-checked for clearance.

The repair is ``pipeline=plan``'s verify stage's: where a sample is within the clearance, the
corner blends are tightened (a quarter of the deviation, then a sixteenth, then none: the checked
polyline itself) until no sample is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stages.arms.planning.checker import ClearanceChecker
from stages.arms.planning.path import JointPath
from stages.arms.retiming.retime import retime_with_report
from stages.arms.verification.clearance import check_clearance
from stages.arms.world import limits_for


def sample_clearance(world, joint_names, waypoints: np.ndarray, rate_hz: float, max_deviation_rad: float,
                     checker: ClearanceChecker | None = None) -> dict[str, Any]:
    """``samples``, ``min_clearance_m``, ``violations`` (samples closer than the clearance), the
    ``max_deviation_rad`` that cleared them and the ``worst_pair`` of geoms."""
    vel, acc = limits_for(world, joint_names)
    path = JointPath(tuple(joint_names), waypoints)
    checker = checker or ClearanceChecker.for_world(world, joint_names, world.clearance_m)
    d = max_deviation_rad
    for deviation in (d, d / 4, d / 16, 0.0):
        traj = retime_with_report(path, vel, acc, rate_hz, max_deviation_rad=deviation).trajectory
        clear = check_clearance(checker, traj)
        if clear.violations == 0:
            break
    return {"samples": int(clear.distances_m.size), "min_clearance_m": clear.min_clearance_m,
            "violations": clear.violations, "max_deviation_rad": deviation,
            "worst_pair": list(clear.pairs[clear.worst_sample])}
