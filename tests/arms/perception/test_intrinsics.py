"""ChArUco intrinsics recover a known (simulated) camera; bad views are rejected and counted."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ConfigError, PerceptionError
from hardware.models.charuco import CharucoSpec
from stages.arms.perception.calibration import Calibration, load_calibration, save_calibration
from stages.arms.perception.camera import ImageEffects, SceneCamera
from stages.arms.perception.intrinsics import calibrate_intrinsics, render_board_views
from tests.arms.perception.scenes import BOARD, build


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    model, data = build(tmp_path_factory.mktemp("board"), peg=False, board=True,
                        camera_pos=(0.5, -0.3, 0.5), lookat=(0.0, -0.3, 0.0), fovy=55.0)
    rng = np.random.default_rng(0)
    with SceneCamera(model, "cam", ImageEffects(noise_std=2.0)) as cam:
        images, poses = render_board_views(model, data, cam, "board", 12, rng,
                                           distance_m=(0.35, 0.6), offset=0.2)
        K_true = cam.model_at(data).K
    return images, K_true


def test_calibration_recovers_the_known_camera(views, tmp_path):
    images, K_true = views
    board = CharucoSpec.from_config(BOARD).board()
    res = calibrate_intrinsics(images, board, min_views=8, flags=("FIX_K3",))
    assert len(res.views_used) >= 10
    assert res.rms_px < 0.3
    errs = res.errors_against(K_true)
    assert errs["focal_error_pct"] < 0.5, errs
    assert abs(errs["cx_error_px"]) < 2.0 and abs(errs["cy_error_px"]) < 2.0, errs
    assert np.all(np.abs(res.distortion[:2]) < 0.05)
    # saved and loaded through OpenCV FileStorage
    path = save_calibration(tmp_path / "intrinsics.yaml",
                            Calibration(res.camera_matrix, res.distortion, res.image_size,
                                        metrics={"rms_px": res.rms_px}))
    back = load_calibration(path)
    assert np.allclose(back.camera_matrix, res.camera_matrix)
    assert back.image_size == res.image_size and back.T_world_cam is None
    assert back.metrics["rms_px"] == pytest.approx(res.rms_px)


def test_views_without_the_board_are_rejected_and_too_few_views_fail(views):
    images, _ = views
    board = CharucoSpec.from_config(BOARD).board()
    blank = np.full_like(images[0], 128)
    res = calibrate_intrinsics([*images[:8], blank], board, min_views=8)
    assert res.views_rejected == {"view008": "board not found"}
    assert len(res.views_used) == 8 and res.views_total == 9
    with pytest.raises(PerceptionError, match=r"only 3 of 4 views are usable, need at least 8"):
        calibrate_intrinsics([*images[:3], blank], board, min_views=8)


def test_board_config_is_checked():
    with pytest.raises(ConfigError, match="marker_m < square_m"):
        CharucoSpec.from_config({**BOARD, "marker_m": 0.05})
    with pytest.raises(ConfigError, match=r"board\.colour: not a .* setting; allowed: \['squares'"):
        CharucoSpec.from_config({**BOARD, "colour": 1})
    with pytest.raises(ConfigError, match="unknown marker dictionary"):
        CharucoSpec.from_config({**BOARD, "dictionary": "DICT_NOPE"}).board()
