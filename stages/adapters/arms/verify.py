"""The verify stage: every 125 Hz sample re-checked for clearance and limits, repaired or failed."""

from __future__ import annotations

import time

from core.artifacts import JsonFile, PngFigure
from core.errors import VerificationError
from stages.api import Stage, StageContext, StageResult
from stages.arms.planning.checker import ClearanceChecker
from stages.arms.retiming.retime import retime_with_report
from stages.arms.verification.clearance import check_clearance
from stages.arms.verification.limits import check_limits
from stages.arms.verification.plots import clearance_figure, joint_profiles_figure
from stages.arms.world import limits_for


class Verify(Stage):
    """Re-checks the trajectory; on a violation re-retimes with tighter corner blends
    (down to none: the exact checked polyline) up to ``max_repairs`` times, else fails
    naming the sample, its time and the geom pair."""

    outputs = ("trajectory", "report")

    def __init__(self, rate_hz: float = 125.0, max_repairs: int = 3, max_deviation_rad: float = 0.02):
        self.rate_hz, self.max_repairs = float(rate_hz), int(max_repairs)
        self.max_deviation_rad = float(max_deviation_rad)

    def run(self, ctx: StageContext, world, trajectory, path=None) -> StageResult:
        t0 = time.perf_counter()
        names = trajectory.joint_names
        checker = ClearanceChecker.for_world(world, names, world.clearance_m)
        lower, upper = _position_limits(world, names)
        vel, acc = limits_for(world, names)
        deviation = self.max_deviation_rad
        repairs = 0
        while True:
            clear = check_clearance(checker, trajectory, ctx.progress)
            limits = check_limits(trajectory, list(zip(lower, upper, strict=True)), vel, acc)
            if clear.violations == 0 and limits.ok:
                break
            if path is None or repairs >= self.max_repairs:
                raise VerificationError(_describe(clear, limits))
            repairs += 1
            deviation = 0.0 if repairs == self.max_repairs else deviation / 4
            ctx.log.warning("verify: %s; repair %d: re-retiming with corner blends ≤ %.4f rad",
                            _describe(clear, limits), repairs, deviation)
            trajectory = retime_with_report(path, vel, acc, self.rate_hz,
                                            max_deviation_rad=deviation).trajectory
        report = {**clear.summary(), "limits": limits.metrics(), "repairs": repairs,
                  "final_max_deviation_rad": deviation}
        return StageResult(
            outputs={"trajectory": trajectory, "report": report},
            metrics={"samples": clear.distances_m.size, "violations": clear.violations + limits.violations,
                     "min_clearance_m": clear.min_clearance_m, "worst_sample": clear.worst_sample,
                     "worst_pair": " – ".join(clear.pairs[clear.worst_sample]), "repairs": repairs,
                     "time_s": time.perf_counter() - t0},
            files={"report.json": JsonFile(report), "clearance.png": PngFigure(clearance_figure(clear)),
                   "joint_profiles.png": PngFigure(joint_profiles_figure(trajectory, lower, upper, vel, acc))},
        )


def _position_limits(world, names):
    lo, hi = {}, {}
    for arm in world.robot.arms:
        for j, a, b in zip(arm.joints, arm.lower, arm.upper, strict=True):
            lo[j], hi[j] = a, b
    return [lo[j] for j in names], [hi[j] for j in names]


def _describe(clear, limits) -> str:
    if clear.violations:
        i = clear.first_violation()
        return (f"sample {i} (t={clear.times_s[i]:.3f} s): {clear.pairs[i][0]} – {clear.pairs[i][1]} "
                f"at {clear.distances_m[i] * 1000:.2f} mm < clearance {clear.clearance_m * 1000:.1f} mm "
                f"({clear.violations} samples in violation)")
    return (f"sample {limits.worst_sample} (t={limits.worst_time_s:.3f} s): {limits.worst_joint} "
            f"{limits.worst_kind} at {limits.worst_ratio:.3f}× its limit ({limits.violations} samples)")
