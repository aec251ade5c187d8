"""Stage build_path: a Bézier path from the ``path`` settings, relaxed and flattened."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import JsonFile, NpzFile
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
from stages.mecanum.paths.settings import PathSettings
from stages.mecanum.recording import record_field, record_path


class BuildPath(Stage):
    """Validate a Bézier chain, report its G1 breaks, relax its turns, flatten it."""

    outputs = ("path",)

    def __init__(self, path: Mapping[str, Any] | PathSettings,
                 drive: Mapping[str, Any] | DriveParams | None = None):
        self.settings = from_config(PathSettings, path, "path")
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
                 "flat.npz": NpzFile({"points_in": flat.points, "source_u": flat.source_u})}
        return StageResult(outputs={"path": bundle}, metrics=path_metrics(bundle, self.settings),
                           files=files)
