"""One tuning procedure for both followers: the same search, cost, paths and budget.

A comparison of two followers is fair only if neither kept hand-picked gains while the other
was tuned. :func:`tune_gains` tunes any follower's gains the same way, on a given drive model
(the fitted one, :mod:`stages.mecanum.tuning.drive_fit`) and a set of training paths:

- **the gains**: four per follower (:data:`SKIDADDLE_GAINS`: the transverse and along-path time
  constants, the heading loop's natural frequency, the wheels' PIDF kP; :data:`ROADRUNNER_GAINS`:
  the translational position gain (axial and lateral as one), the heading gain, the velocity
  gain (axial and lateral as one), the heading velocity gain), each searched within its bounds;
- **the cost** of one run (:func:`follow_cost`): max deviation + end error (in) + 0.1 s⁻¹ × time
  to stop, summed over the paths; a run that never comes to rest costs :data:`NOT_STOPPED`;
- **the search**: a compass search in log space from the follower's own gains: try each gain ×
  and ÷ the step (2 at first), move to the best that lowers the cost, halve the step's exponent
  when none does, until ``budget`` runs of the whole path set. Deterministic, derivative-free (the
  cost is a simulation with saturations and a discrete end), and the same for both.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.settings import from_config
from stages.mecanum.control.follow_settings import SimSettings
from stages.mecanum.control.follow_sim import simulate
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.paths.bundle import PathBundle
from stages.mecanum.paths.precompute import EntrySpeedTable

# gain name -> (the follower config keys it sets, lower, upper)
Gains = Mapping[str, tuple[tuple[str, ...], float, float]]
SKIDADDLE_GAINS: Gains = {
    "back_onto_path_tau_s": (("back_onto_path.tau_s",), 0.01, 0.5),
    "along_path_tau_s": (("along_path.tau_s",), 0.02, 1.0),
    "heading_omega_n_rad_s": (("heading_control.omega_n_rad_s",), 1.0, 40.0),
    "pidf_kP": (("pidf.kP",), 0.01, 2.0),
}
ROADRUNNER_GAINS: Gains = {
    "translational_gain": (("axial_gain", "lateral_gain"), 0.5, 40.0),
    "heading_gain": (("heading_gain",), 0.5, 40.0),
    "velocity_gain": (("axial_vel_gain", "lateral_vel_gain"), 0.0, 4.0),
    "heading_velocity_gain": (("heading_vel_gain",), 0.0, 4.0),
}
GAINS_BY_KIND: dict[str, Gains] = {"skidaddle": SKIDADDLE_GAINS, "roadrunner": ROADRUNNER_GAINS}
NOT_STOPPED = 100.0          # the cost of a run that never comes to rest (in-equivalents)
TIME_WEIGHT_IN_PER_S = 0.1
FLOOR = 0.01                 # a gain bounded below by 0 is searched in log space from here


@dataclass(frozen=True)
class TuneResult:
    """Tuned gains (name -> value), the follower config with them, the cost before and after, and
    every evaluation (gains, cost) in order."""

    kind: str
    gains: dict[str, float]
    config: dict[str, Any]
    cost_before: float
    cost_after: float
    evaluations: tuple[tuple[dict[str, float], float], ...]


def follow_cost(metrics: Mapping[str, Any]) -> float:
    """One run's cost: max deviation + end error + 0.1 × time to stop; not at rest: NOT_STOPPED."""
    if not metrics.get("stopped", False):
        return NOT_STOPPED
    return (float(metrics["max_deviation_in"]) + float(metrics["end_error_in"])
            + TIME_WEIGHT_IN_PER_S * float(metrics["time_to_stop_s"]))


def with_gains(config: Mapping[str, Any], gains: Gains, values: Mapping[str, float]) -> dict[str, Any]:
    """A copy of the follower ``config`` (plain dicts) with ``values`` set at their keys."""
    out = copy.deepcopy(dict(config))
    for name, value in values.items():
        for key in gains[name][0]:
            node = out
            *parents, leaf = key.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = float(value)
    return out


def current_gains(config: Mapping[str, Any], gains: Gains) -> dict[str, float]:
    """The gains' values in ``config`` (the settings' defaults where it leaves them out)."""
    settings = from_config(FollowerSettings, config, "follower")
    out = {}
    for name, (keys, _, _) in gains.items():
        node: Any = settings
        for part in keys[0].split("."):
            node = getattr(node, part)
        out[name] = float(node)
    return out


def tune_gains(config: Mapping[str, Any], paths: Sequence[tuple[PathBundle, EntrySpeedTable]],
               sim: SimSettings, budget: int = 30,
               progress: Callable[[int, float], None] | None = None) -> TuneResult:
    """Tune the gains of the follower ``config`` (its ``kind`` picks them) on ``paths`` (each
    built on the drive model to tune for) within ``budget`` evaluations of the whole set."""
    kind = str(config["kind"])
    gains = GAINS_BY_KIND[kind]
    log: list[tuple[dict[str, float], float]] = []

    def cost(values: dict[str, float]) -> float:
        settings = from_config(FollowerSettings, with_gains(config, gains, values), "follower")
        total = sum(follow_cost(simulate(settings, bundle, table, sim).metrics) for bundle, table in paths)
        log.append((dict(values), total))
        if progress is not None:
            progress(len(log), total)
        return total

    def clamp(name: str, x: float) -> float:
        _, lo, hi = gains[name]
        return min(max(x, lo if lo > 0 else FLOOR), hi)

    best = current_gains(config, gains)
    best_cost = cost(best)
    before = best_cost
    exponent = math.log(2.0)
    while len(log) < budget and exponent > math.log(1.1):
        trials = []
        for name in gains:
            for sign in (1.0, -1.0):
                value = clamp(name, max(best[name], FLOOR) * math.exp(sign * exponent))
                if value != best[name]:
                    trials.append({**best, name: value})
        improved = False
        for trial in trials:
            if len(log) >= budget:
                break
            c = cost(trial)
            if c < best_cost - 1e-9:
                best, best_cost, improved = trial, c, True
        if not improved:
            exponent /= 2.0
    return TuneResult(kind, best, with_gains(config, gains, best), before, best_cost, tuple(log))

