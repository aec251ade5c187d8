"""Settings of the two extrinsics calibrations: the tagged peg carried over the board
(:mod:`~stages.arms.calibration.peg_procedure`, ``pipeline=calibrate_peg``) and the tag plates
on the hands (:mod:`~stages.arms.calibration.plate_procedure`, ``pipeline=calibrate``).

Build them with ``core.settings.from_config(PegCalibrationSettings, cfg, "pipeline.stages.extrinsics")``:
a wrong key, type or value is a ConfigError naming the full key and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from core.settings import require
from stages.arms.perception.camera import ImageEffects
from stages.arms.perception.settings import SceneCameraSettings
from stages.arms.reset.settings import ResetSettings

Loss = Literal["linear", "soft_l1", "huber", "cauchy", "arctan"]
GraspDirection = Literal["tx", "ty", "tz", "rx", "ry", "rz"]


@dataclass(frozen=True)
class SpotRegion:
    """Where an arm's grid of spots lies: around ``center`` [x, y], ``size`` [sx, sy] across (world, m)."""

    center: tuple[float, float]
    size: tuple[float, float]


@dataclass(frozen=True)
class FitSettings:
    """The joint fit's options (:func:`~stages.arms.perception.extrinsics.fit_extrinsics`): the
    ``residual`` (``corners``: the tag corners, px; ``pose``: m and rad), the robust ``loss`` and its
    inlier scale ``f_scale`` (the residual's units; null: 2 mm / 1 px), the pose residual's
    ``rotation_weight_m`` and ``depth_weight``, and the ``observability_threshold`` below which a
    joint is held at zero."""

    residual: Literal["corners", "pose"] = "corners"
    loss: Loss = "soft_l1"
    f_scale: float | None = None
    rotation_weight_m: float = 0.05
    depth_weight: float = 1.0
    observability_threshold: float = 0.02

    def options(self) -> dict[str, Any]:
        """These settings as ``fit_extrinsics`` keyword arguments."""
        return {f.name: getattr(self, f.name) for f in fields(FitSettings)}


@dataclass(frozen=True)
class PegFitSettings(FitSettings):
    """The fit with the peg held in the hand: its grasp's free directions (``grasp_free``, in the
    hand frame), and how they drift over the spots: ``grasp_creep`` (one steady rate) or
    ``grasp_knots`` (piecewise linear, a knot at every revisit of the reference spot)."""

    grasp_free: tuple[GraspDirection, ...] = ("tx", "tz", "ry")
    grasp_creep: bool = False
    grasp_knots: bool = False

    def __post_init__(self):
        require(len(set(self.grasp_free)) == len(self.grasp_free), "grasp_free", list(self.grasp_free),
                "each direction at most once")
        require(not (self.grasp_knots and self.grasp_creep), "grasp_knots", self.grasp_knots,
                "false while grasp_creep is true: the two model the same drift; set one")

    def grasp_options(self) -> dict[str, Any]:
        """The options with the grasp's free directions and creep (the knots are times, given apart)."""
        return {**self.options(), "grasp_free": self.grasp_free, "grasp_creep": self.grasp_creep}


def _check_grid(grid: tuple[int, int]) -> None:
    gx, gy = grid
    require(gx >= 1 and gy >= 1 and gx * gy >= 3, "grid", list(grid), "[nx, ny] with at least 3 spots")


def _check_regions(arms: tuple[str, ...], regions: dict[str, SpotRegion]) -> None:
    missing = [a for a in arms if a not in regions]
    require(not missing, "region", sorted(regions),
            f"an entry {{center: [x, y], size: [sx, sy]}} for every arm of {list(arms)}; none for {missing}")


@dataclass(frozen=True)
class PegCalibrationSettings:
    """The tagged-peg calibration (see :class:`~stages.arms.calibration.peg_procedure.PegCalibration`).

    Spots: per arm a ``grid`` [nx, ny] over ``region.<arm>``; the peg lying as picked (at
    ``grasp_positions`` along it), turned by a random yaw (± ``yaw_deg``), tilted by ± ``tilt_deg``
    about x and y, its lowest point ``gaps_m`` (in turn) above ``surface_z``; ``settle_s`` of rest
    before a view of ``frames`` images averaged. A view counts with at least ``min_tags`` tags and
    ``min_confidence``. The reference: ``revisit_every`` seen spots (0: never), a chosen view
    ``reference_gap_m`` up turned by ``reference_turns_deg`` (null: the first seen spot), a jump
    above ``max_revisit_shift_px`` or ``max_revisit_turn_deg`` (null: no check). The form-fit
    grip: ``seat_swings`` of ``seat_swing_rad`` until the fingers are below ``seat_opening_m``,
    ``regrasps`` picks more. A spot no plan reaches at its turn is tried at ``spot_tries`` turns
    in all. ``max_residual_px``: the median spot's corner RMS a fit may leave; spots left
    with more than ``outlier_px`` are taken out and the fit run again. Simulation:
    ``hidden_offsets_max_deg`` (when ``hardware.joint_offsets_deg`` is unset),
    ``hold_noslip_iterations``; ``save_spots`` images saved."""

    camera: SceneCameraSettings = field(default_factory=SceneCameraSettings)
    reset: ResetSettings = field(default_factory=ResetSettings)
    arms: tuple[str, ...] = ("left", "right")
    grid: tuple[int, int] = (4, 4)
    region: dict[str, SpotRegion] = field(default_factory=dict)
    gaps_m: tuple[float, ...] = (0.02, 0.1, 0.18)
    yaw_deg: float = 80.0
    tilt_deg: float = 30.0
    surface_z: float = 0.753
    hidden_offsets_max_deg: float = 1.0
    settle_s: float = 0.5
    fit: PegFitSettings = field(default_factory=PegFitSettings)
    min_confidence: float = 0.2
    min_tags: int = 1
    grasp_positions: tuple[float, ...] = (0.0,)
    save_spots: int = 4
    max_residual_px: float = 2.0
    outlier_px: float | None = None
    revisit_every: int = 0
    frames: int = 1
    hold_noslip_iterations: int = 0
    reference_gap_m: float | None = None
    reference_turns_deg: tuple[float, ...] = (50.0, -50.0, 35.0, -35.0)
    max_revisit_shift_px: float | None = None
    max_revisit_turn_deg: float | None = None
    seat_swings: int = 0
    seat_swing_rad: float = 0.5
    seat_opening_m: float = 0.0375   # pad to pad, studs included
    regrasps: int = 0
    spot_tries: int = 1

    def __post_init__(self):
        require(len(self.arms) >= 1, "arms", list(self.arms), "at least one arm")
        _check_grid(self.grid)
        _check_regions(self.arms, self.region)
        require(len(self.gaps_m) >= 1, "gaps_m", list(self.gaps_m), "at least one gap (m)")
        require(self.revisit_every >= 0, "revisit_every", self.revisit_every, ">= 0 (0: never)")
        require(self.hold_noslip_iterations >= 0, "hold_noslip_iterations", self.hold_noslip_iterations,
                ">= 0 (0: off)")
        require(self.frames >= 1, "frames", self.frames, ">= 1 (frames averaged per view)")
        require(self.max_revisit_shift_px is None or self.max_revisit_shift_px > 0, "max_revisit_shift_px",
                self.max_revisit_shift_px, "> 0 px (null: no check)")
        require(self.max_revisit_turn_deg is None or self.max_revisit_turn_deg > 0, "max_revisit_turn_deg",
                self.max_revisit_turn_deg, "> 0 deg (null: no check)")
        require(self.spot_tries >= 1, "spot_tries", self.spot_tries, ">= 1")
        require(self.regrasps >= 0, "regrasps", self.regrasps,
                ">= 0 (picks again when the grip does not seat)")
        require(self.seat_swings >= 0, "seat_swings", self.seat_swings, ">= 0 (0: no seating)")
        require(0 < self.seat_swing_rad <= 1.5, "seat_swing_rad", self.seat_swing_rad, "in (0, 1.5] rad")
        require(self.seat_opening_m > 0, "seat_opening_m", self.seat_opening_m, "> 0 (m)")
        require(not self.fit.grasp_knots or self.revisit_every >= 1, "fit.grasp_knots", self.fit.grasp_knots,
                "false unless revisit_every >= 1: the knots sit at the reference revisits")


PLATE_REGIONS = {"left": SpotRegion((0.55, 0.23), (0.22, 0.22)),
                 "right": SpotRegion((0.55, -0.23), (0.22, 0.22))}


@dataclass(frozen=True)
class PlateCalibrationSettings:
    """The tag-plate calibration (see :class:`~stages.arms.calibration.plate_procedure.PlateCalibration`).

    Spots: per arm a ``grid`` over ``region.<arm>`` (the arms not given: :data:`PLATE_REGIONS`) of
    the gripper site, at ``heights_m`` in turn, pointing down turned by a random yaw (± ``yaw_deg``),
    pitch (``pitch_deg`` range) and roll (± ``roll_deg``), and a random elbow (± ``elbow_rad``).
    Spots whose plate is more than ``max_incidence_deg`` from facing the camera are skipped, and IK
    solutions closer than ``spot_clearance_m`` (null: what plans need) replaced. Moves are planned
    with ``plan_padding_m`` of extra clearance within ``plan_budget_s`` and driven at
    ``speed_rad_s``, ``settle_s`` of rest before a view (``image`` effects) that counts with
    ``min_confidence``. ``targets``: the scene object each arm carries (default
    ``<arm>_hand_tags``). ``hidden_offsets_deg``: ``{arm: [values]}``; null = uniform in
    ± ``hidden_offsets_max_deg``."""

    arms: tuple[str, ...] = ("left", "right")
    targets: dict[str, str] | None = None
    camera: str = "scene_camera"
    grid: tuple[int, int] = (4, 4)
    region: dict[str, SpotRegion] = field(default_factory=dict)
    heights_m: tuple[float, ...] = (0.9, 1.02)
    yaw_deg: float = 30.0
    pitch_deg: tuple[float, float] = (-35.0, 5.0)
    roll_deg: float = 25.0
    elbow_rad: float = 0.5
    hidden_offsets_deg: dict[str, tuple[float, ...]] | None = None
    hidden_offsets_max_deg: float = 1.0
    speed_rad_s: float = 0.8
    settle_s: float = 0.6
    image: ImageEffects = field(default_factory=ImageEffects)
    fit: FitSettings = field(default_factory=FitSettings)
    max_incidence_deg: float = 60.0
    min_confidence: float = 0.3
    spot_clearance_m: float | None = None
    plan_padding_m: float = 0.018
    plan_budget_s: float = 10.0
    save_spots: int = 4

    def __post_init__(self):
        require(len(self.arms) >= 1, "arms", list(self.arms), "at least one arm")
        if self.targets is not None:
            missing = [a for a in self.arms if a not in self.targets]
            require(not missing, "targets", self.targets,
                    f"a scene object for every arm of {list(self.arms)}; none for {missing}")
        _check_grid(self.grid)
        _check_regions(self.arms, self.regions)
        require(len(self.heights_m) >= 1, "heights_m", list(self.heights_m), "at least one height (m)")

    @property
    def regions(self) -> dict[str, SpotRegion]:
        """Every arm's region: the given ones over :data:`PLATE_REGIONS`."""
        return {**PLATE_REGIONS, **self.region}

    @property
    def arm_targets(self) -> dict[str, str]:
        """The scene object (a tag plate) each arm carries."""
        targets = self.targets if self.targets is not None else {a: f"{a}_hand_tags" for a in self.arms}
        return {a: targets[a] for a in self.arms}
