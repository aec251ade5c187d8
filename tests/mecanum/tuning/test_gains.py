"""The one tuning procedure's pieces: gains set at their keys, one run's cost."""

import pytest

from stages.mecanum.tuning.gains import (
    NOT_STOPPED,
    ROADRUNNER_GAINS,
    SKIDADDLE_GAINS,
    current_gains,
    follow_cost,
    with_gains,
)


def test_gains_are_set_at_their_keys_and_the_config_is_left_alone():
    config = {"kind": "skidaddle", "pidf": {"kP": 0.25}}
    out = with_gains(config, SKIDADDLE_GAINS, {"pidf_kP": 0.5, "heading_omega_n_rad_s": 4})
    assert out["pidf"]["kP"] == 0.5 and out["heading_control"]["omega_n_rad_s"] == 4.0
    assert config == {"kind": "skidaddle", "pidf": {"kP": 0.25}}
    rr = with_gains({"kind": "roadrunner"}, ROADRUNNER_GAINS, {"translational_gain": 3})
    assert rr["axial_gain"] == rr["lateral_gain"] == 3.0       # one gain, both directions
    assert current_gains(rr, ROADRUNNER_GAINS)["translational_gain"] == 3.0
    assert current_gains({"kind": "skidaddle"}, SKIDADDLE_GAINS)["pidf_kP"] == 0.25   # the defaults


def test_a_run_costs_its_deviation_end_error_and_time_and_not_stopping_costs_most():
    m = {"stopped": True, "max_deviation_in": 0.5, "end_error_in": 0.1, "time_to_stop_s": 4.0}
    assert follow_cost(m) == pytest.approx(0.5 + 0.1 + 0.4)
    assert follow_cost({**m, "stopped": False}) == NOT_STOPPED
