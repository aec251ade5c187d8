import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stages.mecanum.paths.bezier import BezierChain, PathError
from stages.mecanum.paths.flatten import FlatPath, flatten_chain
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.precompute import (
    _brake_v2,
    benchmark_precompute,
    brake_v2,
    precompute_entry_speeds,
    synthetic_path,
)
from stages.mecanum.paths.profile import forward_profile

limits_st = st.builds(
    lambda v, a, b, ma, vm: PathLimits(min(v, vm), a, b, ma, vm),
    st.floats(10, 60), st.floats(20, 200), st.floats(20, 200),
    st.one_of(st.just(math.inf), st.floats(50, 500)),
    st.one_of(st.just(math.inf), st.floats(40, 80)),
)
polylines = st.lists(st.tuples(st.floats(-60, 60), st.floats(-60, 60)), min_size=2,
                     max_size=25).filter(
                         lambda p: np.ptp(np.array(p), axis=0).max() > 1e-6).map(
                         lambda p: FlatPath.from_points(np.array(p)))


def forward_simulate(table, samples=1500):
    """An independent point-mass run along the table: never above its speed limit,
    accelerating flat out otherwise; returns arc length, speed, curvature samples."""
    s = np.unique(np.r_[np.linspace(0.0, table.length_in, samples), table.cum_length_in,
                        table.cum_length_in[:-1] + table.corner_tangent_in[:-1],
                        table.cum_length_in[1:] - table.corner_tangent_in[1:]])
    limit = table.speed_limit_at(s)
    v = np.empty_like(s)
    v[0] = 0.0
    for k in range(len(s) - 1):
        v[k + 1] = min(limit[k + 1], math.sqrt(v[k] ** 2 + 2 * 1e4 * (s[k + 1] - s[k])))
    return s, v, table.curvature_at(s)


@settings(max_examples=40, deadline=None)
@given(polylines, limits_st, st.floats(0.01, 1.0))
def test_entry_speeds_never_need_more_braking_than_there_is(flat, limits, tol):
    table = precompute_entry_speeds(flat, limits, corner_tolerance_in=tol)
    s, v, kappa = forward_simulate(table)
    a, c = limits.brake_accel_in_s2, limits.max_accel_in_s2
    decel = (v[:-1] ** 2 - v[1:] ** 2) / (2 * np.diff(s))
    # braking (≤ b) and turning share one friction circle, at the faster end of each step
    # (the sample grid holds every arc boundary, so each step lies in one piece)
    k = table.curvature_at(0.5 * (s[:-1] + s[1:]))
    room = np.minimum(a, np.sqrt(np.maximum(c * c - (v[:-1] ** 2 * k) ** 2, 0.0)))
    real = np.diff(s) > 1e-9  # shorter steps measure round-off, not braking
    assert np.all(decel[real] <= room[real] * (1 + 1e-6) + 1e-6)
    # the turns themselves stay within the budget at their speed
    on_arc = kappa > 0
    budget = np.array([limits.accel_at(x) for x in v[on_arc]])
    # (v² within 1e-10 in²/s² absolute: arc length itself only resolves ~1e-14 in)
    assert np.all(v[on_arc] ** 2 <= budget / kappa[on_arc] * (1 + 1e-6) + 1e-10)
    # the run ends at the end speed and passes each vertex no faster than its entry speed
    assert v[-1] == pytest.approx(0.0, abs=1e-6)
    at_vertex = table.speed_limit_at(table.cum_length_in)
    assert np.all(at_vertex <= table.entry_speed_in_s * (1 + 1e-9) + 1e-9)


@settings(max_examples=30, deadline=None)
@given(polylines, limits_st)
def test_pairwise_and_straight_line_reference(flat, limits):
    table = precompute_entry_speeds(flat, limits)
    v = table.entry_speed_in_s
    a = limits.brake_accel_in_s2
    assert np.all(v[:-1] ** 2 <= v[1:] ** 2 + 2 * a * table.lengths_in + 1e-9)
    assert np.all(v <= table.corner_speed_in_s + 1e-12)
    assert np.all(table.straight_in >= 0)
    assert np.all(table.straight_in <= table.lengths_in + 1e-12)


def test_straight_path_matches_the_textbook_backward_pass():
    pts = np.c_[np.linspace(0, 100, 11), np.zeros(11)]
    lim = PathLimits(max_speed_in_s=40, max_accel_in_s2=50, brake_accel_in_s2=50)
    table = precompute_entry_speeds(FlatPath.from_points(pts), lim)
    ref = [0.0]
    for length in table.lengths_in[::-1]:
        ref.append(min(40.0, math.sqrt(ref[-1] ** 2 + 2 * 50 * length)))
    assert np.allclose(table.entry_speed_in_s, ref[::-1])
    assert np.isinf(table.corner_radius_in).all()


def test_circle_caps_match_the_curvature_limit():
    r = 20.0
    a = np.linspace(0, np.pi, 200)
    flat = FlatPath(np.c_[r * np.cos(a), r * np.sin(a)], 0.05)
    lim = PathLimits(max_speed_in_s=100, max_accel_in_s2=80, brake_accel_in_s2=80)
    table = precompute_entry_speeds(flat, lim)
    assert np.allclose(table.corner_radius_in[1:-1], r, rtol=1e-3)
    assert np.allclose(table.corner_speed_in_s[1:-1], math.sqrt(80 * r), rtol=1e-3)


def test_a_reversal_forces_a_stop_and_a_kink_a_crawl():
    reversal = FlatPath.from_points(np.array([[0, 0], [30, 0], [0, 0.0]]))
    lim = PathLimits(max_speed_in_s=40, max_accel_in_s2=80, brake_accel_in_s2=80)
    table = precompute_entry_speeds(reversal, lim, end_speed_in_s=40)
    assert table.entry_speed_in_s[1] == 0.0
    kink = FlatPath.from_points(np.array([[0, 0], [30, 0], [30, 30.0]]))
    t = precompute_entry_speeds(kink, lim, corner_tolerance_in=0.05)
    # the arc within 0.05 in of a right-angle corner has r = 0.05 cos45/(1 − cos45)
    r = 0.05 * math.cos(math.pi / 4) / (1 - math.cos(math.pi / 4))
    assert t.corner_radius_in[1] == pytest.approx(r)
    assert t.entry_speed_in_s[1] == pytest.approx(math.sqrt(80 * r))


def test_brake_formula_and_braking_distance_agree():
    for v2_end, length, kappa in ((0.0, 10.0, 0.0), (100.0, 3.0, 0.05), (300.0, 0.5, 0.2)):
        w = float(brake_v2(v2_end, length, kappa, 80.0, 80.0))
        assert w == pytest.approx(_brake_v2(v2_end, length, kappa, 80.0, 80.0))
        assert w * kappa <= 80.0 + 1e-9
        # braking at the tangential budget left at the first speed covers the distance
        assert (w - v2_end) == pytest.approx(2 * length * math.sqrt(80.0**2 - (w * kappa) ** 2))
        # a weaker brake binds where the turn leaves more than it can use
        weak = float(brake_v2(v2_end, length, kappa, 80.0, 10.0))
        assert weak == pytest.approx(min(w, v2_end + 2 * 10.0 * length))
    flat = FlatPath.from_points(np.array([[0, 0], [100, 0.0]]))
    lim = PathLimits(max_speed_in_s=40, max_accel_in_s2=80, brake_accel_in_s2=80)
    table = precompute_entry_speeds(flat, lim)
    assert table.braking_distance_in(40, 0) == pytest.approx(1600 / 160)
    assert table.braking_distance_in(10, 20) == 0.0


def test_table_is_read_only_deterministic_and_checked():
    flat = synthetic_path(500, seed=3)
    lim = PathLimits(max_speed_in_s=40, max_accel_in_s2=80, brake_accel_in_s2=80)
    t1, t2 = precompute_entry_speeds(flat, lim), precompute_entry_speeds(flat, lim)
    for name in t1.arrays:
        assert np.array_equal(getattr(t1, name), getattr(t2, name))
    with pytest.raises(ValueError):
        t1.entry_speed_in_s[0] = 1.0
    with pytest.raises(AttributeError):
        t1.limits = lim
    with pytest.raises(PathError, match="end_speed_in_s"):
        precompute_entry_speeds(flat, lim, end_speed_in_s=-1)
    assert set(t1.as_arrays()) == set(t1.arrays)


def test_benchmark_helper_runs_each_size():
    out = benchmark_precompute((10, 100), repeats=1)
    assert set(out) == {10, 100} and all(v > 0 for v in out.values())


def test_forward_profile_follows_the_table():
    chain = BezierChain.from_control_points([[[-48, -8], [0, -8], [24, -8], [24, -8]],
                                             [[24, -8], [35, -8], [35, 8], [24, 8]]])
    flat = flatten_chain(chain, 0.05)
    lim = PathLimits(max_speed_in_s=40, max_accel_in_s2=80, brake_accel_in_s2=80,
                     motor_accel_in_s2=300, motor_speed_in_s=47)
    table = precompute_entry_speeds(flat, lim)
    prof = forward_profile(table)
    assert prof.speed_in_s[0] == 0 and prof.speed_in_s[-1] == pytest.approx(0, abs=1e-9)
    assert np.all(prof.speed_in_s <= table.speed_limit_at(prof.s_in) + 1e-9)
    assert np.all(np.diff(prof.time_s) >= 0) and prof.duration_s > 0
    assert np.all(prof.accel_in_s2() <= 80 + 1e-6)
