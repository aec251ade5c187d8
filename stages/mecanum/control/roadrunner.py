"""A Road Runner 1.0-style follower: a 1-D time profile along the path, then holonomic feedback.

What it does, and where each choice comes from (Road Runner 1.0 and its quickstart
``MecanumDrive``; the numbers are the quickstart's defaults unless stated):

* **Path**: the Bézier chain itself, arc-length parametrized (a dense arc-length table
  of each cubic, inverted by interpolation). Heading along it is ``tangent`` (Road
  Runner's ``splineTo``) or ``constant`` (``splineToConstantHeading``).
* **Profile** (``profile``): samples every ``resolution_in`` (0.25 in; Road Runner uses
  0.5 in, finer costs nothing here). At each sample the velocity cap is the smaller of
  the **wheel-velocity constraint** — every wheel's surface speed ``|J·[u, w, θ']|·v ≤
  max_wheel_vel_in_s`` (50 in/s), ``u, w`` the unit path direction in the robot frame,
  ``θ'`` the heading's rate per inch — and the **angular-velocity constraint**
  ``|θ'|·v ≤ max_ang_vel_rad_s`` (π). Then a forward pass (``v² ≤ v_prev² +
  2·max_profile_accel·ds``, 50 in/s²) and a backward pass (``v² ≤ v_next² +
  2·|min_profile_accel|·ds``, −30 in/s²), starting and ending at rest, constant
  acceleration between samples. The acceleration bound is **along the path only**:
  nothing limits the centripetal ``v²κ`` (Road Runner 1.0 has no such constraint; its
  issue #120), so a tight turn is planned at the wheel-velocity cap whatever grip it needs.
* **Controller** (``HolonomicController``): the target pose and velocity at the
  elapsed time; the command, in the robot frame, is the target velocity plus
  ``axial/lateral/heading_gain`` × the pose error (robot frame) plus
  ``*_vel_gain`` × the velocity error. The quickstart ships the gains at 0 (untuned);
  the defaults here (position gains 6, velocity gains 0.5) are in the range its
  ``ManualFeedbackTuner`` ends at on this drivetrain. The acceleration
  feedforward is the target's (the feedback terms are velocities only, as in Road Runner).
* **Motors**: mecanum inverse kinematics to wheel velocities and accelerations, then
  ``kS·sgn(v) + kV·v + kA·a`` per wheel, divided by the measured battery voltage (the
  quickstart's ``MotorFeedforward`` and voltage compensation), clipped to ±1. The same
  drivetrain and the same model-derived kS, kV, kA as SKIDADDLE.
* **The end**: like Road Runner's ``FollowTrajectoryAction`` it sets every power to 0
  when the profile's time runs out (the motors' BRAKE mode then stops the robot). With
  ``end_correction_s > 0`` it instead keeps the end pose as its target (zero velocity,
  the same feedback) for up to that long, or until within ``end_tolerance_in``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import ConfigError
from hardware.mecanum.kinematics import wheel_matrix
from hardware.mecanum.params import DriveParams
from hardware.mecanum.simulator import DriveState
from stages.mecanum.control.controllers import wrap
from stages.mecanum.control.loop import Command
from stages.mecanum.control.pidf import Feedforward
from stages.mecanum.control.settings import HEADINGS, RoadRunnerParams
from stages.mecanum.paths.bezier import BezierChain
from stages.mecanum.paths.heading import SegmentHeading, heading_profile


class ArcLengthPath:
    """A Bézier chain sampled densely and indexed by arc length."""

    def __init__(self, chain: BezierChain, samples_per_segment: int = 400):
        pts, d1, d2, u = [], [], [], []
        t = np.linspace(0.0, 1.0, samples_per_segment + 1)
        for k, seg in enumerate(chain.segments):
            tk = t if k == 0 else t[1:]
            u.append(k + tk)
            pts.append(seg.point(tk))
            d1.append(seg.derivative(tk, 1))
            d2.append(seg.derivative(tk, 2))
        self.points = np.vstack(pts)
        self.u = np.concatenate(u)   # the chain parameter (segment index + t) of each sample
        d1, d2 = np.vstack(d1), np.vstack(d2)
        self.s = np.r_[0.0, np.cumsum(np.hypot(*np.diff(self.points, axis=0).T))]
        speed = np.hypot(d1[:, 0], d1[:, 1])
        # a stalled derivative (cusp, P1 = P0) has no direction: use the chord's
        chord = np.gradient(self.points, axis=0)
        use = speed > 1e-9 * max(1.0, float(speed.max()))
        tan = np.where(use[:, None], d1 / np.maximum(speed, 1e-300)[:, None],
                       chord / np.maximum(np.hypot(*chord.T), 1e-300)[:, None])
        self.tangent_angle = np.unwrap(np.arctan2(tan[:, 1], tan[:, 0]))
        with np.errstate(divide="ignore", invalid="ignore"):
            k = (d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / speed**3
        # curvature from the tangent angle where the derivative vanishes
        k_num = np.gradient(self.tangent_angle, self.s, edge_order=1) if len(self.s) > 2 \
            else np.zeros_like(self.s)
        self.curvature = np.where(use & np.isfinite(k), k, k_num)
        self.length = float(self.s[-1])

    def at(self, s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(point, tangent angle, signed curvature) at arc length(s) ``s``."""
        s = np.clip(s, 0.0, self.length)
        x = np.interp(s, self.s, self.points[:, 0])
        y = np.interp(s, self.s, self.points[:, 1])
        return np.stack([x, y], axis=-1), np.interp(s, self.s, self.tangent_angle), \
            np.interp(s, self.s, self.curvature)


@dataclass(frozen=True, eq=False)
class TimeProfile:
    s: np.ndarray  # samples along the path
    v: np.ndarray  # planned speed at each
    t: np.ndarray  # time at each
    v_cap: np.ndarray  # the velocity constraints alone
    heading: np.ndarray  # planned heading at each
    dheading_ds: np.ndarray
    curvature: np.ndarray

    @property
    def duration_s(self) -> float:
        return float(self.t[-1])

    @property
    def accel(self) -> np.ndarray:
        """Constant along-path acceleration on each interval (n−1)."""
        return (self.v[1:] ** 2 - self.v[:-1] ** 2) / (2.0 * np.diff(self.s))

    def state(self, time_s: float) -> tuple[float, float, float]:
        """(s, v, a) at ``time_s`` (clamped to the profile)."""
        if time_s <= 0.0:
            return 0.0, float(self.v[0]), float(self.accel[0]) if len(self.s) > 1 else 0.0
        if time_s >= self.t[-1]:
            return float(self.s[-1]), float(self.v[-1]), 0.0
        j = int(np.searchsorted(self.t, time_s, side="right")) - 1
        a = float((self.v[j + 1] ** 2 - self.v[j] ** 2) / (2.0 * (self.s[j + 1] - self.s[j])))
        tau = time_s - self.t[j]
        v = float(self.v[j]) + a * tau
        return float(self.s[j]) + float(self.v[j]) * tau + 0.5 * a * tau * tau, v, a


def build_profile(path: ArcLengthPath, drive: DriveParams, params: RoadRunnerParams,
                  heading: str = "tangent", start_heading: float | None = None,
                  headings: Sequence[SegmentHeading] = ()) -> TimeProfile:
    """The forward/backward-pass profile with the wheel- and angular-velocity constraints;
    ``headings``: the path's own, per segment (they override ``heading``)."""
    if heading not in HEADINGS:
        raise ConfigError(f"follower.heading={heading!r}; allowed: {list(HEADINGS)}")
    n = max(2, int(math.ceil(path.length / params.resolution_in)) + 1)
    s = np.linspace(0.0, path.length, n)
    _, tan_angle, kappa = path.at(s)
    if headings:
        h, dh = heading_profile(headings, s, np.interp(s, path.s, path.u), tan_angle)
    elif heading == "tangent":
        h, dh = tan_angle, kappa
    else:
        h0 = float(tan_angle[0]) if start_heading is None else float(start_heading)
        h, dh = np.full(n, h0), np.zeros(n)
    phi = tan_angle - h  # path direction in the robot frame
    per_speed = np.abs(np.c_[np.cos(phi), np.sin(phi), dh] @ wheel_matrix(drive.k_in).T)
    with np.errstate(divide="ignore"):
        cap = np.minimum(params.max_wheel_vel_in_s / per_speed.max(axis=1),
                         params.max_ang_vel_rad_s / np.abs(dh))
    cap[0] = cap[-1] = 0.0
    ds = np.diff(s)
    v = cap.copy()
    amax, amin = params.max_profile_accel_in_s2, -params.min_profile_accel_in_s2
    for j in range(n - 1):  # forward pass
        v[j + 1] = min(v[j + 1], math.sqrt(v[j] ** 2 + 2.0 * amax * ds[j]))
    for j in range(n - 2, -1, -1):  # backward pass
        v[j] = min(v[j], math.sqrt(v[j + 1] ** 2 + 2.0 * amin * ds[j]))
    mean = 0.5 * (v[1:] + v[:-1])
    dt = np.where(mean > 0, ds / np.maximum(mean, 1e-300), 0.0)
    return TimeProfile(s, v, np.r_[0.0, np.cumsum(dt)], cap, h, dh, kappa)


class RoadRunnerFollower:
    """Profile → holonomic controller → kS/kV/kA feedforward per wheel (see the module doc)."""

    name = "roadrunner"

    def __init__(self, chain: BezierChain, drive: DriveParams, feedforward: Feedforward,
                 params: RoadRunnerParams | None = None, *, heading: str = "tangent",
                 start_heading: float | None = None, headings: Sequence[SegmentHeading] = (),
                 dt_s: float = 0.01, name: str = "roadrunner"):
        self.drive, self.ff, self.dt_s, self.name = drive, feedforward, dt_s, name
        self.params = params or RoadRunnerParams()
        self.path = ArcLengthPath(chain)
        self.profile = build_profile(self.path, drive, self.params, heading, start_heading, headings)
        self.J = wheel_matrix(drive.k_in)
        self.t0: float | None = None
        self.elapsed = 0.0
        self._done = False

    def reset(self, state: DriveState) -> None:
        self.t0, self.elapsed, self._done = state.time_s, 0.0, False

    @property
    def finished(self) -> bool:
        return self.elapsed >= self.profile.duration_s

    def target(self, time_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Field-frame target pose, velocity, acceleration, and the path's arc length."""
        prof = self.profile
        s, v, a = prof.state(time_s)
        p, ang, kappa = self.path.at(s)
        h = float(np.interp(s, prof.s, prof.heading))
        dh = float(np.interp(s, prof.s, prof.dheading_ds))
        t = np.array([math.cos(ang), math.sin(ang)])
        n = np.array([-t[1], t[0]])
        vel = np.r_[v * t, dh * v]
        acc = np.r_[a * t + v * v * float(kappa) * n, dh * a]
        return np.r_[p, h], vel, acc, s

    def command(self, state: DriveState, battery_v: float | None = None) -> Command:
        battery = battery_v or self.drive.battery_voltage_v
        self.elapsed = state.time_s - (self.t0 or 0.0)
        prm = self.params
        pose, vel = state.measured_pose, state.velocity
        ending = self.elapsed >= self.profile.duration_s
        if ending and (prm.end_correction_s <= 0 or self._done or
                       self.elapsed >= self.profile.duration_s + prm.end_correction_s):
            self._done = True
            return Command(np.zeros(4), np.zeros(4), False, ("idle",), "idle",
                           progress_in=self.profile.s[-1])
        tp, tv, ta, s = self.target(self.elapsed)
        if ending:
            tv, ta = np.zeros(3), np.zeros(3)
            if math.hypot(*(tp[:2] - pose[:2])) <= prm.end_tolerance_in:
                self._done = True
        ht, ha = tp[2], pose[2]
        # target velocity and acceleration in the target frame (dual-number derivative)
        ct, st_ = math.cos(ht), math.sin(ht)
        v_t = np.array([ct * tv[0] + st_ * tv[1], -st_ * tv[0] + ct * tv[1], tv[2]])
        a_t = np.array([ct * ta[0] + st_ * ta[1], -st_ * ta[0] + ct * ta[1], ta[2]])
        a_t[:2] += tv[2] * np.array([v_t[1], -v_t[0]])
        # pose error in the actual robot frame (target ⊖ actual)
        ca, sa = math.cos(ha), math.sin(ha)
        d = tp[:2] - pose[:2]
        err = np.array([ca * d[0] + sa * d[1], -sa * d[0] + ca * d[1], wrap(ht - ha)])
        v_act = np.array([ca * vel[0] + sa * vel[1], -sa * vel[0] + ca * vel[1], vel[2]])
        gains = np.array([prm.axial_gain, prm.lateral_gain, prm.heading_gain])
        vgains = np.array([prm.axial_vel_gain, prm.lateral_vel_gain, prm.heading_vel_gain])
        cmd_v = v_t + gains * err + vgains * (v_t - v_act)
        wheel_v = self.J @ cmd_v
        wheel_a = self.J @ a_t
        volts = self.ff.volts(wheel_v, wheel_a)
        power = volts / battery
        sat = bool(np.any(np.abs(power) > 1.0))
        tangent = np.array([math.cos(float(self.path.at(s)[1])),
                            math.sin(float(self.path.at(s)[1]))])
        cross = float(np.array([-tangent[1], tangent[0]]) @ (pose[:2] - tp[:2]))
        mode = "end" if ending else "profile"
        return Command(np.clip(power, -1, 1), volts, sat, ("holonomic",), mode, cross,
                       wrap(ht - ha), float(math.hypot(tv[0], tv[1])), s, -1)
