"""Perception and calibration: tag layouts, camera models, the peg's pose, ChArUco intrinsics,
the joint fit of camera pose and joint zero offsets, and the saved calibration file.

OpenCV and MuJoCo are imported inside the functions that use them.
"""

from core.se3 import invert, rotation_angle_deg
from core.tag_layouts import Tag, TagLayout, layout_from_config, peg_layout, plate_layout
from stages.arms.perception.calibration import (
    Calibration,
    CalibrationFile,
    load_calibration,
    save_calibration,
)
from stages.arms.perception.camera import CameraModel, ImageEffects, SceneCamera
from stages.arms.perception.detection import TagDetections, TagDetector
from stages.arms.perception.extrinsics import fit_extrinsics, observability
from stages.arms.perception.extrinsics_model import Observation
from stages.arms.perception.extrinsics_result import ExtrinsicsFit
from stages.arms.perception.intrinsics import (
    IntrinsicsResult,
    calibrate_intrinsics,
    load_images,
    render_board_views,
)
from stages.arms.perception.peg_pose import (
    PoseEstimate,
    PoseEstimator,
    draw_overlay,
    estimate_pose,
    resting_prior,
)

__all__ = [
    "Calibration", "CalibrationFile", "CameraModel", "ExtrinsicsFit", "ImageEffects",
    "IntrinsicsResult", "Observation", "PoseEstimate", "PoseEstimator", "SceneCamera", "Tag",
    "TagDetections", "TagDetector", "TagLayout", "calibrate_intrinsics", "draw_overlay",
    "estimate_pose", "fit_extrinsics", "invert", "layout_from_config", "load_calibration",
    "load_images", "observability", "peg_layout", "plate_layout", "render_board_views",
    "resting_prior", "rotation_angle_deg", "save_calibration",
]
