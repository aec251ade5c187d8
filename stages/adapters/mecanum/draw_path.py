"""Stage draw_path: the path and its speed limits drawn on the field."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import PngFigure
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.paths.bundle import GifFile, PathBundle, planned_poses, slowest_turn
from stages.mecanum.paths.precompute import EntrySpeedTable
from stages.mecanum.paths.profile import forward_profile
from stages.mecanum.paths.settings import DrawSettings


class DrawPath(Stage):
    """field.png, speed_profile.png and preview.gif (the planned motion, not a simulation)."""

    outputs = ()

    def __init__(self, **params: Any):
        self.settings = from_config(DrawSettings, params, "pipeline.stages.draw")

    def run(self, ctx: StageContext, path: PathBundle, table: EntrySpeedTable) -> StageResult:
        from hardware.mecanum import drawing

        profile = forward_profile(table)
        poses = planned_poses(table, profile.s_in)
        s = self.settings
        pick = np.unique(np.searchsorted(profile.time_s, np.linspace(
            0, profile.duration_s, max(s.footprints, 2))).clip(0, len(poses) - 1))
        footprint = (path.drive.length_in, path.drive.width_in)
        relaxed = path.chain.sample() if path.relax and path.relax.changed else None
        title = f"{path.name}: {table.segments} segments, {table.length_in:.1f} in"
        files: dict[str, Any] = {
            "field.png": PngFigure(drawing.path_figure(
                table.points_in, table.entry_speed_in_s, table.limits.max_speed_in_s,
                original=path.original.sample(), relaxed=relaxed, poses=poses[pick],
                footprint_in=footprint, focus=table.points_in[slowest_turn(table)],
                title=title)),
            "speed_profile.png": PngFigure(drawing.speed_profile_figure(
                profile.s_in, profile.speed_in_s, table.cum_length_in, table.entry_speed_in_s,
                table.corner_speed_in_s, table.limits.max_speed_in_s,
                title=f"{path.name}: planned {profile.duration_s:.2f} s")),
        }
        metrics: dict[str, Any] = {}
        if s.animate:
            frames = drawing.animation_frames(table.points_in, poses, profile.time_s, footprint,
                                              s.max_frames, title=path.name)
            files["preview.gif"] = GifFile(drawing.gif_bytes(frames, s.fps))
            metrics["frames"] = len(frames)
        return StageResult(metrics=metrics, files=files)
