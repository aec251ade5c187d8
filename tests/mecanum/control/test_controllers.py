import math

import numpy as np
import pytest

from stages.mecanum.control.controllers import (
    AlongPath,
    BackOntoPath,
    EndCorrection,
    Guidance,
    Heading,
    Stop,
    split_velocity,
)
from stages.mecanum.control.settings import (
    AlongPathSettings,
    BackOntoPathSettings,
    EndCorrectionSettings,
    HeadingControlSettings,
    StopSettings,
)


def guidance(e=0.0, kappa=0.0, limit=30.0, slope=0.0, look=5.0, tangent=(1.0, 0.0)):
    t = np.asarray(tangent, float)
    return Guidance(s_in=10.0, remaining_in=50.0, point=np.zeros(2), tangent=t,
                    cross_track_in=e, curvature_per_in=kappa, lookahead_in=look,
                    speed_limit_in_s=limit, speed_limit_slope=slope, heading_target_rad=0.0,
                    heading_rate_rad_s=0.0, end_point=np.array([60.0, 0.0]), segment=0)


def test_split_velocity_is_convergent_plus_transverse():
    vc, vt = split_velocity(np.array([3.0, 4.0, 0.7]), np.array([1.0, 0.0]))
    assert vc == 3.0 and np.allclose(vt, [0.0, 4.0])
    c = np.array([0.6, 0.8])
    vc, vt = split_velocity(np.array([3.0, 4.0]), c)
    assert vc == pytest.approx(5.0) and np.allclose(vt, 0.0)


def test_convergent_direction_leans_back_onto_the_path():
    g = guidance(e=5.0, look=5.0)  # robot 5 in left of a path along +x
    assert np.allclose(g.convergent_direction, [math.sqrt(0.5), -math.sqrt(0.5)])
    assert np.allclose(g.goal, [5.0, 0.0])


def test_back_onto_path_cancels_the_transverse_part_only():
    ctl = BackOntoPath(BackOntoPathSettings(tau_s=0.1), max_accel_in_s2=1e3)
    r = ctl.request(np.array([20.0, 5.0, 0.0]), guidance())
    assert np.allclose(r.accel, [0.0, -50.0, 0.0])  # −v⊥/τ; the convergent 20 in/s is left alone
    assert (r.priority, r.name) == (0, "back_onto_path")
    # on the path, moving along it in a left turn: exactly the centripetal acceleration
    r = ctl.request(np.array([20.0, 0.0, 0.0]), guidance(kappa=0.1))
    assert np.allclose(r.accel, [0.0, 40.0, 0.0])
    # off the path to the left, moving parallel to it: pushed back toward it (−y)
    r = ctl.request(np.array([20.0, 0.0, 0.0]), guidance(e=2.0))
    assert r.accel[1] < 0
    assert np.hypot(*BackOntoPath(BackOntoPathSettings(tau_s=0.01), max_accel_in_s2=80).request(
        np.array([0.0, 50.0, 0]), guidance()).accel[:2]) == pytest.approx(80.0)


def test_along_path_speeds_up_and_brakes_toward_the_limit():
    ctl = AlongPath(AlongPathSettings(tau_s=0.1), max_accel_in_s2=85, max_brake_in_s2=60)
    up = ctl.request(np.array([10.0, 0.0, 0.0]), guidance(limit=15.0))
    assert np.allclose(up.accel, [50.0, 0.0, 0.0]) and up.priority == 1
    assert ctl.request(np.array([10.0, 0, 0]), guidance(limit=40.0)).accel[0] == 85.0
    assert ctl.request(np.array([30.0, 0, 0]), guidance(limit=10.0)).accel[0] == -60.0
    # the limit's slope is fed forward: at the limit on a braking curve, it brakes
    at = ctl.request(np.array([20.0, 0, 0]), guidance(limit=20.0, slope=-2.0))
    assert at.accel[0] == pytest.approx(-40.0)


def test_heading_is_a_separate_pd():
    ctl = Heading(HeadingControlSettings(omega_n_rad_s=8.0, zeta=1.0, max_accel_rad_s2=50.0))
    r = ctl.request(0.0, 0.0, 0.1)
    assert np.allclose(r.accel, [0, 0, 6.4])
    assert ctl.request(0.0, 1.0, 0.0, 1.0).accel[2] == 0.0  # on target, at the target's rate
    assert ctl.request(3.1, 0.0, -3.1).accel[2] > 0  # the short way round (wrap)
    assert Heading(HeadingControlSettings(max_accel_rad_s2=5.0)).request(0.0, 0.0, 1.0).accel[2] == 5.0


def test_end_correction_drives_onto_the_end_point_and_rests_there():
    ctl = EndCorrection(EndCorrectionSettings(tau_s=0.1, gain_per_s=4.0, brake_in_s2=60.0),
                        max_speed_in_s=40, max_accel_in_s2=1e3)
    end = np.array([10.0, 0.0])
    r = ctl.request(np.array([10.0, -1.0, 0.0]), np.zeros(3), end)  # 1 in sideways off
    assert np.allclose(r.accel[:2], [0.0, 40.0]) and r.priority == 0
    assert np.allclose(ctl.request(np.r_[end, 0.0], np.zeros(3), end).accel, 0.0)
    # far away, the approach speed is the braking curve sqrt(2 b d), capped
    v = ctl.desired_velocity(np.array([0.0, 0.0]), np.array([3.0, 0.0]))
    assert v[0] == pytest.approx(min(math.sqrt(2 * 60 * 3), 4 * 3))


def test_stop_brings_every_velocity_to_zero():
    r = Stop(StopSettings(tau_s=0.1, max_accel_rad_s2=20.0), max_accel_in_s2=85.0).request(
        np.array([3.0, -4.0, 1.0]))
    assert np.allclose(r.accel, [-30.0, 40.0, -10.0])
    big = Stop(StopSettings(tau_s=0.1), max_accel_in_s2=85.0).request(np.array([30.0, 40.0, 0.0]))
    assert np.hypot(*big.accel[:2]) == pytest.approx(85.0)
