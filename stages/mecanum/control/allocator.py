r"""The allocator: acceleration requests → motor space → each motor's headroom, by priority.

**Motor space.** A request asks for a body acceleration ``b = [ax, ay, α]`` (field frame
in the request; the allocator turns it into the robot frame). For a four-wheel mecanum
drive it is linear in ``b``, per wheel ``i``:

* the voltage the wheel needs, ``V_i = V0_i + (G b)_i`` with
  ``V0 = kS·sgn(v) + kV·v`` (the wheel's current speed ``v``) and ``G = kA · J · W``.
  ``J`` is the mecanum wheel matrix; ``W = diag(1, 1, ρ)`` weighs the turning part by
  ``ρ = (I/k² + 4 I_w/r²) / m_eff``, so ``(J W b)_i`` is the wheel's *motor-space
  acceleration*: the translational wheel acceleration that needs the same torque
  (what ``kA`` multiplies in :mod:`stages.mecanum.control.pidf`);
* the force on the floor, ``f_i = (m/4)·(J D b)_i + f_roll,i`` with
  ``D = diag(1, 1, I/(m k²))`` (the least-norm wheel forces that make ``Jᵀ f = M b``) and
  the rolling resistance the wheel also pushes against. Traction allows ``|f_i| ≤ μN/√2``.

So each wheel has two two-sided linear limits: ``|V_i| ≤ V_battery·(1 − reserve)`` (the
reserve is left for the PIDF's feedback) and ``|f_i| ≤ traction_fraction · μN/√2``.
Where the robot's present state already sits outside a limit (a wheel spinning faster
than it can hold), that limit is widened to include ``b = 0``: the allocator never asks
for the impossible, and always returns a command within the widened limits.

**Headroom by priority, shared by weight.** Requests are served priority by priority
(0 first). Within a priority level the headroom is shared by *progressive filling*:
request ``k`` (weight ``w_k``) is granted the fraction ``s_k = λ·w_k / w_max`` of what it
asked, one common fill ``λ`` growing from 0, so heavier requests fill faster (a request
with half another's weight has half its share). A request stops growing when it is full
(``s_k = 1``) or when a motor limit binds that it pushes against; the others of the level
keep filling. (A held request stays held even if the others' growth later moves that
limit back inside: the fill is one pass, not a search; the level as a whole is maximal —
one of its requests short of full is always at a limit it pushes.)

The next level then gets what is left, motor by motor: a limit that a higher-priority
request is held at has no headroom left in that direction (a lower request that would
push it further is held at 0), while a lower request that moves it back inside (braking,
on a wheel at full voltage) is served. So a higher-priority request's grant never depends
on the lower ones: it is served as fully as the limits allow before any lower request
gets headroom.

**Exact, closed form.** Between events (a request fills up or a limit binds) the granted
acceleration moves along a straight line in ``b``, and every limit is linear in ``b``, so
the next event is found with a ratio test (the largest step ``t`` with
``lo ≤ c + t·d ≤ hi`` row by row). At most one event per request: no iteration, no
tolerance, no solver; the grant is exact (up to floating point) and never exceeds a limit.
It is not an LP optimum over all requests at once (that would trade priorities against
each other, which is what the priorities forbid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core.errors import ConfigError
from hardware.mecanum.kinematics import wheel_matrix
from hardware.mecanum.params import G_IN_S2, DriveParams
from stages.mecanum.control.pidf import SIGN_BAND_IN_S, Feedforward, smooth_sign


@dataclass(frozen=True, eq=False)
class AccelRequest:
    """A controller's ask: a field-frame acceleration ``[ax, ay, α]`` (in/s², rad/s²)."""

    name: str
    accel: np.ndarray
    weight: float = 1.0
    priority: int = 0  # 0 is served first

    def __post_init__(self) -> None:
        a = np.asarray(self.accel, dtype=float).reshape(-1)
        if a.shape != (3,) or not np.all(np.isfinite(a)):
            raise ValueError(f"request {self.name!r}: accel must be 3 finite numbers; got {a}")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise ValueError(f"request {self.name!r}: weight must be > 0; got {self.weight!r}")
        object.__setattr__(self, "accel", a)


@dataclass(frozen=True, eq=False)
class Allocation:
    accel_field: np.ndarray  # granted total [ax, ay, α], field frame
    accel_robot: np.ndarray  # the same in the robot frame
    wheel_accel_in_s2: np.ndarray  # (4,) motor-space accelerations
    feedforward_v: np.ndarray  # (4,) V0 + G b: the voltage the model needs
    traction_use: np.ndarray  # (4,) |f_i| / (μN/√2) the model expects
    granted: dict[str, float] = field(default_factory=dict)  # request name → fraction s_k
    binding: str = ""  # the limit that held the first partly served level ("" = none)
    served_levels: int = 0  # priority levels fully served before the first partly served one


class MotorModel:
    """The linear map from body acceleration to each wheel's voltage and floor force."""

    def __init__(self, drive: DriveParams, ff: Feedforward):
        self.drive, self.ff = drive, ff
        k, r = drive.k_in, drive.wheel_radius_in
        m, meff, iz, iw = drive.mass_kg, drive.effective_mass_kg, drive.yaw_inertia, \
            drive.wheel_inertia
        self.J = wheel_matrix(k)
        self.rho = (iz / (k * k) + 4.0 * iw / (r * r)) / meff
        self.motor_map = self.J * np.array([1.0, 1.0, self.rho])  # b → motor-space accel
        self.G = ff.kA * self.motor_map  # b → volts
        self.force_map = self.J * np.array([1.0, 1.0, iz / (m * k * k)])  # b → f_i / (m/4)
        self.traction_accel = drive.friction_coefficient * G_IN_S2 / math.sqrt(2.0)  # f_max/(m/4)
        self.roll_accel = drive.rolling_friction_coefficient * G_IN_S2
        a, b = drive.wheelbase_in / 2, drive.track_width_in / 2
        self.wheel_xy = np.array([[a, b], [-a, b], [-a, -b], [a, -b]])

    def cruise_speed(self, direction_robot: np.ndarray, volts: float) -> float:
        """The steady speed in a robot-frame direction at which no wheel needs more than
        ``volts`` (kS + kV·|wheel speed|): a diagonal is √2 slower than straight ahead."""
        per = float(np.max(np.abs(self.J[:, :2] @ np.asarray(direction_robot, dtype=float))))
        return max(volts - self.ff.kS, 0.0) / (self.ff.kV * per) if per > 0 else math.inf

    def static(self, robot_velocity: np.ndarray) -> np.ndarray:
        """The wheel forces (in units of one wheel's ``c_rr N``) that cancel the body's rolling
        resistance at robot-frame velocity ``[u, w, ω]``: each contact point is dragged
        against its own velocity (linear below ``SIGN_BAND_IN_S``), and the least-norm wheel
        forces ``J (JᵀJ)⁻¹ [F, T]`` push back."""
        u, w, om = np.asarray(robot_velocity, dtype=float)
        xy = self.wheel_xy
        vc = np.c_[u - om * xy[:, 1], w + om * xy[:, 0]]
        drag = vc / np.maximum(np.hypot(vc[:, 0], vc[:, 1]), SIGN_BAND_IN_S)[:, None]
        fx, fy = drag[:, 0].sum(), drag[:, 1].sum()
        torque = float(np.sum(xy[:, 0] * drag[:, 1] - xy[:, 1] * drag[:, 0]))
        k = self.drive.k_in
        return self.J @ np.array([fx / 4.0, fy / 4.0, torque / (4.0 * k * k)])

    def base(self, wheel_speeds_in_s: np.ndarray, static: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """Voltage and floor force (accel units) at ``b = 0``; ``static`` as in
        :meth:`static` (default: ``sgn`` of each wheel's speed, the FTC convention)."""
        v = np.asarray(wheel_speeds_in_s, dtype=float)
        sign = smooth_sign(v) if static is None else np.asarray(static, dtype=float)
        return self.ff.kS * sign + self.ff.kV * v, self.roll_accel * sign


class Allocator:
    """Serve :class:`AccelRequest` s within each wheel's voltage and traction headroom."""

    def __init__(self, model: MotorModel, battery_v: float, voltage_reserve: float = 0.1,
                 traction_fraction: float = 0.95):
        for name, v, lo, hi in (("voltage_reserve", voltage_reserve, 0.0, 0.9),
                                ("traction_fraction", traction_fraction, 0.05, 1.0)):
            if not (isinstance(v, (int, float)) and lo <= v <= hi):
                raise ConfigError(f"allocator.{name} must be in [{lo}, {hi}]; got {v!r}")
        self.model = model
        self.v_max = float(battery_v) * (1.0 - voltage_reserve)
        self.f_max = model.traction_accel * traction_fraction
        self._A = np.vstack([model.G, model.force_map])  # 8×3 rows: volts, forces

    def limits(self, wheel_speeds_in_s: np.ndarray, static: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offset c0, lo, hi) of the 8 limit rows at b = 0, widened to contain b = 0."""
        v0, f0 = self.model.base(wheel_speeds_in_s, static)
        c0 = np.r_[v0, f0]
        cap = np.r_[np.full(4, self.v_max), np.full(4, self.f_max)]
        return c0, np.minimum(-cap, c0), np.maximum(cap, c0)

    def allocate(self, requests: list[AccelRequest], heading_rad: float,
                 wheel_speeds_in_s: np.ndarray, static: np.ndarray | None = None) -> Allocation:
        """Grant ``requests`` at the robot's heading and wheel speeds; ``static`` is the
        rolling-resistance distribution the feedforward will use (default ``sgn``)."""
        c, s = math.cos(heading_rad), math.sin(heading_rad)
        to_robot = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
        c0, lo, hi = self.limits(wheel_speeds_in_s, static)
        b = np.zeros(3)
        row = c0.copy()
        granted = {r.name: 0.0 for r in requests}
        binding, served = "", 0
        levels = sorted({r.priority for r in requests})
        for level in levels:
            members = [r for r in requests if r.priority == level]
            vecs = [to_robot @ r.accel for r in members]
            fills, stop, why = self._fill(row, lo, hi, vecs, [r.weight for r in members])
            for r, vec, f in zip(members, vecs, fills, strict=True):
                granted[r.name] = f
                b = b + f * vec
            row = c0 + self._A @ b
            if stop:
                binding = binding or f"priority {level}: {why}"
            elif not binding:
                served += 1
        volts, force = row[:4], row[4:]
        return Allocation(to_robot.T @ b, b, self.model.motor_map @ b, volts,
                          np.abs(force) / self.model.traction_accel, granted, binding, served)

    def _fill(self, row: np.ndarray, lo: np.ndarray, hi: np.ndarray, vecs: list[np.ndarray],
              weights: list[float]) -> tuple[list[float], bool, str]:
        """Progressive filling of one level (see the module doc): (fractions, stopped?, why).

        A request held by a limit is released again if the others' growth moved that limit
        back inside (it then grows from where it stopped), for up to ``FILL_ROUNDS`` rounds."""
        w = np.asarray(weights, dtype=float) / max(weights)
        dirs = np.array([self._A @ v for v in vecs])  # (K, 8)
        fills = np.array([0.0 if np.any(v != 0.0) else 1.0 for v in vecs])
        cur, why = row.copy(), ""
        for _ in range(FILL_ROUNDS):
            held = [k for k in range(len(w)) if fills[k] < 1.0 and _held(cur, dirs[k], lo, hi)]
            active = [k for k in range(len(w)) if fills[k] < 1.0 and k not in held]
            if held and not why:
                why = ROWS[_held_row(cur, dirs[held[0]], lo, hi)]
            if not active:
                break
            while active:
                d = w[active] @ dirs[active]
                to_full = min((1.0 - fills[k]) / w[k] for k in active)
                t, k_row = _ratio(cur, d, lo, hi)
                step = min(t, to_full)
                for k in active:
                    fills[k] = min(1.0, fills[k] + step * w[k])
                cur = cur + step * d
                if to_full <= t:
                    active = [k for k in active if fills[k] < 1.0 - 1e-12]
                    continue
                out = 1.0 if d[k_row] > 0 else -1.0  # the side of the binding row
                pushing = [k for k in active if dirs[k, k_row] * out > 0]
                active = [k for k in active if k not in (pushing or active)]
                why = ROWS[k_row]
            fills[fills >= 1.0 - 1e-12] = 1.0
        stopped = bool(np.any(fills < 1.0))
        return fills.tolist(), stopped, why if stopped else ""


FILL_ROUNDS = 100   # a held request and a growing one can hand a limit back and forth ~20 times
HELD_TOL = 1e-9


def _held_rows(c: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return ((c >= hi - HELD_TOL) & (d > 0)) | ((c <= lo + HELD_TOL) & (d < 0))


def _held(c: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Does direction d push a row that is already at its limit?"""
    return bool(np.any(_held_rows(c, d, lo, hi)))


def _held_row(c: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> int:
    return int(np.argmax(_held_rows(c, d, lo, hi)))


ROWS = tuple(f"{kind} {wheel}" for kind in ("voltage", "traction")
             for wheel in ("leftFront", "leftBack", "rightBack", "rightFront"))


def _ratio(c: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, int]:
    """Largest t ≥ 0 with lo ≤ c + t d ≤ hi (inf if none binds), and the binding row."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # the unused branches of where
        t = np.where(d > 0, (hi - c) / d, np.where(d < 0, (lo - c) / d, np.inf))
    t = np.maximum(t, 0.0)
    k = int(np.argmin(t))
    return float(t[k]), k
