"""Where the calibration spots lie, and the log of what the arms saw at them.

The grid of an arm's spots (:func:`grid_points`, snake order), the peg's poses over the board
(:func:`peg_spot_poses`), and :class:`SpotLog`: the observations the fit takes, every spot's
record (``spots.json``, the report), and the peg's moves in the fingers between two views of the
reference spot (:func:`record_jump`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.se3 import axis_rotation, rotation_angle_deg
from stages.arms.calibration.settings import PegCalibrationSettings, SpotRegion
from stages.arms.perception.extrinsics_model import Observation


def grid_points(region: SpotRegion, grid: tuple[int, int]) -> list[tuple[float, float]]:
    """The ``grid`` [nx, ny] of points over ``region`` (world x, y), in snake order: neighbours are close."""
    gx, gy = grid
    xs = region.center[0] + (np.linspace(-0.5, 0.5, gx) if gx > 1 else np.zeros(1)) * region.size[0]
    ys = region.center[1] + (np.linspace(-0.5, 0.5, gy) if gy > 1 else np.zeros(1)) * region.size[1]
    return [(x, y) for i, x in enumerate(xs) for y in (ys if i % 2 == 0 else ys[::-1])]


def over_board(R: np.ndarray, xy, half: np.ndarray, gap_m: float, surface_z: float) -> np.ndarray:  # noqa: N803
    """The peg's pose turned by ``R`` over the board at ``xy``, its lowest point ``gap_m`` above
    ``surface_z`` (``half``: the peg's half extents)."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = [*xy, surface_z + float(np.abs(R[2, :]) @ half) + gap_m]
    return T


def peg_spot_poses(settings: PegCalibrationSettings, arm: str, R_flat: np.ndarray, half: np.ndarray,  # noqa: N803
                   rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """The arm's spots: (name, the peg's pose) over its grid, the peg as picked (``R_flat``) turned
    by a random yaw and tilts, its lowest point ``gaps_m`` (in turn) above the board."""
    s = settings
    return [(f"{arm}{k:02d}", over_board(spot_turn(s, rng) @ R_flat, xy, half, s.gaps_m[k % len(s.gaps_m)],
                                          s.surface_z))
            for k, xy in enumerate(grid_points(s.region[arm], s.grid))]


def spot_turn(settings: PegCalibrationSettings, rng: np.random.Generator) -> np.ndarray:
    """A spot's random turn of the peg: a yaw (± ``yaw_deg``), then tilts about x and y (± ``tilt_deg``)."""
    s = settings
    return (axis_rotation("z", rng.uniform(-s.yaw_deg, s.yaw_deg))
            @ axis_rotation("x", rng.uniform(-s.tilt_deg, s.tilt_deg))
            @ axis_rotation("y", rng.uniform(-s.tilt_deg, s.tilt_deg)))


def turned_again(settings: PegCalibrationSettings, T_peg: np.ndarray, R_flat: np.ndarray,  # noqa: N803
                 half: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The spot ``T_peg`` (over the same board point, its lowest point as high) at a new random turn."""
    gap = T_peg[2, 3] - settings.surface_z - float(np.abs(T_peg[2, :3]) @ half)
    return over_board(spot_turn(settings, rng) @ R_flat, T_peg[:2, 3], half, gap, settings.surface_z)


def free_end_toward(R_flat: np.ndarray, T_grip_peg: np.ndarray, long_axis: int, cam_pos,  # noqa: N803
                    board_xy) -> np.ndarray:
    """``R_flat`` turned about the vertical so the peg's free end (away from the fingers) points
    at the camera (seen from ``board_xy``): its end face and the free half of its other faces stay
    in view."""
    grip_in_peg = np.linalg.inv(T_grip_peg)[:3, 3]
    free_end = -(np.sign(grip_in_peg[long_axis]) or -1.0) * R_flat[:, long_axis]   # centred: +axis
    to_cam = np.asarray(cam_pos[:2], float) - np.asarray(board_xy, float)
    turn = np.arctan2(to_cam[1], to_cam[0]) - np.arctan2(free_end[1], free_end[0])
    return axis_rotation("z", float(np.degrees(turn))) @ R_flat


@dataclass(frozen=True, eq=False)
class SpotView:
    """One look at a spot, for whoever watches the procedure (the run's recording): the camera's
    ``image`` at ``time_s`` (the simulation's clock), the tags ``detections`` found in it, the
    target's pose ``estimate`` (None: the spot was rejected, ``reason`` says why), the target's tag
    ``layout`` and the ``camera`` model the estimate was made through."""

    time_s: float
    arm: str
    spot: str
    image: np.ndarray
    detections: Any
    estimate: Any
    layout: Any
    camera: Any
    reason: str | None = None


def no_watcher(view: SpotView) -> None:
    """The default ``on_view``: nobody watches."""


@dataclass
class SpotLog:
    """What a calibration saw, spot by spot: the fit's ``observations``, every spot's record
    (``entries``), the spots ``rejected`` (seen badly), ``skipped`` (no plan) and ``dropped``, the
    overlay ``images`` kept (file name -> RGB), and for the peg its true place in the hand
    (``true_grasps``, simulation), each arm's views of the reference, the jumps and the seating."""

    observations: list = field(default_factory=list)
    entries: list = field(default_factory=list)
    rejected: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    images: dict = field(default_factory=dict)
    true_grasps: dict = field(default_factory=dict)   # spot -> T_hand_peg (simulation truth)
    references: dict = field(default_factory=dict)   # arm -> its views of the reference, in turn
    jumped: list = field(default_factory=list)   # the peg jumped in an arm's fingers
    seating: list = field(default_factory=list)   # per arm: did the form-fit grip seat
    outliers: list = field(default_factory=list)   # spots the fit left out (their corner RMS)

    def seen_counts(self) -> dict[str, int]:
        return {"spots": len(self.observations), "spots_rejected": len(self.rejected),
                "spots_skipped": len(self.skipped)}

    def counts(self) -> dict[str, int]:
        final = {r["arm"]: r["seated"] for r in self.seating}   # each arm's last pick
        return {**self.seen_counts(), "spots_dropped": len(self.dropped),
                "spots_left_out": sum(len(e.get("spots_left_out", [])) for e in self.jumped + self.dropped),
                "revisits": sum(len(v) - 1 for v in self.references.values()),
                "spots_outliers": len(self.outliers),
                "unseated_arms": sum(not seated for seated in final.values()),
                "regrasps": len(self.seating) - len(final)}

    def record(self) -> dict[str, list]:
        """The peg calibration's ``spots.json``: kept also when the run fails."""
        return {"spots": self.entries, "rejected": self.rejected, "skipped": self.skipped,
                "dropped": self.dropped, "jumped": self.jumped, "seating": self.seating,
                "outliers": self.outliers}


def leave_out_since_reference(arm: str, log: SpotLog) -> list[str]:
    """Take the arm's spots since its last view of the reference out of the fit (the peg moved in
    the fingers at some moment after it); returns their names."""
    t = log.references[arm][-1].time_s
    left_out = [o.name for o in log.observations if o.arm == arm and o.time_s > t]
    log.observations = [o for o in log.observations if o.arm != arm or o.time_s <= t]
    return left_out


def record_jump(arm: str, log: SpotLog, max_shift_px: float | None,
                max_turn_deg: float | None = None) -> dict | None:
    """Did the peg jump in the fingers since the arm's last reference view? The arm is at the
    same joints, so the tag corners both views show should sit on the same pixels and the tag's
    pose keep its turn; corners more than ``max_shift_px`` apart (median) or a pose turned more
    than ``max_turn_deg``, the peg moved by more than a drift (brushing the board, a knock). A turn
    about the camera's line of sight moves the corners little: a seated peg that turned 6.6° in
    the fingers moved them less than a drift's corner noise. Both figures go into the view's
    record (``revisit_shift_px``, ``revisit_turn_deg``). Where in between the jump came is unknown:
    the arm's spots since that view are left out. Returns the jump (also appended to
    ``log.jumped``), or None (also with both limits None: no check)."""
    now = log.observations[-1]
    last = log.references[arm][-1]
    shift = corner_shift_px(last, now)
    turn = rotation_angle_deg(last.T_cam_target[:3, :3], now.T_cam_target[:3, :3])
    for entry in log.entries[::-1]:
        if entry["spot"] == now.name:
            entry.update(revisit_shift_px=shift, revisit_turn_deg=turn)
            break
    over = ((max_shift_px is not None and shift > max_shift_px)   # NaN (no common tag) is no evidence
            or (max_turn_deg is not None and turn > max_turn_deg))
    if not over:
        return None
    jump = {"arm": arm, "between": [last.name, now.name], "shift_px": shift, "turn_deg": turn,
            "spots_left_out": leave_out_since_reference(arm, log)}
    log.jumped.append(jump)
    return jump


def corner_shift_px(a: Observation, b: Observation) -> float:
    """The median distance (px) between the image points of the tag corners two observations share
    (matched by their place on the target); NaN when they share none."""
    def key(p):
        return tuple(np.round(p, 9))

    seen = {key(p): q for p, q in zip(a.object_points, a.image_points, strict=True)}
    d = [float(np.linalg.norm(np.subtract(q, seen[key(p)])))
         for p, q in zip(b.object_points, b.image_points, strict=True) if key(p) in seen]
    return float(np.median(d)) if d else float("nan")
