"""choreograph stages: everything that transforms data."""
