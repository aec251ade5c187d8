"""Tag detection with unbiased corners (the pose fit is :mod:`stages.arms.perception.peg_pose`).

``cv2.aruco.ArucoDetector`` with the layout's dictionary
(AprilTag 36h11 for the peg). Corner refinement ``refine``: ``"ecc"`` (default) = OpenCV's
``CORNER_REFINE_SUBPIX`` followed by a photometric fit of the decoded marker's own image
(``cv2.findTransformECC``, homography, initialised at the detected corners); or OpenCV's own
``"apriltag"``, ``"subpix"``, ``"contour"``, ``"none"``. Why: on rendered 30-80 px tags
``cornerSubPix`` on the tag's convex corners pulls every corner 0.2-0.5 px toward the tag's
centre (tags look smaller, hence farther: 5-10 mm of depth error at 1 m), and OpenCV 5.1's
``CORNER_REFINE_APRILTAG`` returned corners offset by ~+0.4 px in x and y; the ECC fit of the
whole pattern is unbiased to ~0.1 px, also under blur (measured: tests/perception).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from core.errors import ConfigError
from core.tag_layouts import TAG_FAMILY_CELLS, marker_dictionary

RefineMethod = Literal["ecc", "apriltag", "subpix", "contour", "none"]
REFINE_METHODS: tuple[str, ...] = get_args(RefineMethod)
DEFAULT_DETECTOR_PARAMS = {"adaptiveThreshWinSizeStep": 4}
"""OpenCV's default thresholds windows 3, 13, 23 px; also trying 7, 11, 15, 19 finds more of the
small (~30 px) tags in noisy, blurred, dim images (20 renders at noise 5, blur 0.7 px, 60 %
light: 3.45 instead of 2.45 of the peg's tags per image) for ~15 % more detection time."""
ECC_TEMPLATE_SCALE = 2.0
"""Template pixels per image pixel in the ECC fit."""
ECC_BLURS_PX = (1.4, 0.9, 0.5, 0.0)
"""Gaussian blurs (image pixels) tried on the template, coarse to fine (the blurred fit has the
wider basin and starts the next); the best-correlated fit wins."""


@dataclass(frozen=True)
class TagDetections:
    """Detected markers: ids (N,), corners (N, 4, 2) in OpenCV order, detection time."""

    ids: np.ndarray
    corners: np.ndarray
    time_s: float
    image_size: tuple[int, int]

    def __len__(self) -> int:
        return len(self.ids)


class TagDetector:
    """``cv2.aruco.ArucoDetector`` for one dictionary, with a chosen corner refinement."""

    def __init__(self, dictionary: str = "DICT_APRILTAG_36h11", refine: str = "ecc",
                 params: dict | None = None, quiet_zone_cells: int = 1):
        import cv2

        if refine not in REFINE_METHODS:
            raise ConfigError(f"tag detector refine={refine!r}; allowed: {', '.join(REFINE_METHODS)}")
        p = cv2.aruco.DetectorParameters()
        p.cornerRefinementMethod = {
            "ecc": cv2.aruco.CORNER_REFINE_SUBPIX,
            "apriltag": cv2.aruco.CORNER_REFINE_APRILTAG,
            "subpix": cv2.aruco.CORNER_REFINE_SUBPIX,
            "contour": cv2.aruco.CORNER_REFINE_CONTOUR,
            "none": cv2.aruco.CORNER_REFINE_NONE}[refine]
        for key, value in {**DEFAULT_DETECTOR_PARAMS, **(params or {})}.items():
            if not hasattr(p, key):
                known = sorted(n for n in dir(p) if not n.startswith("_"))
                raise ConfigError(f"tag detector: unknown DetectorParameters field {key!r}; "
                                  f"fields: {', '.join(known)}")
            setattr(p, key, type(getattr(p, key))(value))
        self.dictionary = dictionary
        self.refine = refine
        self.quiet_zone_cells = int(quiet_zone_cells)
        self._dict = marker_dictionary(dictionary)
        self._detector = cv2.aruco.ArucoDetector(self._dict, p)
        self._templates: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def detect(self, image: np.ndarray) -> TagDetections:
        import cv2

        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        t0 = time.perf_counter()
        corners, ids, _ = self._detector.detectMarkers(grey)
        dt = time.perf_counter() - t0
        if ids is None or len(ids) == 0:
            return TagDetections(np.zeros(0, int), np.zeros((0, 4, 2)), dt,
                                 (grey.shape[1], grey.shape[0]))
        ids = ids.ravel().astype(int)
        corners = np.array(corners, dtype=float).reshape(-1, 4, 2)
        if self.refine == "ecc":
            corners = np.array([self._refine_ecc(grey, c, i) for c, i in zip(corners, ids,
                                                                              strict=True)])
        dt = time.perf_counter() - t0
        return TagDetections(ids, corners, dt, (grey.shape[1], grey.shape[0]))

    def _template(self, tag_id: int, px: int, blur_px: float) -> tuple[np.ndarray, np.ndarray]:
        """The marker's image (with its quiet zone) at ``px`` pixels a cell, blurred by
        ``blur_px`` image pixels (a Gaussian), and the corners of its black square."""
        import cv2

        key = (int(tag_id), px, round(blur_px, 3))
        if key not in self._templates:
            cells = TAG_FAMILY_CELLS.get(self.dictionary, 8)
            q = self.quiet_zone_cells * px
            img = cv2.aruco.generateImageMarker(self._dict, int(tag_id), cells * px, borderBits=1)
            img = cv2.copyMakeBorder(img, q, q, q, q, cv2.BORDER_CONSTANT, value=255)
            img = img.astype(np.float32)
            if blur_px > 0:  # template pixels are 1/ECC_TEMPLATE_SCALE image pixels
                img = cv2.GaussianBlur(img, (0, 0), blur_px * ECC_TEMPLATE_SCALE,
                                       borderType=cv2.BORDER_REPLICATE)
            e0, e1 = q - 0.5, q + cells * px - 0.5   # edges of the black square (pixel centres
            corners = np.array([[e0, e0], [e1, e0], [e1, e1], [e0, e1]], np.float32)  # at ints)
            self._templates[key] = (img, corners)
        return self._templates[key]

    def _refine_ecc(self, grey: np.ndarray, corners: np.ndarray, tag_id: int,
                    max_shift_px: float = 2.0, min_correlation: float = 0.8) -> np.ndarray:
        """Fit the marker's image to the detection (homography, ECC); keep the input if it fails.

        The image is blurred (optics, texture filtering, defocus); a sharp template fitted to a
        blurred small tag comes out slightly too small. So the template is blurred by each of
        :data:`ECC_BLURS_PX` in turn and the fit with the highest correlation is kept.
        """
        import cv2

        cells = TAG_FAMILY_CELLS.get(self.dictionary, 8)
        side = float(np.mean([np.linalg.norm(corners[(k + 1) % 4] - corners[k]) for k in range(4)]))
        px = int(max(3, min(12, round(ECC_TEMPLATE_SCALE * side / cells))))
        pad = (self.quiet_zone_cells + 1) * side / cells + 3
        h, w = grey.shape[:2]
        x0, y0 = (int(max(0, np.floor(corners[:, k].min() - pad))) for k in (0, 1))
        x1 = int(min(w, np.ceil(corners[:, 0].max() + pad)))
        y1 = int(min(h, np.ceil(corners[:, 1].max() + pad)))
        crop = np.ascontiguousarray(grey[y0:y1, x0:x1], dtype=np.float32)
        best, best_cc = corners, min_correlation
        tc = self._template(tag_id, px, 0.0)[1]
        H = cv2.getPerspectiveTransform(tc, (corners - [x0, y0]).astype(np.float32))
        H = (H / H[2, 2]).astype(np.float32)
        iterations = 60
        for blur in ECC_BLURS_PX:  # each fit starts where the previous one ended
            tpl, tc = self._template(tag_id, px, blur)
            try:
                cc, H_fit = cv2.findTransformECC(
                    tpl, crop, H.copy(), cv2.MOTION_HOMOGRAPHY,
                    (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, iterations, 1e-4), None, 1)
            except cv2.error:
                continue
            out = cv2.perspectiveTransform(tc.reshape(-1, 1, 2), H_fit).reshape(-1, 2) + [x0, y0]
            if np.max(np.linalg.norm(out - corners, axis=1)) > max_shift_px:
                continue
            H, iterations = H_fit, 25
            if cc > best_cc:
                best, best_cc = out, cc
        return best
