from dataclasses import replace

import numpy as np
import pytest

from core.errors import ConfigError
from hardware.mecanum.kinematics import wheel_matrix
from hardware.mecanum.simulator import MecanumSimulator
from stages.mecanum.control.loop import run_loop
from stages.mecanum.control.pidf import model_feedforward
from stages.mecanum.control.roadrunner import ArcLengthPath, RoadRunnerFollower, build_profile
from stages.mecanum.control.settings import RoadRunnerParams
from stages.mecanum.paths.bezier import BezierChain
from tests.mecanum.control.helpers import DRIVE, HAIRPIN, STRAIGHT

CHAIN = BezierChain.from_control_points(HAIRPIN)


@pytest.mark.parametrize("heading", ["constant", "tangent"])
def test_the_profile_respects_its_own_constraints(heading):
    prm = RoadRunnerParams()
    path = ArcLengthPath(CHAIN)
    prof = build_profile(path, DRIVE, prm, heading)
    assert prof.v[0] == 0.0 and prof.v[-1] == 0.0
    assert np.all(prof.v <= prof.v_cap + 1e-9)
    a = prof.accel
    assert a.max() <= prm.max_profile_accel_in_s2 + 1e-6
    assert a.min() >= prm.min_profile_accel_in_s2 - 1e-6
    _, ang, _ = path.at(prof.s)
    phi = ang - prof.heading
    wheels = (np.c_[np.cos(phi), np.sin(phi), prof.dheading_ds] * prof.v[:, None]) \
        @ wheel_matrix(DRIVE.k_in).T
    assert np.abs(wheels).max() <= prm.max_wheel_vel_in_s + 1e-6
    assert np.max(np.abs(prof.dheading_ds) * prof.v) <= prm.max_ang_vel_rad_s + 1e-6
    # and it is time-optimal in 1-D: some constraint is active almost everywhere
    active = (np.abs(prof.v - prof.v_cap) < 1e-6)
    active[1:] |= np.isclose(a, prm.max_profile_accel_in_s2) | np.isclose(
        a, prm.min_profile_accel_in_s2)
    assert active.mean() > 0.95


def test_the_profile_ignores_centripetal_demand():
    prm = RoadRunnerParams()
    prof = build_profile(ArcLengthPath(CHAIN), DRIVE, prm, "constant")
    centripetal = prof.v ** 2 * np.abs(prof.curvature)
    # the U-turn is planned with far more sideways acceleration than the wheels have
    assert centripetal.max() > 1.5 * DRIVE.traction_accel_in_s2
    # and no grip setting changes the plan: friction is not one of its constraints
    slick = replace(DRIVE, friction_coefficient=0.2)
    assert np.array_equal(build_profile(ArcLengthPath(CHAIN), slick, prm, "constant").v, prof.v)


def test_it_stops_commanding_when_the_profile_ends():
    chain = BezierChain.from_control_points(STRAIGHT)
    f = RoadRunnerFollower(chain, DRIVE, model_feedforward(DRIVE), heading="constant",
                           start_heading=0.0)
    sim = MecanumSimulator(DRIVE, pose=(-30, 0, 0))
    log = run_loop(sim, f, max_time_s=6.0)
    after = log["time_s"] >= f.profile.duration_s
    assert after.any() and np.all(log["power"][after] == 0.0)
    assert set(np.array(log.mode)[after]) == {"idle"}
    assert np.all(log["power"][~after][5:-5].max(axis=1) > 0)
    assert np.hypot(*(log["pose"][-1, :2] - [30, 0])) < 1.0


def test_parameters_are_checked():
    with pytest.raises(ConfigError, match="min_profile_accel_in_s2"):
        RoadRunnerParams(min_profile_accel_in_s2=10.0)
    with pytest.raises(ConfigError, match="max_wheel_vel_in_s"):
        RoadRunnerParams(max_wheel_vel_in_s=0.0)
    with pytest.raises(ConfigError, match="heading"):
        build_profile(ArcLengthPath(CHAIN), DRIVE, RoadRunnerParams(), "sideways")
