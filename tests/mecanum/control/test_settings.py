"""The follower and teleop groups and the control stages' parameters as typed settings."""

import dataclasses
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from core.settings import from_config, schema, setting_names
from stages.mecanum.control.follow_settings import CompareSettings, FollowSettings
from stages.mecanum.control.settings import FollowerSettings, RoadRunnerParams, SkidaddleSettings
from stages.mecanum.control.teleop_settings import TeleopRunSettings, TeleopSettings

CONF = Path(__file__).resolve().parents[3] / "conf"
FOLLOWERS = sorted(p.stem for p in (CONF / "follower").glob("*.yaml"))


def follower(data):
    return from_config(FollowerSettings, data, "follower")


def test_the_group_holds_the_common_keys_and_both_kinds_keys():
    common = ["kind", "name", "heading", "feedforward"]
    assert setting_names(FollowerSettings) == (common + setting_names(SkidaddleSettings)
                                               + setting_names(RoadRunnerParams))


@pytest.mark.parametrize("name", FOLLOWERS)
def test_every_follower_file_converts_and_only_holds_its_kinds_keys(compose, name):
    cfg = compose(["pipeline=follow", f"follower={name}"])
    s = follower(OmegaConf.to_container(cfg.follower, resolve=True))
    assert s.name == name and s.kind in name
    if s.kind == "skidaddle":
        sk = s.skidaddle()
        assert sk.along_path.max_accel_in_s2 is None  # left to the path's budget
        assert sk.pidf.kP == 0.25 and sk.scheduler.lookahead_max_in == 12.0
    else:
        rr = s.roadrunner()
        assert rr.max_profile_accel_in_s2 == (30.0 if name.endswith("a30") else 50.0)
        assert rr == dataclasses.replace(RoadRunnerParams(), max_profile_accel_in_s2=(
            rr.max_profile_accel_in_s2))
    # what Hydra sees once the schema is registered: the whole file merges into it
    merged = OmegaConf.merge(OmegaConf.structured(schema(FollowerSettings)), cfg.follower)
    assert follower(merged) == s


def test_left_out_groups_and_numbers_are_the_kinds_defaults():
    assert follower({"kind": "skidaddle"}).skidaddle() == SkidaddleSettings()
    assert follower({"kind": "roadrunner"}).roadrunner() == RoadRunnerParams()
    assert follower({"kind": "roadrunner"}).name == "roadrunner"
    summary = follower({"kind": "skidaddle", "pidf": {"kP": 1}}).as_dict()
    assert summary["pidf"] == {"kP": 1.0, "kI": 0.5, "kD": 0.0, "i_limit_v": 1.0,
                               "track_band_in_s": 3.0}
    assert summary["along_path"] == {"tau_s": 0.1, "weight": 1.0, "priority": 1}  # budgets: None
    assert "max_profile_accel_in_s2" not in summary and summary["name"] == "skidaddle"
    # the other kind's settings at their defaults are no error (Hydra's schema fills them in)
    assert follower({"kind": "roadrunner", "pidf": {"kP": 0.25}}).kind == "roadrunner"


@pytest.mark.parametrize("data, named", [
    ({"kind": "skidaddle", "max_profile_accel_in_s2": 30},
     "follower.max_profile_accel_in_s2=30.0: allowed: only with kind: roadrunner"),
    ({"kind": "roadrunner", "along_path": {"tau_s": 0.2}},
     "follower.along_path={'tau_s': 0.2, 'weight': 1.0, 'priority': 1}: allowed: only with kind: "
     "skidaddle (this is roadrunner)"),
    ({"kind": "roadrunner", "min_profile_accel_in_s2": 5},
     "follower.min_profile_accel_in_s2=5.0: allowed: < 0"),
    ({"kind": "skidaddle", "scheduler": {"window_in": -1}},
     "follower.scheduler.window_in=-1.0: allowed: a finite number ≥ 0"),
    ({"kind": "skidaddle", "stop": {"priority": 0.5}}, "follower.stop.priority=0.5: expected an"),
    ({"kind": "skidaddle", "feedforward": {"kX": 1}},
     "follower.feedforward={'kX': 1}: allowed: 'model' or a mapping of ['kS', 'kV', 'kA']"),
    ({"kind": "skidaddle", "feedforward": "learned"}, "follower.feedforward='learned': allowed"),
    ({"kind": "skidaddle", "pidf": {"kp": 1}}, ("follower.pidf.kp: not a",
                                               "allowed: ['kP', 'kI'")),
    ({"kind": "skidaddle", "heading": "sideways"},
     "follower.heading='sideways': allowed: ['tangent', 'constant']"),
])
def test_a_wrong_key_type_or_value_names_the_key(data, named):
    with pytest.raises(ConfigError) as info:
        follower(data)
    for part in (named,) if isinstance(named, str) else named:
        assert part in str(info.value)


def test_the_follow_and_compare_parameters():
    s = from_config(FollowSettings, {"start_offset": [0, 6, 0.3], "odometry_noise": {
        "translation_fraction": 0.01}}, "pipeline.stages.follow")
    assert s.start_offset == (0.0, 6.0, 0.3) and s.odometry_noise.translation_fraction == 0.01
    assert s.animate and s.max_frames == 40
    with pytest.raises(ConfigError, match=r"pipeline.stages.follow.odometry_noise.heading_fraction"
                                          r"=-1.0: allowed"):
        from_config(FollowSettings, {"odometry_noise": {"heading_fraction": -1}},
                    "pipeline.stages.follow")
    with pytest.raises(ConfigError, match=r"pipeline.stages.follow.dt_s=0.0: allowed: a finite"):
        from_config(FollowSettings, {"dt_s": 0}, "pipeline.stages.follow")
    c = from_config(CompareSettings, {"followers": {"a": {"kind": "skidaddle", "name": "x"}}},
                    "pipeline.stages.compare")
    assert not c.animate and c.named_followers()["a"].name == "a"
    with pytest.raises(ConfigError, match=r"pipeline.stages.compare.followers.a.kind"):
        from_config(CompareSettings, {"followers": {"a": {"kind": "rr"}}}, "pipeline.stages.compare")


def test_the_teleop_script_converts_and_expands_its_sticks(compose):
    cfg = compose(["pipeline=teleop"])
    script = from_config(TeleopSettings, OmegaConf.to_container(cfg.teleop, resolve=True),
                         "teleop")
    assert script.name == "demo" and script.buttons["b"] == (36.0, -12.0, 1.5708)
    req = script.requests()
    assert [r[0] for r in req] == sorted(r[0] for r in req)
    sticks = [r for r in req if r[1] == "stick"]
    assert len(sticks) == 3 and sticks[1][0] == pytest.approx(4.2 + 0.25)
    merged = OmegaConf.merge(OmegaConf.structured(schema(TeleopSettings)), cfg.teleop)
    assert from_config(TeleopSettings, merged, "teleop") == script
    stage = OmegaConf.to_container(cfg.pipeline.stages.teleop, resolve=True)
    params = {k: v for k, v in stage.items() if k not in ("_target_", "script", "follower",
                                                          "drive")}
    assert from_config(TeleopRunSettings, params, "pipeline.stages.teleop") == \
        TeleopRunSettings(max_frames=50)


@pytest.mark.parametrize("data, named", [
    ({"events": [{"t_s": 0, "button": "a", "stick": [0, 0, 0]}]},
     "teleop.events[0].button|target|stick=('button', 'stick'): allowed: exactly one"),
    ({"events": [{"t_s": 0, "stick": [2, 0, 0]}]},
     "teleop.events[0].stick=(2.0, 0.0, 0.0): allowed: [x, y, turn] each in [-1, 1]"),
    ({"events": [{"button": "a"}]}, ("teleop.events[0]", "t_s")),
    ({"events": [{"t_s": 0, "target": [0, 0]}]}, "teleop.events[0].target: expected 3 values"),
    ({"duration_s": 0}, "teleop.duration_s=0.0: allowed: a finite number > 0"),
    ({"buttons": {"a": [0, 0, "x"]}}, "teleop.buttons.a[2]='x': expected a number"),
    ({"start": [0, 0, 0]}, ("teleop.start: not a",
                            "allowed: ['name', 'start_pose'")),
])
def test_a_wrong_teleop_script_names_the_entry(data, named):
    with pytest.raises(ConfigError) as info:
        from_config(TeleopSettings, data, "teleop")
    for part in (named,) if isinstance(named, str) else named:
        assert part in str(info.value)
