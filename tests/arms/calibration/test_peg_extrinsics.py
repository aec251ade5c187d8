"""The peg-based extrinsics: each arm picks the tagged peg in physics and holds it over the board."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from stages.__main__ import run_config
from tests.recordings import assert_recording, check_motion_bag

FAST = ["scene.lights.key.castshadow=false", "pipeline.params.views=8"]
# the peg held by friction alone (reset_cell), its drift in the fingers fitted with knots at revisits
FRICTION = ["scene=reset_cell", "pipeline.stages.extrinsics.seat_swings=0",
            "pipeline.stages.extrinsics.revisit_every=1", "pipeline.stages.extrinsics.fit.grasp_knots=true",
            "pipeline.stages.extrinsics.max_revisit_turn_deg=null"]


def test_the_form_fit_grip_seats_and_holds_the_peg_still_over_the_spots(compose, tmp_path):
    """The default cell: the pads' studs in the peg's pockets; one constant grasp per arm."""
    run = tmp_path / "formfit"
    # seed 4: since the fingers stay open while the peg is dropped and the arm controller feeds the
    # joints' damping forward, seed 3's left grip seats only at its second pick (seed 5's right, too)
    cfg = compose(["pipeline=calibrate_peg", *FAST, "pipeline.params.grid=[3,3]", "seed=4"], run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error
    m = json.loads((run / "metrics.json").read_text())
    spots = json.loads((run / "extrinsics" / "spots.json").read_text())
    # each arm's grip seats at its first pick (the simulation keeps its own clock: the same on a busy machine)
    seating = spots["seating"]
    assert [(r["arm"], r["seated"]) for r in seating] == [("left", True), ("right", True)], seating
    assert all(r["opening_after_mm"] < 41.5 for r in seating), seating
    assert m["extrinsics.unseated_arms"] == 0 and m["extrinsics.revisits"] >= 2
    assert m["extrinsics.spots"] >= 6
    assert m["extrinsics.grasp_slip_m_max"] < 0.5e-3   # friction alone: ~10 mm over a run
    assert m["extrinsics.joint_offset_error_deg_max"] < 0.5


def test_a_grip_that_does_not_seat_is_picked_again_then_fails_typed(compose, tmp_path):
    run = tmp_path / "regrasp"
    never = ["pipeline.stages.extrinsics.seat_opening_m=0.03", "pipeline.stages.extrinsics.seat_swings=1",
             "pipeline.stages.extrinsics.regrasps=1", "pipeline.stages.extrinsics.arms=[left]"]
    cfg = compose(["pipeline=calibrate_peg", *FAST, "pipeline.params.grid=[2,2]", "seed=7", *never],
                  run_dir=run)
    record = run_config(cfg, run)   # never seated: no calibration from a grip one grasp does not describe
    assert not record.ok and "did not seat in arm 'left'" in str(record.error), record.error
    seating = json.loads((run / "extrinsics" / "spots.json").read_text())["seating"]
    assert [(r["arm"], r["seated"], r["swings"]) for r in seating] == [("left", False, 1), ("left", False, 1)]
    assert json.loads((run / "metrics.json").read_text())["extrinsics.regrasps"] == 1
    assert json.loads((run / "status.json").read_text())["failed_stage"] == "extrinsics"


def test_peg_spots_are_carried_seen_and_fitted(compose, tmp_path):
    run = tmp_path / "peg"
    offsets = "{left:[0.5,-0.3,0.4,0.2,-0.6,0.4,-0.5],right:[-0.4,0.3,-0.2,0.5,0.3,-0.4,0.6]}"
    options = [f"pipeline.stages.extrinsics.{k}" for k in (   # a burst per view, noslip, a chosen reference
        "frames=4", "hold_noslip_iterations=30", "reference_gap_m=0.1")]
    cfg = compose(["pipeline=calibrate_peg", *FAST, *FRICTION, "pipeline.params.grid=[3,3]", "seed=1",
                   f"hardware.joint_offsets_deg={offsets}", *options], run_dir=run)
    record = run_config(cfg, run)
    assert record.ok, record.error
    m = json.loads((run / "metrics.json").read_text())
    for key in ("extrinsics.spots", "extrinsics.residual_rms_m", "extrinsics.joint_offset_error_deg_max",
                "extrinsics.camera_position_error_m", "extrinsics.condition_number",
                "extrinsics.grasp_slip_m_max", "extrinsics.known_grasp_camera_position_error_m"):
        assert key in m, key
    assert m["extrinsics.spots"] >= 6
    assert np.isfinite(m["extrinsics.known_grasp_joint_offset_error_deg_max"])   # the error split
    assert np.isfinite(m["extrinsics.rigid_grasp_joint_offset_error_deg_max"])
    report = json.loads((run / "extrinsics" / "report.json").read_text())
    assert report["hidden_offsets_deg"]["left"][0] == pytest.approx(0.5)
    seen = [s for s in report["spots"] if "tag_ids" in s]
    assert {s["arm"] for s in seen} == {"left", "right"}
    for s in seen:   # really in the hand, above the board: not lying on the table
        assert np.asarray(s["peg_target"])[2, 3] > 0.77
        if len(s["tag_ids"]) > 1:   # a single tag's pose may be the flip; its corners still count
            assert s["perception_position_error_m"] < 0.02, s
    # the reference spot revisited: the same joints, so only the peg can have moved there
    revisits = [s for s in seen if re.search(r"r\d\d$", s["spot"])]
    assert m["extrinsics.revisits"] >= len(revisits) >= 2
    assert any("ref" in s["spot"] for s in revisits)   # a reference chosen for its view, not the first spot
    for s in revisits:
        first = next(r for r in seen if r["spot"] == s["spot"][:-3])
        assert np.allclose(s["q_believed"], first["q_believed"], atol=5e-3)
        assert s["time_s"] > first["time_s"]
    assert len(report["grasp_corrections"]["left"]["tz_at_knots"]) >= 2
    assert (run / "extrinsics" / "calibration.yaml").exists()
    check_motion_bag(run / "extrinsics" / "motion_bag", cfg)   # every pick, spot and set-down
    assert isinstance(json.loads((run / "extrinsics" / "spots.json").read_text())["jumped"], list)
    c = assert_recording(run, {   # every look at a spot, the motion, the fitted camera beside the true one
        "world/camera/image": "time", "world/camera/image/tag_corners": "time", "world/peg_estimate": "time",
        "calibration/log": "time", "world/executed/*": "time", "world/camera_fit": None,
        "calibration/fit": None})
    looks = len(report["spots"])
    assert c.rows["/calibration/log"] == looks and c.rows["/world/camera/image"] >= looks


def test_a_dropped_peg_ends_the_arms_spots_and_nothing_is_lost(compose, tmp_path, monkeypatch):
    """The fingers close on nothing at a spot: the arm opens, goes home around the fallen peg, and
    the run fails typed (too few spots) with the spots so far and the drop in spots.json."""
    from stages.arms.reset.rig import ResetRig

    real, calls = ResetRig.finger_opening_m, {"n": 0}

    def opening(self, arm):   # calls 1-2: the pick's own checks; then one per spot
        calls["n"] += 1
        return 0.0 if calls["n"] == 4 else real(self, arm)

    monkeypatch.setattr(ResetRig, "finger_opening_m", opening)
    run = tmp_path / "drop"
    cfg = compose(["pipeline=calibrate_peg", *FAST, *FRICTION, "pipeline.params.grid=[3,3]", "seed=1",
                   "pipeline.stages.extrinsics.arms=[left]"], run_dir=run)
    record = run_config(cfg, run)
    # home went well: the failure is the fit's (too few spots, or none seen before the drop)
    assert not record.ok and re.search("spots give|no spot of arm", str(record.error)), record.error
    spots = json.loads((run / "extrinsics" / "spots.json").read_text())
    assert spots["dropped"] and spots["dropped"][0]["arm"] == "left"
    # it fell at the second spot, before any reference: nothing seen since to leave out
    assert spots["dropped"][0]["spot"] == "left01"
    assert spots["dropped"][0].get("spots_left_out", []) == []
    assert [s["spot"] for s in spots["spots"] if s["arm"] == "left"] == ["left00"]
    status = json.loads((run / "status.json").read_text())
    assert status["failed_stage"] == "extrinsics"


def test_a_fit_that_does_not_explain_the_spots_fails_typed(compose, tmp_path):
    run = tmp_path / "strict"
    strict = ["pipeline.stages.extrinsics.arms=[left]", "pipeline.stages.extrinsics.max_residual_px=0.01"]
    cfg = compose(["pipeline=calibrate_peg", *FAST, "pipeline.params.grid=[3,3]", "seed=2", *strict],
                  run_dir=run)
    record = run_config(cfg, run)
    assert not record.ok and "max_residual_px" in str(record.error), record.error
    assert (run / "extrinsics" / "report.json").exists() and (run / "extrinsics" / "spots.json").exists()
    assert not (run / "extrinsics" / "calibration.yaml").exists()   # no calibration saved from it
