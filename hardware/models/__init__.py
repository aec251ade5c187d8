"""MJCF robot models and scene/asset generation."""
