from dataclasses import replace

import pytest
import yaml

from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.mecanum.tuning.drive_fit import fit_drive, write_drive_yaml
from stages.mecanum.tuning.ramp_logs import DriveFitError, read_ramp_log, write_ramp_log
from stages.mecanum.tuning.ramp_sim import DeadWheels, drive_in_per_tick, simulate_ramp
from tests.mecanum.tuning.helpers import FAST_SIM, TRUE_DRIVE

FITTED = ("motor_free_speed_rpm", "motor_stall_torque_nm", "rolling_friction_coefficient", "track_width_in",
          "battery_voltage_v")
# what a team would start from: the right mass, inertia, wheels and wheelbase; wrong motor and friction terms
GUESS = replace(TRUE_DRIVE, name="guess", motor_free_speed_rpm=312.0, motor_stall_torque_nm=2.38,
                rolling_friction_coefficient=0.09, track_width_in=14.0, battery_voltage_v=12.0)


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """The simulator's forward and angular ramps, through Road Runner's JSON files and back."""
    folder = tmp_path_factory.mktemp("ramps")
    logs = {kind: simulate_ramp(kind, TRUE_DRIVE, FAST_SIM) for kind in ("forward-ramp", "angular-ramp")}
    return {kind: read_ramp_log(write_ramp_log(folder / f"{kind}.json", log)) for kind, log in logs.items()}


@pytest.fixture(scope="module")
def fit(logged):
    return fit_drive(logged["forward-ramp"], logged["angular-ramp"], GUESS, drive_in_per_tick(TRUE_DRIVE))


@pytest.mark.parametrize("name", FITTED)
def test_the_fitted_drive_is_within_5_percent_of_the_true_one(fit, name):
    value = fit.value(name)
    assert value.value == pytest.approx(getattr(TRUE_DRIVE, name), rel=0.05)
    assert value.source.startswith(("fit:", "log:")) and value.rms_residual is not None and value.samples > 50


def test_the_rest_is_the_given_config(fit):
    for v in fit.values:
        if v.name not in FITTED:
            assert v.source == "given" and v.value == getattr(GUESS, v.name)
    assert fit.k_in.value == pytest.approx(TRUE_DRIVE.k_in, rel=0.01)
    assert fit.params.name == "guess"
    assert fit.params.motor_free_speed_rpm == fit.value("motor_free_speed_rpm").value


def test_the_angular_ramp_agrees_with_the_fitted_motor(fit):
    """The yaw equation with the forward ramp's torque and friction: small residual, the right inertia."""
    assert fit.angular_check_rms_rad_s2 < 0.1
    assert fit.implied_inertia_kg_m2 == pytest.approx(TRUE_DRIVE.inertia_kg_m2, rel=0.1)


def test_the_yaml_is_a_drive_config_with_sources(fit, tmp_path):
    path = write_drive_yaml(tmp_path / "test_bot.yaml", fit)
    assert [p.name for p in tmp_path.iterdir()] == ["test_bot.yaml"]  # atomic: no temp file left
    read = from_config(DriveParams, yaml.safe_load(path.read_text()), "drive")
    for v in fit.values:  # 6 significant digits
        expected = v.value if isinstance(v.value, str) else pytest.approx(v.value, rel=1e-5)
        assert getattr(read, v.name) == expected
    lines = {ln.split(":")[0]: ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")}
    assert "# fit: forward ramp, RMS" in lines["motor_stall_torque_nm"]
    assert "# fit: angular ramp, RMS" in lines["track_width_in"]
    assert lines["mass_kg"].endswith("# given")


def test_the_drive_fit_needs_drive_encoders_and_a_sane_scale(logged):
    settings = replace(FAST_SIM, duration_s=2.0, dead_wheels=DeadWheels())
    dead = simulate_ramp("angular-ramp", TRUE_DRIVE, settings)
    with pytest.raises(DriveFitError, match="'leftEncPositions'/'rightEncPositions' are empty"):
        fit_drive(logged["forward-ramp"], dead, GUESS, drive_in_per_tick(TRUE_DRIVE))
    with pytest.raises(DriveFitError, match="in_per_tick must be a finite number > 0"):
        fit_drive(logged["forward-ramp"], logged["angular-ramp"], GUESS, 0.0)
