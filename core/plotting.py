"""matplotlib's pyplot on the headless Agg backend: figures are written to files, never shown."""

from __future__ import annotations


def pyplot():
    """``matplotlib.pyplot`` with the Agg backend selected (imported on first use: it is slow to load)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
