"""Verify a trajectory at every sample, repairing it by retiming with tighter corner blends.

Every sample is re-checked for clearance (the true smallest distance) and for joint position,
velocity and acceleration limits. On a violation the path is retimed with corner blends a
quarter as wide (the last repair: none, the exact checked polyline), up to ``max_repairs``
times; then a :class:`~core.errors.VerificationError` names the sample, its time and the geom
pair (or the joint and the limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import VerificationError
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.retiming.retime import retime_with_report
from stages.arms.verification.clearance import ClearanceReport, check_clearance
from stages.arms.verification.limits import LimitReport, check_limits
from stages.arms.world import limits_for, position_limits_for


@dataclass(frozen=True)
class Verified:
    """The last trajectory checked (the one that passed, when ``ok``), its reports, and how many
    repairs it took."""

    trajectory: Any
    clearance: ClearanceReport
    limits: LimitReport
    repairs: int
    max_deviation_rad: float     # the corner blends of the trajectory that passed

    @property
    def ok(self) -> bool:
        return self.clearance.violations == 0 and self.limits.ok

    def report(self) -> dict[str, Any]:
        return {**self.clearance.summary(), "limits": self.limits.metrics(), "repairs": self.repairs,
                "final_max_deviation_rad": self.max_deviation_rad}


def verify_trajectory(world, trajectory, path=None, rate_hz: float = 125.0, max_repairs: int = 3,
                      max_deviation_rad: float = 0.02, progress=lambda it, **_: it,
                      log=None) -> Verified:
    """Check ``trajectory`` (of ``world``'s robot); without ``path`` a violation is not repaired.
    A violation no repair clears is a :class:`VerificationError`."""
    verified = check_and_repair(world, trajectory, path, rate_hz, max_repairs, max_deviation_rad,
                                progress, log)
    if not verified.ok:
        raise VerificationError(describe_violation(verified.clearance, verified.limits))
    return verified


def check_and_repair(world, trajectory, path=None, rate_hz: float = 125.0, max_repairs: int = 3,
                     max_deviation_rad: float = 0.02, progress=lambda it, **_: it, log=None) -> Verified:
    """:func:`verify_trajectory`'s checks and repairs; the last reports when none cleared it."""
    names = trajectory.joint_names
    checker = ClearanceChecker.for_world(world, names, world.clearance_m)
    lower, upper = position_limits_for(world, names)
    vel, acc = limits_for(world, names)
    deviation, repairs = max_deviation_rad, 0
    while True:
        clear = check_clearance(checker, trajectory, progress)
        limits = check_limits(trajectory, list(zip(lower, upper, strict=True)), vel, acc)
        verified = Verified(trajectory, clear, limits, repairs, deviation)
        if verified.ok or path is None or repairs >= max_repairs:
            return verified
        repairs += 1
        deviation = 0.0 if repairs == max_repairs else deviation / 4
        if log:
            log.warning("verify: %s; repair %d: re-retiming with corner blends ≤ %.4f rad",
                        describe_violation(clear, limits), repairs, deviation)
        trajectory = retime_with_report(path, vel, acc, rate_hz, max_deviation_rad=deviation).trajectory


def describe_violation(clear: ClearanceReport, limits: LimitReport) -> str:
    """The first clearance violation (sample, time, pair, distance), else the worst limit one."""
    if clear.violations:
        i = clear.first_violation()
        return (f"sample {i} (t={clear.times_s[i]:.3f} s): {clear.pairs[i][0]} – {clear.pairs[i][1]} "
                f"at {clear.distances_m[i] * 1000:.2f} mm < clearance {clear.clearance_m * 1000:.1f} mm "
                f"({clear.violations} samples in violation)")
    return (f"sample {limits.worst_sample} (t={limits.worst_time_s:.3f} s): {limits.worst_joint} "
            f"{limits.worst_kind} at {limits.worst_ratio:.3f}× its limit ({limits.violations} samples)")
