"""Road Runner 1.0's own ramp fits (its tuning web page), re-implemented, plus our kA fit.

What the page does with a log (all units Road Runner's: ticks, ticks/s, volts):

* **preparation**: every signal loses its first sample and its last two; an encoder's velocity is
  its logged one with the hub's 16-bit overflow undone against a central difference of the
  positions (``*FixVels``), or, when no velocity was logged, that central difference itself.
* **applied voltage** of a sample: battery voltage × the largest motor power (never below 0).
* **forward ramp**: one line through (forward encoder velocity, applied voltage) of every forward
  encoder: slope ``kV``, intercept ``kS``. The line is fitted on data shifted to zero mean and
  scaled to [-1, 1], and the slope and intercept *there* are rounded to 2 decimals (the
  ``regression`` package's default); on exactly linear data that rounding changes nothing.
* **angular ramp, drive encoders**: ``kV``, ``kS`` the same way from (−left, +right wheel
  velocity) against (−left, +right power × voltage); then ``trackWidthTicks`` = slope through the
  origin of ½·(mean right − mean left wheel velocity) against the IMU's +z rate, the rate taken
  one sample later than the wheels (the page slices it once more). The ½ (and the dead-wheel
  page's 2 below) apply only when ``type`` is exactly ``"mecanum"``; any other spelling gets 1.
* **angular ramp, dead wheels**: each wheel's slope through the origin against the +z rate (the
  parallel wheels' "y-position", the perpendicular's "x-position"); ``trackWidthTicks`` =
  slope of 2·(applied voltage − kS)/kV (×1 for tank) against the rate, with the forward ramp's kS, kV.
* **lateral ramp** (dead wheels only): slope through the origin of the perpendicular wheel's
  speed in inches against the speed the forward feedforward expects, (voltage − kS)/kV in ticks/s:
  ``lateralInPerTick``; the kinematics' lateral multiplier is ``inPerTick / lateralInPerTick``.
* **kA**: Road Runner 1.0 has no automatic fit; the user tunes it by eye in
  ``ManualFeedforwardTuner``. :func:`fit_forward_feedforward` is *ours*: least squares of
  ``V = kS·sgn(v) + kV·v + kA·a`` in integral form over sliding windows (no differentiated noise).

The page lets the user exclude points by hand; these functions fit every sample, as it does first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from stages.mecanum.tuning.drive_fit import local_speed, window_bounds
from stages.mecanum.tuning.ramp_logs import (
    AngularRampLog,
    DriveFitError,
    Encoder,
    ForwardRampLog,
    LateralRampLog,
    Signal,
)

CPS_STEP = 0x10000  # the hub's velocity register wraps at 16 bits
RR_PRECISION_DIGITS = 2


@dataclass(frozen=True)
class LineFit:
    """``y = slope·x + intercept`` with the RMS of its residual (y's unit) over ``samples`` points."""

    slope: float
    intercept: float
    rms_residual: float
    samples: int


@dataclass(frozen=True)
class RampFeedforward:
    """Road Runner's kS (V) and kV (V per tick/s) from one ramp, with the line's RMS residual (V)."""

    kS_v: float
    kV_v_s_per_tick: float
    rms_residual_v: float
    samples: int
    kA_v_s2_per_tick: float | None = None  # only our least-squares fit has one

    def per_inch(self, in_per_tick: float) -> tuple[float, float, float | None]:
        """(kS V, kV V per in/s, kA V per in/s²), the units of this project's feedforward."""
        ka = None if self.kA_v_s2_per_tick is None else self.kA_v_s2_per_tick / in_per_tick
        return self.kS_v, self.kV_v_s_per_tick / in_per_tick, ka


@dataclass(frozen=True)
class AngularRampFit:
    feedforward: RampFeedforward | None  # drive encoders only
    track_width_ticks: float
    track_width: LineFit  # the regression behind it (ticks/s against rad/s)
    par_y_ticks: tuple[float, ...] = ()  # dead wheels: slope of each parallel wheel
    perp_x_ticks: tuple[float, ...] = ()


@dataclass(frozen=True)
class LateralRampFit:
    lateral_in_per_tick: float
    line: LineFit  # actual in/s against expected ticks/s
    warning: str | None

    def lateral_multiplier(self, in_per_tick: float) -> float:
        return in_per_tick / self.lateral_in_per_tick


# -- the page's arithmetic -----------------------------------------------------------------------
def js_round(x: float, digits: int) -> float:
    factor = 10.0**digits
    return math.floor(x * factor + 0.5) / factor


def fit_linear_with_scaling(xs, ys, precision_digits: int | None = RR_PRECISION_DIGITS) -> LineFit:
    """The page's line with intercept (normalized, rounded like the ``regression`` package)."""
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    if len(x) < 2 or len(x) != len(y):
        raise DriveFitError(f"a line needs ≥ 2 paired samples; got {len(x)} x and {len(y)} y")
    x0, y0 = float(np.mean(x)), float(np.mean(y))
    xs_, ys_ = float(np.max(np.abs(x - x0))), float(np.max(np.abs(y - y0)))
    if xs_ == 0.0 or ys_ == 0.0:
        raise DriveFitError("a line cannot be fitted: every x (or every y) is the same value")
    u, w, n = (x - x0) / xs_, (y - y0) / ys_, len(x)
    run = n * float(np.sum(u * u)) - float(np.sum(u)) ** 2
    m = 0.0 if run == 0 else (n * float(np.sum(u * w)) - float(np.sum(u)) * float(np.sum(w))) / run
    if precision_digits is not None:
        m = js_round(m, precision_digits)
    b = float(np.sum(w)) / n - m * float(np.sum(u)) / n
    if precision_digits is not None:
        b = js_round(b, precision_digits)
    slope, intercept = m * ys_ / xs_, b * ys_ - m * x0 * ys_ / xs_ + y0
    return LineFit(slope, intercept, _rms(y - slope * x - intercept), n)


def fit_linear_no_intercept(xs, ys) -> LineFit:
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    den = math.fsum(x * x)
    if len(x) == 0 or len(x) != len(y) or den == 0.0:
        raise DriveFitError(f"a line through the origin needs paired samples with some x ≠ 0; got {len(x)}")
    slope = math.fsum(x * y) / den
    return LineFit(slope, 0.0, _rms(y - slope * x), len(x))


def inverse_overflow(raw_ticks_s, estimate_ticks_s) -> np.ndarray:
    """Undo the 16-bit wrap of a hub velocity (a multiple of 20 ticks/s) near ``estimate``."""
    real = np.mod(np.trunc(np.asarray(raw_ticks_s, float)), CPS_STEP)
    real = real + (real % 20) / 4 * CPS_STEP
    return real + np.floor((np.asarray(estimate_ticks_s) - real) / (5 * CPS_STEP) + 0.5) * 5 * CPS_STEP


def central_difference(times, values) -> np.ndarray:
    """(x[i+2] − x[i]) / (t[i+2] − t[i]): no output for the first and last sample."""
    t, x = np.asarray(times, float), np.asarray(values, float)
    return (x[2:] - x[:-2]) / (t[2:] - t[:-2])


def prepared_velocities(enc: Encoder) -> np.ndarray:
    """The page's velocity of one encoder (ticks/s), aligned with the prepared powers."""
    pt, pv = enc.positions.times_s[:-1], enc.positions.values[:-1]
    vt, vv = enc.velocities.times_s[:-1], enc.velocities.values[:-1]
    if len(vt) == 0:
        return central_difference(pt, pv)
    if enc.fix_velocities:
        return inverse_overflow(vv[1:-1], central_difference(vt, pv))
    return vv[1:-1]


def prepared(signal: Signal) -> np.ndarray:
    return signal.values[1:-2]


def _same_lengths(source: str, arrays: list[np.ndarray]) -> None:
    lengths = {len(a) for a in arrays}
    if len(lengths) > 1:
        raise DriveFitError(f"{source}: lengths do not match after preparation: {sorted(lengths)}")


def _rms(r: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(r)))) if len(r) else 0.0


def applied_volts(powers: list[np.ndarray], volts: np.ndarray) -> np.ndarray:
    return volts * np.maximum(np.max(np.stack(powers), axis=0), 0.0)


def pos_z_rate(log: AngularRampLog) -> np.ndarray:
    """The page's +z rate (prepared), refusing a log where another axis turned more."""
    rates = [prepared(s) for s in log.ang_vels]
    best, axis = 0.0, -1
    for i, r in enumerate(rates):  # the page keeps the last axis whose largest rate is the largest
        top = max(0.0, float(r.max(initial=0.0)))
        if top >= best:
            best, axis = top, i
    if axis != 2:
        raise DriveFitError(f"{log.source}: more rotation about the +{'xyz'[axis]}-axis than the "
                            "+z-axis; fix the IMU orientation and run again")
    return rates[2]


# -- the three ramps -----------------------------------------------------------------------------
def fit_forward_ramp(log: ForwardRampLog, precision_digits: int | None = RR_PRECISION_DIGITS
                     ) -> RampFeedforward:
    """kS, kV as the forward-ramp page finds them."""
    if not log.forward_encoders:
        raise DriveFitError(f"{log.source}: field 'forwardEncPositions' lists no encoder")
    vels = [prepared_velocities(e) for e in log.forward_encoders]
    powers, volts = [prepared(p) for p in log.powers], prepared(log.voltages)
    _same_lengths(log.source, [*vels, *powers, volts])
    applied = applied_volts(powers, volts)
    line = fit_linear_with_scaling(np.concatenate(vels), np.tile(applied, len(vels)), precision_digits)
    return RampFeedforward(line.intercept, line.slope, line.rms_residual, line.samples)


def fit_angular_ramp(log: AngularRampLog, forward: RampFeedforward | None = None,
                     precision_digits: int | None = RR_PRECISION_DIGITS) -> AngularRampFit:
    """The drive-encoder page (left/right encoders) or the dead-wheel page (needs ``forward``)."""
    volts = prepared(log.voltages)
    lp, rp = [prepared(p) for p in log.left_powers], [prepared(p) for p in log.right_powers]
    rate = pos_z_rate(log)
    if log.left_encoders and log.right_encoders:
        lv = [prepared_velocities(e) for e in log.left_encoders]
        rv = [prepared_velocities(e) for e in log.right_encoders]
        _same_lengths(log.source, [*lv, *rv, *lp, *rp, volts, rate])
        if len(lv) != len(lp) or len(rv) != len(rp):
            raise DriveFitError(f"{log.source}: the page pairs each drive encoder with a motor; got "
                                f"{len(lv)}+{len(rv)} encoders for {len(lp)}+{len(rp)} motors")
        line = fit_linear_with_scaling(np.concatenate([*(-v for v in lv), *rv]),
                                       np.concatenate([*(-p * volts for p in lp), *(p * volts for p in rp)]),
                                       precision_digits)
        ff = RampFeedforward(line.intercept, line.slope, line.rms_residual, line.samples)
        half = 0.5 if log.drive_type == "mecanum" else 1.0
        rate = rate[1:-1]
        n = len(rate)
        wheels = (np.mean([-v[:n] for v in lv], axis=0) + np.mean([v[:n] for v in rv], axis=0)) * half
        tw = fit_linear_no_intercept(rate, wheels)
        return AngularRampFit(ff, tw.slope, tw)
    if forward is None:
        raise DriveFitError(f"{log.source}: no drive encoders (left/rightEncPositions are empty): the "
                            "dead-wheel page needs the forward ramp's kS and kV")
    par = [prepared_velocities(e) for e in log.par_encoders]
    perp = [prepared_velocities(e) for e in log.perp_encoders]
    _same_lengths(log.source, [*par, *perp, *lp, *rp, volts, rate])
    applied = applied_volts([*lp, *rp], volts)
    factor = 2.0 if log.drive_type == "mecanum" else 1.0
    tw = fit_linear_no_intercept(rate, (applied - forward.kS_v) / forward.kV_v_s_per_tick * factor)
    return AngularRampFit(None, tw.slope, tw,
                          tuple(fit_linear_no_intercept(rate, v).slope for v in par),
                          tuple(fit_linear_no_intercept(rate, v).slope for v in perp))


def fit_lateral_ramp(log: LateralRampLog, in_per_tick: float, forward: RampFeedforward) -> LateralRampFit:
    """``lateralInPerTick`` as the lateral-ramp page finds it (perpendicular dead wheels only)."""
    if not log.perp_encoders:
        raise DriveFitError(f"{log.source}: field 'perpEncPositions' lists no encoder: Road Runner's "
                            "lateral ramp needs a perpendicular dead wheel (drive encoders: LateralPushTest)")
    volts = prepared(log.voltages)
    fl, bl = prepared(log.front_left_power), prepared(log.back_left_power)
    fr, br = prepared(log.front_right_power), prepared(log.back_right_power)
    vels = [prepared_velocities(e) for e in log.perp_encoders]
    _same_lengths(log.source, [*vels, fl, bl, fr, br, volts])
    applied = volts * np.maximum(np.max(np.stack([-fl, bl, fr, -br]), axis=0), 0.0)
    expected = np.tile((applied - forward.kS_v) / forward.kV_v_s_per_tick, len(vels))
    actual = np.concatenate(vels)
    line = fit_linear_no_intercept(expected, actual * in_per_tick)
    warning = None
    if -min(float(actual.min()), 0.0) > 0.2 * float(np.abs(actual).max()):
        warning = "lateral velocity goes negative: is the perpendicular encoder reversed?"
    return LateralRampFit(line.slope, line, warning)


# -- ours: kA by least squares (Road Runner 1.0 tunes it by hand) ----------------------------------
def fit_forward_feedforward(log: ForwardRampLog, window_s: float = 0.25, min_speed_ticks_s: float = 40.0,
                            speed_from: Literal["positions", "page"] = "positions") -> RampFeedforward:
    """Ours: kS, kV, kA by least squares of ∫V dt = kS·∫sgn v dt + kV·Δx + kA·Δv over windows.

    x is the mean forward encoder position (ticks) and v its speed: ``positions`` = slope of a line
    through the positions within ±50 ms (centred, finer than a hub's 20 ticks/s steps), ``page`` =
    the page's prepared velocities (mean over the encoders). V is the applied voltage (battery ×
    largest power), sample j held from read j−1 to read j. Samples are the page's (first and last
    two dropped). Windows where the robot creeps (|v| < ``min_speed_ticks_s``: the flat start Road
    Runner says to exclude) are left out. The residual is in volts (∫ residual / window length).
    """
    enc = log.forward_encoders
    if not enc:
        raise DriveFitError(f"{log.source}: field 'forwardEncPositions' lists no encoder")
    if speed_from not in ("positions", "page"):
        raise DriveFitError(f"speed_from is 'positions' or 'page'; got {speed_from!r}")
    keep = slice(1, len(enc[0].positions.times_s) - 2)
    t = enc[0].positions.times_s[keep]
    x = np.mean([e.positions.values[keep] for e in enc], axis=0)
    v = (local_speed(t, x, 0.05) if speed_from == "positions"
         else np.mean([prepared_velocities(e) for e in enc], axis=0))
    applied = applied_volts([p.values[keep] for p in log.powers], log.voltages.values[keep])
    dt = np.diff(t)
    rows, target, spans = [], [], []
    for a, b in window_bounds(t, window_s, 0.06 if speed_from == "positions" else 0.0):
        if np.min(np.abs(v[a:b + 1])) < min_speed_ticks_s:
            continue
        rows.append([float(np.sum(np.sign(v[a + 1:b + 1]) * dt[a:b])), x[b] - x[a], v[b] - v[a]])
        target.append(float(np.sum(applied[a + 1:b + 1] * dt[a:b])))
        spans.append(t[b] - t[a])
    if len(rows) < 3:
        raise DriveFitError(f"{log.source}: only {len(rows)} moving windows of {window_s} s; kA needs ≥ 3")
    A, y = np.array(rows), np.array(target)
    scale = np.where(np.abs(A).max(axis=0) > 0, np.abs(A).max(axis=0), 1.0)
    coef = np.linalg.lstsq(A / scale, y, rcond=None)[0] / scale
    rms = _rms((y - A @ coef) / np.array(spans))
    return RampFeedforward(float(coef[0]), float(coef[1]), rms, len(y), float(coef[2]))
