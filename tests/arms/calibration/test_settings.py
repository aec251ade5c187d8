"""The calibrations' settings: every key of the pipelines' YAML read, wrong ones named by their full key."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from core.settings import from_config
from stages.adapters.arms.peg_extrinsics import PegExtrinsics
from stages.adapters.arms.plate_extrinsics import PlateExtrinsics
from stages.arms.calibration.scoring import peg_hidden_offsets_deg, plate_hidden_offsets_rad
from stages.arms.calibration.settings import PLATE_REGIONS, PlateCalibrationSettings, SpotRegion
from stages.arms.execution.settings import HardwareSettings
from stages.graph import build_graph, instantiate

KEY = r"pipeline\.stages\.extrinsics\."
REGIONS = {a: {"center": [0.6, 0], "size": [0.1, 0.1]} for a in ("left", "right")}


def test_peg_settings_name_the_wrong_key():
    with pytest.raises(ConfigError, match=KEY + r"region.*none for \['right'\]"):
        PegExtrinsics({}, arms=["left", "right"], region={"left": {"center": [0.6, 0.0], "size": [0.1, 0.1]}})
    with pytest.raises(ConfigError, match=KEY + r"fit\.grasp_knots.*revisit_every >= 1"):
        PegExtrinsics({}, region=REGIONS, fit={"grasp_knots": True}, revisit_every=0)
    with pytest.raises(ConfigError, match=KEY + r"fit\.grasp_knots.*set one"):
        PegExtrinsics({}, region=REGIONS, fit={"grasp_knots": True, "grasp_creep": True}, revisit_every=1)
    for key, value, allowed in (("frames", 0, ">= 1"), ("seat_swings", -1, ">= 0"), ("regrasps", -1, ">= 0"),
                                ("max_revisit_shift_px", 0, "> 0"), ("revisit_every", -1, ">= 0"),
                                ("hold_noslip_iterations", -1, ">= 0"), ("seat_opening_m", 0.0, "> 0"),
                                ("seat_swing_rad", 2.0, r"\(0, 1\.5\]")):
        with pytest.raises(ConfigError, match=KEY + key + "=.*allowed: .*" + allowed):
            PegExtrinsics({}, region=REGIONS, **{key: value})
    with pytest.raises(ConfigError, match=KEY + r"grid=\[1, 2\].*at least 3 spots"):
        PegExtrinsics({}, grid=[1, 2], region=REGIONS)
    with pytest.raises(ConfigError, match=KEY + r"fit\.lose: not a .* setting; allowed: .*'loss'"):
        PegExtrinsics({}, region=REGIONS, fit={"lose": "cauchy"})
    with pytest.raises(ConfigError, match=KEY + r"fit\.grasp_free\[1\]='qx'"):
        PegExtrinsics({}, region=REGIONS, fit={"grasp_free": ["tx", "qx"]})
    with pytest.raises(ConfigError, match=KEY + r"reset\.speed: not a reset setting"):
        PegExtrinsics({}, region=REGIONS, reset={"speed": 1.0})
    with pytest.raises(ConfigError, match=r"hardware\.speedy: not a hardware setting"):
        PegExtrinsics({}, hardware={"speedy": 1.0}, region=REGIONS)


def test_peg_fit_options_are_fit_extrinsics_defaults_unless_set():
    fit = PegExtrinsics({}, region=REGIONS, fit={"loss": "cauchy", "f_scale": 1}).settings.fit
    assert fit.options() == {"residual": "corners", "loss": "cauchy", "f_scale": 1.0,
                             "rotation_weight_m": 0.05, "depth_weight": 1.0, "observability_threshold": 0.02}
    assert fit.grasp_options() == {**fit.options(), "grasp_free": ("tx", "tz", "ry"), "grasp_creep": False}


def test_plate_settings_merge_the_default_regions_and_check_targets():
    left = {"center": [0.5, 0.2], "size": [0.1, 0.1]}
    s = from_config(PlateCalibrationSettings, {"region": {"left": left}}, "x")
    assert s.regions == {"left": SpotRegion((0.5, 0.2), (0.1, 0.1)), "right": PLATE_REGIONS["right"]}
    assert s.arm_targets == {"left": "left_hand_tags", "right": "right_hand_tags"}
    with pytest.raises(ConfigError, match=r"x\.targets=.*none for \['right'\]"):
        from_config(PlateCalibrationSettings, {"targets": {"left": "plate"}}, "x")
    with pytest.raises(ConfigError, match=r"x\.region.*none for \['middle'\]"):
        from_config(PlateCalibrationSettings, {"arms": ["left", "middle"]}, "x")
    with pytest.raises(ConfigError, match=r"x\.pitch_deg: expected 2 values"):
        from_config(PlateCalibrationSettings, {"pitch_deg": [1, 2, 3]}, "x")
    with pytest.raises(ConfigError, match=r"x\.fit\.grasp_creep: not a fit setting"):
        from_config(PlateCalibrationSettings, {"fit": {"grasp_creep": True}}, "x")


def test_hidden_offsets_given_or_drawn():
    robot = SimpleNamespace(arms=[SimpleNamespace(name="left", dof=7), SimpleNamespace(name="right", dof=7)])
    robot.arm = {a.name: a for a in robot.arms}.get
    given = peg_hidden_offsets_deg(HardwareSettings(joint_offsets_deg={"left": (0.5,) * 7}), robot, 1.0, None)
    assert given == {"left": [0.5] * 7, "right": [0.0] * 7}
    drawn = peg_hidden_offsets_deg(HardwareSettings(), robot, 1.0, np.random.default_rng(0))
    assert np.allclose(drawn["left"], np.random.default_rng(0).uniform(-1, 1, 7))
    offsets = {"left": [0.1] * 7, "right": [0.2] * 6}
    plate = from_config(PlateCalibrationSettings, {"hidden_offsets_deg": offsets}, "x")
    with pytest.raises(ConfigError, match=r"hidden_offsets_deg\.right must list 7 values"):
        plate_hidden_offsets_rad(plate, robot, None)


@pytest.mark.parametrize("pipeline", ["calibrate", "calibrate_peg"])
def test_the_pipelines_extrinsics_stage_reads_every_key(compose, pipeline):
    cfg = compose([f"pipeline={pipeline}"])
    graph = build_graph(OmegaConf.to_container(cfg.pipeline.stages, resolve=True))
    stage = instantiate(next(n for n in graph.nodes if n.name == "extrinsics"))
    assert isinstance(stage, PegExtrinsics if pipeline == "calibrate_peg" else PlateExtrinsics)
    s = stage.settings
    if pipeline == "calibrate_peg":
        assert (s.fit.loss, s.fit.f_scale, s.frames, s.seat_swings, s.regrasps) == ("cauchy", 0.5, 8, 6, 2)
        assert s.region["right"] == SpotRegion((0.63, -0.06), (0.2, 0.2))
        assert s.reset.acceleration_scale == 0.3 and s.camera.name == "scene_camera"
    else:
        assert (s.fit.residual, s.fit.loss, s.plan_padding_m, s.hidden_offsets_deg) == ("corners", "soft_l1",
                                                                                        0.018, None)
        assert set(stage.layouts) == {"left", "right"}


def test_peg_calibration_arms_default_to_the_cells_hold_regions():
    """``arms: null`` (the pipeline's default): every arm the cell gives a hold region; a region left
    null (a cell for a one-arm robot over reset_cell's two) is no arm's."""
    one = {"arm": {"center": [0.33, 0.05], "size": [0.1, 0.1]}}
    stage = PegExtrinsics({}, arms=None, region={"left": None, "right": None, **one})
    assert stage.settings.arms == ("arm",) and list(stage.settings.region) == ["arm"]
    assert stage.settings.seat_swings == 0   # no form-fit studs in this (empty) scene: nothing to seat
