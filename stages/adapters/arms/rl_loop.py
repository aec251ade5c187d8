"""Stage rl_loop: the online RL loop on the peg-insertion task (:mod:`stages.arms.rl.loop`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.artifacts import JsonFile, TextFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.rig import hardware_settings
from stages.arms.planning.goals import planner_settings
from stages.arms.recording import record_rl_loop
from stages.arms.recording.rosbag import BAG_STATE_RATE_HZ, write_motion_bag
from stages.arms.reset.task import TaskSpec
from stages.arms.rl.loop import Slot, run_rl_loop
from stages.arms.rl.policy import policy_factory
from stages.arms.rl.settings import RLLoopSettings
from stages.arms.rl.summary import summarize

KEY = "pipeline.stages.rl_loop"


class RLLoop(Stage):
    """(policy attempts the insertion → automatic success detection → reset) × ``episodes``.

    Settings: :class:`~stages.arms.rl.settings.RLLoopSettings`. Writes ``episodes.jsonl`` as the
    episodes come and ``summary.json``; a failed reset is an episode's record, not the stage's failure.
    """

    outputs = ("episodes",)

    def __init__(self, scene: Mapping[str, Any], task: Mapping[str, Any],
                 planner: Mapping[str, Any] | None = None, hardware: Mapping[str, Any] | None = None,
                 **settings: Any):
        self.scene, self.task = dict(scene), TaskSpec.from_config(task)
        self.settings = from_config(RLLoopSettings, settings, KEY)
        self.policy = policy_factory(self.settings.policy_config, f"{KEY}.policy")
        self.planner, self.hw = planner_settings(planner), hardware_settings(hardware)
        self.slot = Slot.from_scene(self.scene, self.task.fixture)

    def run(self, ctx: StageContext, world) -> StageResult:
        def save(records: list[dict]) -> None:
            ctx.save("episodes.jsonl", TextFile("".join(json.dumps(r) + "\n" for r in records), ".jsonl"))

        run = run_rl_loop(world, self.scene, self.task, self.slot, self.planner, self.hw, self.settings,
                          self.policy.make(ctx.seed), ctx.seed, ctx.rng, ctx.log, ctx.metrics,
                          ctx.progress, save)
        record_rl_loop(ctx.recorder, world, run)
        joints = world.robot.joint_names()
        write_motion_bag(ctx.out_dir / "motion_bag", world, run.moves, run.times_s, run.qpos, joints,
                         state_rate_hz=BAG_STATE_RATE_HZ)
        summary = summarize(run.records)
        ctx.save("summary.json", JsonFile(summary))
        return StageResult(outputs={"episodes": run.records}, metrics=summary)
