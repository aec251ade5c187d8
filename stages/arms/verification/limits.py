"""Check every sample of a trajectory against joint position, velocity, acceleration limits.

A sample violates a limit when a value is beyond it by more than ``tolerance`` (absolute, in
the quantity's unit: rad, rad/s, rad/s²). Ratios say how close each sample comes:
``|q̇|/v_max`` and ``|q̈|/a_max`` (1 = at the limit); for positions, the distance from the
middle of the range over half the range (1 = at a bound). Collision re-checking per sample
lives elsewhere; this module is only about limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.errors import VerificationError

KINDS = ("position", "velocity", "acceleration")


class SampledTrajectory(Protocol):
    joint_names: tuple[str, ...]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray


@dataclass(frozen=True)
class KindReport:
    """One kind of limit over all samples."""

    violations: int      # samples where some joint is beyond this limit (+ tolerance)
    worst_sample: int    # sample with the largest ratio
    worst_joint: str
    worst_ratio: float
    worst_value: float   # the joint's value there (rad, rad/s or rad/s²)
    worst_excess: float  # how far beyond the limit (≤ 0: within)


@dataclass(frozen=True)
class LimitReport:
    """All kinds together; ``worst_*`` is the sample and joint with the largest ratio."""

    samples: int
    violations: int      # samples violating at least one limit
    worst_sample: int
    worst_time_s: float
    worst_joint: str
    worst_kind: str
    worst_ratio: float
    kinds: dict[str, KindReport]

    @property
    def ok(self) -> bool:
        return self.violations == 0

    def metrics(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "samples": self.samples, "violations": self.violations,
            "worst_sample": self.worst_sample, "worst_time_s": self.worst_time_s,
            "worst_joint": self.worst_joint, "worst_kind": self.worst_kind,
            "worst_ratio": self.worst_ratio,
        }
        for kind, rep in self.kinds.items():
            out[f"{kind}_violations"] = rep.violations
            out[f"{kind}_worst_ratio"] = rep.worst_ratio
        return out


@dataclass(frozen=True)
class JointLimits:
    """Per-joint limits, checked on construction (VerificationError naming the argument):
    ``position`` D×2 finite with lower < upper; ``velocity``, ``acceleration`` D finite values > 0
    (a scalar is every joint's)."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def of(cls, dof: int, position, velocity, acceleration) -> JointLimits:
        plim = np.asarray(position, float)
        if plim.shape != (dof, 2) or not np.all(np.isfinite(plim)) or np.any(plim[:, 1] <= plim[:, 0]):
            raise VerificationError(f"position_limits must be {dof}×2 finite (lower < upper), "
                                    f"got {plim.tolist()}")
        rates = {}
        for name, value in (("velocity_limits", velocity), ("acceleration_limits", acceleration)):
            arr = np.asarray(value, dtype=float)
            if arr.ndim == 0:
                arr = np.full(dof, float(arr))
            if arr.shape != (dof,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
                raise VerificationError(f"{name} must be {dof} finite values > 0, got {arr.tolist()}")
            rates[name] = arr
        return cls(plim, rates["velocity_limits"], rates["acceleration_limits"])


def _kind_report(ratio, excess, values, tolerance, names) -> tuple[KindReport, np.ndarray]:
    bad = np.any(excess > tolerance, axis=1) | np.any(~np.isfinite(values), axis=1)
    ratio = np.where(np.isfinite(ratio), ratio, np.inf)
    k, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    rep = KindReport(int(bad.sum()), int(k), names[j], float(ratio[k, j]),
                     float(values[k, j]), float(excess[k, j]))
    return rep, bad


def check_limits(
    traj: SampledTrajectory,
    position_limits,
    velocity_limits,
    acceleration_limits,
    tolerance: float = 1e-9,
) -> LimitReport:
    """Check every sample of ``traj``; ``position_limits`` is D×2 (lower, upper)."""
    names = tuple(traj.joint_names)
    dof = len(names)
    q = np.asarray(traj.positions, float)
    dq = np.asarray(traj.velocities, float)
    ddq = np.asarray(traj.accelerations, float)
    times = np.asarray(traj.times, float)
    if q.ndim != 2 or q.shape[0] == 0 or q.shape[1] != dof or dq.shape != q.shape \
            or ddq.shape != q.shape or times.shape != (q.shape[0],):
        raise VerificationError(f"trajectory arrays must be T×{dof} with T ≥ 1 times")
    limits = JointLimits.of(dof, position_limits, velocity_limits, acceleration_limits)
    plim, vlim, alim = limits.position, limits.velocity, limits.acceleration
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise VerificationError(f"tolerance must be finite and ≥ 0, got {tolerance}")

    mid, half = plim.mean(axis=1), 0.5 * (plim[:, 1] - plim[:, 0])
    with np.errstate(invalid="ignore"):
        inputs = {
            "position": (np.abs(q - mid) / half, np.maximum(plim[:, 0] - q, q - plim[:, 1]), q),
            "velocity": (np.abs(dq) / vlim, np.abs(dq) - vlim, dq),
            "acceleration": (np.abs(ddq) / alim, np.abs(ddq) - alim, ddq),
        }
    kinds, any_bad = {}, np.zeros(q.shape[0], dtype=bool)
    for kind, (ratio, excess, values) in inputs.items():
        kinds[kind], bad = _kind_report(ratio, excess, values, tolerance, names)
        any_bad |= bad
    worst_kind = max(KINDS, key=lambda kd: kinds[kd].worst_ratio)
    w = kinds[worst_kind]
    return LimitReport(
        samples=int(q.shape[0]), violations=int(any_bad.sum()),
        worst_sample=w.worst_sample, worst_time_s=float(times[w.worst_sample]),
        worst_joint=w.worst_joint, worst_kind=worst_kind, worst_ratio=w.worst_ratio,
        kinds=kinds,
    )
