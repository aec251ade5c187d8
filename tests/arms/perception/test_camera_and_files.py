"""Camera model, image effects and the calibration file."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ConfigError
from stages.arms.perception.calibration import Calibration, load_calibration, save_calibration
from stages.arms.perception.camera import CameraModel, ImageEffects, SceneCamera
from tests.arms.perception.scenes import build


def test_camera_model_matches_the_renderer_projection(tmp_path):
    from hardware.render import project_points

    model, data = build(tmp_path, camera_pos=(0.4, 0.1, 0.5), lookat=(0, 0, 0))
    cm = CameraModel.from_mujoco(model, data, "cam")
    pts = np.random.default_rng(0).uniform(-0.1, 0.1, (20, 3))
    assert np.allclose(cm.project(pts), project_points(model, data, "cam", pts), atol=1e-9)
    assert np.allclose(cm.T_world_cam @ cm.T_cam_world, np.eye(4))


def test_image_effects(tmp_path):
    img = np.full((40, 60, 3), 100, np.uint8)
    img[:, 30:] = 200
    assert np.array_equal(ImageEffects().apply(img), img)
    with pytest.raises(ValueError, match="rng"):
        ImageEffects(noise_std=2).apply(img)
    noisy = ImageEffects(noise_std=5).apply(img, np.random.default_rng(0)).astype(float)
    assert 3 < np.std(noisy[:, :25] - 100) < 7
    blurred = ImageEffects(blur_sigma_px=2).apply(img)
    assert 100 < blurred[20, 30, 0] < 200
    assert ImageEffects(gain=2.0).apply(img)[0, 0, 0] == 200
    with pytest.raises(ConfigError, match=r"image\.sigma: not an? .* setting; allowed: \['noise_std'"):
        ImageEffects.from_config({"sigma": 1})
    with pytest.raises(ConfigError, match=r"image\.noise_std=-1\.0: allowed: >= 0"):
        ImageEffects.from_config({"noise_std": -1})
    # lighting is applied in the scene, and restored after the frame
    model, data = build(tmp_path, camera_pos=(0.4, 0.0, 0.4), lookat=(0, 0, 0))
    before = model.light_diffuse.copy()
    with SceneCamera(model, "cam", ImageEffects(lighting_scale=0.3)) as cam:
        dark = cam.render(data)
        bright = cam.render(data, clean=True)
    assert np.array_equal(model.light_diffuse, before)
    assert dark.mean() < bright.mean()


def test_a_burst_of_frames_averages_the_noise_down(tmp_path):
    model, data = build(tmp_path, camera_pos=(0.4, 0.0, 0.4), lookat=(0, 0, 0))
    with SceneCamera(model, "cam", ImageEffects(noise_std=4.0)) as cam:
        clean = cam.render(data, clean=True).astype(float)
        one = cam.render(data, np.random.default_rng(0)).astype(float) - clean
        nine = cam.render(data, np.random.default_rng(0), frames=9).astype(float) - clean
    mid = (clean > 20) & (clean < 235)       # no clipping at black or white
    one, nine = one[mid], nine[mid]
    assert mid.sum() > 1000
    assert 3.5 < np.std(one) < 4.5
    assert 1.0 < np.std(nine) < 1.6          # 4 / sqrt(9), with the 8-bit rounding of the mean
    assert abs(np.mean(nine)) < 0.05         # unbiased


def test_calibration_file_round_trip(tmp_path):
    T = np.eye(4)
    T[:3, 3] = [1.3, 0.0, 1.45]
    cal = Calibration(np.array([[1000.0, 0, 640], [0, 1001.0, 480], [0, 0, 1]]),
                      np.array([0.01, -0.02, 0.0, 0.0, 0.0]), (1280, 960), T,
                      {"left": np.linspace(-0.01, 0.01, 7), "right": np.zeros(7)},
                      {"left": [f"left_joint{i}" for i in range(1, 8)],
                       "right": [f"right_joint{i}" for i in range(1, 8)]},
                      source_run="runs/calibrate/x", metrics={"residual_rms_m": 1.5e-4})
    path = save_calibration(tmp_path / "calibration.yaml", cal)
    text = path.read_text()
    assert text.startswith("%YAML") and "camera_matrix: !!opencv-matrix" in text
    back = load_calibration(path)
    assert np.allclose(back.camera_matrix, cal.camera_matrix)
    assert np.allclose(back.T_world_cam, T)
    assert np.allclose(back.joint_offsets("left"), cal.joint_offsets_rad["left"])
    assert back.joint_names["right"][6] == "right_joint7"
    assert back.source_run == "runs/calibrate/x" and back.date
    assert back.metrics == {"residual_rms_m": pytest.approx(1.5e-4)}
    with pytest.raises(ConfigError, match="no joint offsets for arm 'middle'"):
        back.joint_offsets("middle")
    cm = CameraModel.from_calibration(path)
    assert (cm.width, cm.height) == (1280, 960) and np.allclose(cm.dist[:2], [0.01, -0.02])
    with pytest.raises(ConfigError, match="no such file"):
        load_calibration(tmp_path / "missing.yaml")
    (tmp_path / "junk.yaml").write_text("hello: [1, 2\n")
    with pytest.raises(ConfigError):
        load_calibration(tmp_path / "junk.yaml")
