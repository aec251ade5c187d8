"""A mecanum drivetrain simulator: voltages in, robot state out, at a fixed control step.

``MecanumSimulator.step(wheel_voltages)`` holds the four voltages (order
leftFront, leftBack, rightBack, rightFront, clipped to the battery) for one
control step (default 10 ms, a Control Hub loop) split into physics substeps
(default 1 ms). Per substep:

* **motors**: DC motor at the wheel, ``τ = τ_stall (V/V_rated − ω/ω_free)``
  (back-EMF), taken implicitly in ω so stiff motors stay stable. With
  ``zero_power_behavior: float`` a zero command opens the circuit (no torque).
* **wheels**: each has its own speed and inertia. A gripping wheel's surface
  matches the floor under it (the no-slip constraint, solved exactly with the
  body's equations); its contact force ``fᵢ`` (along the rolling direction) is
  limited by traction ``μN/√2``. A wheel that would need more slips: it transmits
  exactly the limit, with the sign of its slip, and its speed runs free until the
  slip changes sign (an active-set solve of a 4×4 system).
* **body**: ``M q̇ = Jᵀ f + rolling resistance`` in the robot frame, with the
  rotating-frame terms, so a free robot keeps its momentum.
* **walls**: the 18-in footprint is kept inside the 144 × 144 in field; the
  velocity into a wall is removed (inelastic).

Optional odometry noise (seeded) perturbs a dead-reckoned pose and the encoder
speeds the controller reads; the true pose stays in ``DriveState.pose``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ConfigError
from core.settings import require
from hardware.mecanum.kinematics import rotation, wheel_matrix
from hardware.mecanum.params import G_IN_S2, DriveParams

ROLL_EPS_IN_S = 0.5  # rolling resistance is linear below this contact speed (no chatter)


@dataclass(frozen=True)
class OdometryNoise:
    """Odometry noise settings (``pipeline.stages.follow.odometry_noise``); 0 = exact."""

    translation_fraction: float = 0.0  # std of the relative error of each step's travel
    heading_fraction: float = 0.0  # std of the relative error of each step's turn
    wheel_speed_rad_s: float = 0.0  # std of encoder speed noise

    def __post_init__(self) -> None:
        for k, v in vars(self).items():
            require(bool(np.isfinite(v)) and v >= 0, k, v, "a finite number ≥ 0")


@dataclass(frozen=True, eq=False)
class DriveState:
    """The robot after a step. Field frame unless named otherwise; wheel order as kinematics."""

    time_s: float
    pose: np.ndarray  # x_in, y_in, heading_rad (true)
    velocity: np.ndarray  # vx_in_s, vy_in_s, omega_rad_s (field frame)
    acceleration: np.ndarray  # mean over the last step, in/s² and rad/s²
    wheel_speeds_rad_s: np.ndarray  # (4,) true
    wheel_voltages_v: np.ndarray  # (4,) applied (after clipping)
    motor_currents_a: np.ndarray  # (4,) at the end of the step
    traction_fraction: np.ndarray  # (4,) largest share of the friction limit used in the step
    slipping: np.ndarray  # (4,) bool, slipped at some substep
    measured_pose: np.ndarray  # dead-reckoned (equals pose without noise)
    measured_wheel_speeds_rad_s: np.ndarray  # encoders
    wall_contact: bool

    @property
    def robot_velocity(self) -> np.ndarray:
        """[vx, vy, ω] in the robot frame."""
        return np.r_[rotation(self.pose[2]).T @ self.velocity[:2], self.velocity[2]]


class MecanumSimulator:
    def __init__(self, params: DriveParams, dt_s: float = 0.01, substeps: int = 10,
                 pose=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0),
                 noise: OdometryNoise | None = None, seed: int = 0,
                 field_size_in: float | None = 144.0):
        if not (np.isfinite(dt_s) and dt_s > 0) or int(substeps) < 1:
            raise ConfigError(f"dt_s must be > 0 and substeps ≥ 1; got {dt_s!r}, {substeps!r}")
        self.params, self.dt_s, self.substeps = params, float(dt_s), int(substeps)
        self.noise, self.field_size_in = noise, field_size_in
        p = params
        self._J = wheel_matrix(p.k_in)
        self._r, self._iw = p.wheel_radius_in, p.wheel_inertia
        self._minv = np.array([1 / p.mass_kg, 1 / p.mass_kg, 1 / p.yaw_inertia])
        self._fmax = p.traction_force / np.sqrt(2.0)
        self._normal = p.mass_kg * G_IN_S2 / 4.0
        a, b = p.wheelbase_in / 2, p.track_width_in / 2
        self._wheel_xy = np.array([[a, b], [-a, b], [-a, -b], [a, -b]])
        self._rng = np.random.default_rng(seed)
        self.reset(pose, velocity)

    # -- public API -------------------------------------------------------------------
    def reset(self, pose=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0)) -> DriveState:
        """Place the robot at ``pose`` with field-frame ``velocity``, wheels gripping."""
        pose, velocity = np.array(pose, dtype=float), np.array(velocity, dtype=float)
        if pose.shape != (3,) or velocity.shape != (3,) or not np.all(np.isfinite(pose)) \
                or not np.all(np.isfinite(velocity)):
            raise ConfigError("pose and velocity are three finite numbers each: "
                              f"got {pose.tolist()}, {velocity.tolist()}")
        self._t, self._pose = 0.0, pose
        self._q = np.r_[rotation(pose[2]).T @ velocity[:2], velocity[2]]
        self._w = self._J @ self._q / self._r
        self._slip = np.zeros(4)
        self._meas = pose.copy()
        zeros = np.zeros(4)
        self._state = self._make_state(np.zeros(3), zeros, zeros, zeros,
                                       np.zeros(4, bool), False)
        return self._state

    @property
    def state(self) -> DriveState:
        return self._state

    def step(self, wheel_voltages) -> DriveState:
        """Advance one control step with the four voltages held; returns the new state."""
        volts = np.asarray(wheel_voltages, dtype=float)
        if volts.shape != (4,) or not np.all(np.isfinite(volts)):
            raise ValueError(f"wheel_voltages must be 4 finite volts; got {volts.tolist()}")
        vb = self.params.battery_voltage_v
        volts = np.clip(volts, -vb, vb)
        v_start, pose_start = self._field_velocity(), self._pose.copy()
        traction, slipped, wall = np.zeros(4), np.zeros(4, bool), False
        h = self.dt_s / self.substeps
        motor = self._step_terms(volts, h)  # constant while the voltages are held
        for _ in range(self.substeps):
            frac = self._substep(motor, h)
            traction = np.maximum(traction, frac)
            slipped |= self._slip != 0
            wall |= self._walls()
        self._t += self.dt_s
        self._dead_reckon(pose_start)
        accel = (self._field_velocity() - v_start) / self.dt_s
        self._state = self._make_state(accel, volts, traction, self._currents(volts),
                                       slipped, wall)
        return self._state

    # -- physics ----------------------------------------------------------------------
    def _motor(self, volts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """τ = τ0 − c ω per wheel (c = 0, τ0 = 0 for a floating motor at zero command)."""
        p = self.params
        tau0 = p.wheel_stall_torque * volts / p.motor_rated_voltage_v
        c = np.full(4, p.wheel_stall_torque / p.wheel_free_speed_rad_s)
        if p.zero_power_behavior == "float":
            c = np.where(volts == 0.0, 0.0, c)
        return tau0, c

    def _rolling(self) -> np.ndarray:
        """Generalized rolling-resistance force on the body (robot frame)."""
        crr = self.params.rolling_friction_coefficient
        if crr == 0.0:
            return np.zeros(3)
        u, w, om = self._q
        wx, wy = self._wheel_xy[:, 0], self._wheel_xy[:, 1]
        vx, vy = u - om * wy, w + om * wx  # contact-point velocities
        scale = -crr * self._normal / np.maximum(np.hypot(vx, vy), ROLL_EPS_IN_S)
        fx, fy = scale * vx, scale * vy
        return np.array([fx.sum(), fy.sum(), float(np.sum(wx * fy - wy * fx))])

    def _step_terms(self, volts: np.ndarray, h: float):
        tau0, c = self._motor(volts)
        beta = h * self._r / (self._iw + h * c)
        A = h * (self._J * self._minv) @ self._J.T + np.diag(self._r * beta)
        return tau0, c, beta, A

    def _substep(self, motor, h: float) -> np.ndarray:
        J, r, iw, minv = self._J, self._r, self._iw, self._minv
        tau0, c, beta, A = motor
        alpha = (iw * self._w + h * tau0) / (iw + h * c)  # ω⁺ = α − β f
        # rotating-frame term of the robot-frame equations, exactly: the velocity seen
        # from the robot turns by −ω·h (a rotation, so it adds no energy)
        u, w, om = self._q
        cs, sn = np.cos(om * h), np.sin(om * h)
        q_free = np.array([cs * u + sn * w, -sn * u + cs * w, om])
        q_free = q_free + h * minv * self._rolling()
        b = r * alpha - J @ q_free
        f = np.where(self._slip != 0, self._slip * self._fmax, 0.0)
        for _ in range(5):  # active set: at most one wheel joins the slipping set per pass
            g = self._slip == 0
            if g.all():
                f = np.linalg.solve(A, b)
            elif g.any():
                s = ~g
                f[g] = np.linalg.solve(A[np.ix_(g, g)], b[g] - A[np.ix_(g, s)] @ f[s])
            over = g & (np.abs(f) > self._fmax * (1 + 1e-12))
            if not over.any():
                break
            k = int(np.argmax(np.where(over, np.abs(f), -1.0)))
            self._slip[k] = np.sign(f[k])
            f[k] = self._slip[k] * self._fmax
        self._q = q_free + h * minv * (J.T @ f)
        self._w = alpha - beta * f
        sigma = r * self._w - J @ self._q
        regrip = (self._slip != 0) & (np.sign(sigma) != self._slip)
        self._slip[regrip] = 0.0
        grip = self._slip == 0
        self._w[grip] = (J @ self._q)[grip] / r  # exact no-slip (removes round-off drift)
        x, y, th = self._pose
        u, w, om = self._q
        cs, sn = np.cos(th + 0.5 * h * om), np.sin(th + 0.5 * h * om)
        self._pose = np.array([x + h * (cs * u - sn * w), y + h * (sn * u + cs * w), th + h * om])
        return np.where(self._slip != 0, 1.0, np.abs(f) / self._fmax)

    def _walls(self) -> bool:
        if self.field_size_in is None:
            return False
        half = self.field_size_in / 2
        c, s = abs(np.cos(self._pose[2])), abs(np.sin(self._pose[2]))
        a, b = self.params.length_in / 2, self.params.width_in / 2
        reach = (a * c + b * s, a * s + b * c)  # the rectangle's half-extent along x and y
        if all(abs(self._pose[k]) + reach[k] <= half for k in (0, 1)):
            return False
        v = self._field_velocity()
        hit = False
        for axis in (0, 1):
            hi = self._pose[axis] + reach[axis] - half
            lo = self._pose[axis] - reach[axis] + half
            if hi > 0:
                self._pose[axis] -= hi
                v[axis] = min(v[axis], 0.0)
                hit = True
            elif lo < 0:
                self._pose[axis] -= lo
                v[axis] = max(v[axis], 0.0)
                hit = True
        if hit:
            self._q = np.r_[rotation(self._pose[2]).T @ v[:2], v[2]]
            grip = self._slip == 0
            self._w[grip] = (self._J @ self._q)[grip] / self._r
        return hit

    # -- measurement --------------------------------------------------------------------
    def _field_velocity(self) -> np.ndarray:
        return np.r_[rotation(self._pose[2]) @ self._q[:2], self._q[2]]

    def _currents(self, volts: np.ndarray) -> np.ndarray:
        p = self.params
        motor_w = self._w / p.wheel_free_speed_rad_s
        i = p.motor_stall_current_a * (volts / p.motor_rated_voltage_v - motor_w)
        if p.zero_power_behavior == "float":
            i = np.where(volts == 0.0, 0.0, i)
        return i

    def _dead_reckon(self, pose_start: np.ndarray) -> None:
        step = rotation(pose_start[2]).T @ (self._pose[:2] - pose_start[:2])
        turn = self._pose[2] - pose_start[2]
        n = self.noise
        if n is None:
            self._meas = self._pose.copy()
            return
        step = step * (1.0 + self._rng.normal(0.0, n.translation_fraction, 2))
        turn = turn * (1.0 + self._rng.normal(0.0, n.heading_fraction))
        x, y, th = self._meas
        self._meas = np.r_[np.array([x, y]) + rotation(th) @ step, th + turn]

    def _make_state(self, accel, volts, traction, currents, slipped, wall) -> DriveState:
        enc = self._w.copy()
        if self.noise is not None and self.noise.wheel_speed_rad_s > 0:
            enc = enc + self._rng.normal(0.0, self.noise.wheel_speed_rad_s, 4)
        return DriveState(self._t, self._pose.copy(), self._field_velocity(), np.asarray(accel),
                          self._w.copy(), np.asarray(volts, float).copy(),
                          np.asarray(currents, float), np.asarray(traction, float),
                          np.asarray(slipped, bool), self._meas.copy(), enc, bool(wall))
