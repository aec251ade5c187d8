"""Bring-up settings: the pipeline config's keys and defaults, and errors naming the full key."""

from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from stages.arms.execution.bringup_settings import (
    STEP_KEYS,
    BringUpSettings,
    CancelSettings,
    FullSpeedSettings,
    MotionSettings,
    load_joint_offsets,
)

CONF = Path(__file__).resolve().parents[3] / "conf"


def test_the_pipeline_config_gives_the_defaults():
    stage = OmegaConf.to_container(OmegaConf.load(CONF / "pipeline/bringup.yaml"))["stages"]["bringup"]
    cfg = {k: v for k, v in stage.items() if k not in ("_target_", "hardware", "treat_as_real", "inputs")}
    cfg["rate_hz"] = 125
    assert BringUpSettings.from_config(cfg) == BringUpSettings()


def test_a_step_given_in_part_keeps_that_steps_own_defaults():
    s = BringUpSettings.from_config({"full_speed": {"max_send_latency_s": 0.2}, "cancel": None,
                                     "synchronized": {"max_start_skew_s": 1}})
    assert s.full_speed == FullSpeedSettings(max_send_latency_s=0.2)
    assert s.full_speed.speed_fraction == 1.0 and s.full_speed.max_tracking_error_rad == 0.03
    assert s.cancel == CancelSettings()
    assert s.synchronized == MotionSettings(max_start_skew_s=1.0)
    assert s.step_confirmed("each_arm") is False
    assert BringUpSettings.from_config({"each_arm": {"confirm": True}}).step_confirmed("each_arm")
    assert all(BringUpSettings.from_config({"confirm": True}).step_confirmed(k) for k in STEP_KEYS)


def test_per_arm_vectors_become_tuples():
    s = BringUpSettings.from_config({"deltas_rad": {"left": [0, 0.1]}, "known_pose": None})
    assert s.deltas_rad == {"left": (0.0, 0.1)} and s.known_pose is None


@pytest.mark.parametrize("cfg, named", [
    ({"speed_frac": 0.1}, "pipeline.stages.bringup.speed_frac: not a bring up setting; allowed: ["),
    ({"config_prefix": "x"}, "pipeline.stages.bringup.config_prefix: not a bring up setting"),
    ({"speed_fraction": 0}, "pipeline.stages.bringup.speed_fraction=0.0: allowed: in (0, 1]"),
    ({"amplitude_rad": -0.1}, "pipeline.stages.bringup.amplitude_rad=-0.1: allowed: a finite number > 0"),
    ({"rate_hz": float("inf")}, "pipeline.stages.bringup.rate_hz=inf: allowed: a finite number > 0"),
    ({"confirm": "yes"}, "pipeline.stages.bringup.confirm='yes': expected true or false"),
    ({"deltas_rad": {"left": [0, "a"]}}, "pipeline.stages.bringup.deltas_rad.left[1]='a': expected a number"),
    ({"synchronized": {"max_start_skew_s": 0}},
     "pipeline.stages.bringup.synchronized.max_start_skew_s=0.0: allowed: a finite number > 0"),
    ({"synchronized": {"max_skew_s": 0.1}},
     "pipeline.stages.bringup.synchronized.max_skew_s: not a motion setting; allowed: ['speed_fraction'"),
    ({"cancel": {"at_fraction": 1}}, "pipeline.stages.bringup.cancel.at_fraction=1.0: allowed: in (0, 1)"),
    ({"full_speed": {"speed_fraction": 2}},
     "pipeline.stages.bringup.full_speed.speed_fraction=2.0: allowed: in (0, 1] or null"),
    ({"joint_zeros": {"samples": 0}},
     "pipeline.stages.bringup.joint_zeros.samples=0: allowed: an integer >= 1"),
    ({"connection": 3}, "pipeline.stages.bringup.connection: expected a mapping"),
])
def test_a_wrong_key_type_or_value_names_the_full_key(cfg, named):
    with pytest.raises(ConfigError) as info:
        BringUpSettings.from_config(cfg)
    assert named in str(info.value)


def test_the_calibration_offsets_from_a_mapping_or_a_file(tmp_path):
    arms = {"left": 2, "right": 2}
    assert load_joint_offsets(None, arms) is None
    out = load_joint_offsets({"joint_offsets_rad": {"left": [0.1, 0.2]}}, arms)
    assert np.allclose(out["left"], [0.1, 0.2]) and np.allclose(out["right"], 0.0)
    path = tmp_path / "cal.yaml"
    path.write_text("right: [0.0, -0.1]\n")
    assert np.allclose(load_joint_offsets(str(path), arms)["right"], [0.0, -0.1])
    with pytest.raises(ConfigError, match="names arm"):
        load_joint_offsets({"middle": [0, 0]}, arms)
    with pytest.raises(ConfigError, match="must be 2 finite numbers"):
        load_joint_offsets({"left": [0]}, arms)
    with pytest.raises(ConfigError, match="does not exist"):
        load_joint_offsets(str(tmp_path / "missing.yaml"), arms)
