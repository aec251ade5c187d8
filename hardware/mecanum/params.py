"""Drivetrain parameters of a four-wheel mecanum FTC robot, and what follows from them.

Typical values and where they come from (defaults below, ``conf/drive/ftc_mecanum.yaml``):

* mass 13 kg, footprint 18 × 18 in: FTC robots must fit an 18-in cube; competition
  robots weigh 10–19 kg (Pedro Pathing's default robot: 10.65 kg).
* yaw inertia 0.45 kg·m²: a uniform 13 kg, 18 × 18 in plate, ``m(a² + b²)/12``.
* wheels: goBILDA 104 mm mecanum wheels (radius 52 mm = 2.047 in), contact
  centres 13 in front to back and 14.5 in side to side (an estimate for an 18-in
  chassis); wheel plus reflected gearbox inertia 8e-4 kg·m² is an estimate
  (a 0.3 kg, 104 mm wheel alone is ≈ 4e-4).
* motors: goBILDA 5203 Yellow Jacket 19.2:1 gearmotor, rated at 12 V: 312 rpm free
  speed, 24.3 kg·cm (2.38 N·m) stall torque, 9.2 A stall current (goBILDA's
  published figures, at the gearmotor's output shaft); ``gear_ratio`` is any
  further reduction between that shaft and the wheel (1 = direct drive).
* battery: the FTC 12 V NiMH pack (about 13–14 V fresh, sagging under load).
* traction ``friction_coefficient`` 0.6: an estimate for rubber mecanum rollers on
  EVA foam tiles (no published figure; measure by pushing the robot against a
  force gauge). A 45° roller can only push along its axle, so the usable force in
  the wheel's rolling direction is ``μ N / √2``.
* ``rolling_friction_coefficient`` 0.09: makes a floating robot coast down at
  ≈ 35 in/s², the forward coast deceleration in Pedro Pathing's default constants.
* ``zero_power_behavior``: FTC's BRAKE (motor leads shorted at zero power) or FLOAT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Literal

from core.settings import require

G_IN_S2 = 386.0886  # standard gravity, in/s²
NM_TO_KG_IN2_S2 = 1.0 / 0.0254**2  # 1 N·m = 1550.0031 kg·in²/s²
KG_M2_TO_KG_IN2 = 1.0 / 0.0254**2


@dataclass(frozen=True)
class DriveParams:
    """The ``drive`` config group (``from_config(DriveParams, cfg.drive, "drive")``)."""

    name: str = "ftc_mecanum"
    mass_kg: float = 13.0
    inertia_kg_m2: float = 0.45
    length_in: float = 18.0
    width_in: float = 18.0
    wheelbase_in: float = 13.0
    track_width_in: float = 14.5
    wheel_radius_in: float = 2.047
    wheel_inertia_kg_m2: float = 8e-4
    motor_free_speed_rpm: float = 312.0
    motor_stall_torque_nm: float = 2.38
    motor_stall_current_a: float = 9.2
    motor_rated_voltage_v: float = 12.0
    gear_ratio: float = 1.0
    battery_voltage_v: float = 12.0
    friction_coefficient: float = 0.6
    rolling_friction_coefficient: float = 0.09
    zero_power_behavior: Literal["brake", "float"] = "brake"

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.type != "float":
                continue
            value = getattr(self, f.name)
            if f.name == "rolling_friction_coefficient":
                require(math.isfinite(value) and value >= 0, f.name, value, "a finite number ≥ 0")
            else:
                require(math.isfinite(value) and value > 0, f.name, value, "a finite number > 0")
        require(self.wheelbase_in <= self.length_in, "wheelbase_in", self.wheelbase_in,
                f"≤ length_in ({self.length_in}): the wheels sit inside the footprint")
        require(self.track_width_in <= self.width_in, "track_width_in", self.track_width_in,
                f"≤ width_in ({self.width_in}): the wheels sit inside the footprint")

    # -- derived, in inch-kg-second units ---------------------------------------------
    @property
    def k_in(self) -> float:
        """Mecanum turning lever: (track width + wheelbase) / 2."""
        return 0.5 * (self.track_width_in + self.wheelbase_in)

    @property
    def wheel_free_speed_rad_s(self) -> float:
        """Wheel speed at rated voltage and no load."""
        return self.motor_free_speed_rpm * 2 * math.pi / 60.0 / self.gear_ratio

    @property
    def wheel_stall_torque(self) -> float:
        """Wheel torque at rated voltage, stalled (kg·in²/s²)."""
        return self.motor_stall_torque_nm * NM_TO_KG_IN2_S2 * self.gear_ratio

    @property
    def wheel_inertia(self) -> float:
        return self.wheel_inertia_kg_m2 * KG_M2_TO_KG_IN2

    @property
    def yaw_inertia(self) -> float:
        return self.inertia_kg_m2 * KG_M2_TO_KG_IN2

    @property
    def effective_mass_kg(self) -> float:
        """Body mass plus the wheels' reflected inertia (translation, any direction)."""
        return self.mass_kg + 4 * self.wheel_inertia / self.wheel_radius_in**2

    @property
    def traction_force(self) -> float:
        """Per-wheel friction limit on the contact force (kg·in/s²), equal load on each wheel."""
        return self.friction_coefficient * self.mass_kg * G_IN_S2 / 4.0

    @property
    def traction_accel_in_s2(self) -> float:
        """Traction-limited acceleration available in *every* direction (no rotation).

        Wheel i pushes ``fᵢ`` along its rolling direction with ``|fᵢ| ≤ μN/√2``; the
        reachable (ax, ay) form the diamond ``|ax| + |ay| ≤ 4 f/m``, whose inscribed
        circle has radius ``2√2 f / m``.
        """
        return 2.0 * self.traction_force / self.effective_mass_kg

    @property
    def voltage_ratio(self) -> float:
        return self.battery_voltage_v / self.motor_rated_voltage_v

    @property
    def forward_free_speed_in_s(self) -> float:
        return self.wheel_free_speed_rad_s * self.wheel_radius_in * self.voltage_ratio

    @property
    def max_speed_in_s(self) -> float:
        """Free speed in the worst direction (diagonal: two wheels carry √2 v)."""
        return self.forward_free_speed_in_s / math.sqrt(2.0)

    @property
    def motor_accel_in_s2(self) -> float:
        """Motor-limited acceleration in every direction at rest, battery voltage; it
        falls linearly to 0 at ``max_speed_in_s`` (back-EMF)."""
        stall_force = self.wheel_stall_torque / self.wheel_radius_in * self.voltage_ratio
        return 2.0 * math.sqrt(2.0) * stall_force / self.effective_mass_kg
