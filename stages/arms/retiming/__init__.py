"""Time parameterization of planned joint paths at a fixed sample rate.

Public API: :func:`retime`, :func:`retime_with_report`, :class:`RetimeResult`,
:class:`Trajectory`, :class:`BlendedPath`, :func:`blend_polyline`; the TOPP-RA comparison
lives in :mod:`stages.arms.retiming.toppra_compare` (needs ``toppra``, imported lazily).
"""

from stages.arms.retiming.blended_path import BlendedPath, blend_polyline
from stages.arms.retiming.retime import RetimeResult, retime, retime_with_report
from stages.arms.retiming.trajectory import Trajectory

__all__ = ["BlendedPath", "RetimeResult", "Trajectory", "blend_polyline", "retime",
           "retime_with_report"]
