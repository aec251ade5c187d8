"""One least-squares fit of the camera's pose and the arms' joint zero offsets.

Data: observations, each a pair of (the joint angles an arm *believed* it had — its encoder
readings with nominal zeros — and the pose of a target rigidly carried by that arm as the camera
measured it, in the camera frame). Model: the true joint angles are ``q_believed + offset``; the
target's world pose is ``fk(arm, q_believed + offset)``; the camera sees it at
``inv(T_world_cam) @ fk(...)``. Unknowns: the camera's pose in the world (= arm-base / torso)
frame (6) and every fitted arm's joint offsets (7 each). ``fk`` is any callable, so the fit is
tested on synthetic kinematics and run on MuJoCo's.

Residuals per observation, ``residual="pose"``: position difference (m, camera
frame; the depth component times ``depth_weight``, since a camera measures depth several times
less precisely than the lateral position) and rotation difference (rotation vector, rad, times
``rotation_weight_m``, so 1 mrad counts as ``rotation_weight_m`` mm). ``residual="corners"``
(the default) compares the same observed pose in the camera's own terms: the detected tag
corners behind it against the target's corners projected through the model (pixels, needs the
camera matrix) — a bundle adjustment that weights each direction by what the image really
measures (a camera measures depth and out-of-plane tilt of a small plate far less precisely
than its lateral position). On the calibrate pipeline's spots it recovered the hidden offsets
5x more accurately than the pose residual (0.017 vs 0.090 deg worst joint, seed 1).
``scipy.optimize.least_squares`` with a robust loss (``soft_l1``; scale ``f_scale`` in the
residual's units).
**A target held in the hand** (``grasps``): a peg picked up is not bolted to the hand; where the
fingers hold it is known only roughly. ``grasps[arm]`` is the nominal ``T_hand_target`` and
``fk`` then returns the hand's pose; the fit adds, per arm, the grasp's free directions
(``grasp_free``; default ``("tx", "tz", "ry")``: along the peg and the approach, and the pivot
about the fingers' closing axis ``y`` — a parallel gripper's pads fix the rest). The true target
is ``fk(arm, q + offset) @ G(params) @ T_hand_target`` with ``G`` those translations (m) and
rotations (rad) in the hand frame. ``grasp_creep=True`` adds, per arm, a rate for each of them
(``G(params + (t - t0) rates)``, ``t`` an observation's ``time_s``, ``t0`` the arm's first): a
friction grasp under a steady load creeps at a near-constant rate (MuJoCo's soft friction: the
calibrate_peg fits find ~0.06 mm/s along the approach and ~0.03 deg/s pivot). ``grasp_knots``
(per arm, times in s) makes them piecewise linear in time instead, one value per knot, held
beyond the first and last: the drift is not steady (it slows, and jumps at some moves), and the
calibrate_peg procedure puts a knot at every revisit of an arm's reference spot, where the joints
are the same and only the grasp can have changed. A fully free grasp (6) would
swallow the last joint's offset (a constant turn in the hand frame); with the pads' constraints
it stays observable.

The camera pose starts from a closed-form rigid alignment (Kabsch) of the observed target
positions to the nominal-kinematics ones, the offsets from zero; no prior knowledge is needed.

**Observability.** With the Jacobian ``J`` of the residuals (central differences, at the start
and at the solution), columns scaled to unit length: ``condition_number`` = ratio of its largest
to smallest singular value (all 6 + 7k parameters); a parameter's ``observability`` (0..1) is the
length of the part of its column that no combination of the other columns can produce
(``1/sqrt(inv(Jn^T Jn)_jj)``): 1 = measured independently, 0 = indistinguishable from the others.
Joints below ``observability_threshold`` at the start are *unobservable from these spots*: they
are held at zero (not fitted), named in ``unobservable``, and a warning says so.

A fact worth knowing: the first joint of an arm turns the whole arm about the vertical axis
through its base, which the camera cannot tell from the camera itself turning about that axis.
With one arm, joint 1's offset is never observable from camera data (the warning says so and
the camera pose absorbs it). Two arms on one torso, fitted together with one camera, separate
it: the camera cannot turn about two different axes at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.errors import PerceptionError
from core.se3 import invert, matrix_to_rotvec, rigid_align, rotvec_to_matrix

ForwardKinematics = Callable[[str, np.ndarray], np.ndarray]
"""``fk(arm, q) -> T_world_target`` (4x4) at true joint angles ``q``."""


@dataclass(frozen=True)
class Observation:
    """One spot: what the arm believed, what the camera saw.

    ``object_points`` (N, 3, target frame) and ``image_points`` (N, 2) are the detected tag
    corners behind ``T_cam_target``; only ``residual="corners"`` uses them.
    """

    arm: str
    q_believed: np.ndarray
    T_cam_target: np.ndarray  # noqa: N815
    weight: float = 1.0
    name: str = ""
    object_points: np.ndarray | None = None
    image_points: np.ndarray | None = None
    time_s: float = 0.0   # when it was taken (s; a held target's creep in the hand is a rate)


@dataclass(frozen=True)
class ExtrinsicsFit:
    T_world_cam: np.ndarray  # noqa: N815
    joint_offsets_rad: dict[str, np.ndarray]
    residuals: np.ndarray                 # (N, 6): position (m) and rotation (rad), camera frame
    residual_rms_m: float
    residual_rms_deg: float
    condition_number: float               # all parameters (what the spots constrain)
    condition_number_fitted: float        # the parameters actually fitted
    observability: dict[str, np.ndarray]  # per arm, per joint, 0..1 (at the solution)
    offset_std_deg: dict[str, np.ndarray]  # per arm, per joint: 1-sigma from the fit's covariance
    camera_std: dict[str, float]          # position (m) and rotation (deg) 1-sigma
    unobservable: list[tuple[str, int]]   # (arm, joint index) held at zero
    warnings: list[str]
    success: bool
    nfev: int
    observations: int
    names: list[str] = field(default_factory=list)
    residual_rms_px: float | None = None  # tag corners, when the observations carry them
    spot_rms_px: list[float] = field(default_factory=list)   # the same, per observation
    residual: str = "pose"
    grasps: dict[str, np.ndarray] = field(default_factory=dict)   # fitted T_hand_target per arm
    grasp_params: dict[str, dict[str, float]] = field(default_factory=dict)  # G (m, rad; creep: per s)

    @property
    def spot_median_px(self) -> float | None:
        """The median spot's corner RMS: robust to the few spots a held target slipped at."""
        return float(np.median(self.spot_rms_px)) if self.spot_rms_px else None

    def summary(self, joint_names: Mapping[str, Sequence[str]] | None = None) -> dict:
        def jn(arm, i):
            return joint_names[arm][i] if joint_names and arm in joint_names else f"{arm}[{i}]"

        return {
            "T_world_cam": self.T_world_cam.tolist(),
            "joint_offsets_deg": {a: np.degrees(v).tolist() for a, v in self.joint_offsets_rad.items()},
            "residual": self.residual, "residual_rms_m": self.residual_rms_m,
            "residual_rms_deg": self.residual_rms_deg, "residual_rms_px": self.residual_rms_px,
            "condition_number": self.condition_number,
            "condition_number_fitted": self.condition_number_fitted,
            "observability": {a: v.tolist() for a, v in self.observability.items()},
            "offset_std_deg": {a: v.tolist() for a, v in self.offset_std_deg.items()},
            "camera_std": self.camera_std,
            "unobservable": [jn(a, i) for a, i in self.unobservable],
            "warnings": self.warnings, "success": self.success, "nfev": self.nfev,
            "observations": self.observations,
            "grasp_corrections": self.grasp_params,
            "spot_median_px": self.spot_median_px,
            "per_observation": [
                {"name": n, "position_residual_m": float(np.linalg.norm(r[:3])),
                 "rotation_residual_deg": float(np.degrees(np.linalg.norm(r[3:]))),
                 **({"corner_rms_px": self.spot_rms_px[i]} if self.spot_rms_px else {})}
                for i, (n, r) in enumerate(zip(self.names, self.residuals, strict=False))],
        }


# ---------------------------------------------------------------------- small geometry


GRASP_DIRECTIONS = ("tx", "ty", "tz", "rx", "ry", "rz")


def grasp_transform(free: Sequence[str], params: np.ndarray) -> np.ndarray:
    """``G``: the grasp's free translations (m) and rotations (rad), in the hand frame."""
    T = np.eye(4)
    w = np.zeros(3)
    for name, v in zip(free, params, strict=True):
        if name[0] == "t":
            T["xyz".index(name[1]), 3] = v
        else:
            w["xyz".index(name[1])] = v
    T[:3, :3] = rotvec_to_matrix(w)
    return T


def grasp_param_counts(arms, n_free: int, creep: bool,
                       knots: Mapping[str, Sequence[float]]) -> dict[str, int]:
    """Unknowns per arm holding a target: its free values (at each knot), or values and rates."""
    return {a: n_free * (len(knots[a]) if a in knots else 2 if creep else 1) for a in arms}


# ---------------------------------------------------------------------- the fit
class _Problem:
    def __init__(self, observations, fk, dofs, T0, rotation_weight_m, free_mask, depth_weight=1.0,
                 residual="pose", camera_matrix=None, distortion=None, grasps=None, grasp_free=(),
                 grasp_creep=False, grasp_knots=None):
        self.obs = observations
        self.fk = fk
        self.arms = list(dofs)
        self.dofs = dict(dofs)
        self.T0 = T0
        self.rw = rotation_weight_m
        self.dw = depth_weight
        self.grasps = dict(grasps or {})
        self.grasp_free = tuple(grasp_free) if self.grasps else ()
        self.knots = dict(grasp_knots or {})   # arm -> sorted knot times (checked by fit_extrinsics)
        self.per_grasp = grasp_param_counts(self.grasps, len(self.grasp_free), grasp_creep, self.knots)
        self.n_all = 6 + sum(self.dofs.values()) + sum(self.per_grasp.values())
        t0 = {}
        for o in observations:
            t0.setdefault(o.arm, o.time_s)
        self.dt = [o.time_s - t0[o.arm] for o in observations]   # since the arm's first spot
        self.free = np.asarray(free_mask, bool)
        self.sqrt_w = np.sqrt([o.weight for o in observations])
        self.residual = residual
        self.K = None if camera_matrix is None else np.asarray(camera_matrix, float)
        self.dist = np.zeros(5) if distortion is None else np.asarray(distortion, float).ravel()

    def unpack(self, x_all):
        dT = np.eye(4)
        dT[:3, :3] = rotvec_to_matrix(x_all[:3])
        dT[:3, 3] = x_all[3:6]
        T_world_cam = self.T0 @ dT
        offsets, k = {}, 6
        for arm in self.arms:
            offsets[arm] = x_all[k:k + self.dofs[arm]]
            k += self.dofs[arm]
        return T_world_cam, offsets

    def grasp_params(self, x_all) -> dict[str, np.ndarray]:
        """Per arm: the grasp's free values at the arm's first spot, then (creep) their rates per s
        or (knots) their values at the later knots."""
        k, out = 6 + sum(self.dofs.values()), {}
        for arm in self.grasps:
            out[arm] = x_all[k:k + self.per_grasp[arm]]
            k += self.per_grasp[arm]
        return out

    def grasp_values(self, arm: str, p: np.ndarray, t_s: float, dt: float) -> np.ndarray:
        """The grasp's free values at time ``t_s`` (``dt`` after the arm's first spot)."""
        n = len(self.grasp_free)
        if arm in self.knots:   # piecewise linear between the knots, held beyond them
            v = p.reshape(-1, n)
            return np.array([np.interp(t_s, self.knots[arm], v[:, j]) for j in range(n)])
        return p[:n] + dt * p[n:] if len(p) > n else p

    def targets(self, x_all) -> list[np.ndarray]:
        """Every observation's predicted world pose of the target."""
        _, offsets = self.unpack(x_all)
        params, out = self.grasp_params(x_all), []
        for o, dt in zip(self.obs, self.dt, strict=True):
            T = self.fk(o.arm, np.asarray(o.q_believed, float) + offsets[o.arm])
            if o.arm in self.grasps:
                g = self.grasp_values(o.arm, params[o.arm], o.time_s, dt)
                T = T @ grasp_transform(self.grasp_free, g) @ self.grasps[o.arm]
            out.append(T)
        return out

    def full(self, x_free):
        x = np.zeros(self.n_all)
        x[self.free] = x_free
        return x

    def raw_residuals(self, x_all) -> np.ndarray:
        T_cam_world = invert(self.unpack(x_all)[0])
        out = np.empty((len(self.obs), 6))
        for i, (o, T) in enumerate(zip(self.obs, self.targets(x_all), strict=True)):
            pred = T_cam_world @ T
            out[i, :3] = pred[:3, 3] - o.T_cam_target[:3, 3]
            out[i, 3:] = matrix_to_rotvec(o.T_cam_target[:3, :3].T @ pred[:3, :3])
        return out

    def corner_residuals(self, x_all) -> np.ndarray:
        import cv2

        T_cam_world = invert(self.unpack(x_all)[0])
        out = []
        for i, (o, T) in enumerate(zip(self.obs, self.targets(x_all), strict=True)):
            pred = T_cam_world @ T
            rvec = cv2.Rodrigues(pred[:3, :3])[0]
            uv, _ = cv2.projectPoints(np.asarray(o.object_points, float), rvec, pred[:3, 3],
                                      self.K, self.dist)
            out.append((uv.reshape(-1, 2) - o.image_points).ravel() * self.sqrt_w[i])
        return np.concatenate(out)

    def weighted(self, x_all) -> np.ndarray:
        if self.residual == "corners":
            return self.corner_residuals(x_all)
        r = self.raw_residuals(x_all)
        r[:, 2] *= self.dw
        r[:, 3:] *= self.rw
        return (r * self.sqrt_w[:, None]).ravel()

    def jacobian(self, x_all, step: float = 1e-6) -> np.ndarray:
        m = len(self.weighted(x_all))
        J = np.empty((m, self.n_all))
        for j in range(self.n_all):
            e = np.zeros(self.n_all)
            e[j] = step
            J[:, j] = (self.weighted(x_all + e) - self.weighted(x_all - e)) / (2 * step)
        return J


def observability(J: np.ndarray) -> tuple[np.ndarray, float]:
    """Per-column observability (0..1) and the condition number of the column-scaled Jacobian.

    A column's observability is its distance (columns scaled to unit length) from the span of
    all the other columns: 0 when some combination of the other parameters has exactly its
    effect on every residual.
    """
    norms = np.linalg.norm(J, axis=0)
    out = np.zeros(J.shape[1])
    ok = np.flatnonzero(norms > 1e-12)
    if len(ok) == 0:
        return out, float("inf")
    Jn = J[:, ok] / norms[ok]
    s = np.linalg.svd(Jn, compute_uv=False)
    cond = float(s[0] / s[-1]) if s[-1] > 1e-15 * s[0] else float("inf")
    for k, col in enumerate(ok):
        others = np.delete(Jn, k, axis=1)
        if others.shape[1] == 0:
            out[col] = 1.0
            continue
        c, *_ = np.linalg.lstsq(others, Jn[:, k], rcond=None)
        out[col] = float(np.linalg.norm(Jn[:, k] - others @ c))
    return np.clip(out, 0.0, 1.0), cond


def fit_extrinsics(observations: Sequence[Observation], fk: ForwardKinematics,
                   dofs: Mapping[str, int], *, T_world_cam_guess: np.ndarray | None = None,  # noqa: N803
                   rotation_weight_m: float = 0.05, depth_weight: float = 1.0,
                   loss: str = "soft_l1", f_scale: float | None = None,
                   observability_threshold: float = 0.02,
                   fixed_joints: Mapping[str, Sequence[int]] | None = None,
                   joint_names: Mapping[str, Sequence[str]] | None = None,
                   residual: str = "corners", camera_matrix: np.ndarray | None = None,  # noqa: N803
                   distortion: np.ndarray | None = None,
                   grasps: Mapping[str, np.ndarray] | None = None,
                   grasp_free: Sequence[str] = ("tx", "tz", "ry"),
                   grasp_creep: bool = False,
                   grasp_knots: Mapping[str, Sequence[float]] | None = None) -> ExtrinsicsFit:
    """Fit the camera pose and joint offsets (see the module docstring).

    ``f_scale``: the robust loss's inlier scale, in the residual's units (default 2 mm for
    ``pose``, 1 px for ``corners``).
    """
    from scipy.optimize import least_squares

    from core.errors import ConfigError

    if residual not in ("pose", "corners"):
        raise ConfigError(f"extrinsics residual={residual!r}; allowed: pose, corners")
    if loss not in ("linear", "soft_l1", "huber", "cauchy", "arctan"):
        raise ConfigError(f"extrinsics loss={loss!r}; allowed: linear, soft_l1, huber, cauchy, arctan")
    obs = list(observations)
    if residual == "corners":
        if camera_matrix is None:
            raise ConfigError("extrinsics residual=corners needs the camera matrix")
        missing = [o.name for o in obs if o.object_points is None or o.image_points is None]
        if missing:
            raise PerceptionError(f"extrinsics residual=corners: spots {missing[:5]} carry no corners")
    f_scale = float(f_scale if f_scale is not None else (0.002 if residual == "pose" else 1.0))
    dofs = {str(a): int(n) for a, n in dofs.items()}
    unknown_arms = sorted({o.arm for o in obs} - set(dofs))
    if unknown_arms:
        raise PerceptionError(f"extrinsics: observations of arm(s) {unknown_arms} not in the fit "
                              f"(arms: {sorted(dofs)})")
    grasps = {str(a): np.asarray(T, float) for a, T in (grasps or {}).items()}
    grasp_free = tuple(grasp_free) if grasps else ()
    bad = sorted(set(grasp_free) - set(GRASP_DIRECTIONS))
    if bad or len(set(grasp_free)) != len(grasp_free):
        raise ConfigError(f"extrinsics grasp_free={list(grasp_free)}: each once, "
                          f"from {list(GRASP_DIRECTIONS)}")
    if sorted(set(grasps) - set(dofs)):
        raise ConfigError(f"extrinsics grasps for arm(s) {sorted(set(grasps) - set(dofs))} not in the fit")
    knots = {str(a): np.asarray(sorted(map(float, t))) for a, t in (grasp_knots or {}).items()}
    if sorted(set(knots) - set(grasps)):
        raise ConfigError(f"extrinsics grasp_knots for arm(s) {sorted(set(knots) - set(grasps))} that hold "
                          f"no target (grasps: {sorted(grasps)})")
    if any(len(t) < 1 for t in knots.values()):
        raise ConfigError("extrinsics grasp_knots: every listed arm needs at least one knot time")
    if knots and grasp_creep:
        raise ConfigError("extrinsics: grasp_knots and grasp_creep model the same drift; give one")
    n_params = 6 + sum(dofs.values()) + sum(grasp_param_counts(grasps, len(grasp_free), grasp_creep,
                                                               knots).values())
    if 6 * len(obs) < n_params + 6:
        raise PerceptionError(f"extrinsics: {len(obs)} spots give {6 * len(obs)} equations for "
                              f"{n_params} unknowns; need at least {(n_params + 6 + 5) // 6} spots")
    for arm in dofs:
        if not any(o.arm == arm for o in obs):
            raise PerceptionError(f"extrinsics: no spot observed for arm {arm!r}")

    # start: rigid alignment of observed positions to nominal-kinematics positions
    if T_world_cam_guess is None:
        world = np.array([(fk(o.arm, np.asarray(o.q_believed, float)) @ grasps.get(o.arm, np.eye(4)))[:3, 3]
                          for o in obs])
        cam = np.array([o.T_cam_target[:3, 3] for o in obs])
        T0 = rigid_align(cam, world)
    else:
        T0 = np.asarray(T_world_cam_guess, float)

    def name(arm, i):
        return joint_names[arm][i] if joint_names and arm in joint_names else f"{arm} joint {i + 1}"

    free = np.ones(n_params, bool)
    index, k = {}, 6
    for arm in dofs:
        for i in range(dofs[arm]):
            index[(arm, i)] = k
            k += 1
    for arm, idx in (fixed_joints or {}).items():
        for i in idx:
            free[index[(arm, int(i))]] = False
    problem = _Problem(obs, fk, dofs, T0, rotation_weight_m, free, depth_weight, residual,
                       camera_matrix, distortion, grasps, grasp_free, grasp_creep, knots)
    warnings: list[str] = []
    x0 = np.zeros(n_params)
    J0 = problem.jacobian(x0)
    unobservable, first_obs = [], {}
    while True:  # hold the least observable joint at zero, one at a time, until the rest are
        cols = np.flatnonzero(free)
        obs0 = np.zeros(n_params)
        obs0[cols], _ = observability(J0[:, cols])
        worst = min(((obs0[col], key) for key, col in index.items() if free[col]),
                    default=None, key=lambda t: t[0])
        if worst is None or worst[0] >= observability_threshold:
            break
        free[index[worst[1]]] = False
        unobservable.append(worst[1])
        first_obs[worst[1]] = worst[0]
    if unobservable:
        warnings.append(
            "unobservable from these spots (held at zero offset; the camera pose absorbs them): "
            + ", ".join(f"{name(a, i)} (observability {first_obs[(a, i)]:.3f})"
                        for a, i in unobservable))
    problem.free = free

    def fun(x_free):
        return problem.weighted(problem.full(x_free))

    sol = least_squares(fun, x0[free], loss=loss, f_scale=f_scale, method="trf",
                        x_scale="jac", xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=200)
    x = problem.full(sol.x)
    T_world_cam, offsets = problem.unpack(x)
    n_free = len(grasp_free)
    grasp_fit, grasp_params = {}, {}
    for a, v in problem.grasp_params(x).items():   # at the arm's first spot, then rates or knots
        grasp_fit[a] = grasp_transform(grasp_free, v[:n_free]) @ grasps[a]
        grasp_params[a] = dict(zip(grasp_free, map(float, v[:n_free]), strict=True))
        if a in knots:
            grasp_params[a].update({f"{d}_at_knots": v.reshape(-1, n_free)[:, j].tolist()
                                    for j, d in enumerate(grasp_free)}, knot_times_s=knots[a].tolist())
        else:
            grasp_params[a].update({f"{d}_per_s": float(r)
                                    for d, r in zip(grasp_free, v[n_free:], strict=False)})
    res = problem.raw_residuals(x)
    rms_px, spot_px = None, []
    if problem.K is not None and all(o.object_points is not None and o.image_points is not None
                                     for o in obs):
        px2 = np.sum(problem.corner_residuals(x).reshape(-1, 2) ** 2, axis=1)
        rms_px = float(np.sqrt(np.mean(px2)))
        ends = np.cumsum([len(o.object_points) for o in obs])[:-1]
        spot_px = [float(np.sqrt(np.mean(v))) for v in np.split(px2, ends)]
    J = problem.jacobian(x)
    obs_all, cond_all = observability(J)
    _, cond_fit = observability(J[:, free])
    # covariance of the fitted parameters from the Gauss-Newton Hessian
    m, n = J.shape[0], int(free.sum())
    sigma2 = float(np.sum(problem.weighted(x) ** 2) / max(m - n, 1))
    Jf = J[:, free]
    cov_f = np.linalg.pinv(Jf.T @ Jf) * sigma2
    std = np.zeros(n_params)
    std[free] = np.sqrt(np.clip(np.diag(cov_f), 0, None))
    weak = [(a, i) for (a, i), col in index.items()
            if free[col] and obs_all[col] < 5 * observability_threshold]
    if weak:
        warnings.append("weakly observable (spread the spots more): " + ", ".join(
            f"{name(a, i)} ({obs_all[index[(a, i)]]:.3f})" for a, i in weak))
    if not sol.success:
        warnings.append(f"least_squares did not converge: {sol.message}")
    obs_by_arm, std_by_arm, k = {}, {}, 6
    for arm in dofs:
        obs_by_arm[arm] = obs_all[k:k + dofs[arm]]
        std_by_arm[arm] = np.degrees(std[k:k + dofs[arm]])
        k += dofs[arm]
    return ExtrinsicsFit(
        T_world_cam=T_world_cam, joint_offsets_rad={a: np.array(v) for a, v in offsets.items()},
        residuals=res, residual_rms_m=float(np.sqrt(np.mean(np.sum(res[:, :3] ** 2, axis=1)))),
        residual_rms_deg=float(np.degrees(np.sqrt(np.mean(np.sum(res[:, 3:] ** 2, axis=1))))),
        condition_number=cond_all, condition_number_fitted=cond_fit, observability=obs_by_arm,
        offset_std_deg=std_by_arm,
        camera_std={"position_m": float(np.linalg.norm(std[3:6])),
                    "rotation_deg": float(np.degrees(np.linalg.norm(std[:3])))},
        unobservable=unobservable, warnings=warnings, success=bool(sol.success),
        nfev=int(sol.nfev), observations=len(obs), names=[o.name for o in obs],
        residual_rms_px=rms_px, spot_rms_px=spot_px, residual=residual, grasps=grasp_fit,
        grasp_params=grasp_params)
