"""The spots' grid and the peg calibration's spot log: a jump of the peg in the fingers."""

from __future__ import annotations

import numpy as np
import pytest

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
                           "shift_px": pytest.approx(8.6), "spots_left_out": ["left03", "left01r02"]}]
    assert log.counts()["spots_left_out"] == 2
