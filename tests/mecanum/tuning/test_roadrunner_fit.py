import json
from pathlib import Path

import numpy as np
import pytest

from hardware.mecanum.params import DriveParams
from stages.mecanum.control.pidf import model_feedforward
from stages.mecanum.tuning.ramp_logs import DriveFitError, read_ramp_log
from stages.mecanum.tuning.ramp_sim import DeadWheels, RampSettings, drive_in_per_tick, simulate_ramps
from stages.mecanum.tuning.roadrunner_fit import (
    RampFeedforward,
    fit_angular_ramp,
    fit_forward_feedforward,
    fit_forward_ramp,
    fit_lateral_ramp,
    fit_linear_with_scaling,
    inverse_overflow,
)
from tests.mecanum.tuning.helpers import (
    FAST_SIM,
    TRUE_DRIVE,
    angular_log,
    dynamic_forward_log,
    forward_log,
    quasistatic_forward_log,
    trajectory,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "roadrunner"
KS, KV, KA = 0.83, 0.0042, 0.00061  # V, V per tick/s, V per tick/s²


@pytest.fixture(scope="module")
def sim_logs():
    return simulate_ramps(TRUE_DRIVE, FAST_SIM)


@pytest.fixture(scope="module")
def dead_wheel_logs():
    return simulate_ramps(DriveParams(), RampSettings(physics_step_s=0.005, dead_wheels=DeadWheels()))


# -- exact recovery on noise-free linear data ---------------------------------------------------
def test_road_runners_line_recovers_ks_kv_exactly_despite_its_rounding():
    ff = fit_forward_ramp(quasistatic_forward_log(KS, KV))
    assert ff.kS_v == pytest.approx(KS, abs=1e-6) and ff.kV_v_s_per_tick == pytest.approx(KV, rel=1e-6)
    assert ff.rms_residual_v < 1e-9 and ff.samples == 4 * (400 - 3)  # every encoder, first and last two out


def test_positions_alone_give_the_same_line():
    """Without logged velocities the page differentiates the positions (central differences)."""
    t, x, _ = trajectory()
    v_mid = np.r_[np.nan, (x[2:] - x[:-2]) / (t[2:] - t[:-2]), np.nan]
    ff = fit_forward_ramp(forward_log(KS + KV * np.nan_to_num(v_mid), t, x, None))
    assert ff.kS_v == pytest.approx(KS, abs=1e-6) and ff.kV_v_s_per_tick == pytest.approx(KV, rel=1e-6)


@pytest.mark.parametrize("speed_from", ["page", "positions"])
def test_our_least_squares_recovers_ks_kv_ka(speed_from):
    ff = fit_forward_feedforward(dynamic_forward_log(KS, KV, KA), speed_from=speed_from)
    tol = 1e-6 if speed_from == "page" else 1e-2  # positions: a line's slope on a path with jerk
    assert ff.kS_v == pytest.approx(KS, rel=tol)
    assert ff.kV_v_s_per_tick == pytest.approx(KV, rel=tol)
    assert ff.kA_v_s2_per_tick == pytest.approx(KA, rel=tol)
    assert ff.samples > 50


def test_the_pages_rounding_shows_on_noisy_data_only():
    rng = np.random.default_rng(3)
    x = np.linspace(100, 2000, 500)
    y = 0.7 + 0.0043 * x + rng.normal(0, 0.15, x.size)
    rounded, exact = fit_linear_with_scaling(x, y), fit_linear_with_scaling(x, y, precision_digits=None)
    assert rounded.slope != exact.slope
    assert rounded.slope == pytest.approx(exact.slope, rel=0.01)  # 2 decimals of a slope near 1
    assert np.polyfit(x, y, 1)[0] == pytest.approx(exact.slope, rel=1e-9)


def test_inverse_overflow_undoes_the_16_bit_wrap():
    true = np.arange(-200_000, 200_000, 20 * 97, dtype=float)
    raw = (true + 32768) % 65536 - 32768
    estimate = true + np.random.default_rng(0).uniform(-5000, 5000, true.size)
    assert np.array_equal(inverse_overflow(raw, estimate), true)


# -- Road Runner's own page on the stored logs ----------------------------------------------------
def test_the_same_numbers_as_road_runners_own_page():
    expected = json.loads((DATA / "rr_page_outputs.json").read_text())

    def close(a, b):
        return a == pytest.approx(b, rel=1e-12)

    fwd = fit_forward_ramp(read_ramp_log(DATA / "sim-drive-encoders-forward-ramp.json"))
    out = expected["sim-drive-encoders-forward-ramp.json"]["results"]
    assert close(fwd.kV_v_s_per_tick, out["kV"]) and close(fwd.kS_v, out["kS"])
    ang = fit_angular_ramp(read_ramp_log(DATA / "sim-drive-encoders-angular-ramp.json"))
    out = expected["sim-drive-encoders-angular-ramp.json"]["results"]
    assert close(ang.feedforward.kV_v_s_per_tick, out["kV"]) and close(ang.feedforward.kS_v, out["kS"])
    assert close(ang.track_width_ticks, out["track width"])
    page = expected["sim-dead-encoders-angular-ramp.json"]
    ff = RampFeedforward(page["inputs"]["ks"], page["inputs"]["kv"], 0.0, 0)
    dead = fit_angular_ramp(read_ramp_log(DATA / "sim-dead-encoders-angular-ramp.json"), ff)
    assert close(dead.track_width_ticks, page["results"]["track width"])
    assert all(map(close, dead.par_y_ticks, page["results"]["par y-positions"]))
    assert all(map(close, dead.perp_x_ticks, page["results"]["perp x-positions"]))
    page = expected["sim-dead-encoders-lateral-ramp.json"]
    lat = fit_lateral_ramp(read_ramp_log(DATA / "sim-dead-encoders-lateral-ramp.json"),
                           page["inputs"]["inPerTick"], ff)
    assert close(lat.lateral_in_per_tick, page["results"]["lateral in per tick"])


# -- on the simulator's logs ----------------------------------------------------------------------
def test_road_runner_style_gains_agree_with_the_models_feedforward(sim_logs):
    """kV ≈ V_rated / wheel free speed; kS, kA as model_feedforward derives them from the physics."""
    ipt, model = drive_in_per_tick(TRUE_DRIVE), model_feedforward(TRUE_DRIVE)
    rr_ks, rr_kv, _ = fit_forward_ramp(sim_logs["forward-ramp"]).per_inch(ipt)
    assert rr_kv == pytest.approx(model.kV, rel=0.01)
    # the page's line is quasi-static: its kS also carries kA × the ramp's steady acceleration
    ramp_accel = TRUE_DRIVE.battery_voltage_v * 0.1 / model.kV
    assert model.kS < rr_ks < model.kS + 1.2 * model.kA * ramp_accel
    ks, kv, ka = fit_forward_feedforward(sim_logs["forward-ramp"]).per_inch(ipt)
    assert (ks, kv, ka) == (pytest.approx(model.kS, rel=0.03), pytest.approx(model.kV, rel=0.01),
                            pytest.approx(model.kA, rel=0.03))
    ang = fit_angular_ramp(sim_logs["angular-ramp"])
    assert ang.feedforward.per_inch(ipt)[1] == pytest.approx(model.kV, rel=0.01)
    assert ang.track_width_ticks * ipt == pytest.approx(TRUE_DRIVE.k_in, rel=0.01)


def test_dead_wheel_pages_on_the_simulator(dead_wheel_logs):
    dw, drive = DeadWheels(), DriveParams()
    ff = fit_forward_ramp(dead_wheel_logs["forward-ramp"])
    assert ff.per_inch(dw.in_per_tick)[1] == pytest.approx(model_feedforward(drive).kV, rel=0.01)
    ang = fit_angular_ramp(dead_wheel_logs["angular-ramp"], ff)
    # a parallel wheel at y reads vx − ω·y, the perpendicular one at x reads vy + ω·x
    assert np.allclose(np.array(ang.par_y_ticks) * dw.in_per_tick, [-y for y in dw.par_y_in], rtol=0.01)
    assert ang.perp_x_ticks[0] * dw.in_per_tick == pytest.approx(dw.perp_x_in, rel=0.01)
    # for type "mecanum" the dead-wheel page doubles the wheel speed: about 2 k, not k (see the report)
    assert ang.track_width_ticks * dw.in_per_tick == pytest.approx(2 * drive.k_in, rel=0.1)
    lat = fit_lateral_ramp(dead_wheel_logs["lateral-ramp"], dw.in_per_tick, ff)
    assert lat.lateral_multiplier(dw.in_per_tick) == pytest.approx(1.0, abs=0.02) and lat.warning is None


def test_what_the_pages_refuse(sim_logs):
    with pytest.raises(DriveFitError, match="needs a perpendicular dead wheel"):
        fit_lateral_ramp(sim_logs["lateral-ramp"], 0.02, RampFeedforward(1.0, 0.004, 0.0, 0))
    n = 40
    tilted = angular_log((np.linspace(0, 3, n), np.zeros(n), np.linspace(0, 2, n)))
    with pytest.raises(DriveFitError, match=r"more rotation about the \+x-axis than the \+z-axis"):
        fit_angular_ramp(tilted, RampFeedforward(1.0, 0.004, 0.0, 0))
    with pytest.raises(DriveFitError, match="needs the forward ramp's kS and kV"):
        fit_angular_ramp(angular_log((np.zeros(n), np.zeros(n), np.linspace(0, 2, n))))
