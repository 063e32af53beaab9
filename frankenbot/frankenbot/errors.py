"""The one exception root of FrankenBot and its specific subclasses.

Errors say what was received and what was expected. Subpackages define narrower subclasses (for
example the program parser's error with line and column) but always derive from ``FrankenbotError``
so the CLI and the nodes can turn any of them into a clear message instead of a traceback.
"""

from __future__ import annotations


class FrankenbotError(Exception):
    """Root of every error FrankenBot raises on purpose."""


class ConfigError(FrankenbotError):
    """A configuration file or parameter is missing or has an invalid value."""


class ProgramError(FrankenbotError):
    """A program text could not be parsed or is invalid."""


class MotionError(FrankenbotError):
    """A motion could not be planned or executed."""


class SafetyViolation(MotionError):
    """The safety envelope rejected a target or a trajectory (never silently clipped)."""


class PerceptionError(FrankenbotError):
    """Camera data is missing or inconsistent."""


class SimError(FrankenbotError):
    """The simulator got bad input (unknown task, bad trajectory) or went unstable."""


class PlannerError(FrankenbotError):
    """The planner could not produce a valid program."""


class MemoryStoreError(FrankenbotError):
    """The memory database is unreadable, foreign, or could not be written."""
