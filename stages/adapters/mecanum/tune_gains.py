"""Stage tune: every follower's gains tuned by the one procedure on the fitted drive model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from tqdm.auto import tqdm

from core.artifacts import JsonFile, PngFigure, TextFile
from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.control.follow_settings import SimSettings
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.paths.build import build_path
from stages.mecanum.paths.settings import PathSettings
from stages.mecanum.tuning.gains import tune_gains
from stages.mecanum.tuning.plots import tuning_figure
from stages.mecanum.tuning.settings import TuneSettings


class TuneGains(Stage):
    """Tune ``followers`` (name -> follower config) on ``paths`` (name -> path config) built
    for the fitted drive; writes each as ``conf/follower/<drive>_<name>.yaml``."""

    outputs = ("followers",)

    def __init__(self, followers: Mapping[str, Mapping[str, Any]], paths: Mapping[str, Mapping[str, Any]],
                 **params: Any):
        self.settings = from_config(TuneSettings, params, "pipeline.stages.tune")
        for name, cfg in followers.items():   # each checked now: a typo fails before any run
            from_config(FollowerSettings, cfg, f"pipeline.params.followers.{name}")
        self.followers = {str(k): dict(v) for k, v in followers.items()}
        self.paths = {str(k): from_config(PathSettings, v, f"pipeline.params.paths.{k}")
                      for k, v in paths.items()}

    def run(self, ctx: StageContext, drive: DriveParams) -> StageResult:
        s = self.settings
        built = [(b, b.entry_speeds()) for b in (build_path(p, drive) for p in self.paths.values())]
        sim = SimSettings(max_time_s=s.max_time_s)
        tuned, metrics, files, results = {}, {}, {}, {}
        for name, cfg in self.followers.items():
            with tqdm(total=s.budget, desc=f"tune {name}", leave=False, disable=None) as bar:
                r = tune_gains(cfg, built, sim, s.budget, progress=lambda n, c: bar.update(1))
            out_name = f"{drive.name}_{name}"
            tuned[name] = {**r.config, "name": out_name}
            results[name] = r
            key = f"{ctx.name}.{name}"   # scoped keys are kept as they are (stages.graph)
            metrics.update({f"{key}.cost_before": r.cost_before, f"{key}.cost_after": r.cost_after,
                            f"{key}.evaluations": len(r.evaluations),
                            **{f"{key}.{g}": v for g, v in r.gains.items()}})
            files[f"conf/follower/{out_name}.yaml"] = TextFile(
                f"# {name} tuned on drive {drive.name} (pipeline=fit_drive; stages/mecanum/tuning/gains.py):"
                "\n"
                f"# cost {r.cost_before:.3f} -> {r.cost_after:.3f} over {list(self.paths)} "
                f"in {len(r.evaluations)} runs\n" + yaml.safe_dump(tuned[name], sort_keys=False), ".yaml")
            ctx.log.info("%s tuned: cost %.3f -> %.3f, %s", name, r.cost_before, r.cost_after, r.gains)
        files["tuning.json"] = JsonFile({
            n: {"gains": r.gains, "cost_before": r.cost_before, "cost_after": r.cost_after,
                "evaluations": [{"gains": g, "cost": c} for g, c in r.evaluations]}
            for n, r in results.items()})
        costs = {n: [c for _, c in r.evaluations] for n, r in results.items()}
        files["tuning.png"] = PngFigure(tuning_figure(costs))
        return StageResult(outputs={"followers": tuned}, metrics=metrics, files=files)
