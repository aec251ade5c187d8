"""Figures of the calibration fits: the extrinsics residuals, the intrinsics per-view errors."""

from __future__ import annotations

import numpy as np

from core.plotting import pyplot


def residual_plot(fit):
    """Per-spot position residuals and per-joint observability of an extrinsics fit."""
    plt = pyplot()

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.2))
    n = np.arange(len(fit.residuals))
    a1.bar(n, 1000 * np.linalg.norm(fit.residuals[:, :3], axis=1), color="tab:blue")
    a1.set_ylabel("position residual [mm]")
    a1.set_xlabel("spot")
    a1.set_title(f"RMS {1000 * fit.residual_rms_m:.2f} mm, {fit.residual_rms_deg:.3f} deg")
    arms = list(fit.observability)
    width = 0.8 / max(len(arms), 1)
    dof = max(len(v) for v in fit.observability.values())
    for k, a in enumerate(arms):
        a2.bar(np.arange(len(fit.observability[a])) + k * width, fit.observability[a], width, label=a)
    a2.set_xticks(np.arange(dof) + width * (len(arms) - 1) / 2, [f"j{i + 1}" for i in range(dof)])
    a2.set_ylabel("observability (0..1)")
    a2.set_title(f"condition number {fit.condition_number:.0f}")
    a2.legend()
    return fig


def per_view_errors_figure(result):
    """Per-view RMS reprojection errors of a ChArUco intrinsics calibration (an IntrinsicsResult)."""
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7, 3))
    names = list(result.per_view_rms_px)
    ax.bar(range(len(names)), [result.per_view_rms_px[n] for n in names], color="tab:blue")
    ax.axhline(result.rms_px, color="k", lw=1, ls="--", label=f"overall RMS {result.rms_px:.3f} px")
    ax.set_xlabel("view (used)")
    ax.set_ylabel("RMS reprojection error [px]")
    ax.set_title(f"ChArUco calibration: {len(names)} views used, {len(result.views_rejected)} rejected")
    ax.legend()
    return fig
