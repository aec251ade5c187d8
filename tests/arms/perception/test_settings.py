"""The perception stages' settings: every wrong key, type or value names its full key; scoring."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core.errors import ConfigError
from core.settings import from_config
from stages.adapters.arms.drop_peg import DropPeg
from stages.adapters.arms.intrinsics import Intrinsics
from stages.adapters.arms.perceive import Perceive
from stages.arms.grasping.resting import resting_pose
from stages.arms.perception.scoring import pose_errors, resting_face
from stages.arms.perception.settings import IntrinsicsSettings, PegDropSettings, PerceiveSettings
from tests.conftest import scene_yaml


@pytest.fixture(scope="module")
def scene():
    return scene_yaml("peg_table")


def test_defaults_are_the_shipped_behaviour():
    s = from_config(PerceiveSettings, None, "perception")
    assert (s.prior, s.detector.refine, s.image.noise_std) == ("resting", "ecc", 0.0)
    d = from_config(PegDropSettings, {"region": {"x": [0, 1]}, "start_pose": [0, 0, 1, 1, 0, 0, 0]}, "drop")
    assert d.region.x == (0.0, 1.0) and d.region.height_m == (0.08, 0.18) and len(d.start_pose) == 7
    i = from_config(IntrinsicsSettings, {"flags": ["FIX_K3"], "pose": {"distance_m": [0.4, 0.8]}}, "intr")
    assert i.flags == ("FIX_K3",) and i.pose.distance_m == (0.4, 0.8) and i.pose.tilt_deg == 35.0


@pytest.mark.parametrize("stage, params, needle", [
    (Perceive, {"priorr": "none"}, "pipeline.stages.perception.priorr: not a perceive setting"),
    (Perceive, {"image": {"noise": 1}}, "pipeline.stages.perception.image.noise: not a"),
    (Perceive, {"image": {"gain": 0}}, "pipeline.stages.perception.image.gain=0.0: allowed: > 0"),
    (Perceive, {"image": {"gain": "hi"}}, "pipeline.stages.perception.image.gain='hi': expected a number"),
    (Perceive, {"detector": {"refine": "magic"}}, "pipeline.stages.perception.detector.refine='magic'"),
    (Perceive, {"peg": "board"}, "scene.objects.board.kind"),
    (DropPeg, {"region": {"x": [1.0]}}, "pipeline.stages.drop.region.x: expected 2 values"),
    (DropPeg, {"region": {"y": [0.3, 0.1]}}, "pipeline.stages.drop.region.y=[0.3, 0.1]"),
    (DropPeg, {"region": {"height_m": [0.0, 0.1]}}, "at least 0.05 m above the table"),
    (DropPeg, {"start_pose": [0.5, 0.0, 1.0]}, "pipeline.stages.drop.start_pose: expected 7 values"),
    (Intrinsics, {"views": 0}, "pipeline.stages.intrinsics.views=0: allowed: >= 1"),
    (Intrinsics, {"flags": ["FIX_K9"]}, "pipeline.stages.intrinsics.flags[0]='FIX_K9'"),
    (Intrinsics, {"pose": {"tilt": 3}}, "pipeline.stages.intrinsics.pose.tilt: not a"),
    (Intrinsics, {"images": "/no/such/folder"}, "is not a folder"),
])
def test_a_bad_stage_setting_names_its_full_key(scene, stage, params, needle):
    with pytest.raises(ConfigError) as err:
        stage(scene, **params)
    assert needle in str(err.value)


def test_resting_face_agrees_with_the_grasping_classification():
    for R in Rotation.random(200, random_state=3).as_matrix():
        assert resting_face(R) == resting_pose(R, max_tilt_deg=90.0).face_down


def test_pose_errors():
    T = np.eye(4)
    U = np.eye(4)
    U[:3, :3] = Rotation.from_euler("z", 2.0, degrees=True).as_matrix()
    U[:3, 3] = [0.003, 0.004, 0.0]
    e = pose_errors(U, T)
    assert e.position_m == pytest.approx(0.005) and e.rotation_deg == pytest.approx(2.0)
    assert e.resting_face_correct
    flipped = np.diag([1.0, -1.0, -1.0, 1.0])
    assert not pose_errors(flipped, T).resting_face_correct
