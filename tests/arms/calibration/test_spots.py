"""The spots' grid and the peg calibration's spot log: a jump of the peg in the fingers."""

from __future__ import annotations

import numpy as np
import pytest

from core.se3 import axis_rotation
from stages.arms.calibration.settings import SpotRegion
from stages.arms.calibration.spots import SpotLog, grid_points, record_jump
from stages.arms.perception.extrinsics_model import Observation


def test_grid_points_snake_over_the_region():
    points = grid_points(SpotRegion((0.5, 0.0), (0.2, 0.1)), (2, 3))
    assert np.allclose(points, [(0.4, -0.05), (0.4, 0.0), (0.4, 0.05), (0.6, 0.05), (0.6, 0.0), (0.6, -0.05)])
    assert np.allclose(grid_points(SpotRegion((0.5, 0.0), (0.2, 0.1)), (1, 3))[0], (0.5, -0.05))


def test_a_peg_that_jumped_between_two_views_of_the_reference_leaves_its_spots_out():
    """At the reference's joints the tag corners keep their pixels unless the peg moved in the
    fingers: a drift of a fraction of a pixel is kept, a jump leaves the spots since the last
    reference view out (where it jumped in between is unknown) and ends the arm's spots."""
    corners = np.random.default_rng(0).uniform(-0.02, 0.02, (8, 3))
    pixels = np.random.default_rng(1).uniform(100, 900, (8, 2))

    def seen(name, t, arm="left", shift_px=0.0):
        return Observation(arm, np.zeros(7), np.eye(4), name=name, time_s=t, object_points=corners,
                           image_points=pixels + [shift_px, 0.0])

    log = SpotLog(observations=[seen("left01", 1.0), seen("right01", 1.5, "right"), seen("left02", 2.0),
                                seen("left01r01", 3.0, shift_px=0.4)])
    log.references["left"] = [log.observations[0]]
    assert record_jump("left", log, 3.0) is None and not log.jumped   # a drift
    log.references["left"].append(log.observations[-1])
    log.observations += [seen("left03", 4.0), seen("left01r02", 5.0, shift_px=9.0)]
    assert record_jump("left", log, None) is None   # no check
    assert record_jump("left", log, 3.0) is not None
    assert [o.name for o in log.observations] == ["left01", "right01", "left02", "left01r01"]
    assert log.jumped == [{"arm": "left", "between": ["left01r01", "left01r02"],
                           "shift_px": pytest.approx(8.6), "turn_deg": 0.0,
                           "spots_left_out": ["left03", "left01r02"]}]
    assert log.counts()["spots_left_out"] == 2


def test_a_peg_turned_in_the_fingers_is_a_jump():
    """A turn about the line of sight hardly moves the corners: the tag's pose shows it. The
    figures go into the view's record."""
    corners = np.random.default_rng(0).uniform(-0.02, 0.02, (8, 3))
    pixels = np.random.default_rng(1).uniform(100, 900, (8, 2))

    def seen(name, t, turn_deg=0.0, shift_px=0.0):
        T = np.eye(4)
        T[:3, :3] = axis_rotation("z", turn_deg)
        return Observation("left", np.zeros(7), T, name=name, time_s=t, object_points=corners,
                           image_points=pixels + [shift_px, 0.0])

    log = SpotLog(observations=[seen("left01", 1.0), seen("left02", 2.0),
                                seen("left01r01", 3.0, turn_deg=6.6, shift_px=0.5)],
                  entries=[{"spot": n} for n in ("left01", "left02", "left01r01")])
    log.references["left"] = [log.observations[0]]
    assert record_jump("left", log, 8.0) is None   # the corners alone: no jump
    assert log.entries[-1] == {"spot": "left01r01", "revisit_shift_px": pytest.approx(0.5),
                               "revisit_turn_deg": pytest.approx(6.6)}
    jump = record_jump("left", log, 8.0, max_turn_deg=0.3)
    assert jump["turn_deg"] == pytest.approx(6.6) and jump["spots_left_out"] == ["left02", "left01r01"]
    assert [o.name for o in log.observations] == ["left01"]


def test_the_spots_the_fit_left_out_are_counted_and_kept_in_the_record():
    log = SpotLog(outliers=[{"spot": "left09", "corner_rms_px": 25.2}])
    assert log.counts()["spots_outliers"] == 1
    assert log.record()["outliers"] == [{"spot": "left09", "corner_rms_px": 25.2}]
