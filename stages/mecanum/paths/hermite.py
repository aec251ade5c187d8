"""Cubic Hermite curves built on the fly in tele-op.

A Hermite cubic is given by its end points and end tangents (``p0, m0, p1, m1``,
tangents in inches per unit parameter). When the robot is at ``pose`` moving at
``velocity_in_s`` and the driver asks for ``target_pose`` reached at
``target_velocity_in_s``, the curve's parameter stands for time scaled by a
duration ``T``: the tangents are ``m = v · T``, so the curve leaves in the
direction (and, in proportion, at the speed) the robot already has. It is the
same curve as the cubic Bézier with ``P1 = p0 + m0/3`` and ``P2 = p1 − m1/3``,
so it flattens and precomputes like any autonomous path. Heading is a separate
channel (mecanum is holonomic): it turns the short way from start to target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.mecanum.paths.bezier import BezierChain, CubicBezier, PathError


@dataclass(frozen=True, eq=False)
class CubicHermite:
    p0: np.ndarray
    m0: np.ndarray
    p1: np.ndarray
    m1: np.ndarray

    def __post_init__(self) -> None:
        for name in ("p0", "m0", "p1", "m1"):
            v = np.array(getattr(self, name), dtype=float)
            if v.shape != (2,) or not np.all(np.isfinite(v)):
                raise PathError(f"Hermite {name} must be a finite [x, y]; got {v.tolist()}")
            v.flags.writeable = False
            object.__setattr__(self, name, v)

    def point(self, t: float | np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)[..., None]
        t2, t3 = t * t, t * t * t
        h00, h10 = 2 * t3 - 3 * t2 + 1, t3 - 2 * t2 + t
        h01, h11 = -2 * t3 + 3 * t2, t3 - t2
        return h00 * self.p0 + h10 * self.m0 + h01 * self.p1 + h11 * self.m1

    def derivative(self, t: float | np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)[..., None]
        t2 = t * t
        return ((6 * t2 - 6 * t) * self.p0 + (3 * t2 - 4 * t + 1) * self.m0
                + (-6 * t2 + 6 * t) * self.p1 + (3 * t2 - 2 * t) * self.m1)

    def to_bezier(self) -> CubicBezier:
        return CubicBezier(np.array([self.p0, self.p0 + self.m0 / 3.0,
                                     self.p1 - self.m1 / 3.0, self.p1]))


@dataclass(frozen=True, eq=False)
class HermitePath:
    """A tele-op path: the curve, its duration scale and the heading to turn through."""

    curve: CubicHermite
    duration_s: float  # the time the tangents were scaled by (a planning scale, not a promise)
    heading_start_rad: float
    heading_change_rad: float  # signed, in (−π, π]

    @property
    def chain(self) -> BezierChain:
        return BezierChain((self.curve.to_bezier(),))

    def heading_at(self, t: float | np.ndarray) -> np.ndarray:
        t = np.clip(np.asarray(t, dtype=float), 0.0, 1.0)
        return self.heading_start_rad + t * self.heading_change_rad


def wrap_angle(a: float) -> float:
    """Angle in (−π, π]."""
    return float(np.pi - (np.pi - a) % (2 * np.pi))


def hermite_path(pose: np.ndarray, velocity_in_s: np.ndarray, target_pose: np.ndarray,
                 target_velocity_in_s: np.ndarray = (0.0, 0.0), *,
                 duration_s: float | None = None, speed_floor_in_s: float = 1.0) -> HermitePath:
    """The Hermite from the robot's pose (x, y, heading) and field-frame velocity to a target.

    ``duration_s`` scales the tangents (``m = v · T``); by default
    ``T = chord / max(|v0|, |v1|, speed_floor_in_s)``, i.e. the time the trip takes at
    the faster of the two speeds. A robot at rest gives ``m0 = 0`` (``P1 = P0``), a
    valid curve that starts along the chord. A target on the robot's own position
    has no path to build and is refused.
    """
    pose, target = np.asarray(pose, dtype=float), np.asarray(target_pose, dtype=float)
    v0 = np.asarray(velocity_in_s, dtype=float)
    v1 = np.asarray(target_velocity_in_s, dtype=float)
    for name, arr, n in (("pose", pose, 3), ("target_pose", target, 3),
                         ("velocity_in_s", v0, 2), ("target_velocity_in_s", v1, 2)):
        if arr.shape != (n,) or not np.all(np.isfinite(arr)):
            raise PathError(f"{name} must be {n} finite numbers; got {arr.tolist()}")
    chord = float(np.hypot(*(target[:2] - pose[:2])))
    if chord <= 1e-9:
        raise PathError(f"target {target[:2].tolist()} is where the robot already is; "
                        "there is no path to build (hold position instead)")
    if duration_s is None:
        ref = max(float(np.hypot(*v0)), float(np.hypot(*v1)), float(speed_floor_in_s))
        duration_s = chord / ref
    if not (np.isfinite(duration_s) and duration_s > 0):
        raise PathError(f"duration_s must be a positive number; got {duration_s}")
    curve = CubicHermite(pose[:2], v0 * duration_s, target[:2], v1 * duration_s)
    return HermitePath(curve, float(duration_s), float(pose[2]),
                       wrap_angle(float(target[2] - pose[2])))
