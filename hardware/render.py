"""Offscreen rendering and pinhole camera models for MuJoCo cameras.

Backend: ``MUJOCO_GL=egl`` is set when the variable is unset (at import of this module, which
does not import mujoco). When the first renderer is made, the chosen backend is probed with a
tiny context; if EGL fails, OSMesa is tried (where libOSMesa is installed, EGL is first probed
in a child process, because PyOpenGL binds one platform per process). If mujoco was imported
before the variable was set (so it picked GLFW, which needs a display), the probe installs the
EGL/OSMesa context class into ``mujoco.rendering.classic.gl_context`` so that
``mujoco.Renderer`` uses it.

Camera conventions: a MuJoCo camera looks along its -Z axis, +X right, +Y up; ``fovy`` is the
vertical field of view. The OpenCV camera frame (+X right, +Y down, +Z forward) is the MuJoCo
camera frame with Y and Z flipped. Pinhole intrinsics for a W x H image:
``f = (H / 2) / tan(fovy / 2)`` (square pixels), ``cx = (W - 1) / 2``, ``cy = (H - 1) / 2``.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from dataclasses import dataclass

import numpy as np

from core.errors import ChoreographError

os.environ.setdefault("MUJOCO_GL", "egl")

_FALLBACKS = {"egl": ("egl", "osmesa"), "osmesa": ("osmesa",), "glfw": ("glfw",)}
_backend_lock = threading.Lock()
_backend: str | None = None
CV_FROM_MJ = np.diag([1.0, -1.0, -1.0])
"""Rotation taking MuJoCo camera-frame coordinates to OpenCV camera-frame coordinates."""


class RenderError(ChoreographError):
    """No offscreen OpenGL context could be made, or a camera/size is not renderable."""


# ---------------------------------------------------------------------- backend
def ensure_gl_backend() -> str:
    """Pick a working offscreen backend once per process; return its name (egl/osmesa/...)."""
    global _backend
    with _backend_lock:
        if _backend is not None:
            return _backend
        wanted = os.environ.get("MUJOCO_GL", "egl").lower().strip() or "egl"
        errors = []
        candidates = _FALLBACKS.get(wanted, (wanted,))
        if wanted == "egl" and _osmesa_available() and "OpenGL" not in sys.modules:
            # PyOpenGL binds one platform per process: probe EGL in a child process so that a
            # failure can still fall back to OSMesa here
            if not _egl_works_in_subprocess():
                errors.append("egl: the probe process could not make an EGL context")
                candidates = ("osmesa",)
        for name in candidates:
            try:
                _install_backend(name)
            except Exception as e:  # noqa: BLE001 - every failure is reported below
                errors.append(f"{name}: {type(e).__name__}: {e}")
                continue
            os.environ["MUJOCO_GL"] = name
            _backend = name
            return name
        raise RenderError("no offscreen OpenGL backend works (" + "; ".join(errors) + "). "
                          "EGL needs libEGL (Debian: apt-get install libegl1 libgl1-mesa-dri); "
                          "OSMesa needs libosmesa6 (then MUJOCO_GL=osmesa, set before Python starts, "
                          "is the surest).")


def _osmesa_available() -> bool:
    import ctypes.util

    return ctypes.util.find_library("OSMesa") is not None


def _egl_works_in_subprocess() -> bool:
    import subprocess

    code = "from mujoco.egl import GLContext; GLContext(8, 8).free()"
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _install_backend(name: str) -> None:
    from mujoco.rendering.classic import gl_context

    if name == "egl":
        from mujoco.egl import GLContext
    elif name == "osmesa":
        if os.environ.get("PYOPENGL_PLATFORM", "osmesa") != "osmesa":
            os.environ["PYOPENGL_PLATFORM"] = "osmesa"
        from mujoco.osmesa import GLContext
    elif name == "glfw":
        from mujoco.glfw import GLContext
    else:
        raise ValueError(f"unknown MUJOCO_GL backend {name!r}")
    probe = GLContext(8, 8)  # raises when the platform cannot make a context
    probe.free()
    gl_context.GLContext = GLContext


# ---------------------------------------------------------------------- camera models
@dataclass(frozen=True)
class CameraIntrinsics:
    """A pinhole camera without distortion."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @property
    def K(self) -> np.ndarray:  # noqa: N802 - the usual name
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])


def camera_id(model, camera: str | int) -> int:
    import mujoco

    if isinstance(camera, int | np.integer):
        if not 0 <= int(camera) < model.ncam:
            raise RenderError(f"camera id {camera} out of range (model has {model.ncam})")
        return int(camera)
    cid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
    if cid < 0:
        names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) for i in range(model.ncam)]
        raise RenderError(f"camera {camera!r} is not in the model; cameras: "
                          f"{', '.join(n for n in names if n) or '(none)'}")
    return cid


def camera_resolution(model, camera: str | int) -> tuple[int, int]:
    """(W, H) from the camera's ``resolution`` attribute; 640x480 when it has none (1x1)."""
    w, h = (int(v) for v in model.cam_resolution[camera_id(model, camera)])
    return (w, h) if w > 1 and h > 1 else (640, 480)


def camera_intrinsics(model, camera: str | int, width: int | None = None,
                      height: int | None = None) -> CameraIntrinsics:
    """Pinhole intrinsics of a MuJoCo camera (from ``fovy``) at the given or its own resolution."""
    cid = camera_id(model, camera)
    if width is None or height is None:
        width, height = camera_resolution(model, cid)
    f = (height / 2.0) / math.tan(math.radians(float(model.cam_fovy[cid])) / 2.0)
    return CameraIntrinsics(int(width), int(height), f, f, (width - 1) / 2.0, (height - 1) / 2.0)


def camera_pose(model, data, camera: str | int) -> np.ndarray:
    """4x4 pose of the camera in the world, OpenCV convention: ``T_world_cam``.

    ``data`` must hold current camera poses: after ``mj_forward`` (``mj_kinematics`` alone does
    not place cameras; follow it with ``mj_camlight``).
    """
    cid = camera_id(model, camera)
    T = np.eye(4)
    T[:3, :3] = data.cam_xmat[cid].reshape(3, 3) @ CV_FROM_MJ
    T[:3, 3] = data.cam_xpos[cid]
    return T


def project_points(model, data, camera: str | int, points_world, width: int | None = None,
                   height: int | None = None) -> np.ndarray:
    """Pixel coordinates (u, v) of world points in the camera image, shape (N, 2).

    Points behind the camera get NaN. ``data`` as for :func:`camera_pose`.
    """
    K = camera_intrinsics(model, camera, width, height).K
    T = camera_pose(model, data, camera)
    p = np.asarray(points_world, dtype=float).reshape(-1, 3)
    pc = (p - T[:3, 3]) @ T[:3, :3]  # world -> OpenCV camera frame
    uvw = pc @ K.T
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = uvw[:, :2] / uvw[:, 2:3]
    uv[pc[:, 2] <= 0] = np.nan
    return uv


# ---------------------------------------------------------------------- rendering
class OffscreenRenderer:
    """Renders RGB images from named cameras; one ``mujoco.Renderer`` per image size.

    Use as a context manager or call :meth:`close`. Not thread-safe: one per thread.
    ``preview=True`` (videos): no multisampling and no reflections, far cheaper a frame on a CPU
    renderer (Mesa llvmpipe) for edges a little more jagged; the camera images perception
    measures keep the model's own quality.
    """

    def __init__(self, model, preview: bool = False):
        self.model = model
        self.preview = preview
        self.backend = ensure_gl_backend()
        self._renderers: dict[tuple[int, int], object] = {}

    def _renderer(self, width: int, height: int):
        import mujoco

        key = (int(width), int(height))
        r = self._renderers.get(key)
        if r is None:
            g = self.model.vis.global_
            if width > g.offwidth or height > g.offheight:
                raise RenderError(f"{width}x{height} exceeds the model's offscreen buffer "
                                  f"{g.offwidth}x{g.offheight}; raise <visual><global "
                                  "offwidth/offheight>")
            quality = self.model.vis.quality
            samples = quality.offsamples  # read once, when the GL context is made
            if self.preview:
                quality.offsamples = 0
            try:
                r = self._renderers[key] = mujoco.Renderer(self.model, height=height, width=width)
            finally:
                quality.offsamples = samples
        return r

    def render(self, data, camera: str | int, width: int | None = None,
               height: int | None = None, scene_option=None, shadows: bool = True) -> np.ndarray:
        """An H x W x 3 uint8 image of ``data`` seen from ``camera`` (``shadows=False``: without the
        lights' shadow maps, ~4x faster on a CPU renderer)."""
        import mujoco

        cid = camera_id(self.model, camera)
        if width is None or height is None:
            width, height = camera_resolution(self.model, cid)
        r = self._renderer(width, height)
        if scene_option is None:
            r.update_scene(data, camera=cid)
        else:
            r.update_scene(data, camera=cid, scene_option=scene_option)
        r.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = bool(shadows)
        if self.preview:
            r.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        return r.render().copy()

    def close(self) -> None:
        for r in self._renderers.values():
            r.close()
        self._renderers.clear()

    def __enter__(self) -> OffscreenRenderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def render_rgb(model, data, camera: str | int, width: int | None = None,
               height: int | None = None) -> np.ndarray:
    """One-shot render (makes and frees a renderer; use :class:`OffscreenRenderer` for many)."""
    with OffscreenRenderer(model) as r:
        return r.render(data, camera, width, height)
