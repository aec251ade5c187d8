"""Controllers that only ask for accelerations.

Every controller looks at the robot (pose, field-frame velocity) and at the
:class:`Guidance` the scheduler worked out for this tick (where the path is, where
the robot is heading for, how fast it may go) and returns an
:class:`~stages.mecanum.control.allocator.AccelRequest`: a field-frame acceleration with a
weight and a priority. None of them knows about motors; the allocator decides how
much of each ask the wheels can give.

**The convergent/transverse split** (:func:`split_velocity`). The goal is a point one
look-ahead ahead of the robot's projection on the path, along the path's tangent, so
the *convergent direction* ``c = unit(goal − p) = unit(L·t − e·n)`` points along the
path and back onto it (``e`` the signed cross-track error, ``n`` the path's left
normal). The velocity splits into its convergent part ``v_c = v·c`` and the
transverse part ``v⊥ = v − v_c c`` (everything else).

* :class:`BackOntoPath` (priority 0): cancels ``v⊥`` (``−v⊥/τ``) and adds the turn's
  centripetal acceleration ``κ·v_t²`` (``v_t`` the speed along the tangent). Because
  ``c`` leans toward the path by ``atan(e/L)``, cancelling the transverse part is what
  removes the cross-track error.
* :class:`AlongPath` (priority 1): speeds the convergent part up (or brakes it) toward
  the precomputed speed limit, with the limit's slope as feedforward.
* :class:`Heading` (priority 1): a separate PD on the heading, with the target's rate.
* :class:`EndCorrection` (priority 0): near the end the goal becomes the end point
  itself; the robot's whole velocity is steered to ``unit(E − p)·v*(d)`` with a speed
  that brakes to rest at it, so lateral error at the end is corrected too.
* :class:`Stop` (priority 0): the default controller: bring the velocity to zero.

With the budget first spent on the transverse part (priority 0 before 1), the robot
converges onto the path from any start position and velocity: whatever is not
toward the goal is cancelled first, then the rest is sped up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from stages.mecanum.control.allocator import AccelRequest
from stages.mecanum.control.settings import (
    AlongPathSettings,
    BackOntoPathSettings,
    EndCorrectionSettings,
    HeadingControlSettings,
    SkidaddleSettings,
    StopSettings,
)
from stages.mecanum.paths.limits import PathLimits


@dataclass(frozen=True, eq=False)
class Guidance:
    """What the scheduler works out each tick (field frame, inches, seconds)."""

    s_in: float  # arc length of the robot's projection on the path
    remaining_in: float  # path length left after the projection
    point: np.ndarray  # the projection
    tangent: np.ndarray  # unit tangent at the projection (turning on the corner arcs)
    cross_track_in: float  # signed distance to the path (+ = robot left of it)
    curvature_per_in: float  # signed (+ = the path turns left)
    lookahead_in: float
    speed_limit_in_s: float  # the precomputed limit (read ahead by the controller's lag)
    speed_limit_slope: float  # d(limit)/ds (1/s), the along-path feedforward
    heading_target_rad: float
    heading_rate_rad_s: float  # the target's rate at the current speed
    end_point: np.ndarray
    segment: int

    @property
    def normal(self) -> np.ndarray:
        return np.array([-self.tangent[1], self.tangent[0]])

    @property
    def goal(self) -> np.ndarray:
        """The point the convergent velocity aims at: one look-ahead along the tangent."""
        return self.point + self.lookahead_in * self.tangent

    @property
    def convergent_direction(self) -> np.ndarray:
        d = self.lookahead_in * self.tangent - self.cross_track_in * self.normal
        return d / math.hypot(d[0], d[1])


def split_velocity(velocity_xy: np.ndarray, direction: np.ndarray) -> tuple[float, np.ndarray]:
    """(convergent speed ``v·c``, transverse vector ``v − (v·c) c``) for a unit ``c``."""
    v = np.asarray(velocity_xy, dtype=float)[:2]
    vc = float(v @ direction)
    return vc, v - vc * direction


def _clip_norm(a: np.ndarray, limit: float) -> np.ndarray:
    n = math.hypot(a[0], a[1])
    return a * (limit / n) if n > limit else a


def wrap(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


# the budgets a controller asks within when no path gives them (in/s², in/s)
FREE_ACCEL_IN_S2, FREE_SPEED_IN_S = 85.0, 40.0


@dataclass(frozen=True)
class BackOntoPath:
    """Cancels the transverse velocity; asks at most ``max_accel_in_s2`` (the rest is for the others)."""

    settings: BackOntoPathSettings = BackOntoPathSettings()
    max_accel_in_s2: float = FREE_ACCEL_IN_S2
    name: ClassVar[str] = "back_onto_path"

    def request(self, velocity: np.ndarray, g: Guidance) -> AccelRequest:
        s = self.settings
        c = g.convergent_direction
        _, v_perp = split_velocity(velocity, c)
        vt = float(np.asarray(velocity[:2]) @ g.tangent)
        a = -v_perp / s.tau_s + g.curvature_per_in * vt * vt * g.normal
        a = _clip_norm(a, self.max_accel_in_s2)
        return AccelRequest(self.name, np.r_[a, 0.0], s.weight, s.priority)


@dataclass(frozen=True)
class AlongPath:
    """Speeds the convergent part up (or brakes it) toward the limit, within the budgets."""

    settings: AlongPathSettings = AlongPathSettings()
    max_accel_in_s2: float = FREE_ACCEL_IN_S2
    max_brake_in_s2: float = FREE_ACCEL_IN_S2
    name: ClassVar[str] = "along_path"

    def request(self, velocity: np.ndarray, g: Guidance) -> AccelRequest:
        s = self.settings
        c = g.convergent_direction
        vc, _ = split_velocity(velocity, c)
        target = g.speed_limit_in_s
        a = g.speed_limit_slope * max(vc, 0.0) + (target - vc) / s.tau_s
        a = min(max(a, -self.max_brake_in_s2), self.max_accel_in_s2)
        return AccelRequest(self.name, np.r_[a * c, 0.0], s.weight, s.priority)


@dataclass(frozen=True)
class Heading:
    """A PD loop on the heading, with the target's rate."""

    settings: HeadingControlSettings = HeadingControlSettings()
    name: ClassVar[str] = "heading"

    def request(self, heading_rad: float, omega_rad_s: float, target_rad: float,
                target_rate_rad_s: float = 0.0) -> AccelRequest:
        s = self.settings
        e = wrap(target_rad - heading_rad)
        alpha = (s.omega_n_rad_s ** 2 * e + 2 * s.zeta * s.omega_n_rad_s * (target_rate_rad_s - omega_rad_s))
        alpha = min(max(alpha, -s.max_accel_rad_s2), s.max_accel_rad_s2)
        return AccelRequest(self.name, np.array([0.0, 0.0, alpha]), s.weight, s.priority)


@dataclass(frozen=True)
class EndCorrection:
    """Steers the whole velocity onto the end point, at a speed that brakes to rest there."""

    settings: EndCorrectionSettings = EndCorrectionSettings()
    max_speed_in_s: float = FREE_SPEED_IN_S
    max_accel_in_s2: float = FREE_ACCEL_IN_S2
    name: ClassVar[str] = "end_correction"

    def desired_velocity(self, position: np.ndarray, end: np.ndarray) -> np.ndarray:
        s = self.settings
        d_vec = np.asarray(end, dtype=float) - np.asarray(position, dtype=float)[:2]
        d = math.hypot(d_vec[0], d_vec[1])
        if d < 1e-9:
            return np.zeros(2)
        speed = min(math.sqrt(2.0 * s.brake_in_s2 * d), s.gain_per_s * d, self.max_speed_in_s)
        return d_vec / d * speed

    def request(self, position: np.ndarray, velocity: np.ndarray, end: np.ndarray
                ) -> AccelRequest:
        s = self.settings
        want = self.desired_velocity(position, end)
        a = _clip_norm((want - np.asarray(velocity[:2])) / s.tau_s, self.max_accel_in_s2)
        return AccelRequest(self.name, np.r_[a, 0.0], s.weight, s.priority)


@dataclass(frozen=True)
class Stop:
    """The default controller: brings the velocity to zero."""

    settings: StopSettings = StopSettings()
    max_accel_in_s2: float = FREE_ACCEL_IN_S2
    name: ClassVar[str] = "stop"

    def request(self, velocity: np.ndarray) -> AccelRequest:
        s = self.settings
        v = np.asarray(velocity, dtype=float)
        a = _clip_norm(-v[:2] / s.tau_s, self.max_accel_in_s2)
        alpha = min(max(-v[2] / s.tau_s, -s.max_accel_rad_s2), s.max_accel_rad_s2)
        return AccelRequest(self.name, np.r_[a, alpha], s.weight, s.priority)


@dataclass(frozen=True)
class ControllerSet:
    """The five controllers the scheduler picks from each tick."""

    along: AlongPath = field(default_factory=AlongPath)
    back: BackOntoPath = field(default_factory=BackOntoPath)
    turn: Heading = field(default_factory=Heading)
    end: EndCorrection = field(default_factory=EndCorrection)
    stop: Stop = field(default_factory=Stop)


def controllers_for(settings: SkidaddleSettings, traction_accel_in_s2: float,
                    limits: PathLimits | None) -> ControllerSet:
    """The controllers of ``settings``; a budget left out (None) is the path's ``limits``
    (back onto path: the drivetrain's traction), or the free budgets without a path."""
    accel = FREE_ACCEL_IN_S2 if limits is None else limits.max_accel_in_s2
    brake = FREE_ACCEL_IN_S2 if limits is None else limits.brake_accel_in_s2
    speed = FREE_SPEED_IN_S if limits is None else limits.max_speed_in_s

    def given(value: float | None, budget: float) -> float:
        return budget if value is None else value

    along, back, end, stop = (settings.along_path, settings.back_onto_path, settings.end_correction,
                              settings.stop)
    return ControllerSet(
        along=AlongPath(along, given(along.max_accel_in_s2, accel), given(along.max_brake_in_s2, brake)),
        back=BackOntoPath(back, given(back.max_accel_in_s2, traction_accel_in_s2)),
        turn=Heading(settings.heading_control),
        end=EndCorrection(end, given(end.max_speed_in_s, speed), given(end.max_accel_in_s2, accel)),
        stop=Stop(stop, given(stop.max_accel_in_s2, accel)),
    )
