"""What the camera saw, for the recording: the image, the detected tag corners (green: used in the
fit, red: not), the fitted peg projected into the image and posed in the world.

Entity paths::

    world/camera                          the scene camera's pose (static)
    world/camera/image                    its pinhole (static) and each image
    world/camera/image/tags               detected tags' outlines, labelled with their ids
    world/camera/image/tag_corners        their corners
    world/camera/image/peg_fit            the fitted peg's box projected (yellow)
    world/peg_estimate                    the fitted peg pose (a box), world frame
    world/peg_truth                       the simulator's peg pose (a box), where known
    perception/log                        tags used, reprojection error, confidence
"""

from __future__ import annotations

import numpy as np

from core.recording import Primitive, Recorder
from core.se3 import matrix_to_quat

USED, OTHER, FIT, TRUTH = (40, 220, 40), (230, 40, 40), (250, 210, 30), (40, 200, 230)


def record_camera(rec: Recorder, camera, entity: str = "world/camera") -> None:
    """The camera's pose in the world and its intrinsics (static)."""
    if not rec.enabled:
        return
    T = np.asarray(camera.T_world_cam, float)
    rec.transform(entity, T[:3, 3], matrix_to_quat(T[:3, :3]), static=True)
    rec.pinhole(f"{entity}/image", camera.K, camera.width, camera.height)


def record_peg_pose(rec: Recorder, entity: str, T_world_obj: np.ndarray, half_extents, color) -> None:  # noqa: N803
    """A peg pose as a box at the current time."""
    T = np.asarray(T_world_obj, float)
    rec.transform(entity, T[:3, 3], matrix_to_quat(T[:3, :3]))
    if half_extents is not None:
        rec.shape(entity, Primitive("box", tuple(float(h) for h in half_extents), (*color, 140)), static=True)


def record_look(rec: Recorder, camera, layout, image: np.ndarray, estimate=None, detections=None,
                T_true: np.ndarray | None = None, entity: str = "world/camera", target: str = "peg",
                jpeg_quality: int | None = None, reason: str | None = None) -> None:  # noqa: N803
    """One image at the current time: the tags found in it, and the ``target`` (the peg, a hand's
    plate) fitted from them; without an estimate, ``reason`` says why (default: not found)."""
    if not rec.enabled:
        return
    img = f"{entity}/image"
    rec.image(img, image, jpeg_quality)
    det = detections if detections is not None else (estimate.detections if estimate is not None else None)
    used = set(estimate.tag_ids) if estimate is not None else set()
    if det is not None and len(det):
        ids = [int(i) for i in det.ids]
        colors = [USED if i in used else OTHER for i in ids]
        corners = np.asarray(det.corners, float).reshape(-1, 4, 2)
        rec.line_strips2d(f"{img}/tags", [np.vstack([c, c[:1]]) for c in corners], colors=colors,
                          labels=[str(i) for i in ids])
        rec.points2d(f"{img}/tag_corners", corners.reshape(-1, 2),
                     colors=[c for c in colors for _ in range(4)], radii_px=2.0)
    half = getattr(layout, "half_extents", None)
    if estimate is not None:
        box = layout.box_corners()
        if box is not None:
            T = np.asarray(estimate.T_world_obj, float)
            uv = camera.project(box @ T[:3, :3].T + T[:3, 3])
            rec.line_strips2d(f"{img}/peg_fit", [uv[[a, b]] for a, b in layout.box_edges()], colors=FIT)
        record_peg_pose(rec, f"world/{target}_estimate", estimate.T_world_obj, half, FIT)
        rec.text("perception/log", f"{target}: {len(estimate.tag_ids)} tags used {sorted(used)}, "
                                   f"{estimate.reprojection_px:.2f} px rms, "
                                   f"confidence {estimate.confidence:.2f} ({estimate.resolved_by})")
    else:
        rec.text("perception/log", f"{target}: {reason or 'not found'}", "WARN")
    if T_true is not None:
        record_peg_pose(rec, "world/peg_truth", T_true, half, TRUTH)
