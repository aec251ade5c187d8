import numpy as np

from hardware.mecanum import drawing


def test_figures_and_animation_render():
    pts = np.c_[np.linspace(-40, 40, 9), np.zeros(9)]
    speeds = np.linspace(0, 40, 9)
    fig = drawing.path_figure(pts, speeds, 40, original=pts, relaxed=pts,
                              poses=np.c_[pts[:3], np.zeros(3)], focus=pts[4])
    assert len(fig.axes) == 3  # field, close-up, colour bar
    fig2 = drawing.speed_profile_figure(np.linspace(0, 80, 20), np.linspace(0, 40, 20),
                                        np.linspace(0, 80, 9), speeds, speeds, 40)
    assert fig2.axes[0].get_xlabel() == "arc length (in)"
    poses = np.c_[pts, np.linspace(0, 1, 9)]
    frames = drawing.animation_frames(pts, poses, np.linspace(0, 2, 9), max_frames=3, dpi=40)
    assert len(frames) == 3 and frames[0].shape[2] == 3 and frames[0].dtype == np.uint8
    gif = drawing.gif_bytes(frames)
    assert gif[:6] in (b"GIF87a", b"GIF89a")
    import matplotlib.pyplot as plt

    plt.close("all")
