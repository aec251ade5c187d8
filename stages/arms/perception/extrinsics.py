"""One least-squares fit of the camera's pose and the arms' joint zero offsets.

The model — observations, the unknowns, the ``pose`` and ``corners`` residuals and a target held
in the hand (``grasps``, ``grasp_creep``, ``grasp_knots``) — is
:mod:`stages.arms.perception.extrinsics_model`; the result is
:class:`~stages.arms.perception.extrinsics_result.ExtrinsicsFit`. The fit is
``scipy.optimize.least_squares`` with a robust loss (``soft_l1``; scale ``f_scale`` in the
residual's units).

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

from collections.abc import Mapping, Sequence

import numpy as np

from core.errors import ConfigError, PerceptionError
from core.se3 import rigid_align
from stages.arms.perception.extrinsics_model import (
    GRASP_DIRECTIONS,
    ExtrinsicsProblem,
    ForwardKinematics,
    Observation,
    grasp_param_counts,
    grasp_transform,
)
from stages.arms.perception.extrinsics_result import ExtrinsicsFit

__all__ = ["ExtrinsicsFit", "ForwardKinematics", "Observation", "fit_extrinsics", "observability"]


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
    problem = ExtrinsicsProblem(obs, fk, dofs, T0, rotation_weight_m, free, depth_weight, residual,
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
