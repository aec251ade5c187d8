"""Stages over whole sweeps (multirun folders)."""
