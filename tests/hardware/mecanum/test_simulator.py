from dataclasses import replace

import numpy as np
import pytest

from hardware.mecanum.params import G_IN_S2, DriveParams
from hardware.mecanum.simulator import MecanumSimulator, OdometryNoise

BASE = DriveParams()
FREE = replace(BASE, rolling_friction_coefficient=0.0, zero_power_behavior="float")


def energy(p, st):
    return (0.5 * p.mass_kg * np.sum(st.velocity[:2] ** 2) + 0.5 * p.yaw_inertia
            * st.velocity[2] ** 2 + 0.5 * p.wheel_inertia * np.sum(st.wheel_speeds_rad_s ** 2))


def test_a_free_robot_keeps_its_momentum():
    sim = MecanumSimulator(FREE, pose=(0, 0, 0.3), velocity=(20, -10, 0), field_size_in=None)
    for _ in range(200):
        st = sim.step([0, 0, 0, 0])
    assert np.allclose(st.velocity, [20, -10, 0], atol=1e-9)
    assert np.allclose(st.pose[:2], [40, -20], atol=1e-7)
    spin = MecanumSimulator(FREE, velocity=(0, 0, 2.0), field_size_in=None)
    for _ in range(100):
        st = spin.step([0, 0, 0, 0])
    assert st.velocity[2] == pytest.approx(2.0, abs=1e-9) and np.allclose(st.pose[:2], 0)
    both = MecanumSimulator(FREE, velocity=(20, -10, 1.5), field_size_in=None)
    e0 = energy(FREE, both.state)
    for _ in range(300):
        st = both.step([0, 0, 0, 0])
    assert energy(FREE, st) == pytest.approx(e0, rel=2e-3)  # no motor, no friction: no loss


def test_stall_torque_acceleration_follows_the_motor_curve():
    p = replace(BASE, friction_coefficient=50.0, rolling_friction_coefficient=0.0)
    sim = MecanumSimulator(p, field_size_in=None)
    m_eff, r = p.effective_mass_kg, p.wheel_radius_in
    a0 = 4 * p.wheel_stall_torque / r / m_eff  # at stall, full voltage
    tau = m_eff * r * r * p.wheel_free_speed_rad_s / (4 * p.wheel_stall_torque)
    vf = p.forward_free_speed_in_s
    st = sim.step([12, 12, 12, 12])
    # first-order response of the motor curve; backward Euler at 1 ms is within h/2τ ≈ 0.4 %
    assert st.acceleration[0] == pytest.approx(vf * (1 - np.exp(-0.01 / tau)) / 0.01, rel=5e-3)
    assert st.acceleration[0] == pytest.approx(a0, rel=0.05)
    for _ in range(99):
        st = sim.step([12, 12, 12, 12])
    assert st.velocity[0] == pytest.approx(vf * (1 - np.exp(-1.0 / tau)), rel=2e-3)
    assert abs(st.velocity[1]) < 1e-9 and abs(st.velocity[2]) < 1e-9
    assert np.all(~st.slipping) and np.all(st.traction_fraction < 0.2)
    assert st.motor_currents_a == pytest.approx([9.2 * (1 - st.velocity[0] / vf)] * 4, rel=1e-6)


def test_traction_limits_each_wheel():
    p = replace(BASE, rolling_friction_coefficient=0.0)
    st = MecanumSimulator(p, field_size_in=None).step([12, 12, 12, 12])
    assert np.all(st.slipping) and np.allclose(st.traction_fraction, 1.0)
    # slipping wheels push μN/√2 each along their rolling direction; the body alone moves
    assert st.acceleration[0] == pytest.approx(p.friction_coefficient * G_IN_S2 / np.sqrt(2),
                                               rel=1e-6)
    gentle = MecanumSimulator(p, field_size_in=None).step([1, 1, 1, 1])
    assert not gentle.slipping.any() and np.all(gentle.traction_fraction < 1)


def test_strafe_brake_float_and_friction():
    strafe = MecanumSimulator(BASE, field_size_in=None)
    for _ in range(50):
        st = strafe.step([-6, 6, -6, 6])
    assert st.velocity[1] > 10 and abs(st.velocity[0]) < 1e-9 and abs(st.velocity[2]) < 1e-9
    speeds = {}
    for mode in ("brake", "float"):
        sim = MecanumSimulator(replace(BASE, zero_power_behavior=mode), velocity=(40, 0, 0),
                               field_size_in=None)
        for _ in range(20):
            st = sim.step([0, 0, 0, 0])
        speeds[mode] = st.velocity[0]
    assert 0 <= speeds["brake"] < speeds["float"] < 40
    # floating, only rolling friction slows it: c_rr·g (over the effective mass)
    decel = (40 - speeds["float"]) / 0.2
    assert decel == pytest.approx(0.09 * G_IN_S2 * BASE.mass_kg / BASE.effective_mass_kg, rel=0.02)


def test_walls_stop_the_robot():
    sim = MecanumSimulator(BASE, pose=(50, 0, 0))
    for _ in range(150):
        st = sim.step([12, 12, 12, 12])
    assert st.wall_contact and st.pose[0] == pytest.approx(72 - 9)
    assert st.velocity[0] == pytest.approx(0, abs=1e-9)


def test_odometry_noise_is_seeded_and_optional():
    def run(noise, seed):
        sim = MecanumSimulator(BASE, noise=noise, seed=seed)
        for _ in range(100):
            st = sim.step([6, 7, 6, 5])
        return st
    clean = run(None, 0)
    assert np.array_equal(clean.measured_pose, clean.pose)
    assert np.array_equal(clean.measured_wheel_speeds_rad_s, clean.wheel_speeds_rad_s)
    noise = OdometryNoise(0.02, 0.02, 0.5)
    a, b, c = run(noise, 1), run(noise, 1), run(noise, 2)
    assert np.array_equal(a.measured_pose, b.measured_pose)
    assert not np.allclose(a.measured_pose, c.measured_pose)
    assert np.allclose(a.pose, clean.pose)  # noise never moves the robot itself
    assert 0 < np.hypot(*(a.measured_pose[:2] - a.pose[:2])) < 5


def test_inputs_are_checked_and_voltages_clipped():
    sim = MecanumSimulator(BASE)
    with pytest.raises(ValueError, match="4 finite volts"):
        sim.step([1, 2, 3])
    st = sim.step([50, 50, 50, 50])
    assert np.allclose(st.wheel_voltages_v, BASE.battery_voltage_v)
    assert st.time_s == pytest.approx(0.01)
