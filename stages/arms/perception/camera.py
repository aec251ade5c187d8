"""Camera models for perception: intrinsics, distortion, pose; rendering with image effects.

A :class:`CameraModel` is what a pose estimator needs: the OpenCV camera matrix ``K``, the
distortion coefficients, the image size, and the camera's pose in the world ``T_world_cam``
(OpenCV camera frame: +X right, +Y down, +Z forward). It comes from

* the MJCF camera (``CameraModel.from_mujoco``: pinhole from ``fovy`` and the resolution; no
  distortion; the pose the simulator puts it at) — the simulated camera's ground truth; or
* a calibration file (``CameraModel.from_calibration``: the camera matrix, distortion and pose
  a calibration run measured, :mod:`stages.arms.perception.calibration`).

:class:`ImageEffects` degrades rendered images so the detector is not only tested on perfect
ones: lighting scale (all lights' diffuse, applied before rendering), exposure gain, gamma,
Gaussian blur and Gaussian pixel noise (seeded). :class:`SceneCamera` renders a camera of a
MuJoCo model with those effects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from core.se3 import invert
from core.settings import from_config, require
from stages.arms.perception.calibration import Calibration, load_calibration


@dataclass(frozen=True)
class CameraModel:
    """A calibrated (or ideal) camera: K (3x3), distortion (OpenCV order), size, pose in the world."""

    width: int
    height: int
    K: np.ndarray  # noqa: N815
    dist: np.ndarray = field(default_factory=lambda: np.zeros(5))
    T_world_cam: np.ndarray = field(default_factory=lambda: np.eye(4))  # noqa: N815
    name: str = "camera"

    @classmethod
    def from_mujoco(cls, model, data, camera: str = "scene_camera",
                    width: int | None = None, height: int | None = None) -> CameraModel:
        """The MJCF camera: pinhole from fovy at its resolution, pose from ``data`` (after mj_forward)."""
        from hardware.render import camera_intrinsics, camera_pose  # sets MUJOCO_GL on import

        intr = camera_intrinsics(model, camera, width, height)
        return cls(intr.width, intr.height, intr.K, np.zeros(5), camera_pose(model, data, camera),
                   str(camera))

    @classmethod
    def from_calibration(cls, calibration, name: str = "camera") -> CameraModel:
        """From a :class:`stages.arms.perception.calibration.Calibration` (or a path to its file)."""
        cal = calibration if isinstance(calibration, Calibration) else load_calibration(calibration)
        return cls(cal.image_size[0], cal.image_size[1], np.asarray(cal.camera_matrix, float),
                   np.asarray(cal.distortion, float).ravel(), np.asarray(cal.T_world_cam, float),
                   name)

    def with_pose(self, T_world_cam: np.ndarray) -> CameraModel:  # noqa: N803
        return replace(self, T_world_cam=np.asarray(T_world_cam, float))

    def with_intrinsics(self, K: np.ndarray, dist: np.ndarray | None = None) -> CameraModel:  # noqa: N803
        return replace(self, K=np.asarray(K, float),
                       dist=np.zeros(5) if dist is None else np.asarray(dist, float).ravel())

    @property
    def T_cam_world(self) -> np.ndarray:  # noqa: N802
        return invert(self.T_world_cam)

    def project(self, points_world: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2) of world points, with distortion."""
        import cv2

        p = np.asarray(points_world, float).reshape(-1, 3)
        T = self.T_cam_world
        rvec, _ = cv2.Rodrigues(T[:3, :3])
        uv, _ = cv2.projectPoints(p, rvec, T[:3, 3], self.K, self.dist)
        return uv.reshape(-1, 2)


# ---------------------------------------------------------------------- image effects
@dataclass(frozen=True)
class ImageEffects:
    """Image degradations; the defaults leave an image unchanged. Also the ``image`` settings of
    the perception stages (``from_config(ImageEffects, cfg, key)``).

    ``noise_std``: Gaussian noise per pixel and channel, in 0..255 grey levels.
    ``blur_sigma_px``: Gaussian blur (defocus / motion smear stand-in), pixels.
    ``gain``: exposure multiplier; ``gamma``: ``out = 255 (in / 255) ** gamma``.
    ``lighting_scale``: multiplies every light's diffuse colour while rendering (scene lighting,
    not a post-process: shading and shadows change with it).
    """

    noise_std: float = 0.0
    blur_sigma_px: float = 0.0
    gain: float = 1.0
    gamma: float = 1.0
    lighting_scale: float = 1.0

    def __post_init__(self):
        for name in ("noise_std", "blur_sigma_px"):
            require(getattr(self, name) >= 0, name, getattr(self, name), ">= 0")
        for name in ("gain", "gamma", "lighting_scale"):
            require(getattr(self, name) > 0, name, getattr(self, name), "> 0")

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | ImageEffects | None, where: str = "image") -> ImageEffects:
        """The effects from a config mapping; a wrong key, type or value names ``where.<key>``."""
        return from_config(cls, cfg, where)

    def apply(self, image: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """The degraded copy of an RGB (or grey) uint8 image (noise needs ``rng``)."""
        import cv2

        img = np.asarray(image, dtype=np.float32)
        if self.gain != 1.0:
            img = img * self.gain
        if self.gamma != 1.0:
            img = 255.0 * (np.clip(img, 0, 255) / 255.0) ** self.gamma
        if self.blur_sigma_px > 0:
            img = cv2.GaussianBlur(img, (0, 0), self.blur_sigma_px)
        if self.noise_std > 0:
            if rng is None:
                raise ValueError("image noise needs a seeded rng")
            img = img + self.noise_std * rng.standard_normal(img.shape, dtype=np.float32)
        return np.clip(np.rint(img), 0, 255).astype(np.uint8)


class SceneCamera:
    """Renders one camera of a MuJoCo model, with :class:`ImageEffects`. Close it when done."""

    def __init__(self, model, camera: str = "scene_camera", effects: ImageEffects | None = None,
                 width: int | None = None, height: int | None = None):
        from hardware.render import OffscreenRenderer, camera_resolution  # sets MUJOCO_GL on import

        self.model = model
        self.camera = camera
        self.effects = effects or ImageEffects()
        self.width, self.height = (width, height) if width and height else camera_resolution(
            model, camera)
        self._renderer = OffscreenRenderer(model)

    def model_at(self, data) -> CameraModel:
        """The true (simulator) camera model at ``data``'s state."""
        return CameraModel.from_mujoco(self.model, data, self.camera, self.width, self.height)

    def render(self, data, rng: np.random.Generator | None = None, clean: bool = False,
               frames: int = 1) -> np.ndarray:
        """An H x W x 3 RGB image; ``clean`` skips the effects. ``frames`` > 1: the mean of a burst
        of that many frames of the same instant, each with its own noise (a camera averaging a
        still scene: the pixel noise falls as 1 / sqrt(frames))."""
        eff = ImageEffects() if clean else self.effects
        diffuse = None
        if eff.lighting_scale != 1.0:
            diffuse = self.model.light_diffuse.copy()
            self.model.light_diffuse[:] = np.clip(diffuse * eff.lighting_scale, 0.0, 1.0)
        try:
            img = self._renderer.render(data, self.camera, self.width, self.height)
        finally:
            if diffuse is not None:
                self.model.light_diffuse[:] = diffuse
        if frames <= 1:
            return eff.apply(img, rng)
        total = np.zeros(img.shape, np.float32)
        for _ in range(int(frames)):
            total += eff.apply(img, rng)
        return np.rint(total / frames).astype(np.uint8)

    def close(self) -> None:
        self._renderer.close()

    def __enter__(self) -> SceneCamera:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
