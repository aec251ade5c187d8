"""Looking back at recorded states: which ones touch, how far they were from the trajectory,
and a video of them."""

from __future__ import annotations

import numpy as np

from stages.arms.planning.checker import ClearanceChecker


def colliding_states(world, joint_names, positions: np.ndarray) -> np.ndarray:
    """Boolean per state: does any pair of geometry that may not touch actually touch?"""
    checker = ClearanceChecker.for_world(world, joint_names, 0.0)
    return np.array([not checker.is_valid(q) for q in positions], dtype=bool)


def render_states(model, times: np.ndarray, qpos: np.ndarray, camera: str, fps: float,
                  width: int = 480, height: int = 360, shadows: bool = False) -> list[np.ndarray]:
    """Frames at ``fps`` from recorded full-qpos states (rendered afterwards, not during the run).

    Without shadows by default, and in the renderer's preview quality (no multisampling, no
    reflections), cheap on a CPU renderer (Mesa llvmpipe); the camera images perception works on
    keep all three (what it saves: the README's default-reset table, with and without the video)."""
    import mujoco

    from hardware.render import OffscreenRenderer  # sets MUJOCO_GL on import: only when rendering

    if len(times) == 0:
        return []
    data = mujoco.MjData(model)
    picks = np.searchsorted(times, np.arange(times[0], times[-1] + 1e-9, 1.0 / fps))
    frames = []
    with OffscreenRenderer(model, preview=True) as renderer:
        for i in np.clip(picks, 0, len(times) - 1):
            data.qpos[:] = qpos[i]
            mujoco.mj_forward(model, data)
            frames.append(renderer.render(data, camera, width, height, shadows=shadows))
    return frames


def tracking_error(times: np.ndarray, reference: np.ndarray, start_stamp: float, stamps: np.ndarray,
                   positions: np.ndarray) -> float:
    """Largest |measured − desired| (rad) over the recorded samples taken during the motion.

    ``times``/``reference`` are the trajectory (from its start), ``stamps``/``positions`` the
    recorded states (columns in the same order) on the clock the motion started at ``start_stamp``.
    """
    tau = np.asarray(stamps) - start_stamp
    inside = (tau >= 0) & (tau <= times[-1])
    if not inside.any():
        return float("nan")
    desired = np.stack([np.interp(tau[inside], times, reference[:, j]) for j in range(reference.shape[1])],
                       axis=1)
    return float(np.abs(np.asarray(positions)[inside] - desired).max())


def tracking_errors(trajectory, start_stamp, times, positions, names) -> dict[str, float]:
    """Largest |measured − desired| during the motion, and at the end."""
    index = {j: i for i, j in enumerate(trajectory.joint_names)}
    cols = [index[j] for j in names]
    reference = np.asarray(trajectory.positions)[:, cols]
    return {"tracking_error_max_rad": tracking_error(np.asarray(trajectory.times), reference, start_stamp,
                                                     times, positions),
            "final_error_rad": float(np.abs(positions[-1] - reference[-1]).max())}
