"""A planned path as it would run: retimed at the rate, every sample re-checked as ``pipeline=plan``'s
verify stage checks it (:func:`~stages.arms.verification.verify.check_and_repair`: clearance and
limits at every sample, corner blends tightened where a sample fails)."""

from __future__ import annotations

from typing import Any

import numpy as np

from stages.arms.planning.path import JointPath
from stages.arms.retiming.retime import retime_with_report
from stages.arms.verification.verify import check_and_repair
from stages.arms.world import limits_for


def sample_clearance(world, joint_names, waypoints: np.ndarray, rate_hz: float,
                     max_deviation_rad: float) -> dict[str, Any]:
    """``samples``, ``min_clearance_m``, ``violations`` (samples closer than the clearance after the
    repairs), the ``max_deviation_rad`` of the last retiming and the ``worst_pair`` of geoms."""
    path = JointPath(tuple(joint_names), waypoints)
    vel, acc = limits_for(world, path.joint_names)
    trajectory = retime_with_report(path, vel, acc, rate_hz, max_deviation_rad=max_deviation_rad).trajectory
    verified = check_and_repair(world, trajectory, path, rate_hz, max_deviation_rad=max_deviation_rad)
    summary = verified.clearance.summary()
    return {"samples": summary["samples"], "min_clearance_m": summary["min_clearance_m"],
            "violations": summary["violations"], "max_deviation_rad": verified.max_deviation_rad,
            "worst_pair": summary["worst_pair"]}
