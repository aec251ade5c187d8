"""The pose of a tagged object from one image: detect tags, fit all visible corners at once.

1. **Detect**: :class:`stages.arms.perception.detection.TagDetector` (the corner refinement and why).
2. **Split** the detections: ids on the object's layout are used; any other id (another object's
   tag, a hand's tag plate) is ignored and reported in ``PoseEstimate.foreign_ids``.
   None of the object's tags → :class:`~core.errors.PerceptionError` ("<object> not found").
3. **Candidates**: both solutions of ``SOLVEPNP_IPPE_SQUARE`` (``solvePnPGeneric``) for each of the
   largest visible tags, each moved from the tag's frame to the object's frame; with several tags
   also ``SOLVEPNP_SQPNP`` on all corners.
4. **One rigid-body fit**: every candidate is refined by ``solvePnPRefineLM`` on *all* visible
   corners; candidates that put the object behind the camera, or that would turn a detected tag
   away from the camera, are dropped (such a tag could not have been seen).
5. **Choose**: the lowest RMS reprojection error. When another distinct solution explains the
   corners almost as well (RMS within ``ambiguity_ratio`` — the planar flip of a single tag), the
   choice is *ambiguous*; a ``prior`` (e.g. :func:`resting_prior`: the peg lies on the table with
   one face down) picks among those; without one the lowest RMS wins and confidence drops.
6. **Outliers**: a tag whose own RMS after the fit exceeds ``outlier_px`` (a bad detection), or
   exceeds both ``outlier_ratio`` times the other tags' median and ``outlier_min_px`` (a dim,
   low-resolution tag whose corners are off by a pixel while the others fit to 0.05 px), is
   dropped and the fit redone, as long as another tag remains. So is a tag seen at more than
   ``max_incidence_deg`` from its normal (grazing views: measured corner errors grow from
   < 0.1 px at 50 deg to 0.2 px at 65 deg and > 1 px at 75 deg), as long as a tag seen better
   remains; such tags are reported in ``grazing_ids``.

``confidence`` (0..1, a documented heuristic, not a probability) =
``exp(-rms^2 / 2) * (1 - exp(-corners / 6)) * a``, ``rms`` in pixels, ``a`` = 1 unambiguous,
0.8 resolved by the prior, 0.5 resolved by reprojection alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.errors import ConfigError, PerceptionError
from core.se3 import invert, rotation_angle_deg
from core.tag_layouts import TagLayout, square_corners
from stages.arms.perception.camera import CameraModel
from stages.arms.perception.detection import TagDetections, TagDetector


# ---------------------------------------------------------------------- estimates
@dataclass(frozen=True)
class PoseEstimate:
    """An object's fitted pose and how good it is."""

    T_cam_obj: np.ndarray  # noqa: N815
    T_world_obj: np.ndarray  # noqa: N815
    tag_ids: tuple[int, ...]          # tags used in the fit
    foreign_ids: tuple[int, ...]      # seen, not on this object: ignored
    outlier_ids: tuple[int, ...]      # on the object but dropped by the outlier test
    grazing_ids: tuple[int, ...]      # on the object but seen too obliquely: dropped
    corners: int
    reprojection_px: float            # RMS over the used corners
    max_reprojection_px: float
    per_tag_px: dict[int, float]
    confidence: float
    ambiguous: bool                   # another solution fitted the corners nearly as well
    resolved_by: str                  # unique | prior | reprojection
    alternative_rms_px: float | None  # RMS of the best distinct other solution
    detections: TagDetections = field(repr=False)
    time_s: float = 0.0
    incidence_deg: dict[int, float] = field(default_factory=dict)

    def summary(self) -> dict:
        return {"tag_ids": list(self.tag_ids), "foreign_ids": list(self.foreign_ids),
                "outlier_ids": list(self.outlier_ids), "grazing_ids": list(self.grazing_ids),
                "incidence_deg": {str(k): v for k, v in self.incidence_deg.items()},
                "corners": self.corners,
                "reprojection_px": self.reprojection_px,
                "max_reprojection_px": self.max_reprojection_px,
                "per_tag_px": {str(k): v for k, v in self.per_tag_px.items()},
                "confidence": self.confidence, "ambiguous": self.ambiguous,
                "resolved_by": self.resolved_by, "alternative_rms_px": self.alternative_rms_px,
                "T_world_obj": self.T_world_obj.tolist(), "T_cam_obj": self.T_cam_obj.tolist(),
                "detect_time_s": self.detections.time_s, "time_s": self.time_s}


Prior = Callable[[np.ndarray], float]
"""A prior scores a candidate world pose ``T_world_obj``: lower is more plausible."""


def resting_prior(layout: TagLayout, surface_z: float, tilt_scale_deg: float = 3.0,
                  height_scale_m: float = 0.004) -> Prior:
    """The object lies on a horizontal surface at ``surface_z`` with one face down.

    Cost = (tilt of the nearest box axis from vertical / tilt_scale)^2 +
    (lowest box corner's height above the surface / height_scale)^2.
    """
    corners = layout.box_corners()
    if corners is None:
        raise ConfigError(f"{layout.name}: a resting prior needs a box-shaped object")

    def cost(T_world_obj: np.ndarray) -> float:  # noqa: N803
        R = T_world_obj[:3, :3]
        tilt = float(np.degrees(np.arccos(np.clip(np.max(np.abs(R[2, :])), -1.0, 1.0))))
        low = float(np.min((corners @ R.T + T_world_obj[:3, 3])[:, 2]))
        return (tilt / tilt_scale_deg) ** 2 + ((low - surface_z) / height_scale_m) ** 2

    return cost


def _pose(rvec, tvec) -> np.ndarray:
    import cv2

    T = np.eye(4)
    T[:3, :3] = cv2.Rodrigues(np.asarray(rvec, float).reshape(3))[0]
    T[:3, 3] = np.asarray(tvec, float).reshape(3)
    return T


def _rt(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import cv2

    return cv2.Rodrigues(T[:3, :3])[0].reshape(3, 1), T[:3, 3].reshape(3, 1).copy()


def _residuals(T: np.ndarray, obj: np.ndarray, img: np.ndarray, camera: CameraModel) -> np.ndarray:
    import cv2

    rvec, tvec = _rt(T)
    uv, _ = cv2.projectPoints(obj, rvec, tvec, camera.K, camera.dist)
    return np.linalg.norm(uv.reshape(-1, 2) - img, axis=1)


def incidence_deg(T_cam_obj: np.ndarray, layout: TagLayout, ids: Sequence[int]) -> dict[int, float]:  # noqa: N803
    """Angle between each tag's outward normal and the direction to the camera, degrees."""
    out = {}
    for i in ids:
        tag = layout.tag(i)
        n = T_cam_obj[:3, :3] @ tag.normal
        c = T_cam_obj[:3, :3] @ np.asarray(tag.center) + T_cam_obj[:3, 3]
        cos = float(n @ (-c)) / max(np.linalg.norm(c), 1e-9)
        out[int(i)] = float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    return out


def _faces_camera(T: np.ndarray, layout: TagLayout, ids: Sequence[int],
                  min_cos: float = 0.02) -> bool:
    """Every used tag's outward normal points (at least slightly) toward the camera."""
    for i in ids:
        tag = layout.tag(i)
        n = T[:3, :3] @ tag.normal
        c = T[:3, :3] @ np.asarray(tag.center) + T[:3, 3]
        if float(n @ (-c)) / max(np.linalg.norm(c), 1e-9) < min_cos:
            return False
    return True


def _candidates(obj_by_tag, img_by_tag, ids, layout, camera, max_tags: int) -> list[np.ndarray]:
    import cv2

    out = []
    areas = [cv2.contourArea(img_by_tag[k].astype(np.float32)) for k in range(len(ids))]
    for k in np.argsort(areas)[::-1][:max_tags]:
        tag = layout.tag(ids[k])
        n, rvecs, tvecs, _ = cv2.solvePnPGeneric(square_corners(tag.size_m), img_by_tag[k],
                                                 camera.K, camera.dist,
                                                 flags=cv2.SOLVEPNP_IPPE_SQUARE)
        T_obj_tag = tag.frame()
        for r, t in zip(rvecs[:n], tvecs[:n], strict=True):
            out.append(_pose(r, t) @ invert(T_obj_tag))
    if len(ids) > 1:
        obj = np.concatenate(obj_by_tag)
        img = np.concatenate(img_by_tag)
        ok, r, t = cv2.solvePnP(obj, img, camera.K, camera.dist, flags=cv2.SOLVEPNP_SQPNP)
        if ok:
            out.append(_pose(r, t))
    return out


def _refine(T: np.ndarray, obj, img, camera) -> np.ndarray:
    import cv2

    rvec, tvec = _rt(T)
    rvec, tvec = cv2.solvePnPRefineLM(obj, img, camera.K, camera.dist, rvec, tvec)
    return _pose(rvec, tvec)


def _distinct(a: np.ndarray, b: np.ndarray, deg: float = 3.0, m: float = 0.005) -> bool:
    return (rotation_angle_deg(a[:3, :3], b[:3, :3]) > deg
            or float(np.linalg.norm(a[:3, 3] - b[:3, 3])) > m)


def estimate_pose(detections: TagDetections, layout: TagLayout, camera: CameraModel,
                  prior: Prior | None = None, ambiguity_ratio: float = 2.0,
                  outlier_px: float = 4.0, max_seed_tags: int = 3,
                  max_incidence_deg: float = 65.0, outlier_ratio: float = 4.0,
                  outlier_min_px: float = 0.3) -> PoseEstimate:
    """The object's pose from detections (see the module docstring for the method)."""
    t0 = time.perf_counter()
    on = [k for k, i in enumerate(detections.ids) if int(i) in set(layout.ids)]
    foreign = tuple(sorted({int(i) for i in detections.ids if int(i) not in set(layout.ids)}))
    if not on:
        seen = (f"saw only ids {list(foreign)}, which are not on it" if foreign
                else "no tags detected")
        raise PerceptionError(f"{layout.name} not found: none of its tags {list(layout.ids)} "
                              f"is visible ({seen})")
    # one detection per id: keep the largest if an id appears twice
    by_id: dict[int, np.ndarray] = {}
    for k in on:
        i = int(detections.ids[k])
        c = detections.corners[k]
        if i not in by_id or _area(c) > _area(by_id[i]):
            by_id[i] = c
    ids = sorted(by_id)
    outliers: list[int] = []
    grazing: list[int] = []
    while True:
        fit = _fit(ids, by_id, layout, camera, prior, ambiguity_ratio, max_seed_tags)
        worst = max(fit["per_tag"], key=fit["per_tag"].get)
        rest = [v for i, v in fit["per_tag"].items() if i != worst]
        relative = bool(rest) and fit["per_tag"][worst] > max(outlier_ratio * float(np.median(rest)),
                                                             outlier_min_px)
        if len(ids) > 1 and (fit["per_tag"][worst] > outlier_px or relative):
            outliers.append(worst)
            ids = [i for i in ids if i != worst]
            continue
        angles = incidence_deg(fit["T"], layout, ids)
        steep = [i for i in ids if angles[i] > max_incidence_deg]
        if steep and len(steep) < len(ids):
            grazing.extend(steep)
            ids = [i for i in ids if i not in steep]
            continue
        break
    T = fit["T"]
    rms, n = fit["rms"], 4 * len(ids)
    a = {"unique": 1.0, "prior": 0.8, "reprojection": 0.5}[fit["resolved_by"]]
    confidence = float(np.exp(-rms ** 2 / 2) * (1 - np.exp(-n / 6)) * a)
    return PoseEstimate(
        T_cam_obj=T, T_world_obj=camera.T_world_cam @ T, tag_ids=tuple(ids), foreign_ids=foreign,
        outlier_ids=tuple(outliers), grazing_ids=tuple(sorted(grazing)), corners=n,
        reprojection_px=rms, incidence_deg=incidence_deg(T, layout, ids),
        max_reprojection_px=fit["max"], per_tag_px=fit["per_tag"], confidence=confidence,
        ambiguous=fit["resolved_by"] != "unique", resolved_by=fit["resolved_by"],
        alternative_rms_px=fit["alt"], detections=detections,
        time_s=time.perf_counter() - t0 + detections.time_s)


def _area(c: np.ndarray) -> float:
    import cv2

    return float(abs(cv2.contourArea(np.asarray(c, np.float32))))


def _fit(ids, by_id, layout, camera, prior, ambiguity_ratio, max_seed_tags) -> dict:
    obj_by_tag = [layout.tag(i).corners() for i in ids]
    img_by_tag = [by_id[i] for i in ids]
    obj = np.concatenate(obj_by_tag)
    img = np.concatenate(img_by_tag)
    scored = []
    for T0 in _candidates(obj_by_tag, img_by_tag, ids, layout, camera, max_seed_tags):
        if T0[2, 3] <= 0:
            continue
        T = _refine(T0, obj, img, camera)
        if T[2, 3] <= 0 or not _faces_camera(T, layout, ids):
            continue
        res = _residuals(T, obj, img, camera)
        rms = float(np.sqrt(np.mean(res ** 2)))
        if all(_distinct(T, s[1]) for s in scored):
            scored.append((rms, T, res))
        else:  # same solution found twice: keep the better refinement
            for k, s in enumerate(scored):
                if not _distinct(T, s[1]) and rms < s[0]:
                    scored[k] = (rms, T, res)
    if not scored:
        raise PerceptionError(f"{layout.name}: no pose explains tags {ids} with every tag facing "
                              "the camera")
    scored.sort(key=lambda s: s[0])
    best = scored[0]
    close = [s for s in scored if s[0] <= ambiguity_ratio * best[0] + 0.05]
    resolved = "unique"
    if len(close) > 1:
        if prior is not None:
            best = min(close, key=lambda s: prior(camera.T_world_cam @ s[1]))
            resolved = "prior"
        else:
            resolved = "reprojection"
    others = [s[0] for s in scored if s is not best]
    per_tag = {i: float(np.sqrt(np.mean(best[2][4 * k:4 * k + 4] ** 2))) for k, i in enumerate(ids)}
    return {"T": best[1], "rms": best[0], "max": float(best[2].max()), "per_tag": per_tag,
            "resolved_by": resolved, "alt": min(others) if others else None}


class PoseEstimator:
    """Detector + layout + camera (+ prior): ``estimate(image) -> PoseEstimate``."""

    def __init__(self, layout: TagLayout, camera: CameraModel, detector: TagDetector | None = None,
                 prior: Prior | None = None, ambiguity_ratio: float = 2.0, outlier_px: float = 4.0,
                 max_incidence_deg: float = 65.0):
        self.layout, self.camera, self.prior = layout, camera, prior
        self.max_incidence_deg = max_incidence_deg
        self.detector = detector or TagDetector(layout.dictionary)
        if self.detector.dictionary != layout.dictionary:
            raise ConfigError(f"detector dictionary {self.detector.dictionary} differs from "
                              f"{layout.name}'s {layout.dictionary}")
        self.ambiguity_ratio, self.outlier_px = ambiguity_ratio, outlier_px

    def estimate(self, image: np.ndarray) -> PoseEstimate:
        return estimate_pose(self.detector.detect(image), self.layout, self.camera, self.prior,
                             self.ambiguity_ratio, self.outlier_px,
                             max_incidence_deg=self.max_incidence_deg)


# ---------------------------------------------------------------------- overlay
def draw_overlay(image: np.ndarray, layout: TagLayout, camera: CameraModel,
                 estimate: PoseEstimate | None = None, detections: TagDetections | None = None,
                 truth_T_world_obj: np.ndarray | None = None) -> np.ndarray:  # noqa: N803
    """RGB overlay: detected tags (green: used, red: foreign/outlier), the fitted box outline
    (yellow), its axes (x red, y green, z blue), the truth outline (cyan) if given, and text."""
    import cv2

    out = np.ascontiguousarray(np.asarray(image, np.uint8).copy())
    if out.ndim == 2:
        out = cv2.cvtColor(out, cv2.COLOR_GRAY2RGB)
    det = detections if detections is not None else (estimate.detections if estimate else None)
    used = set(estimate.tag_ids) if estimate else set()
    thick = max(1, out.shape[1] // 640)
    if det is not None:
        for i, c in zip(det.ids, det.corners, strict=True):
            colour = (40, 220, 40) if int(i) in used else (230, 40, 40)
            pts = np.rint(c).astype(np.int32)
            cv2.polylines(out, [pts], True, colour, thick, cv2.LINE_AA)
            cv2.circle(out, tuple(int(v) for v in pts[0]), 2 * thick, colour, -1)
            cv2.putText(out, str(int(i)), tuple(int(v) for v in c.mean(axis=0)),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.4 * thick, colour, thick, cv2.LINE_AA)

    def outline(T_world_obj, colour):
        box = layout.box_corners()
        if box is None:
            return
        uv = camera.project(box @ T_world_obj[:3, :3].T + T_world_obj[:3, 3])
        for a, b in layout.box_edges():
            cv2.line(out, tuple(np.rint(uv[a]).astype(int)), tuple(np.rint(uv[b]).astype(int)),
                     colour, thick, cv2.LINE_AA)

    if truth_T_world_obj is not None:
        outline(np.asarray(truth_T_world_obj), (60, 220, 230))
    if estimate is not None:
        outline(estimate.T_world_obj, (250, 220, 30))
        length = 0.6 * float(max(layout.half_extents or (0.03,)))
        origin = estimate.T_world_obj[:3, 3]
        axes = origin + length * estimate.T_world_obj[:3, :3].T
        uv = camera.project(np.vstack([origin, axes]))
        for k, colour in enumerate([(230, 30, 30), (30, 200, 30), (40, 80, 255)]):
            cv2.line(out, tuple(np.rint(uv[0]).astype(int)), tuple(np.rint(uv[k + 1]).astype(int)),
                     colour, 2 * thick, cv2.LINE_AA)
        lines = [f"{layout.name}: tags {list(estimate.tag_ids)}  rms {estimate.reprojection_px:.2f} px"
                 f"  conf {estimate.confidence:.2f}  ({estimate.resolved_by})"]
        if estimate.foreign_ids:
            lines.append(f"ignored (not on {layout.name}): {list(estimate.foreign_ids)}")
        if estimate.outlier_ids:
            lines.append(f"outliers dropped: {list(estimate.outlier_ids)}")
    else:
        lines = [f"{layout.name}: not found"]
    for k, text in enumerate(lines):
        cv2.putText(out, text, (10, 24 * thick * (k + 1)), cv2.FONT_HERSHEY_SIMPLEX, 0.55 * thick,
                    (255, 255, 255), thick + 1, cv2.LINE_AA)
        cv2.putText(out, text, (10, 24 * thick * (k + 1)), cv2.FONT_HERSHEY_SIMPLEX, 0.55 * thick,
                    (20, 20, 20), thick, cv2.LINE_AA)
    return out
