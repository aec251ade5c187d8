import math
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from core.errors import ConfigError
from core.settings import from_config, schema
from hardware.mecanum.params import DriveParams
from stages.mecanum.paths.limits import PathLimits


def drive(data):
    return from_config(DriveParams, data, "drive")


@pytest.mark.parametrize("data, named", [
    ({"wheel_diameter_in": 4}, ("drive.wheel_diameter_in: not a", "allowed: ['name', 'mass_kg'")),
    ({"mass_kg": -1}, "drive.mass_kg=-1.0: allowed: a finite number > 0"),
    ({"gear_ratio": "fast"}, "drive.gear_ratio='fast': expected a number"),
    ({"zero_power_behavior": "coast"}, "drive.zero_power_behavior='coast': allowed: ['brake', "
                                       "'float']"),
    ({"track_width_in": 20}, "drive.track_width_in=20.0: allowed: ≤ width_in (18.0): the wheels "
                             "sit inside the footprint"),
    ({"rolling_friction_coefficient": -0.1}, "drive.rolling_friction_coefficient=-0.1"),
])
def test_unknown_keys_and_bad_values_are_named(data, named):
    with pytest.raises(ConfigError) as info:
        drive(data)
    for part in (named,) if isinstance(named, str) else named:
        assert part in str(info.value)


def test_the_drive_group_converts():
    conf = Path(__file__).resolve().parents[3] / "conf" / "drive"
    for f in conf.glob("*.yaml"):
        data = yaml.safe_load(f.read_text())
        assert drive(data) == DriveParams()  # the defaults are this robot's
        merged = OmegaConf.merge(OmegaConf.structured(schema(DriveParams)), data)
        assert drive(merged) == DriveParams()
    assert drive({"rolling_friction_coefficient": 0}).rolling_friction_coefficient == 0
    assert drive({"mass_kg": 12}).mass_kg == 12.0 and drive(None) == DriveParams()


def test_derived_figures_follow_from_the_spec_sheet():
    p = DriveParams()
    # 312 rpm on a 104 mm (2.047 in radius) wheel
    assert p.forward_free_speed_in_s == pytest.approx(312 * 2 * math.pi / 60 * 2.047)
    assert p.max_speed_in_s == pytest.approx(p.forward_free_speed_in_s / math.sqrt(2))
    assert p.k_in == pytest.approx((14.5 + 13.0) / 2)
    # traction: μ m g / 2 in every direction (diamond's inscribed circle), over m_eff
    assert p.traction_accel_in_s2 == pytest.approx(0.6 * 13.0 * 386.0886 / 2 / p.effective_mass_kg)
    lim = PathLimits.from_drive(p, accel_fraction=0.5, speed_fraction=1.0)
    assert lim.max_accel_in_s2 == pytest.approx(0.5 * p.traction_accel_in_s2)
    assert lim.max_speed_in_s == lim.motor_speed_in_s == pytest.approx(p.max_speed_in_s)
