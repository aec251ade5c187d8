"""Figures of control runs: the field with trajectories, per-tick graphs, the sweep summary.

Plain arrays in, matplotlib figures out (Agg; imported inside the functions). The field,
footprint and GIF helpers are hardware.mecanum.drawing's.
"""

from __future__ import annotations

import numpy as np

from core.plotting import pyplot
from hardware.mecanum import drawing

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _zoom(ax, center, half_in: float, title: str) -> None:
    ax.set_xlim(center[0] - half_in, center[0] + half_in)
    ax.set_ylim(center[1] - half_in, center[1] + half_in)
    ax.set_title(title, fontsize=9)


def field_figure(path_points: np.ndarray, pose: np.ndarray, speed: np.ndarray, vmax: float, *,
                 original: np.ndarray | None = None, footprint_in=(18.0, 18.0),
                 focus: np.ndarray | None = None, zoom_in: float = 16.0, title: str = ""):
    """The path (black), the robot's centre coloured by speed, footprints every ~0.5 s;
    right: a close-up around ``focus`` (the worst deviation)."""
    from matplotlib.collections import LineCollection


    plt = pyplot()
    panels = 2 if focus is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(7.0 * panels, 6.4), squeeze=False)
    lc = None
    for n, ax in enumerate(axes[0]):
        drawing.draw_field(ax)
        if original is not None:
            ax.plot(original[:, 0], original[:, 1], "--", color="#888888", linewidth=1.0,
                    label="authored curve", zorder=2)
        ax.plot(path_points[:, 0], path_points[:, 1], "-", color="k", linewidth=1.0,
                label="flattened path", zorder=3)
        segs = np.stack([pose[:-1, :2], pose[1:, :2]], axis=1)
        lc = LineCollection(segs, cmap="plasma", linewidths=2.2, zorder=4, label="robot centre")
        lc.set_array(np.asarray(speed[:-1], dtype=float))
        lc.set_clim(0.0, vmax)
        ax.add_collection(lc)
        if n == 0:
            step = max(1, len(pose) // 12)
            for p in pose[::step]:
                drawing.draw_footprint(ax, p, *footprint_in, color="#444444", alpha=0.35)
            ax.set_title(title, fontsize=10)
            ax.legend(loc="upper left", fontsize=7)
        else:
            _zoom(ax, focus, zoom_in, f"close-up at the worst deviation ({2 * zoom_in:.0f} in)")
    fig.colorbar(lc, ax=axes[0].tolist(), shrink=0.8, label="speed (in/s)")
    return fig


def teleop_figure(paths: list[np.ndarray], targets: list, pose: np.ndarray, speed: np.ndarray,
                  vmax: float, title: str = ""):
    """The tele-op session on the field: the first path, the robot coloured by speed, every
    Hermite path it was handed (green) and every target (stars)."""
    first = paths[0] if paths else pose[:2, :2]
    fig = field_figure(first, pose, speed, vmax, title=title)
    ax = fig.axes[0]
    for k, p in enumerate(paths):
        ax.plot(p[:, 0], p[:, 1], "-", color="#2ca02c", linewidth=0.9, zorder=3,
                label="Hermite paths" if k == 0 else None)
    for tgt in targets:
        ax.plot(tgt[0], tgt[1], "k*", markersize=9, zorder=6)
    ax.legend(loc="upper left", fontsize=7)
    return fig


def graphs_figure(log, deviation: np.ndarray, title: str = ""):
    """Per tick: speed (and target), acceleration and traction, wheel powers, errors,
    the active controllers."""
    plt = pyplot()
    t = log["time_s"]
    fig, ax = plt.subplots(5, 1, figsize=(9, 11), sharex=True,
                           gridspec_kw={"height_ratios": [1, 1, 1, 1, 0.7]})
    speed = np.hypot(*log["velocity"][:, :2].T)
    ax[0].plot(t, speed, label="speed", color=COLORS[0])
    ax[0].plot(t, log["target_speed_in_s"], "--", label="target / limit", color=COLORS[1])
    ax[0].plot(t, np.abs(log["velocity"][:, 2]) * 10, ":", label="|ω| × 10 (rad/s)",
               color=COLORS[2])
    ax[0].set_ylabel("in/s")
    acc = np.hypot(*log["accel"][:, :2].T)
    ax[1].plot(t, acc, label="|acceleration| (in/s²)", color=COLORS[0])
    ax1b = ax[1].twinx()
    ax1b.plot(t, log["traction"].max(axis=1), color=COLORS[1], linewidth=0.9,
              label="peak wheel traction fraction")
    ax1b.set_ylim(0, 1.1)
    ax1b.set_ylabel("traction fraction")
    ax1b.legend(loc="upper right", fontsize=7)
    ax[1].set_ylabel("in/s²")
    for i, name in enumerate(("leftFront", "leftBack", "rightBack", "rightFront")):
        ax[2].plot(t, log["power"][:, i], label=name, color=COLORS[i], linewidth=0.9)
    ax[2].set_ylim(-1.08, 1.08)
    ax[2].set_ylabel("wheel power")
    ax[3].plot(t, deviation, label="deviation from the path (in)", color=COLORS[0])
    ax[3].plot(t, log["cross_track_in"], label="controller's cross-track / pose error (in)",
               color=COLORS[1], linewidth=0.8)
    ax[3].plot(t, np.degrees(log["heading_error_rad"]), label="heading error (deg)",
               color=COLORS[2], linewidth=0.8)
    ax[3].set_ylabel("error")
    names = sorted({n for a in log.active for n in a.split("+") if n})
    for k, name in enumerate(names):
        on = np.array([name in a.split("+") for a in log.active])
        ax[4].fill_between(t, k - 0.4, k + 0.4, where=on, step="post",
                           color=COLORS[k % len(COLORS)], linewidth=0)
    ax[4].set_yticks(range(len(names)))
    ax[4].set_yticklabels(names, fontsize=7)
    ax[4].set_xlabel("time (s)")
    ax[4].set_title("active controllers", fontsize=8)
    for a in ax[:4]:
        a.grid(alpha=0.3)
        a.legend(loc="upper left", fontsize=7)
    ax[0].set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def compare_figure(path_points: np.ndarray, trajectories: dict[str, np.ndarray],
                   focus: np.ndarray | None = None, zoom_in: float = 16.0, title: str = ""):
    """Every follower's trajectory over the same path; right: a close-up at ``focus``."""

    plt = pyplot()
    panels = 2 if focus is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(7.0 * panels, 6.4), squeeze=False)
    for n, ax in enumerate(axes[0]):
        drawing.draw_field(ax)
        ax.plot(path_points[:, 0], path_points[:, 1], "-", color="k", linewidth=1.2,
                label="path", zorder=3)
        for k, (name, pose) in enumerate(trajectories.items()):
            ax.plot(pose[:, 0], pose[:, 1], "-", color=COLORS[(k + 1) % len(COLORS)],
                    linewidth=1.6, label=name, zorder=4)
            ax.plot(pose[-1, 0], pose[-1, 1], "o", color=COLORS[(k + 1) % len(COLORS)],
                    markersize=4, zorder=5)
        ax.plot(*path_points[-1], "kx", markersize=8, zorder=6, label="end point")
        if n == 0:
            ax.set_title(title, fontsize=10)
        else:
            _zoom(ax, focus, zoom_in, f"close-up ({2 * zoom_in:.0f} in)")
        ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    return fig
