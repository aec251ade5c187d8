import math

import pytest

from core.errors import ConfigError
from hardware.mecanum.params import DriveParams
from stages.mecanum.paths.limits import PathLimits


def test_unknown_keys_and_bad_values_are_named():
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['wheel_diameter_in'\]; allowed: "
                                          r"\['name', 'mass_kg'"):
        DriveParams.from_dict({"wheel_diameter_in": 4})
    with pytest.raises(ConfigError, match="drive.mass_kg must be positive"):
        DriveParams.from_dict({"mass_kg": -1})
    with pytest.raises(ConfigError, match="finite number"):
        DriveParams.from_dict({"gear_ratio": "fast"})
    with pytest.raises(ConfigError, match="zero_power_behavior"):
        DriveParams.from_dict({"zero_power_behavior": "coast"})
    with pytest.raises(ConfigError, match="inside the footprint"):
        DriveParams.from_dict({"track_width_in": 20})
    assert DriveParams.from_dict({"rolling_friction_coefficient": 0}).rolling_friction_coefficient == 0


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
