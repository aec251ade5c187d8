"""One base exception for choreograph, with a typed subclass per kind of failure.

Messages say what was wrong and what is allowed; the runner records
``"<ErrorType>: <message>"`` in ``status.json``.
"""


class ChoreographError(Exception):
    """Base of every error choreograph raises on purpose."""


class ConfigError(ChoreographError):
    """A config key, type, value or reference is wrong."""


class PlanningError(ChoreographError):
    """A motion could not be planned; ``reason`` says why (machine-readable)."""

    REASONS = ("start_in_collision", "goal_in_collision", "unreachable", "timeout", "invalid_goal")

    def __init__(self, reason: str, message: str):
        if reason not in self.REASONS:
            raise ValueError(f"unknown planning failure reason {reason!r}; allowed: {self.REASONS}")
        super().__init__(f"{reason}: {message}")
        self.reason = reason


class RetimingError(ChoreographError):
    """A path could not be time-parameterized within the limits."""


class VerificationError(ChoreographError):
    """A trajectory violates clearance or limits at some sample."""


class PerceptionError(ChoreographError):
    """The camera could not see what was asked (e.g. peg not found)."""


class ExecutionError(ChoreographError):
    """An arm failed, was rejected, timed out or was cancelled during execution."""


class SweepError(ChoreographError):
    """A sweep's jobs failed or were lost, or a sweep folder does not hold what was asked."""


class RecordingError(ChoreographError):
    """A run's recording (recording.rrd) is missing, unreadable, or cannot be opened in a viewer."""
