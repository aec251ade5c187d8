"""The robot's motion budget as path planning sees it: one acceleration circle.

Planning in motor space means a turn's sideways (centripetal) acceleration and the
speeding-up or slowing-down along the path come out of the *same* wheel budget.
The planner uses the largest acceleration the drivetrain can produce in every
direction (the circle inscribed in its achievable set), so any combination with
``sqrt(a_t² + a_n²) ≤ accel_at(v)`` is within the wheels' limits:

* ``max_accel_in_s2``: the traction limit (wheel–floor friction);
* ``motor_accel_in_s2`` / ``motor_speed_in_s``: what the motors can still push at
  speed ``v`` falls linearly with back-EMF, ``motor_accel · (1 − v / motor_speed)``;
* ``brake_accel_in_s2``: braking (motors brake harder than they push, so this is
  usually the traction limit);
* ``max_speed_in_s``: the fastest the planner lets the robot go.

Domain code: built from plain numbers (the stage adapts the drive config to it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from core.settings import require


@dataclass(frozen=True)
class PathLimits:
    max_speed_in_s: float
    max_accel_in_s2: float
    brake_accel_in_s2: float
    motor_accel_in_s2: float = math.inf
    motor_speed_in_s: float = math.inf

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            finite = f.name in ("max_speed_in_s", "max_accel_in_s2", "brake_accel_in_s2")
            require(value > 0 and (math.isfinite(value) or not finite), f.name, value,
                    "a finite number > 0" if finite else "a number > 0 (inf: no limit)")
        require(self.max_speed_in_s <= self.motor_speed_in_s, "max_speed_in_s",
                self.max_speed_in_s, f"≤ the speed the motors can reach (motor_speed_in_s="
                                     f"{self.motor_speed_in_s!r})")

    def accel_at(self, speed_in_s: float) -> float:
        """The acceleration budget (circle radius, in/s²) at ``speed_in_s``."""
        motor = self.motor_accel_in_s2 * max(0.0, 1.0 - abs(speed_in_s) / self.motor_speed_in_s)
        return min(self.max_accel_in_s2, motor)

    def corner_speed(self, radius_in):
        """Fastest steady speed on an arc of ``radius_in`` (scalar or array): the largest
        v ≤ max_speed with ``v²/r ≤ accel_at(v)``. Closed form, since ``v²/r`` rises and
        the budget falls with v: the smaller root of the traction and motor pieces."""
        r = np.maximum(np.asarray(radius_in, dtype=float), 0.0)
        with np.errstate(invalid="ignore", over="ignore"):
            flat = min(self.max_accel_in_s2, self.motor_accel_in_s2)  # budget at low speed
            v = np.minimum(self.max_speed_in_s, np.sqrt(flat * r))
            if math.isfinite(self.motor_accel_in_s2) and math.isfinite(self.motor_speed_in_s):
                # v²/r = A (1 − v/V)  →  v² + (A r / V) v − A r = 0, positive root
                # written as 2Ar / (b + sqrt(b² + 4Ar)) so r → inf stays finite (→ V)
                ar = self.motor_accel_in_s2 * r
                b = ar / self.motor_speed_in_s
                v_motor = np.where(np.isinf(r), self.motor_speed_in_s,
                                   2.0 * ar / (b + np.sqrt(b * b + 4.0 * ar) + (ar == 0)))
                v = np.minimum(v, v_motor)
        v = np.where(r > 0.0, v, 0.0)
        return v if v.ndim else float(v)

    @classmethod
    def from_drive(cls, drive, accel_fraction: float = 0.8,
                   speed_fraction: float = 0.9) -> PathLimits:
        """The planning budget of a drivetrain (anything with ``traction_accel_in_s2``,
        ``motor_accel_in_s2`` and ``max_speed_in_s``, e.g. hardware.mecanum DriveParams):
        ``accel_fraction`` of its acceleration (headroom for the controller's
        corrections) and ``speed_fraction`` of its worst-direction free speed."""
        require(0 < accel_fraction <= 1, "accel_fraction", accel_fraction, "in (0, 1]")
        require(0 < speed_fraction <= 1, "speed_fraction", speed_fraction, "in (0, 1]")
        a = drive.traction_accel_in_s2 * accel_fraction
        return cls(max_speed_in_s=drive.max_speed_in_s * speed_fraction, max_accel_in_s2=a,
                   brake_accel_in_s2=a, motor_accel_in_s2=drive.motor_accel_in_s2 * accel_fraction,
                   motor_speed_in_s=drive.max_speed_in_s)
