"""Stage fit: Road Runner's own fit of the ramp logs (kS, kV, track width), our kA, and this
project's drive model fitted to the same logs, written as a drive config."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile, PngFigure, TextFile
from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.tuning.drive_fit import drive_yaml_text, fit_drive
from stages.mecanum.tuning.logset import RampLogSet
from stages.mecanum.tuning.plots import forward_ramp_figure
from stages.mecanum.tuning.roadrunner_fit import fit_angular_ramp, fit_forward_feedforward, fit_forward_ramp
from stages.mecanum.tuning.settings import FITTED, FitDriveSettings


class FitDrive(Stage):
    """Fit the logs: Road Runner's numbers (``roadrunner.json``) and the drive model
    (``conf/drive/<name>.yaml``: each value with its source and residual)."""

    outputs = ("drive", "truth")

    def __init__(self, drive: Mapping[str, Any] | DriveParams | None = None, **params: Any):
        self.settings = from_config(FitDriveSettings, params, "pipeline.stages.fit")
        self.drive = from_config(DriveParams, drive, "drive")

    def run(self, ctx: StageContext, logs: RampLogSet) -> StageResult:
        s, ipt = self.settings, logs.in_per_tick
        rr = fit_forward_ramp(logs.forward)
        ours = fit_forward_feedforward(logs.forward, s.window_s)
        angular = fit_angular_ramp(logs.angular, rr)
        given = dataclasses.replace(self.drive, name=s.name)   # what the ramps cannot tell comes from here
        fit = fit_drive(logs.forward, logs.angular, given, ipt, s.window_s)
        kS, kV, _ = rr.per_inch(ipt)
        kS_ours, kV_ours, kA_ours = ours.per_inch(ipt)
        roadrunner = {   # in the units of Road Runner's quickstart (its kV per inch: kV / inPerTick)
            "kS_v": kS, "kV_v_s_per_in": kV, "rms_residual_v": rr.rms_residual_v, "samples": rr.samples,
            "track_width_in": angular.track_width_ticks * ipt, "in_per_tick": ipt,
            "ours_least_squares": {"kS_v": kS_ours, "kV_v_s_per_in": kV_ours, "kA_v_s2_per_in": kA_ours,
                                   "rms_residual_v": ours.rms_residual_v, "samples": ours.samples}}
        metrics = {"rr_kS_v": kS, "rr_kV_v_s_per_in": kV, "rr_track_width_in": roadrunner["track_width_in"],
                   "kS_v": kS_ours, "kV_v_s_per_in": kV_ours, "kA_v_s2_per_in": kA_ours,
                   "k_in": fit.k_in.value, "implied_inertia_kg_m2": fit.implied_inertia_kg_m2}
        for name in FITTED:
            metrics[name] = float(fit.value(name).value)
        if logs.truth is not None:   # simulated logs: how near the truth the fit came
            errors = {name: 100 * (metrics[name] / getattr(logs.truth, name) - 1) for name in FITTED}
            metrics.update({f"{name}_error_pct": e for name, e in errors.items()})
            metrics["max_error_pct"] = max(abs(e) for e in errors.values())
            ctx.log.info("fit against the simulated robot: %s",
                         ", ".join(f"{k} {v:+.2f} %" for k, v in errors.items()))
        files = {f"conf/drive/{s.name}.yaml": TextFile(drive_yaml_text(fit), ".yaml"),
                 "roadrunner.json": JsonFile(roadrunner),
                 "forward_ramp.png": PngFigure(forward_ramp_figure(logs.forward, rr, ipt))}
        ctx.log.info("drive config written: conf/drive/%s.yaml in the stage folder", s.name)
        return StageResult(outputs={"drive": fit.params, "truth": logs.truth}, metrics=metrics, files=files)
