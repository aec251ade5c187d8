"""Settings of the perception stages: the peg drop, the peg's pose from the camera, ChArUco intrinsics.

Image effects are :class:`~stages.arms.perception.camera.ImageEffects` itself (a frozen dataclass
with its own checks). Build any of these with ``core.settings.from_config(cls, cfg, key)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.settings import require
from stages.arms.perception.camera import ImageEffects
from stages.arms.perception.detection import RefineMethod
from stages.arms.perception.intrinsics import CalibFlag


def _range(name: str, values: tuple[float, float], unit: str) -> None:
    require(values[0] <= values[1], name, list(values), f"[low, high] with low <= high ({unit})")


@dataclass(frozen=True)
class ReleaseRegion:
    """Where the peg is released: ``x``, ``y`` ranges (world, m) and ``height_m`` above the table top."""

    x: tuple[float, float] = (0.45, 0.75)
    y: tuple[float, float] = (-0.05, 0.4)
    height_m: tuple[float, float] = (0.08, 0.18)

    def __post_init__(self):
        for name in ("x", "y", "height_m"):
            _range(name, getattr(self, name), "m")
        require(self.height_m[0] >= 0.05, "height_m", list(self.height_m),
                "release at least 0.05 m above the table (the peg must not start inside it)")


@dataclass(frozen=True)
class PegDropSettings:
    """The drop stage: the peg released at a seeded random pose in ``region`` (or at ``start_pose``,
    ``[x, y, z, qw, qx, qy, qz]``), then physics for at least ``settle_s`` of rest, at most ``max_s``."""

    peg: str = "peg"
    region: ReleaseRegion = field(default_factory=ReleaseRegion)
    start_pose: tuple[float, float, float, float, float, float, float] | None = None
    settle_s: float = 0.3
    max_s: float = 4.0


@dataclass(frozen=True)
class DetectorSettings:
    """The tag detector: corner refinement, and ``cv2.aruco.DetectorParameters`` fields to override."""

    refine: RefineMethod = "ecc"
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class PerceiveSettings:
    """The perception stage (:class:`~stages.arms.perception.peg_view.PegCamera`).

    ``calibration``: a calibration file whose camera matrix, distortion and pose replace the MJCF
    camera's for the estimate. ``prior``: ``resting`` (the peg lies on the table, one face down —
    resolves single-tag flips) or ``none``. The rest: :func:`~stages.arms.perception.peg_pose.estimate_pose`.
    """

    peg: str = "peg"
    camera: str = "scene_camera"
    image: ImageEffects = field(default_factory=ImageEffects)
    detector: DetectorSettings = field(default_factory=DetectorSettings)
    calibration: str | None = None
    prior: Literal["resting", "none"] = "resting"
    ambiguity_ratio: float = 2.0
    outlier_px: float = 4.0
    max_incidence_deg: float = 65.0


@dataclass(frozen=True)
class BoardPoses:
    """The simulated board poses (:func:`~stages.arms.perception.intrinsics.board_pose_in_front`)."""

    distance_m: tuple[float, float] = (0.45, 0.9)
    offset: float = 0.22        # tangent units off the optical axis
    tilt_deg: float = 35.0
    roll_deg: float = 25.0

    def __post_init__(self):
        _range("distance_m", self.distance_m, "m")


@dataclass(frozen=True)
class IntrinsicsSettings:
    """The intrinsics stage: ``views`` simulated views of ``board`` (or the photos in ``images``),
    views with fewer than ``min_corners`` corners dropped, at least ``min_views`` kept;
    ``flags``: ``cv2.CALIB_*`` names; ``save_views``: how many views are saved with their detections."""

    board: str = "board"
    camera: str = "scene_camera"
    views: int = 30
    images: str | None = None
    min_corners: int = 12
    min_views: int = 8
    flags: tuple[CalibFlag, ...] = ()
    image: ImageEffects = field(default_factory=ImageEffects)
    pose: BoardPoses = field(default_factory=BoardPoses)
    save_views: int = 4

    def __post_init__(self):
        require(self.views >= 1, "views", self.views, ">= 1")
        require(self.images is None or Path(self.images).expanduser().is_dir(), "images", self.images,
                "a folder of board photos (this is not a folder), or null for simulated views")


@dataclass(frozen=True)
class SceneCameraSettings:
    """The scene camera a rig perceives with: its name in the scene, and the image effects."""

    name: str = "scene_camera"
    effects: ImageEffects = field(default_factory=ImageEffects)
