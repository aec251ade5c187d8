import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core.errors import PerceptionError
from stages.arms.grasping.candidates import top_grasps
from stages.arms.grasping.resting import resting_pose

HALF = np.array([0.02, 0.02, 0.07])   # the tagged peg: z is the long axis

# rotations that put each face down
FACE_DOWN = {
    "-z": Rotation.identity(),
    "+z": Rotation.from_euler("x", 180, degrees=True),
    "-x": Rotation.from_euler("y", -90, degrees=True),
    "+x": Rotation.from_euler("y", 90, degrees=True),
    "-y": Rotation.from_euler("x", 90, degrees=True),
    "+y": Rotation.from_euler("x", -90, degrees=True),
}


@pytest.mark.parametrize("face", sorted(FACE_DOWN))
@pytest.mark.parametrize("yaw_deg", [0, 37, -120])
def test_every_face_is_classified(face, yaw_deg):
    R = (Rotation.from_euler("z", yaw_deg, degrees=True) * FACE_DOWN[face]).as_matrix()
    rest = resting_pose(R)
    assert rest.face_down == face
    assert rest.tilt_deg < 1e-6


def test_small_tilt_is_resting_large_tilt_is_refused():
    R = (Rotation.from_euler("x", 5, degrees=True) * FACE_DOWN["-x"]).as_matrix()
    assert resting_pose(R).face_down == "-x"
    R = Rotation.from_euler("x", 30, degrees=True).as_matrix()
    with pytest.raises(PerceptionError, match="tilted 30.0"):
        resting_pose(R)


def test_top_grasps_close_across_narrow_axes_only():
    T = np.eye(4)
    T[:3, :3] = FACE_DOWN["-x"].as_matrix()       # lying on its side: long axis horizontal
    T[:3, 3] = [0.5, 0.0, 0.77]
    rest = resting_pose(T[:3, :3])
    cands = top_grasps(T, HALF, rest, max_width_m=0.08)
    assert cands and all(c.width_m == pytest.approx(0.04) for c in cands)
    for c in cands:
        R = c.T_world_grip[:3, :3]
        assert np.allclose(R @ R.T, np.eye(3), atol=1e-9)
        assert np.allclose(R[:, 2], [0, 0, -1])            # approach from above
        long_axis = T[:3, :3][:, 2]
        assert abs(R[:, 1] @ long_axis) < 1e-9             # fingers close across the long axis
        assert c.T_world_grip[2, 3] == pytest.approx(0.77 + 0.02 - 0.02)
    assert len({c.name for c in cands}) == len(cands)
    standing = np.eye(4)
    rest_up = resting_pose(standing[:3, :3])
    up = top_grasps(standing, HALF, rest_up, max_width_m=0.08)
    assert up and all(abs(c.T_world_grip[:3, 1] @ [0, 0, 1]) < 1e-9 for c in up)
    assert top_grasps(T, HALF * 3, rest, max_width_m=0.08) == []   # too wide for the fingers


@pytest.mark.parametrize("closing, approach", [((0, 1, 0), (0, 0, 1)), ((0, 1, 0), (1, 0, 0)),
                                               ((1, 0, 0), (0, 0, -1))])
def test_a_candidate_turned_into_a_grippers_site_frame_points_its_axes_as_the_candidate(closing, approach):
    """Fetch's grip site approaches along its x axis; the candidates' frame along z: the turned pose
    carries the site's own approach and closing axes onto the candidate's."""
    R = Rotation.from_euler("z", 37, degrees=True).as_matrix()
    T = np.eye(4)
    T[:3, :3] = R
    cand = top_grasps(T, HALF, resting_pose(R), 0.08)[0]
    c, a = np.array(closing, float), np.array(approach, float)
    axes = np.column_stack([np.cross(c, a), c, a])
    site = cand.for_site_axes(axes)
    R_site, R_cand = site.T_world_grip[:3, :3], cand.T_world_grip[:3, :3]
    assert np.allclose(R_site @ a, R_cand[:, 2]) and np.allclose(R_site @ c, R_cand[:, 1])
    assert np.allclose(site.T_world_grip[:3, 3], cand.T_world_grip[:3, 3])
    assert np.allclose(site.approach_world, cand.approach_world)
    if np.array_equal(axes, np.eye(3)):
        assert site is cand   # the built-in robot's grasps are exactly as before
    deeper = cand.for_site_axes(axes, 0.008)   # a site 8 mm farther along the approach (into the object)
    assert np.allclose(deeper.T_world_grip[:3, 3] - site.T_world_grip[:3, 3], 0.008 * cand.approach_world)
