"""Stage perceive: find the tagged peg in the scene camera's image and fit its pose."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import JsonFile, PngImage
from core.errors import PerceptionError
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.perception.peg_view import PegCamera
from stages.arms.perception.settings import PerceiveSettings
from stages.arms.perception.sim import SimState
from stages.arms.recording import record_camera, record_look


class Perceive(Stage):
    """Render the scene camera, estimate the peg's pose, score it against the simulator.

    Settings: :class:`~stages.arms.perception.settings.PerceiveSettings` (``calibration``,
    ``prior``, ``image`` effects, ``detector``, ...). Metrics: ``position_error_m``,
    ``rotation_error_deg``, ``tags_seen`` (the peg's tags detected), ``tags_used``,
    ``foreign_tags``, ``reprojection_px``, ``confidence``, ``time_s`` (detection + fit for the
    frame), ``detect_time_s``. The image and its overlay are saved every time, also on failure.
    """

    outputs = ("estimate",)

    def __init__(self, scene: dict, **settings: Any):
        self.settings = from_config(PerceiveSettings, settings, "pipeline.stages.perception")
        self.camera = PegCamera.from_scene(scene, self.settings)

    def run(self, ctx: StageContext, world, state: SimState) -> StageResult:
        look = self.camera.look(world.model, state.apply(world.model), ctx.rng)
        T_true = np.asarray(state.truth.get("T_world_peg")) if state.truth else None
        ctx.metrics.update({"tags_seen": look.tags_seen, "detect_time_s": look.detections.time_s,
                            "render_time_s": look.render_time_s})
        record_camera(ctx.recorder, look.camera)
        ctx.recorder.set_time_s(state.time)
        try:
            est = self.camera.estimate(look)
        except PerceptionError:
            record_look(ctx.recorder, look.camera, self.camera.layout, look.image, None, look.detections,
                        T_true)
            ctx.save("image.png", PngImage(look.image))
            ctx.save("overlay.png", PngImage(self.camera.overlay(look, None, T_true)))
            raise
        metrics, report = self.camera.report(look, est, T_true)
        if est.foreign_ids:
            ctx.log.info("ignored tag ids not on the %s: %s", self.settings.peg, list(est.foreign_ids))
        if T_true is not None:
            ctx.log.info("peg: %d tags, %.2f mm, %.3f deg, %.2f px rms, conf %.2f", len(est.tag_ids),
                         metrics["position_error_m"] * 1000, metrics["rotation_error_deg"],
                         est.reprojection_px, est.confidence)
        record_look(ctx.recorder, look.camera, self.camera.layout, look.image, est, None, T_true)
        overlay = self.camera.overlay(look, est, T_true)
        files = {"image.png": PngImage(look.image), "overlay.png": PngImage(overlay)}
        zoom = self.camera.zoom(overlay, look, est.T_world_obj)
        if zoom is not None:
            files["overlay_zoom.png"] = PngImage(zoom)
        return StageResult(outputs={"estimate": JsonFile(report)}, metrics=metrics, files=files)
