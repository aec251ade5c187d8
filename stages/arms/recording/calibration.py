"""The calibrations (``calibrate``'s hand plates, ``calibrate_peg``), for the recording: every look
at a spot (the image, the tags found — green used, red not — and the target's pose fitted from
them), each spot's verdict, the robot and the peg posed by the physics states (``calibrate_peg``),
and the fitted camera beside the true one.

Entity paths (time: the simulation's clock)::

    world/camera, world/camera/image/...    the true camera, each spot's image (JPEG) with its tags
    world/peg_estimate, world/plate_estimate   the target's pose seen at the spot
    calibration/log                          each spot: seen (tags, reprojection) or rejected (why)
    world/executed/<body>                    calibrate_peg: the robot and the peg, 30 Hz
    world/camera_fit, world/camera_fit/image the fitted camera pose and its frustum (static)
    calibration/fit                          the fit's figures (a note)
"""

from __future__ import annotations

import numpy as np

from core.recording import Recorder
from core.se3 import matrix_to_quat
from stages.arms.recording.motion import record_robot_motion, thin
from stages.arms.recording.perception import record_camera, record_look

SPOT_JPEG_QUALITY = 90   # a calibration looks at dozens of spots: lossless images would be ~3 MB each
STATE_RATE_HZ = 30.0


class SpotViewRecorder:
    """``on_view`` of a calibration procedure: records each :class:`~stages.arms.calibration.spots.SpotView`
    as it comes (the camera once, with the first)."""

    def __init__(self, rec: Recorder, target: str):
        self.rec, self.target, self.views = rec, target, 0

    def __call__(self, view) -> None:
        rec = self.rec
        if not rec.enabled:
            return
        if not self.views:
            record_camera(rec, view.camera)
        self.views += 1
        rec.set_time_s(view.time_s)
        record_look(rec, view.camera, view.layout, view.image, view.estimate, detections=view.detections,
                    target=self.target, jpeg_quality=SPOT_JPEG_QUALITY, reason=view.reason)
        est = view.estimate
        verdict = (f"rejected: {view.reason}" if view.reason is not None else
                   f"seen: tags {sorted(int(i) for i in est.tag_ids)}, {est.reprojection_px:.2f} px rms")
        rec.text("calibration/log", f"{view.arm} spot {view.spot}: {verdict}",
                 "WARN" if view.reason is not None else "INFO")


def record_calibration_motion(rec: Recorder, world, times_s: np.ndarray, qpos: np.ndarray) -> None:
    """The physics states of a calibration (the robot and the peg), thinned."""
    if not rec.enabled or not len(times_s):
        return
    keep = thin(times_s, STATE_RATE_HZ)
    record_robot_motion(rec, world, "world/executed", np.asarray(times_s)[keep], np.asarray(qpos)[keep],
                        collision=False)


def record_camera_fit(rec: Recorder, camera, T_world_cam_fit: np.ndarray, metrics: dict) -> None:  # noqa: N803
    """The fitted camera (pose and frustum, static) beside the true one, and the fit's figures."""
    if not rec.enabled:
        return
    T = np.asarray(T_world_cam_fit, float)
    rec.transform("world/camera_fit", T[:3, 3], matrix_to_quat(T[:3, :3]), static=True)
    rec.pinhole("world/camera_fit/image", camera.K, camera.width, camera.height)
    rows = "\n".join(f"| {k} | {v:.4g} |" for k, v in metrics.items() if isinstance(v, float))
    rec.document("calibration/fit", "**the fit against the simulator's truth**\n\n| figure | value |\n"
                                    "|---|---|\n" + rows)
