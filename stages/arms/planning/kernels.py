"""The clearance pre-test in compiled code (numba, ``nogil``, cached on disk): forward kinematics of
the collision bodies, a proven lower bound on every checked pair's distance, and the per-state and
per-edge loops that exit on the first pair proven too close.

Pure functions on arrays; :class:`~stages.arms.planning.bounds.GeomBounds` packs a checker's model
into them and documents why every number here is a lower bound. The model arrives packed in two
flat arrays, ``fd`` (float64) and ``ix`` (int64), whose sections :func:`_unpack` reads through
a header at the start of ``ix`` (a numba call costs ~80 ns per array argument to unbox, and a
state is checked in a few µs).

Every kernel releases the GIL: threads check states in parallel. Nothing allocates per pair. Speed
notes, measured: a helper called per pair with its arrays reference-counted costs ~100 ns a call
(``_LEAF`` helpers allocate nothing and count nothing); the balls (against each other, squared, or
against a plane) are tested in the loop itself, before any call: most pairs stop there. That test is
written out in both loops (a state's and the walk's) on purpose: as a shared helper, even a small
``_LEAF`` one, a state took 11 µs instead of 6 (numba calls it, it is not inlined).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

ROUND, BOX, PLANE = 0, 1, 2          # a geom's container: capsules; capsules and a box; a half-space
CLEAR, VIOLATED, UNDECIDED = 0, 1, 2  # a state: every pair proven apart; one proven too close; neither
ROUNDING_M = 1e-10                    # taken off every bound (float64 rounding is ~1e-15 m)
EXACT_TOL_M = 1e-9                    # an exact pair this close to the clearance goes to MuJoCo
NEARLY_PARALLEL = 1e-6
_TINY = 1e-300

F_SECTIONS = ("B", "q0", "cap_a", "cap_b", "cap_r", "ball_c", "box_o", "box_ax", "box_e", "rsum")
I_SECTIONS = ("parent", "qidx", "hinge", "cap_frame", "cap_start", "geom_frame", "kind", "pair_a",
              "pair_b", "pair_exact", "pair_index")
_HELPER = dict(nogil=True, error_model="numpy")
_LEAF = dict(_HELPER, _nrt=False)  # helpers that allocate nothing: no reference counting of their arrays
_JIT = dict(_HELPER, cache=True)   # the entry points, cached on disk (helpers compile into them)


@nb.njit(**_HELPER)
def _unpack(fd, ix):
    """The packed model's sections (views): K frames, S capsules, G geoms, NS pairs of solids (the
    plane pairs follow them), then F_SECTIONS and I_SECTIONS in order."""
    nf, ni = len(F_SECTIONS), len(I_SECTIONS)
    K, S, G, NS = ix[0], ix[1], ix[2], ix[3]
    fo = ix[4:4 + nf + 1]
    io = ix[5 + nf:5 + nf + ni + 1]
    return (K, S, G, NS,
            fd[fo[0]:fo[1]].reshape((K, 3, 4, 4)), fd[fo[1]:fo[2]],
            fd[fo[2]:fo[3]].reshape((S, 3)), fd[fo[3]:fo[4]].reshape((S, 3)), fd[fo[4]:fo[5]],
            fd[fo[5]:fo[6]].reshape((G, 3)),
            fd[fo[6]:fo[7]].reshape((G, 3)), fd[fo[7]:fo[8]].reshape((G, 3, 3)),
            fd[fo[8]:fo[9]].reshape((G, 3)), fd[fo[9]:fo[10]],
            ix[io[0]:io[1]], ix[io[1]:io[2]], ix[io[2]:io[3]], ix[io[3]:io[4]], ix[io[4]:io[5]],
            ix[io[5]:io[6]], ix[io[6]:io[7]], ix[io[7]:io[8]], ix[io[8]:io[9]], ix[io[9]:io[10]],
            ix[io[10]:io[11]])


# ---------------------------------------------------------------------------- geometry
@nb.njit(**_LEAF)
def _segment_distance(ca, cw, i, j) -> float:
    """Distance of segments ``ca[i] + s·cw[i]`` and ``ca[j] + t·cw[j]``, s, t in [-1, 1]: Ericson's
    clamped closest points (s of the lines, t best for it, s best for that t; each step exact), the
    lines' s from cross products when nearly parallel (no cancellation)."""
    r0, r1, r2 = ca[i, 0] - ca[j, 0], ca[i, 1] - ca[j, 1], ca[i, 2] - ca[j, 2]
    u0, u1, u2 = cw[i, 0], cw[i, 1], cw[i, 2]
    v0, v1, v2 = cw[j, 0], cw[j, 1], cw[j, 2]
    a = u0 * u0 + u1 * u1 + u2 * u2
    e = v0 * v0 + v1 * v1 + v2 * v2
    b = u0 * v0 + u1 * v1 + u2 * v2
    c = r0 * u0 + r1 * u1 + r2 * u2
    f = r0 * v0 + r1 * v1 + r2 * v2
    ae = a * e
    denom = ae - b * b
    if denom <= NEARLY_PARALLEL * ae:
        x0, x1, x2 = u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0
        y0, y1, y2 = v1 * r2 - v2 * r1, v2 * r0 - v0 * r2, v0 * r1 - v1 * r0
        s = (x0 * y0 + x1 * y1 + x2 * y2) / max(x0 * x0 + x1 * x1 + x2 * x2, _TINY)
    else:
        s = (b * f - c * e) / denom
    s = min(max(s, -1.0), 1.0)
    t = min(max((b * s + f) / max(e, _TINY), -1.0), 1.0)
    s = min(max((b * t - c) / max(a, _TINY), -1.0), 1.0)
    d0 = r0 + s * u0 - t * v0
    d1 = r1 + s * u1 - t * v1
    d2 = r2 + s * u2 - t * v2
    return math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)


@nb.njit(**_LEAF)
def _box_capsule_gap(bo, bax, box_e, g, ca, cw, cap_r, s) -> float:
    """How far capsule ``s`` is beyond the slabs of geom ``g``'s box: the largest gap over the box's
    three face normals (|u·(c - o)| - |u·w| - e - r)."""
    best = -np.inf
    for k in range(3):
        u0, u1, u2 = bax[g, 0, k], bax[g, 1, k], bax[g, 2, k]
        along = abs(u0 * (ca[s, 0] - bo[g, 0]) + u1 * (ca[s, 1] - bo[g, 1]) + u2 * (ca[s, 2] - bo[g, 2]))
        best = max(best, along - abs(u0 * cw[s, 0] + u1 * cw[s, 1] + u2 * cw[s, 2]) - box_e[g, k] - cap_r[s])
    return best


@nb.njit(**_LEAF)
def _box_box_gap(bo, bax, box_e, g, h) -> float:
    """Separating-axis gap of geoms ``g``'s and ``h``'s boxes along both boxes' face normals."""
    best = -np.inf
    for side in range(2):
        x, y = (g, h) if side == 0 else (h, g)
        for k in range(3):
            along = abs(bax[x, 0, k] * (bo[y, 0] - bo[x, 0]) + bax[x, 1, k] * (bo[y, 1] - bo[x, 1])
                        + bax[x, 2, k] * (bo[y, 2] - bo[x, 2]))
            reach = 0.0
            for m in range(3):
                reach += box_e[y, m] * abs(bax[x, 0, k] * bax[y, 0, m] + bax[x, 1, k] * bax[y, 1, m]
                                           + bax[x, 2, k] * bax[y, 2, m])
            best = max(best, along - box_e[x, k] - reach)
    return best


# ---------------------------------------------------------------------------- one state
@nb.njit(**_LEAF)
def _pose(q, model, T, M, ca, cw, bc, bo, bax):
    """Forward kinematics of every frame (``T``: (K + 1, 3, 4), frame K the world; ``M`` scratch) and
    the world coordinates of every container: capsule centres ``ca`` and half axes ``cw``, ball
    centres ``bc``, box (or plane) origins ``bo`` and axes ``bax``."""
    (K, S, G, _, B, q0, cap_a, cap_b, _, ball_c, box_o, box_ax, _, _,
     parent, qidx, hinge, cap_frame, _, geom_frame, kind, _, _, _, _) = model
    for k in range(K):
        th = q[qidx[k]] - q0[k]
        if hinge[k]:
            c1, c2 = math.cos(th), math.sin(th)
        else:
            c1, c2 = th, 0.0
        for m in range(3):
            for c in range(4):
                M[m, c] = B[k, 0, m, c] + c1 * B[k, 1, m, c] + c2 * B[k, 2, m, c]
        p = parent[k]
        for r in range(3):
            for c in range(4):
                acc = T[p, r, 3] if c == 3 else 0.0
                for m in range(3):
                    acc += T[p, r, m] * M[m, c]
                T[k, r, c] = acc
    for s in range(S):
        Tf = T[cap_frame[s]]
        for r in range(3):
            pa = Tf[r, 0] * cap_a[s, 0] + Tf[r, 1] * cap_a[s, 1] + Tf[r, 2] * cap_a[s, 2]
            pb = Tf[r, 0] * cap_b[s, 0] + Tf[r, 1] * cap_b[s, 1] + Tf[r, 2] * cap_b[s, 2]
            ca[s, r] = 0.5 * (pa + pb) + Tf[r, 3]
            cw[s, r] = 0.5 * (pb - pa)
    for g in range(G):
        Tf = T[geom_frame[g]]
        for r in range(3):
            bc[g, r] = Tf[r, 0] * ball_c[g, 0] + Tf[r, 1] * ball_c[g, 1] + Tf[r, 2] * ball_c[g, 2] + Tf[r, 3]
        if kind[g] != ROUND:
            for r in range(3):
                bo[g, r] = Tf[r, 0] * box_o[g, 0] + Tf[r, 1] * box_o[g, 1] + Tf[r, 2] * box_o[g, 2] + Tf[r, 3]
                for c in range(3):
                    bax[g, r, c] = (Tf[r, 0] * box_ax[g, 0, c] + Tf[r, 1] * box_ax[g, 1, c]
                                    + Tf[r, 2] * box_ax[g, 2, c])


@nb.njit(**_LEAF)
def _plane_ball(a, b, radius, bc, bo, bax) -> float:
    """How far geom ``b``'s ball (``radius``) is above plane ``a`` (-inf for a plane's infinite ball)."""
    return ((bc[b, 0] - bo[a, 0]) * bax[a, 0, 2] + (bc[b, 1] - bo[a, 1]) * bax[a, 1, 2]
            + (bc[b, 2] - bo[a, 2]) * bax[a, 2, 2] - radius)


@nb.njit(**_LEAF)
def _pair_bound(p, best, enough, kind, cap_start, cap_r, box_e, pair_a, pair_b, ca, cw, bo, bax) -> float:
    """A lower bound (m, before ROUNDING_M) on pair ``p``'s distance, at least ``best`` (the balls'
    bound, which the callers test first: 90 % of pairs stop there); returns as soon as one reaches
    ``enough`` (the best of the capsules' and the boxes' bounds; a plane's half-space)."""
    a, b = pair_a[p], pair_b[p]
    if kind[a] == PLANE:
        if kind[b] == PLANE:
            return -np.inf
        n0, n1, n2 = bax[a, 0, 2], bax[a, 1, 2], bax[a, 2, 2]
        base = n0 * bo[a, 0] + n1 * bo[a, 1] + n2 * bo[a, 2]
        low = np.inf
        for s in range(cap_start[b], cap_start[b + 1]):
            h = (n0 * ca[s, 0] + n1 * ca[s, 1] + n2 * ca[s, 2] - base
                 - abs(n0 * cw[s, 0] + n1 * cw[s, 1] + n2 * cw[s, 2]) - cap_r[s])
            low = min(low, h)
        if kind[b] == BOX:
            reach = 0.0
            for m in range(3):
                reach += box_e[b, m] * abs(n0 * bax[b, 0, m] + n1 * bax[b, 1, m] + n2 * bax[b, 2, m])
            low = max(low, n0 * bo[b, 0] + n1 * bo[b, 1] + n2 * bo[b, 2] - base - reach)
        return low
    if kind[a] == BOX and kind[b] == BOX:
        best = max(best, _box_box_gap(bo, bax, box_e, a, b))
        if best >= enough:
            return best
    worst = np.inf   # over b's pieces: each piece's bound against all of a (a box's faces first)
    for s in range(cap_start[b], cap_start[b + 1]):
        gap = _box_capsule_gap(bo, bax, box_e, a, ca, cw, cap_r, s) if kind[a] == BOX else -np.inf
        if gap >= enough:
            v = gap
        else:
            v = np.inf
            for t in range(cap_start[a], cap_start[a + 1]):
                v = min(v, _segment_distance(ca, cw, t, s) - cap_r[t] - cap_r[s])
            v = max(v, gap)
        worst = min(worst, v)
        if worst <= best:
            return best
    return max(best, worst)


@nb.njit(**_HELPER)
def _pair_arrays(model):
    """What the pair loops read, handed on one by one (a per-pair call with the whole model tuple
    costs ~150 ns of reference counting): NS, kind, cap_start, cap_r, box_e, rsum, pair_a, pair_b,
    pair_exact, pair_index."""
    (_, _, _, NS, _, _, _, _, cap_r, _, _, _, box_e, rsum,
     _, _, _, _, cap_start, _, kind, pair_a, pair_b, pair_exact, pair_index) = model
    return NS, kind, cap_start, cap_r, box_e, rsum, pair_a, pair_b, pair_exact, pair_index


@nb.njit(**_HELPER)
def _scratch(model):
    K, S, G = model[0], model[1], model[2]
    T = np.empty((K + 2, 3, 4))   # the frames, the world (K), a scratch matrix for _pose (K + 1)
    T[K] = 0.0
    T[K, 0, 0] = T[K, 1, 1] = T[K, 2, 2] = 1.0
    return T, np.empty((S, 3)), np.empty((S, 3)), np.empty((G, 3)), np.empty((G, 3)), np.empty((G, 3, 3))


@nb.njit(**_HELPER)
def _decide_one(q, clearance, model, T, ca, cw, bc, bo, bax, undecided):
    """CLEAR, VIOLATED or UNDECIDED for one state, and how many pairs (``pairs`` indices) went to
    ``undecided``. The solid pairs' balls first, squared (no square root unless they fail). The pair in
    ``undecided[-1]`` (the last one proven too close) goes first: a planner's rejected states tend to
    fail on the same pair."""
    NS, kind, cap_start, cap_r, box_e, rsum, pair_a, pair_b, pair_exact, pair_index = _pair_arrays(model)
    _pose(q, model, T, T[-1], ca, cw, bc, bo, bax)
    n = 0
    enough = clearance + ROUNDING_M
    first = undecided[-1]
    for k in range(-1 if len(pair_a) else 0, len(pair_a)):
        p = first if k < 0 else k
        if k == first:
            continue
        a, b = pair_a[p], pair_b[p]
        if p < NS:
            d0, d1, d2 = bc[a, 0] - bc[b, 0], bc[a, 1] - bc[b, 1], bc[a, 2] - bc[b, 2]
            dd = d0 * d0 + d1 * d1 + d2 * d2
            need = rsum[p] + enough
            if dd >= need * need:
                continue
            low = math.sqrt(dd) - rsum[p]
        else:
            low = _plane_ball(a, b, rsum[p], bc, bo, bax)
            if low >= enough:
                continue
        low = _pair_bound(p, low, enough, kind, cap_start, cap_r, box_e, pair_a, pair_b, ca, cw, bo, bax)
        if low - ROUNDING_M >= clearance:
            continue
        if pair_exact[p] and low < clearance - EXACT_TOL_M:
            undecided[-1] = p
            return VIOLATED, n
        undecided[n] = pair_index[p]
        n += 1
    return (UNDECIDED if n else CLEAR), n


@nb.njit(**_JIT)
def decide(q, clearance, fd, ix, undecided):
    """One state: (status, number of undecided pairs written to ``undecided``, whose last slot keeps the
    pair to try first: see _decide_one)."""
    model = _unpack(fd, ix)
    T, ca, cw, bc, bo, bax = _scratch(model)
    return _decide_one(q, clearance, model, T, ca, cw, bc, bo, bax, undecided)


@nb.njit(**_JIT)
def classify(states, order, clearance, fd, ix, stop, status):
    """``status[i]`` for ``i`` in ``order`` (CLEAR, VIOLATED or UNDECIDED), until a VIOLATED state is
    found here or ``stop[0]`` is set elsewhere (the rest keep status -1). Returns how many were done."""
    model = _unpack(fd, ix)
    T, ca, cw, bc, bo, bax = _scratch(model)
    undecided = np.zeros(len(_pair_arrays(model)[-1]) + 1, np.int64)
    done = 0
    for i in order:
        if stop[0]:
            break
        s, _ = _decide_one(states[i], clearance, model, T, ca, cw, bc, bo, bax, undecided)
        status[i] = s
        done += 1
        if s == VIOLATED:
            stop[0] = 1
            break
    return done


@nb.njit(**_JIT)
def lower_bounds(states, fd, ix, out):
    """``out[n, p]``: pair p's lower bound (after ROUNDING_M) in state n, every bound computed in full."""
    model = _unpack(fd, ix)
    T, ca, cw, bc, bo, bax = _scratch(model)
    NS, kind, cap_start, cap_r, box_e, rsum, pair_a, pair_b, _, pair_index = _pair_arrays(model)
    for n in range(len(states)):
        _pose(states[n], model, T, T[-1], ca, cw, bc, bo, bax)
        for p in range(len(pair_a)):
            a, b = pair_a[p], pair_b[p]
            if p < NS:
                d0, d1, d2 = bc[a, 0] - bc[b, 0], bc[a, 1] - bc[b, 1], bc[a, 2] - bc[b, 2]
                low = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - rsum[p]
            else:
                low = _plane_ball(a, b, rsum[p], bc, bo, bax)
            low = _pair_bound(p, low, np.inf, kind, cap_start, cap_r, box_e, pair_a, pair_b, ca, cw, bo, bax)
            out[n, pair_index[p]] = low - ROUNDING_M


# ---------------------------------------------------------------------------- an edge
@nb.njit(**_HELPER)
def _reach(q, clearance, wanted, rate, first, model, T, ca, cw, bc, bo, bax):
    """(status, reach, pair): the state's status, how far along the edge (in units of its parameter) its
    lower bounds prove every state clear, min over pairs of (bound - clearance) / rate (``rate`` in the
    kernels' pair order), and the pair that limits it. Worked out only up to ``wanted`` (a pair whose
    ball already proves that much goes no further), pair ``first`` first (the last state's limit: the
    closest pairs change little along an edge, and the reach they give lets most others stop early)."""
    NS, kind, cap_start, cap_r, box_e, rsum, pair_a, pair_b, pair_exact, _ = _pair_arrays(model)
    _pose(q, model, T, T[-1], ca, cw, bc, bo, bax)
    reach, limit = wanted, first
    undecided = False
    for k in range(-1 if len(pair_a) else 0, len(pair_a)):
        p = first if k < 0 else k
        if k == first:
            continue
        a, b = pair_a[p], pair_b[p]
        enough = clearance + reach * rate[p] + ROUNDING_M
        if p < NS:
            d0, d1, d2 = bc[a, 0] - bc[b, 0], bc[a, 1] - bc[b, 1], bc[a, 2] - bc[b, 2]
            dd = d0 * d0 + d1 * d1 + d2 * d2
            need = rsum[p] + enough
            if dd >= need * need:
                continue
            low = math.sqrt(dd) - rsum[p]
        else:
            low = _plane_ball(a, b, rsum[p], bc, bo, bax)
            if low >= enough:
                continue
        low = _pair_bound(p, low, enough, kind, cap_start, cap_r, box_e, pair_a, pair_b, ca, cw, bo, bax)
        low -= ROUNDING_M
        if low < clearance:
            if pair_exact[p] and low < clearance - EXACT_TOL_M:
                return VIOLATED, 0.0, p
            undecided = True
            reach, limit = 0.0, p
        elif not undecided and (low - clearance) / rate[p] < reach:
            reach, limit = (low - clearance) / rate[p], p
    return (UNDECIDED if undecided else CLEAR), reach, limit


@nb.njit(**_JIT)
def edge_walk(a, b, n, clearance, weights, stop_after, fd, ix, undecided):
    """The interior states i/n of the straight edge a → b, spaced ``n`` steps, walked in bisection
    order (coarse to fine) and skipped where a proven state's clearance bubble covers them (pair p's
    distance changes at most ``weights[p] · |b - a|`` per unit of the edge parameter). Returns
    (VIOLATED, i) at the first state proven too close, else (CLEAR or UNDECIDED, count) with the
    undecided states' indices in ``undecided[:count]`` in the order met (for MuJoCo to judge; the walk
    stops at ``stop_after`` of them), and the number of states posed in ``undecided[-1]``."""
    model = _unpack(fd, ix)
    T, ca, cw, bc, bo, bax = _scratch(model)
    D, P = len(a), weights.shape[0]
    delta = b - a
    pair_index = _pair_arrays(model)[-1]
    rate = np.empty(P)          # in the kernels' pair order
    for p in range(P):
        acc = 0.0
        w = weights[pair_index[p]]
        for j in range(D):
            acc += w[j] * abs(delta[j])
        rate[p] = max(acc, _TINY)
    posed = 2
    lo, hi = 1, n - 1
    s, r, hint = _reach(a, clearance, 1.0, rate, 0, model, T, ca, cw, bc, bo, bax)   # the ends' bubbles
    if s == CLEAR:
        lo = max(lo, int(math.floor(min(r * n * (1.0 - 1e-9), float(n)))) + 1)
    s, r, hint = _reach(b, clearance, 1.0, rate, hint, model, T, ca, cw, bc, bo, bax)
    if s == CLEAR:
        hi = min(hi, n - int(math.floor(min(r * n * (1.0 - 1e-9), float(n)))) - 1)
    count = 0
    if lo > hi:
        undecided[-1] = posed
        return CLEAR, 0
    qu, qv = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    head, tail = 0, 1
    qu[0], qv[0] = lo, hi
    q = np.empty(D)
    while head < tail:
        u, v = qu[head], qv[head]
        head += 1
        i = (u + v) // 2
        t = i / n
        for j in range(D):
            q[j] = a[j] + delta[j] * t
        posed += 1
        # a bubble reaching past this interval's ends proves nothing more: work it out that far only
        s, r, hint = _reach(q, clearance, (max(i - u, v - i) + 1.0) / n, rate, hint, model, T, ca, cw, bc, bo,
                            bax)
        if s == VIOLATED:
            undecided[-1] = posed
            return VIOLATED, i
        if s == UNDECIDED:
            undecided[count] = i
            count += 1
            if count == stop_after:
                break
        steps = min(r * n * (1.0 - 1e-9), float(n))
        left = min(i - 1, int(math.ceil(i - steps)) - 1)
        right = max(i + 1, int(math.floor(i + steps)) + 1)
        if left >= u:
            qu[tail], qv[tail] = u, left
            tail += 1
        if right <= v:
            qu[tail], qv[tail] = right, v
            tail += 1
    undecided[-1] = posed
    return (UNDECIDED if count else CLEAR), count
