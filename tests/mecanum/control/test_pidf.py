from dataclasses import replace

import numpy as np
import pytest

from core.errors import ConfigError
from core.settings import from_config
from hardware.mecanum.simulator import MecanumSimulator
from stages.mecanum.control.pidf import Feedforward, WheelPIDF, feedforward_for, model_feedforward
from stages.mecanum.control.settings import FeedforwardGains, PidGains
from tests.mecanum.control.helpers import DRIVE


def test_model_feedforward_drives_the_simulated_motors():
    """kV holds a speed, kA gives an acceleration, kS cancels rolling resistance."""
    ff = model_feedforward(DRIVE)
    sim = MecanumSimulator(DRIVE, velocity=(30.0, 0.0, 0.0), field_size_in=None)
    for _ in range(50):
        st = sim.step(ff.volts(np.full(4, 30.0), np.zeros(4)))
    assert st.velocity[0] == pytest.approx(30.0, abs=0.05)  # cruise: no drift
    sim = MecanumSimulator(DRIVE, velocity=(10.0, 0.0, 0.0), field_size_in=None)
    st = sim.step(ff.volts(np.full(4, 10.0 + 0.5 * 40 * 0.01), np.full(4, 40.0)))
    assert st.acceleration[0] == pytest.approx(40.0, rel=0.02)


def test_battery_compensation_scales_power_not_volts():
    ff = model_feedforward(DRIVE)
    a, b = WheelPIDF(ff, PidGains()), WheelPIDF(ff, PidGains())
    for pid in (a, b):
        pid.reset(np.full(4, 20.0))
    pa, va, _ = a.update(np.full(4, 30.0), np.full(4, 20.0), 0.01, 12.0)
    pb, vb, _ = b.update(np.full(4, 30.0), np.full(4, 20.0), 0.01, 13.5)
    assert np.allclose(va, vb) and np.allclose(pb, pa * 12.0 / 13.5)
    # the same command on a fresh and on a tired battery moves the robot the same way
    out = []
    for volts in (13.5, 11.0):
        drive = replace(DRIVE, battery_voltage_v=volts)
        sim = MecanumSimulator(drive, field_size_in=None)
        pid = WheelPIDF(ff, PidGains())
        pid.reset(np.zeros(4))
        st = sim.state
        for _ in range(60):
            p, _, _ = pid.update(np.full(4, 30.0), st.wheel_speeds_rad_s * drive.wheel_radius_in,
                                 0.01, volts)
            st = sim.step(p * volts)
        out.append(st.velocity[0])
    assert out[0] == pytest.approx(out[1], rel=1e-3)


def test_the_feedback_corrects_what_the_model_misses():
    ff = model_feedforward(DRIVE)
    wrong = Feedforward(0.0, ff.kV, ff.kA)  # no kS: rolling resistance is left to the PID
    sims = []
    for gains in (PidGains(kP=0.0, kI=0.0), PidGains()):
        sim = MecanumSimulator(DRIVE, velocity=(20.0, 0, 0), field_size_in=None)
        pid = WheelPIDF(wrong, gains)
        pid.reset(np.full(4, 20.0))
        st = sim.state
        for _ in range(200):
            p, _, _ = pid.update(np.zeros(4), st.wheel_speeds_rad_s * DRIVE.wheel_radius_in,
                                 0.01, 12.0)
            st = sim.step(p * 12.0)
        sims.append(st.velocity[0])
    assert sims[0] < 10.0 and sims[1] == pytest.approx(20.0, abs=0.4)


def test_feedforward_config_is_checked():
    assert feedforward_for("model", DRIVE) == model_feedforward(DRIVE)
    assert feedforward_for(None, DRIVE) == model_feedforward(DRIVE)
    given = feedforward_for(from_config(FeedforwardGains, {"kS": 0.5}, "f"), DRIVE)
    assert given.kS == 0.5 and given.kV == model_feedforward(DRIVE).kV
    with pytest.raises(ConfigError, match=r"f.kX: not an? .*; allowed: "
                                          r"\['kS', 'kV', 'kA'\]"):
        from_config(FeedforwardGains, {"kX": 1}, "f")
    with pytest.raises(ConfigError, match="kV"):
        Feedforward(0.1, -1.0, 0.0)
