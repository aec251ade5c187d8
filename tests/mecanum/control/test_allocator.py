import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stages.mecanum.control.allocator import AccelRequest, Allocator, MotorModel
from stages.mecanum.control.pidf import WheelPIDF, model_feedforward
from stages.mecanum.control.settings import PidGains
from tests.mecanum.control.helpers import DRIVE

MODEL = MotorModel(DRIVE, model_feedforward(DRIVE))
ALLOC = Allocator(MODEL, DRIVE.battery_voltage_v, voltage_reserve=0.1, traction_fraction=0.95)
TOL = 1e-7

accel = st.tuples(st.floats(-400, 400), st.floats(-400, 400), st.floats(-40, 40))
request = st.tuples(accel, st.floats(0.1, 5.0), st.integers(0, 2))
requests = st.lists(request, min_size=1, max_size=5)
wheels = st.lists(st.floats(-70, 70), min_size=4, max_size=4)
robot_v = st.tuples(st.floats(-50, 50), st.floats(-50, 50), st.floats(-4, 4))


def make(reqs):
    return [AccelRequest(f"r{i}", np.array(a), w, p) for i, (a, w, p) in enumerate(reqs)]


def rows(alloc, b_robot, wheel_speeds, static):
    c0, lo, hi = alloc.limits(np.asarray(wheel_speeds), static)
    return c0 + alloc._A @ b_robot, lo, hi


@settings(max_examples=300, deadline=None)
@given(requests, wheels, robot_v, st.floats(-math.pi, math.pi))
def test_no_allocation_ever_exceeds_a_motor_limit(reqs, wheel_speeds, v, heading):
    static = MODEL.static(np.array(v))
    out = ALLOC.allocate(make(reqs), heading, np.array(wheel_speeds), static)
    val, lo, hi = rows(ALLOC, out.accel_robot, wheel_speeds, static)
    assert np.all(val <= hi + TOL) and np.all(val >= lo - TOL)
    # the reported voltages and traction are those rows
    assert np.allclose(out.feedforward_v, val[:4])
    assert np.all(out.traction_use <= max(ALLOC.f_max / MODEL.traction_accel, 1.0) + TOL) \
        or np.any(np.abs(MODEL.base(np.array(wheel_speeds), static)[1]) > ALLOC.f_max)


@settings(max_examples=200, deadline=None)
@given(requests, wheels, st.floats(-math.pi, math.pi))
def test_higher_priority_is_served_before_lower_ones_get_headroom(reqs, wheel_speeds, heading):
    full = ALLOC.allocate(make(reqs), heading, np.array(wheel_speeds))
    top = min(p for _, _, p in reqs)
    alone = ALLOC.allocate([r for r in make(reqs) if r.priority == top], heading,
                           np.array(wheel_speeds))
    for name, s in alone.granted.items():  # lower requests never take from the top level
        assert full.granted[name] == pytest.approx(s, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(requests, wheels, st.floats(-math.pi, math.pi))
def test_a_level_short_of_full_is_held_by_a_limit(reqs, wheel_speeds, heading):
    """Maximal per level: with the levels up to its own (the lower ones cannot change its
    grants, see above), a level short of full has a request held at a limit it pushes —
    the one that stopped last; a level of one request is full or held."""
    rs = make(reqs)
    full = ALLOC.allocate(rs, heading, np.array(wheel_speeds))
    c, s = math.cos(heading), math.sin(heading)
    to_robot = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])
    for level in sorted({r.priority for r in rs}):
        upto = ALLOC.allocate([r for r in rs if r.priority <= level], heading,
                              np.array(wheel_speeds))
        val, lo, hi = rows(ALLOC, upto.accel_robot, wheel_speeds, None)
        short = [r for r in rs if r.priority == level and upto.granted[r.name] < 1 - 1e-9]
        for r in (r for r in rs if r.priority == level):
            assert upto.granted[r.name] == pytest.approx(full.granted[r.name], abs=1e-9)
        held = []
        for r in short:
            d = ALLOC._A @ (to_robot @ r.accel)
            held.append(np.any(((val >= hi - 1e-6) & (d > 0)) | ((val <= lo + 1e-6) & (d < 0))))
        assert not short or any(held)


def test_a_feasible_request_is_served_exactly():
    r = AccelRequest("a", np.array([20.0, -10.0, 1.0]), 1.0, 0)
    out = ALLOC.allocate([r], 0.7, np.zeros(4))
    assert out.granted == {"a": 1.0} and out.binding == ""
    assert np.allclose(out.accel_field, r.accel)


def test_within_a_priority_headroom_is_shared_by_weight():
    # two big forward asks at the same priority: the traction limit binds; the weight-2
    # request fills twice as fast, and both stop at the same limit
    a = AccelRequest("heavy", np.array([300.0, 0, 0]), 2.0, 0)
    b = AccelRequest("light", np.array([300.0, 0, 0]), 1.0, 0)
    out = ALLOC.allocate([a, b], 0.0, np.zeros(4))
    assert out.granted["heavy"] == pytest.approx(2 * out.granted["light"])
    assert 0 < out.granted["light"] < out.granted["heavy"] < 1
    assert "traction" in out.binding
    assert out.traction_use.max() == pytest.approx(0.95)


def test_priority_lets_correction_come_before_speeding_along():
    back = AccelRequest("back", np.array([0.0, 120.0, 0]), 1.0, 0)
    along = AccelRequest("along", np.array([100.0, 0.0, 0]), 1.0, 1)
    out = ALLOC.allocate([back, along], 0.0, np.zeros(4))
    assert out.granted["back"] == 1.0 and out.granted["along"] < 1.0
    swapped = ALLOC.allocate([AccelRequest("back", back.accel, 1.0, 1),
                              AccelRequest("along", along.accel, 1.0, 0)], 0.0, np.zeros(4))
    assert swapped.granted["along"] == 1.0 and swapped.granted["back"] < 1.0


def test_a_wheel_at_full_voltage_can_still_brake():
    # at speed, a lower-priority braking request is served although the top one is held
    wheel = np.full(4, 58.0)
    push = AccelRequest("push", np.array([80.0, 0, 0]), 1.0, 0)
    brake = AccelRequest("brake", np.array([-40.0, 0, 0]), 1.0, 1)
    out = ALLOC.allocate([push, brake], 0.0, wheel)
    assert out.granted["push"] < 1.0 and "voltage" in out.binding
    assert out.granted["brake"] > 0.0


def test_the_pidf_feedforward_is_the_allocators_voltage():
    static = MODEL.static(np.array([20.0, 10.0, 0.5]))
    wheel = np.array([12.0, 31.0, 24.0, 40.0])
    out = ALLOC.allocate([AccelRequest("a", np.array([30.0, 20.0, 2.0]))], 0.3, wheel, static)
    pid = WheelPIDF(MODEL.ff, PidGains(kP=0.0, kI=0.0, kD=0.0, track_band_in_s=0.0))
    pid.reset(wheel)
    power, volts, _ = pid.update(out.wheel_accel_in_s2, wheel, 1e-9, 12.0, static)
    assert np.allclose(volts, out.feedforward_v, atol=1e-6)
