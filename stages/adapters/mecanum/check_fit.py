"""Stage check: the tuned followers on the robot, planned on the fitted model.

Every follower (and the Road Runner-style one with its acceleration limit lowered, as teams do on
sharp corners) follows each check path; the simulator runs the true robot when the logs were
simulated (else the fitted model). With a true robot known, each follower also runs planned on the
true model, and the difference in max deviation is what the fit's error costs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.artifacts import TextFile
from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.follow_settings import SimSettings
from stages.mecanum.control.follow_sim import simulate
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.paths.build import build_path
from stages.mecanum.paths.settings import PathSettings

COLUMNS = ("max_deviation_in", "end_error_in", "time_to_stop_s")


class CheckFit(Stage):
    """``paths`` (name -> path config) followed by each tuned follower and by the Road Runner-style
    ones again at ``lowered_accel_in_s2``."""

    outputs = ()

    def __init__(self, paths: Mapping[str, Mapping[str, Any]], lowered_accel_in_s2: float = 30.0,
                 max_time_s: float = 20.0):
        self.paths = {str(k): from_config(PathSettings, v, f"pipeline.params.paths.{k}")
                      for k, v in paths.items()}
        self.lowered = float(lowered_accel_in_s2)
        self.sim = SimSettings(max_time_s=max_time_s)

    def _followers(self, tuned: Mapping[str, Mapping[str, Any]]) -> dict[str, FollowerSettings]:
        out = {}
        for name, cfg in tuned.items():
            out[name] = from_config(FollowerSettings, cfg, f"followers.{name}")
            if cfg.get("kind") == "roadrunner":
                lowered = {**cfg, "name": f"{cfg.get('name', name)}_a{self.lowered:g}",
                           "max_profile_accel_in_s2": self.lowered}
                out[f"{name}_a{self.lowered:g}"] = from_config(FollowerSettings, lowered, f"followers.{name}")
        return out

    def run(self, ctx: StageContext, drive: DriveParams, truth: DriveParams | None,
            followers: Mapping[str, Mapping[str, Any]]) -> StageResult:
        plant = truth or drive
        metrics: dict[str, Any] = {}
        rows = ["| path | follower | " + " | ".join(COLUMNS) + (" | on the true model |" if truth else " |"),
                "|---|---|" + "---:|" * (len(COLUMNS) + bool(truth))]
        followers = self._followers(followers)
        for pname, settings in self.paths.items():
            fitted = build_path(settings, drive)
            true_path = build_path(settings, truth) if truth is not None else None
            for fname, follower in followers.items():
                m = simulate(follower, fitted, fitted.entry_speeds(), self.sim, ctx.seed, plant=plant).metrics
                cells = [f"{m[c]:.3f}" for c in COLUMNS]
                key = f"{ctx.name}.{pname}.{fname}"   # scoped keys are kept as they are (stages.graph)
                for c in COLUMNS:
                    metrics[f"{key}.{c}"] = m[c]
                if true_path is not None:   # the same follower planned on the true model
                    t = simulate(follower, true_path, true_path.entry_speeds(), self.sim, ctx.seed).metrics
                    diff = abs(m["max_deviation_in"] - t["max_deviation_in"])
                    metrics[f"{key}.model_error_deviation_in"] = diff
                    cells.append(f"{t['max_deviation_in']:.3f} (Δ {diff:.3f})")
                rows.append(f"| {pname} | {fname} | " + " | ".join(cells) + " |")
                ctx.log.info("%s on %s: max deviation %.3f in", fname, pname, m["max_deviation_in"])
        if truth is not None:
            metrics["max_model_error_deviation_in"] = max(
                v for k, v in metrics.items() if k.endswith("model_error_deviation_in"))
        table = "\n".join(rows) + "\n"
        return StageResult(outputs={}, metrics=metrics, files={"table.md": TextFile(table, ".md")})
