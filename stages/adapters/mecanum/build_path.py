"""Stage build_path: a Bézier path from the ``path`` settings, relaxed and flattened."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from core.artifacts import JsonFile, NpzFile
from core.errors import ConfigError
from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.api import Stage, StageContext, StageResult
from stages.mecanum.paths.build import (
    build_path,
    path_limits,
    path_metrics,
    path_summary,
    validated_chain,
)
from stages.mecanum.paths.bundle import PathBundle
from stages.mecanum.paths.heading import start_heading
from stages.mecanum.paths.pedro import PedroFile, path_from_pp
from stages.mecanum.paths.settings import PathSettings
from stages.mecanum.recording import record_field, record_path


class BuildPath(Stage):
    """Validate a Bézier chain, report its G1 breaks, relax its turns, flatten it."""

    outputs = ("path",)

    def __init__(self, path: Mapping[str, Any] | PathSettings,
                 drive: Mapping[str, Any] | DriveParams | None = None):
        settings = from_config(PathSettings, path, "path")
        self.pedro = None
        if settings.file:   # a Pedro Pathing .pp file: its lines and headings
            if settings.segments:
                raise ConfigError(f"path.segments: given with path.file={settings.file!r}; give one")
            field_path, self.pedro = path_from_pp(settings.file)
            name = Path(settings.file).stem if settings.name in ("pp", "custom") else settings.name
            settings = dataclasses.replace(settings, segments=field_path.segments, name=name,
                                           headings=field_path.segment_headings())
        self.settings = settings
        self.drive = from_config(DriveParams, drive, "drive")
        self.chain = validated_chain(self.settings)
        self.limits = path_limits(self.settings, self.drive)

    def make(self) -> PathBundle:
        """The domain work, without a run folder (tests and other stages call this)."""
        return build_path(self.settings, self.drive, self.chain)

    def run(self, ctx: StageContext) -> StageResult:
        bundle = self.make()
        for j in bundle.joints:
            if not j.g1:
                ctx.log.warning("path %s: G1 break between segments %d and %d (%.1f deg) — "
                                "kept, the robot slows for it", bundle.name, j.index,
                                j.index + 1, np.degrees(j.angle_rad))
        if self.chain.dropped:
            ctx.log.warning("path.segments %s have zero length and were dropped",
                            list(self.chain.dropped))
        record_field(ctx.recorder)
        record_path(ctx.recorder, bundle)
        flat = bundle.flat
        files = {"path.json": JsonFile(path_summary(bundle)),
                 "flat.npz": NpzFile({"points_in": flat.points, "source_u": flat.source_u}),
                 f"{bundle.name}.pp": self._pp(bundle.original, bundle.headings)}   # for the visualizer
        if bundle.relax is not None and bundle.relax.shift_in > 0:   # what this follower drives
            files[f"{bundle.name}_relaxed.pp"] = self._pp(bundle.chain, bundle.headings)
        metrics = {**path_metrics(bundle, self.settings),   # the .pp written, read back: how far off
                   "pp_round_trip_in": files[f"{bundle.name}.pp"].round_trip_in()}
        return StageResult(outputs={"path": bundle}, metrics=metrics, files=files)

    def _pp(self, chain, headings) -> PedroFile:
        """``chain`` as a .pp with the path's ``headings`` (one per segment; none: tangential)."""
        segments = tuple(tuple(map(tuple, seg.p.tolist())) for seg in chain.segments)
        d = chain.segments[0].start_direction()
        same_lines = self.pedro is not None and len(self.pedro.lines) == len(segments)
        return PedroFile(segments, headings or None, start_heading(headings, math.atan2(d[1], d[0])),
                         self.pedro if same_lines else None)
