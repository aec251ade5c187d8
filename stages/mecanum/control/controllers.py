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
from typing import Any

import numpy as np

from stages.mecanum.control.allocator import AccelRequest
from stages.mecanum.control.settings import SkidaddleSettings
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


@dataclass
class BackOntoPath:
    tau_s: float = 0.05  # time constant of cancelling the transverse velocity
    max_accel_in_s2: float = 85.0  # the ask is clipped here (the rest is for the others)
    weight: float = 1.0
    priority: int = 0
    name: str = "back_onto_path"

    def request(self, velocity: np.ndarray, g: Guidance) -> AccelRequest:
        c = g.convergent_direction
        _, v_perp = split_velocity(velocity, c)
        vt = float(np.asarray(velocity[:2]) @ g.tangent)
        a = -v_perp / self.tau_s + g.curvature_per_in * vt * vt * g.normal
        a = _clip_norm(a, self.max_accel_in_s2)
        return AccelRequest(self.name, np.r_[a, 0.0], self.weight, self.priority)


@dataclass
class AlongPath:
    tau_s: float = 0.1  # time constant of reaching the target speed
    max_accel_in_s2: float = 85.0
    max_brake_in_s2: float = 85.0
    weight: float = 1.0
    priority: int = 1
    name: str = "along_path"

    def request(self, velocity: np.ndarray, g: Guidance) -> AccelRequest:
        c = g.convergent_direction
        vc, _ = split_velocity(velocity, c)
        target = g.speed_limit_in_s
        a = g.speed_limit_slope * max(vc, 0.0) + (target - vc) / self.tau_s
        a = min(max(a, -self.max_brake_in_s2), self.max_accel_in_s2)
        return AccelRequest(self.name, np.r_[a * c, 0.0], self.weight, self.priority)


@dataclass
class Heading:
    omega_n_rad_s: float = 8.0  # natural frequency of the heading loop
    zeta: float = 1.0
    max_accel_rad_s2: float = 20.0
    weight: float = 1.0
    priority: int = 1
    name: str = "heading"

    def request(self, heading_rad: float, omega_rad_s: float, target_rad: float,
                target_rate_rad_s: float = 0.0) -> AccelRequest:
        e = wrap(target_rad - heading_rad)
        alpha = (self.omega_n_rad_s ** 2 * e
                 + 2 * self.zeta * self.omega_n_rad_s * (target_rate_rad_s - omega_rad_s))
        alpha = min(max(alpha, -self.max_accel_rad_s2), self.max_accel_rad_s2)
        return AccelRequest(self.name, np.array([0.0, 0.0, alpha]), self.weight, self.priority)


@dataclass
class EndCorrection:
    tau_s: float = 0.05
    gain_per_s: float = 8.0  # speed per inch of distance near the point (linear zone)
    brake_in_s2: float = 60.0  # the braking the approach plans with (below the budget)
    max_speed_in_s: float = 40.0
    max_accel_in_s2: float = 85.0
    weight: float = 1.0
    priority: int = 0
    name: str = "end_correction"

    def desired_velocity(self, position: np.ndarray, end: np.ndarray) -> np.ndarray:
        d_vec = np.asarray(end, dtype=float) - np.asarray(position, dtype=float)[:2]
        d = math.hypot(d_vec[0], d_vec[1])
        if d < 1e-9:
            return np.zeros(2)
        speed = min(math.sqrt(2.0 * self.brake_in_s2 * d), self.gain_per_s * d,
                    self.max_speed_in_s)
        return d_vec / d * speed

    def request(self, position: np.ndarray, velocity: np.ndarray, end: np.ndarray
                ) -> AccelRequest:
        want = self.desired_velocity(position, end)
        a = _clip_norm((want - np.asarray(velocity[:2])) / self.tau_s, self.max_accel_in_s2)
        return AccelRequest(self.name, np.r_[a, 0.0], self.weight, self.priority)


@dataclass
class Stop:
    tau_s: float = 0.1
    max_accel_in_s2: float = 85.0
    max_accel_rad_s2: float = 20.0
    weight: float = 1.0
    priority: int = 0
    name: str = "stop"

    def request(self, velocity: np.ndarray) -> AccelRequest:
        v = np.asarray(velocity, dtype=float)
        a = _clip_norm(-v[:2] / self.tau_s, self.max_accel_in_s2)
        alpha = min(max(-v[2] / self.tau_s, -self.max_accel_rad_s2), self.max_accel_rad_s2)
        return AccelRequest(self.name, np.r_[a, alpha], self.weight, self.priority)


@dataclass(frozen=True)
class ControllerSet:
    """The five controllers the scheduler picks from each tick."""

    along: AlongPath = field(default_factory=AlongPath)
    back: BackOntoPath = field(default_factory=BackOntoPath)
    turn: Heading = field(default_factory=Heading)
    end: EndCorrection = field(default_factory=EndCorrection)
    stop: Stop = field(default_factory=Stop)


def _controller(cls: type, settings: Any, budget: dict[str, float]) -> Any:
    given = {k: v for k, v in vars(settings).items() if v is not None}
    return cls(**{**budget, **given})


def controllers_for(settings: SkidaddleSettings, traction_accel_in_s2: float,
                    limits: PathLimits | None) -> ControllerSet:
    """The controllers of ``settings``; a budget left out (None) is the path's ``limits``
    (back onto path: the drivetrain's traction), or the controller's default without limits."""
    lim = {} if limits is None else {"max_accel_in_s2": limits.max_accel_in_s2}
    along = {} if limits is None else {"max_brake_in_s2": limits.brake_accel_in_s2}
    end = {} if limits is None else {"max_speed_in_s": limits.max_speed_in_s}
    return ControllerSet(
        along=_controller(AlongPath, settings.along_path, {**lim, **along}),
        back=_controller(BackOntoPath, settings.back_onto_path,
                         {"max_accel_in_s2": traction_accel_in_s2}),
        turn=_controller(Heading, settings.heading_control, {}),
        end=_controller(EndCorrection, settings.end_correction, {**lim, **end}),
        stop=_controller(Stop, settings.stop, lim),
    )
