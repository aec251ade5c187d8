"""Figures of a drive fit: the forward ramp's voltage against speed with Road Runner's line."""

from __future__ import annotations

import numpy as np

from core.plotting import pyplot
from stages.mecanum.tuning.ramp_logs import ForwardRampLog
from stages.mecanum.tuning.roadrunner_fit import (
    RampFeedforward,
    applied_volts,
    prepared,
    prepared_velocities,
)


def forward_ramp_figure(log: ForwardRampLog, rr: RampFeedforward, in_per_tick: float, title: str = ""):
    """Applied voltage against the wheels' speed (in/s), each logged sample, and Road Runner's
    kS + kV·v line through them."""
    plt = pyplot()
    v = np.mean([prepared_velocities(e) for e in log.forward_encoders], axis=0) * in_per_tick
    volts = applied_volts([prepared(p) for p in log.powers], prepared(log.voltages))
    n = min(len(v), len(volts))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(v[:n], volts[:n], ".", ms=2, color="#1f77b4", label="logged samples")
    speeds = np.linspace(0.0, float(v.max()), 50)
    ax.plot(speeds, rr.kS_v + rr.kV_v_s_per_tick / in_per_tick * speeds, color="#d62728",
            label=f"Road Runner's fit: kS {rr.kS_v:.3f} V, kV {rr.kV_v_s_per_tick / in_per_tick:.4f} V s/in")
    ax.set_xlabel("wheel speed (in/s)")
    ax.set_ylabel("applied voltage (V)")
    ax.set_title(title or "forward ramp", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def tuning_figure(costs: dict[str, list[float]]):
    """Each follower's cost at every evaluation of the tuning, and the best so far."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for (name, c), color in zip(costs.items(), ("#1f77b4", "#d62728", "#2ca02c", "#9467bd"), strict=False):
        ax.plot(range(1, len(c) + 1), c, ".", color=color, alpha=0.5)
        ax.plot(range(1, len(c) + 1), np.minimum.accumulate(c), "-", color=color,
                label=f"{name} (best so far)")
    ax.set_yscale("log")
    ax.set_xlabel("evaluation (every training path once)")
    ax.set_ylabel("cost (in)")
    ax.set_title("one tuning procedure for both followers", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig
