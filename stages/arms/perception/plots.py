"""Figures of the calibration fits."""

from __future__ import annotations

import numpy as np


def residual_plot(fit):
    """Per-spot position residuals and per-joint observability of an extrinsics fit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
