"""Hypothesis strategies shared by the path tests: random control points in inches."""

import numpy as np
from hypothesis import strategies as st

coord = st.floats(min_value=-60.0, max_value=60.0, allow_nan=False, allow_infinity=False)
point = st.tuples(coord, coord)
quad = st.lists(point, min_size=4, max_size=4).map(lambda q: np.array(q, dtype=float))


@st.composite
def chains(draw, max_segments: int = 3):
    """A list of cubic quadruples joined end to end (C0; G1 only by chance)."""
    n = draw(st.integers(1, max_segments))
    segs, start = [], np.array(draw(point), dtype=float)
    for _ in range(n):
        rest = np.array(draw(st.lists(point, min_size=3, max_size=3)), dtype=float)
        segs.append(np.vstack([start, rest]).tolist())
        start = rest[-1]
    return segs


@st.composite
def smooth_chains(draw, max_segments: int = 3):
    """Chains whose joints are G1: each segment's first handle continues the last one's."""
    n = draw(st.integers(1, max_segments))
    p0 = np.array(draw(point))
    p1 = np.array(draw(point))
    segs = []
    for k in range(n):
        p2, p3 = np.array(draw(point)), np.array(draw(point))
        segs.append([p0.tolist(), p1.tolist(), p2.tolist(), p3.tolist()])
        d = p3 - p2
        if k < n - 1:
            scale = draw(st.floats(0.3, 2.0))
            p0, p1 = p3, p3 + scale * d
    return segs
