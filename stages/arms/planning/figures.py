"""The gripper paths of the group planner against the independent baseline, drawn."""

from __future__ import annotations

from core.plotting import pyplot


def gripper_paths_figure(group_paths, baseline_paths):
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    colours = {"left": "tab:blue", "right": "tab:orange"}
    for arm, pts in group_paths.items():
        c = colours.get(arm)
        base = baseline_paths[arm]
        for ax, (i, j, lab) in zip(axes, [(1, 0, "top view: y (m) → x (m)"), (1, 2, "front view: y → z")],
                                   strict=True):
            ax.plot(pts[:, i], pts[:, j], "-", color=c, lw=2, label=f"{arm}: ArmGroup")
            ax.plot(base[:, i], base[:, j], "--", color=c, lw=1, label=f"{arm}: independent")
            ax.plot(pts[0, i], pts[0, j], "o", color=c)
            ax.plot(pts[-1, i], pts[-1, j], "s", color=c)
            ax.set_title(lab, fontsize=9)
            ax.set_aspect("equal")
            ax.grid(alpha=0.3)
    axes[0].invert_xaxis()
    axes[1].invert_xaxis()
    axes[0].legend(fontsize=7)
    fig.suptitle("gripper paths (o start, ■ goal)")
    return fig
