"""Camera intrinsics from ChArUco board views: detection, ``cv2.calibrateCamera``, reports.

Views come from simulation (:func:`render_board_views`: the scene's board, a mocap body, held
at random poses in front of the camera — as a person waves a board in front of a fixed camera)
or from a folder of real photos (:func:`load_images`).

:func:`calibrate_intrinsics` detects the board in every view (``CharucoDetector.detectBoard``,
``board.matchImagePoints``), rejects views with fewer than ``min_corners`` corners, calibrates
(``cv2.calibrateCameraExtended``), then rejects views whose own RMS is an outlier (more than
``outlier_factor`` times the median and above ``outlier_min_px``) and calibrates again. It
raises :class:`~core.errors.PerceptionError` naming the counts when fewer than ``min_views``
views are usable. The result is saved as OpenCV FileStorage YAML by
:func:`stages.arms.perception.calibration.save_calibration` (intrinsics only; the extrinsics stage
adds the pose and joint offsets to the same format).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from core.errors import ConfigError, PerceptionError

CalibFlag = Literal["FIX_K3", "FIX_K2", "ZERO_TANGENT_DIST", "FIX_ASPECT_RATIO", "FIX_PRINCIPAL_POINT",
                    "RATIONAL_MODEL"]
CALIB_FLAGS: tuple[str, ...] = get_args(CalibFlag)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


@dataclass(frozen=True)
class ViewDetection:
    index: int
    name: str
    corners: int
    object_points: np.ndarray | None  # (N, 3) float32
    image_points: np.ndarray | None   # (N, 2) float32
    reason: str | None = None         # why it was rejected (None = usable)


@dataclass(frozen=True)
class IntrinsicsResult:
    camera_matrix: np.ndarray
    distortion: np.ndarray
    image_size: tuple[int, int]
    rms_px: float
    per_view_rms_px: dict[str, float]
    views_used: list[str]
    views_rejected: dict[str, str]       # view name -> reason
    views_total: int
    flags: tuple[str, ...] = ()
    board: dict = field(default_factory=dict)

    def errors_against(self, K_true: np.ndarray) -> dict[str, float]:  # noqa: N803
        """Errors against a known camera matrix (simulation)."""
        K = self.camera_matrix
        return {"focal_error_pct": float(100 * max(abs(K[0, 0] - K_true[0, 0]) / K_true[0, 0],
                                                   abs(K[1, 1] - K_true[1, 1]) / K_true[1, 1])),
                "fx_error_px": float(K[0, 0] - K_true[0, 0]),
                "fy_error_px": float(K[1, 1] - K_true[1, 1]),
                "cx_error_px": float(K[0, 2] - K_true[0, 2]),
                "cy_error_px": float(K[1, 2] - K_true[1, 2])}

    def metrics(self) -> dict[str, float | int]:
        """The run's figures: views used and rejected, RMS, the worst view, the camera matrix."""
        K = self.camera_matrix
        return {"views_used": len(self.views_used), "views_rejected": len(self.views_rejected),
                "rms_px": self.rms_px, "per_view_max_px": max(self.per_view_rms_px.values()),
                "fx_px": float(K[0, 0]), "fy_px": float(K[1, 1]), "cx_px": float(K[0, 2]),
                "cy_px": float(K[1, 2])}

    def summary(self) -> dict:
        return {"camera_matrix": self.camera_matrix.tolist(),
                "distortion": self.distortion.ravel().tolist(), "image_size": list(self.image_size),
                "rms_px": self.rms_px, "per_view_rms_px": self.per_view_rms_px,
                "views_used": self.views_used, "views_rejected": self.views_rejected,
                "views_total": self.views_total, "flags": list(self.flags), "board": self.board}


def calib_flags(names: Sequence[str]) -> int:
    import cv2

    value = 0
    for n in names:
        if n not in CALIB_FLAGS:
            raise ConfigError(f"intrinsics.flags: unknown flag {n!r}; allowed: {', '.join(CALIB_FLAGS)}")
        value |= getattr(cv2, f"CALIB_{n}")
    return value


def detect_views(images: Sequence[np.ndarray], board, names: Sequence[str] | None = None,
                 min_corners: int = 12) -> list[ViewDetection]:
    """ChArUco corners of every view; views with fewer than ``min_corners`` carry a reason."""
    import cv2

    detector = cv2.aruco.CharucoDetector(board)
    out = []
    for k, img in enumerate(images):
        name = names[k] if names is not None else f"view{k:03d}"
        grey = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
        ch_corners, ch_ids, _, _ = detector.detectBoard(grey)
        n = 0 if ch_ids is None else len(ch_ids)
        if n < max(min_corners, 6):
            out.append(ViewDetection(k, name, n, None, None,
                                     "board not found" if n == 0 else
                                     f"only {n} corners (< {max(min_corners, 6)})"))
            continue
        obj, imgp = board.matchImagePoints(ch_corners, ch_ids)
        out.append(ViewDetection(k, name, n, obj.reshape(-1, 3).astype(np.float32),
                                 imgp.reshape(-1, 2).astype(np.float32)))
    return out


def calibrate_intrinsics(images: Sequence[np.ndarray], board, names: Sequence[str] | None = None,
                         min_corners: int = 12, min_views: int = 8, flags: Sequence[str] = (),
                         outlier_factor: float = 3.0, outlier_min_px: float = 1.0,
                         board_info: dict | None = None) -> IntrinsicsResult:
    """Calibrate from board views (see the module docstring)."""
    import cv2

    if not images:
        raise PerceptionError("intrinsics: no images given")
    sizes = {(int(im.shape[1]), int(im.shape[0])) for im in images}
    if len(sizes) != 1:
        raise PerceptionError(f"intrinsics: all views must have one size, got {sorted(sizes)}")
    size = sizes.pop()
    views = detect_views(images, board, names, min_corners)
    rejected = {v.name: v.reason for v in views if v.reason}
    usable = [v for v in views if not v.reason]
    flag_value = calib_flags(flags)

    def run(vs):
        if len(vs) < min_views:
            raise PerceptionError(
                f"intrinsics: only {len(vs)} of {len(views)} views are usable, need at least "
                f"{min_views} (rejected: {len(rejected)}; e.g. "
                f"{dict(list(rejected.items())[:3])})")
        rms, K, dist, _, _, _, _, per_view = cv2.calibrateCameraExtended(
            [v.object_points for v in vs], [v.image_points for v in vs], size, None, None,
            flags=flag_value)
        return float(rms), K, dist, per_view.ravel()

    rms, K, dist, per_view = run(usable)
    med = float(np.median(per_view))
    bad = [v for v, e in zip(usable, per_view, strict=True)
           if e > max(outlier_factor * med, outlier_min_px)]
    if bad:
        for v, e in zip(usable, per_view, strict=True):
            if v in bad:
                rejected[v.name] = f"outlier: {e:.2f} px RMS (median {med:.2f})"
        usable = [v for v in usable if v not in bad]
        rms, K, dist, per_view = run(usable)
    return IntrinsicsResult(
        camera_matrix=np.asarray(K, float), distortion=np.asarray(dist, float).ravel(),
        image_size=size, rms_px=rms,
        per_view_rms_px={v.name: float(e) for v, e in zip(usable, per_view, strict=True)},
        views_used=[v.name for v in usable], views_rejected=rejected, views_total=len(views),
        flags=tuple(flags), board=dict(board_info or {}))


# ---------------------------------------------------------------------- views
def load_images(folder: str | Path) -> tuple[list[np.ndarray], list[str]]:
    """Every image file in ``folder`` (sorted by name), as RGB arrays, and their names."""
    import cv2

    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ConfigError(f"intrinsics.images={str(folder)!r} is not a folder")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise PerceptionError(f"intrinsics: no images ({', '.join(IMAGE_SUFFIXES)}) in {folder}")
    images, names = [], []
    for p in files:
        img = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if img is None:
            raise PerceptionError(f"intrinsics: cannot read image {p}")
        images.append(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))
        names.append(p.name)
    return images, names


def board_pose_in_front(T_world_cam: np.ndarray, rng: np.random.Generator,  # noqa: N803
                        distance_m=(0.45, 0.9), offset=0.22, tilt_deg: float = 35.0,
                        roll_deg: float = 25.0) -> np.ndarray:
    """A random board pose (4x4, world) facing the camera: centre at a random distance along a
    ray within ``offset`` (tangent units) of the optical axis, tilted up to ``tilt_deg`` about its
    x and y axes and rolled up to ``roll_deg`` about its normal."""
    from scipy.spatial.transform import Rotation

    d = rng.uniform(*distance_m)
    ray = np.array([rng.uniform(-offset, offset), rng.uniform(-offset, offset) * 0.75, 1.0])
    p_cam = d * ray / np.linalg.norm(ray)
    face = np.diag([1.0, -1.0, -1.0])  # board x = image right, y = image up, z = toward camera
    tilt = Rotation.from_euler("xyz", [rng.uniform(-tilt_deg, tilt_deg),
                                       rng.uniform(-tilt_deg, tilt_deg),
                                       rng.uniform(-roll_deg, roll_deg)], degrees=True).as_matrix()
    T_cam_board = np.eye(4)
    T_cam_board[:3, :3] = face @ tilt
    T_cam_board[:3, 3] = p_cam
    return np.asarray(T_world_cam) @ T_cam_board


def render_board_views(model, data, camera, board_body: str, n_views: int,
                       rng: np.random.Generator, **pose_kw) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Render ``n_views`` images of the mocap board held at random poses (:func:`board_pose_in_front`).

    ``camera`` is a :class:`stages.arms.perception.camera.SceneCamera`. The board's mocap pose is
    restored afterwards. Returns the images and the true board poses (world).
    """
    import mujoco

    bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, board_body)
    if bid < 0:
        raise ConfigError(f"intrinsics.board={board_body!r} is not a body of the scene")
    mid = int(model.body_mocapid[bid])
    if mid < 0:
        raise ConfigError(f"intrinsics: board body {board_body!r} is not a mocap body "
                          "(set mocap: true on the board object)")
    saved = data.mocap_pos[mid].copy(), data.mocap_quat[mid].copy()
    mujoco.mj_forward(model, data)
    T_world_cam = camera.model_at(data).T_world_cam
    images, poses = [], []
    try:
        for _ in range(n_views):
            T = board_pose_in_front(T_world_cam, rng, **pose_kw)
            q = np.zeros(4)
            mujoco.mju_mat2Quat(q, T[:3, :3].ravel())
            data.mocap_pos[mid], data.mocap_quat[mid] = T[:3, 3], q
            mujoco.mj_kinematics(model, data)
            images.append(camera.render(data, rng))
            poses.append(T)
    finally:
        data.mocap_pos[mid], data.mocap_quat[mid] = saved
        mujoco.mj_kinematics(model, data)
    return images, poses


def simulated_board_views(model, home_qpos, camera, board_body: str, n_views: int,
                          rng: np.random.Generator, **pose_kw) -> tuple[list[np.ndarray], np.ndarray]:
    """The robot at ``home_qpos``, ``n_views`` renders of the board by ``camera`` (a
    :class:`~stages.arms.perception.camera.SceneCamera`), and that camera's true matrix K."""
    import mujoco

    data = mujoco.MjData(model)
    data.qpos[:] = home_qpos
    mujoco.mj_forward(model, data)
    images, _ = render_board_views(model, data, camera, board_body, n_views, rng, **pose_kw)
    return images, camera.model_at(data).K


def draw_board_detection(image: np.ndarray, board) -> np.ndarray:
    """A copy of an RGB view with the board's detected markers and ChArUco corners (red) drawn."""
    import cv2

    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    cc, ci, mc, mi = cv2.aruco.CharucoDetector(board).detectBoard(grey)
    bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    if mi is not None:
        cv2.aruco.drawDetectedMarkers(bgr, mc, mi)
    if ci is not None:
        for c in np.asarray(cc).reshape(-1, 2):
            cv2.circle(bgr, (int(round(c[0])), int(round(c[1]))), 4, (0, 0, 255), 1, cv2.LINE_AA)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
