"""The viewer's default layout for the two-arm pipelines: the motion in 3-D on the left (planned,
executed, independent baseline, camera as tabs), clearance over time (or the reset's attempts)
beside it. Views with nothing logged in a run are left out."""

from __future__ import annotations

from core.recording import View

SCENE = ("world/scene/**",)
ARM_VIEWS = (
    View("3d", "planned + clearance", ("world/planned/**", "world/plan/**", "world/clearance/**",
                                       "world/independent/colliding_grippers"), SCENE),
    View("3d", "executed", ("world/executed/**", "world/peg_estimate/**", "world/peg_truth/**",
                            "world/grasps/**", "world/camera/**"), SCENE),
    View("3d", "independent baseline", ("world/independent/**",), SCENE),
    View("3d", "scene", SCENE),
    View("2d", "scene camera", ("world/camera/image/**",), origin="world/camera/image"),
    View("series", "clearance (m)", ("clearance/min_m", "clearance/required_m")),
    View("state", "closest pair", ("clearance/closest_pair",)),
    View("state", "episodes and reset attempts", ("rl/episode", "reset/attempt")),
    View("series", "inserted (1): camera vs truth", ("rl/inserted",)),
    View("series", "insertion depth (m)", ("rl/insertion_depth_m",)),
    View("series", "arms touch (1)", ("independent/colliding", "execute/colliding", "sequential/colliding")),
    View("series", "joints vs limits", ("joints/**",)),
    View("text", "log", ("clearance/log", "independent/log", "reset/log", "rl/log", "perception/log",
                        "runner")),
    View("document", "notes", ("world/scene/notes", "group/detour")),
)
