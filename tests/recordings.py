"""Reading a run's recording.rrd back with Rerun's own reader, for the pipelines' tests."""

from __future__ import annotations

from pathlib import Path

from core.recording_read import RecordingContents, read_recording


def assert_recording(run_dir: Path, required: dict[str, str | None]) -> RecordingContents:
    """``run_dir/recording.rrd`` holds every entity of ``required`` (a path ending ``/*``: at least one
    entity below it) with the given timeline (``None``: logged static, on no timeline)."""
    contents = read_recording(Path(run_dir) / "recording.rrd")
    for entity, timeline in required.items():
        if entity.endswith("/*"):
            found = [e for e in contents.under(entity[:-2]) if e != "/" + entity[:-2].strip("/")]
        else:
            found = [e for e in contents.entity_paths if e == "/" + entity.strip("/")]
        assert found, f"{entity} not in {run_dir}/recording.rrd: {contents.entity_paths}"
        for e in found if not entity.endswith("/*") else found[:1]:
            if timeline is None:
                assert e in contents.static, f"{e} is not static: {contents.timelines[e]}"
            else:
                assert timeline in contents.timelines[e], f"{e} has no {timeline!r}: {contents.timelines[e]}"
    return contents


def check_motion_bag(bag, cfg, min_moves: int = 5):
    """A run's moves as a rosbag2 (``motion_bag/``): every arm's trajectories in the order they ran,
    the executed states."""
    from rosbags.highlevel import AnyReader

    arms = list(cfg.robot.arms)
    with AnyReader([bag]) as reader:
        topics = {c.topic: c for c in reader.connections}
        for arm in arms:
            stamps = [t for _, t, _ in reader.messages(connections=[topics[f"/{arm}/joint_trajectory"]])]
            assert len(stamps) >= min_moves and stamps == sorted(stamps)   # one move after another
        (conn, _, raw), *rest = list(reader.messages(connections=[topics["/joint_states"]]))
        names = list(reader.deserialize(raw, conn.msgtype).name)
        assert names == [j for arm in arms for j in cfg.robot.arms[arm].joints] and len(rest) > 100
