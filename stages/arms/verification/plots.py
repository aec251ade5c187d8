"""Plots people look at rather than read: clearance over time, joint profiles against limits."""

from __future__ import annotations

import numpy as np

from core.plotting import pyplot


def clearance_figure(report, title: str = "clearance over time"):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.plot(report.times_s, report.distances_m * 1000, lw=1.2, label="smallest distance")
    ax.axhline(report.clearance_m * 1000, color="r", ls="--", lw=1, label="clearance")
    w = report.worst_sample
    ax.plot(report.times_s[w], report.distances_m[w] * 1000, "ko", ms=4)
    ax.annotate(f"{report.distances_m[w] * 1000:.1f} mm\n{report.pairs[w][0]} – {report.pairs[w][1]}",
                (report.times_s[w], report.distances_m[w] * 1000), textcoords="offset points",
                xytext=(8, 8), fontsize=7)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("distance (mm)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def joint_profiles_figure(traj, lower, upper, vel, acc):
    """Positions normalized to their range, velocities and accelerations to their limits."""
    plt = pyplot()
    fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    t = traj.times
    lower, upper = np.asarray(lower), np.asarray(upper)
    pos = 2 * (traj.positions - lower) / (upper - lower) - 1
    rows = [(pos, "position / range"), (traj.velocities / np.asarray(vel), "velocity / limit"),
            (traj.accelerations / np.asarray(acc), "acceleration / limit")]
    for ax, (values, label) in zip(axes, rows, strict=True):
        for j in range(values.shape[1]):
            ax.plot(t, values[:, j], lw=0.9, label=traj.joint_names[j])
        ax.axhline(1, color="r", ls="--", lw=0.8)
        ax.axhline(-1, color="r", ls="--", lw=0.8)
        ax.set_ylabel(label)
        ax.set_ylim(-1.15, 1.15)
        ax.grid(alpha=0.3)
    axes[0].legend(ncol=7, fontsize=6, loc="upper center", bbox_to_anchor=(0.5, 1.35))
    axes[-1].set_xlabel("time (s)")
    return fig
