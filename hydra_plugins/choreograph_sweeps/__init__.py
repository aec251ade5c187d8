"""choreograph's Hydra plugins for sweeps (Hydra finds plugins only in the ``hydra_plugins`` package).

    sweeper.py            hydra/sweeper=choreograph (the default): resume a sweep folder, report
                          how many jobs failed and exit 1 if any did
    jobs.py               what the launchers share: a job's folder, a lost job recorded
    ray_launcher.py       hydra/launcher=ray: Hydra's Ray plugin, made to survive a lost job and to
                          bring run folders back from other nodes
    submitit_launchers.py hydra/launcher=submitit_local | slurm: the submitit plugin, made to survive
                          a lost job; ``dry_run`` writes the sbatch script without submitting

Importing this package must stay light: Hydra imports every plugin module at start-up.
"""
