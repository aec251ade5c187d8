"""Execution: synchronized multi-arm execution, the sequential baseline, the bring-up protocol."""
