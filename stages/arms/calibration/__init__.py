"""The extrinsics calibrations: the camera's pose and the arms' joint zero offsets from spots.

- :mod:`~stages.arms.calibration.settings`: both procedures' settings.
- :mod:`~stages.arms.calibration.peg_procedure` (with :mod:`~stages.arms.calibration.peg_motions`):
  the tagged peg picked and carried over the board (``pipeline=calibrate_peg``).
- :mod:`~stages.arms.calibration.plate_procedure`: a tag plate on each hand (``pipeline=calibrate``).
- :mod:`~stages.arms.calibration.spots`: where the spots lie, the log of what was seen there.
- :mod:`~stages.arms.calibration.results`, :mod:`~stages.arms.calibration.report`: what the
  procedures return, and their metrics, report and calibration file.
- :mod:`~stages.arms.calibration.scoring`: simulation only, the hidden truth and the scores.

The fit itself is :func:`stages.arms.perception.extrinsics.fit_extrinsics`.
"""
