"""Sweeps read back: any Hydra multirun folder (local, joblib, submitit, Ray) as one table.

    jobs.py      one JobRecord per job folder: overrides, status, error, every metric
    tables.py    runs.csv, a summary per group of jobs, a pivot table (rows x columns of overrides)
    plots.py     the named metrics per group, one panel each
    settings.py  the gather stage's parameters
"""
