"""Pictures of the FTC field, paths, speed profiles and the robot moving (matplotlib, Agg).

Everything here takes plain arrays (inches, seconds) and returns matplotlib
figures or RGB frames, so stages and tests can use it without a run folder.
matplotlib is imported inside the functions that draw.
"""

from __future__ import annotations

import io

import numpy as np

from core.plotting import pyplot
from hardware.mecanum.kinematics import footprint_corners

FIELD_IN, TILE_IN = 144.0, 24.0


def draw_field(ax, size_in: float = FIELD_IN, tile_in: float = TILE_IN) -> None:
    """Foam tiles (checkered grey), the perimeter walls, origin at the centre."""
    from matplotlib.patches import Rectangle

    half = size_in / 2
    n = int(round(size_in / tile_in))
    for i in range(n):
        for j in range(n):
            ax.add_patch(Rectangle((-half + i * tile_in, -half + j * tile_in), tile_in, tile_in,
                                   facecolor="#d9d9d9" if (i + j) % 2 else "#cccccc",
                                   edgecolor="#b0b0b0", linewidth=0.5, zorder=0))
    ax.add_patch(Rectangle((-half, -half), size_in, size_in, fill=False, edgecolor="#333333",
                           linewidth=3, zorder=1))
    pad = 4.0
    ax.set_xlim(-half - pad, half + pad)
    ax.set_ylim(-half - pad, half + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("x (in)")
    ax.set_ylabel("y (in)")


def draw_footprint(ax, pose, length_in: float = 18.0, width_in: float = 18.0,
                   color: str = "k", alpha: float = 1.0, zorder: int = 4):
    """The robot's rectangle with a tick from its centre to its front; returns the artists."""
    from matplotlib.patches import Polygon

    corners = footprint_corners(pose, length_in, width_in)
    poly = Polygon(corners, closed=True, fill=False, edgecolor=color, alpha=alpha,
                   linewidth=1.2, zorder=zorder)
    ax.add_patch(poly)
    x, y, h = pose
    (tick,) = ax.plot([x, x + 0.5 * length_in * np.cos(h)], [y, y + 0.5 * length_in * np.sin(h)],
                      color=color, alpha=alpha, linewidth=1.2, zorder=zorder)
    return poly, tick


def draw_speed_path(ax, points: np.ndarray, speeds_in_s: np.ndarray, vmax: float,
                    label: str = "flattened segments"):
    """Polyline segments coloured by the speed at their start vertex; returns the collection."""
    from matplotlib.collections import LineCollection

    segs = np.stack([points[:-1], points[1:]], axis=1)
    lc = LineCollection(segs, cmap="viridis", linewidths=2.5, zorder=3, label=label)
    lc.set_array(np.asarray(speeds_in_s[: len(segs)], dtype=float))
    lc.set_clim(0.0, vmax)
    ax.add_collection(lc)
    ax.plot(points[:, 0], points[:, 1], ".", color="k", markersize=2, zorder=3)
    return lc


def path_figure(points: np.ndarray, entry_speed_in_s: np.ndarray, vmax: float, *,
                original: np.ndarray | None = None, relaxed: np.ndarray | None = None,
                poses: np.ndarray | None = None, footprint_in=(18.0, 18.0),
                focus: np.ndarray | None = None, zoom_in: float = 14.0, title: str = ""):
    """Left: the field with the original and relaxed curves, the flattened segments
    coloured by entry speed and the robot's footprint at ``poses`` (x, y, heading rows).
    Right (when ``focus`` is given): a ``zoom_in``-inch close-up around that point."""
    plt = pyplot()
    panels = 1 if focus is None else 2
    fig, axes = plt.subplots(1, panels, figsize=(7.2 * panels, 6.6), squeeze=False)
    for n, ax in enumerate(axes[0]):
        draw_field(ax)
        if original is not None:
            ax.plot(original[:, 0], original[:, 1], "--", color="#d62728", linewidth=1.2,
                    label="original curve", zorder=2)
        if relaxed is not None:
            ax.plot(relaxed[:, 0], relaxed[:, 1], "-", color="#1f77b4", linewidth=1.0,
                    label="relaxed curve", zorder=2)
        lc = draw_speed_path(ax, points, entry_speed_in_s, vmax)
        if n == 0:
            for pose in poses if poses is not None else ():
                draw_footprint(ax, pose, *footprint_in, color="#444444", alpha=0.45)
            ax.set_title(title)
        else:
            fx, fy = focus
            ax.set_xlim(fx - zoom_in, fx + zoom_in)
            ax.set_ylim(fy - zoom_in, fy + zoom_in)
            ax.set_title(f"close-up of the slowest turn ({zoom_in * 2:.0f} in wide)")
        ax.legend(loc="upper left", fontsize=8)
    fig.colorbar(lc, ax=axes[0].tolist(), shrink=0.8, label="entry speed (in/s)")
    return fig


def speed_profile_figure(s_in, speed_in_s, vertex_s_in, entry_speed_in_s, corner_speed_in_s,
                         max_speed_in_s: float, title: str = ""):
    """Speed against arc length: the planned profile, the table's entry speeds and the caps
    the turns alone would set."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.8))
    cap = np.minimum(np.asarray(corner_speed_in_s, dtype=float), max_speed_in_s)
    ax.plot(vertex_s_in, cap, ".", color="#ff7f0e", markersize=4, label="turn cap at vertex")
    ax.step(vertex_s_in, entry_speed_in_s, where="post", color="#2ca02c", linewidth=1,
            label="entry speed (backward pass)")
    ax.plot(s_in, speed_in_s, color="#1f77b4", linewidth=1.8, label="planned speed")
    ax.axhline(max_speed_in_s, color="#888888", linestyle=":", linewidth=1, label="max speed")
    ax.set_xlabel("arc length (in)")
    ax.set_ylabel("speed (in/s)")
    ax.set_ylim(0, max_speed_in_s * 1.15)
    ax.set_xlim(0, max(float(np.max(s_in)), 1e-9))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower center", ncol=4)
    ax.set_title(title)
    return fig


def animation_frames(path_points: np.ndarray, poses: np.ndarray, times_s: np.ndarray,
                     footprint_in=(18.0, 18.0), max_frames: int = 48, dpi: int = 60,
                     title: str = "") -> list[np.ndarray]:
    """RGB frames of the robot's footprint moving along ``poses`` over the field."""
    plt = pyplot()
    from matplotlib.patches import Polygon

    fig, ax = plt.subplots(figsize=(5, 5), dpi=dpi)
    draw_field(ax)
    ax.plot(path_points[:, 0], path_points[:, 1], "-", color="#1f77b4", linewidth=1.2)
    trail, = ax.plot([], [], "-", color="#d62728", linewidth=1.5)
    body = Polygon(footprint_corners(poses[0], *footprint_in), closed=True, fill=False,
                   edgecolor="k", linewidth=1.5, zorder=5)
    ax.add_patch(body)
    nose, = ax.plot([], [], "-", color="k", linewidth=1.5, zorder=5)
    label = ax.set_title(title)
    idx = np.unique(np.linspace(0, len(poses) - 1, min(max_frames, len(poses))).astype(int))
    frames = []
    for i in idx:
        body.set_xy(footprint_corners(poses[i], *footprint_in))
        x, y, h = poses[i]
        reach = 0.5 * footprint_in[0]
        nose.set_data([x, x + reach * np.cos(h)], [y, y + reach * np.sin(h)])
        trail.set_data(poses[: i + 1, 0], poses[: i + 1, 1])
        label.set_text(f"{title}  t = {times_s[i]:.2f} s".strip())
        fig.canvas.draw()
        frames.append(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy())
    plt.close(fig)
    return frames


def gif_bytes(frames: list[np.ndarray], fps: float = 12.0) -> bytes:
    """Encode RGB frames as a looping GIF (Pillow, which matplotlib already depends on)."""
    from PIL import Image

    if not frames:
        raise ValueError("a GIF needs at least one frame")
    images = [Image.fromarray(f).convert("P", palette=Image.ADAPTIVE, colors=64) for f in frames]
    buf = io.BytesIO()
    images[0].save(buf, format="GIF", save_all=True, append_images=images[1:],
                   duration=int(round(1000 / fps)), loop=0)
    return buf.getvalue()
