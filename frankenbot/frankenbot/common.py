"""Enums shared across FrankenBot: statuses, outcomes, failure codes and anomaly taxonomy.

Every status or outcome that crosses a module boundary (or goes on the wire as a string in a ROS
message) is defined here once. Values are lower-case strings so they read well in logs, JSON and
ROS messages.
"""

from __future__ import annotations

import enum


class FailureCode(str, enum.Enum):
    """Why a primitive (or a whole motion) did not succeed."""

    OK = "ok"
    NOT_FOUND = "not_found"  # the named object is not in the scene
    UNREACHABLE = "unreachable"  # no IK solution / outside the arm's reach
    GRASP_FAILED = "grasp_failed"  # the fingers closed on nothing
    REJECTED_BY_SAFETY = "rejected_by_safety"  # the safety envelope refused the motion
    ABORTED = "aborted"  # the controller aborted or the motion was stopped
    PREEMPTED = "preempted"  # a monitor or a cancel interrupted the primitive
    ESTOP = "estop"  # the e-stop is engaged
    TIMEOUT = "timeout"  # the primitive ran past its time limit
    NO_STATE = "no_state"  # no joint state / scene available
    INVALID_ARGUMENT = "invalid_argument"  # bad argument value (NaN, wrong type, ...)
    PLACE_FAILED = "place_failed"  # the object did not end up where it was placed
    BLOCKED = "blocked"  # the target is occupied / a fixture does not move


class ExitStatus(str, enum.Enum):
    """How a program run ended."""

    SUCCESS = "success"
    FAILURE = "failure"  # an `exit failure` statement, or a primitive failure nobody handled
    ESCALATED = "escalated"  # a monitor escalated past tier 1 and no higher tier resolved it
    CANCELLED = "cancelled"
    ESTOP = "estop"
    BUDGET_EXCEEDED = "budget_exceeded"  # global step budget or a retry budget ran out
    ERROR = "error"  # internal error (reported, never a traceback to the user)


class NodeStatus(str, enum.Enum):
    """Status of one tree node in the trace and on /frankenbot/tree_state."""

    IDLE = "idle"
    RUNNING = "running"
    SUCCESS = "success"
    FAILURE = "failure"
    PREEMPTED = "preempted"
    SKIPPED = "skipped"


class AnomalyClass(str, enum.Enum):
    """The paper's anomaly classes (natural mix about 70:20:10, stress mix 5:3:2)."""

    PREDICTABLE = "predictable"
    SEMI_PREDICTABLE = "semi_predictable"
    UNPREDICTABLE = "unpredictable"


class AnomalyKind(str, enum.Enum):
    """What the brain observed (detected kinds, not the sim's injected causes)."""

    GRASP_LOST = "grasp_lost"
    GRASP_FAILED = "grasp_failed"
    OBJECT_MOVED = "object_moved"
    OBJECT_MISSING = "object_missing"
    TARGET_OCCUPIED = "target_occupied"
    MOTION_REJECTED = "motion_rejected"
    MOTION_ABORTED = "motion_aborted"
    STALL = "stall"
    SCENE_STALE = "scene_stale"
    TIMEOUT = "timeout"
    ESTOP = "estop"
    PLACE_FAILED = "place_failed"
    FIXTURE_STUCK = "fixture_stuck"
    PROGRAM_MONITOR = "program_monitor"  # a monitor written in the program fired
    PRIMITIVE_FAILED = "primitive_failed"  # any other failure code nobody handled


# The one table from a primitive's failure code to the anomaly kind it stands for (used when a
# failed primitive is escalated, by the interpreter and the escalator alike).
_KIND_OF_FAILURE: dict[FailureCode, AnomalyKind] = {
    FailureCode.NOT_FOUND: AnomalyKind.OBJECT_MISSING,
    FailureCode.UNREACHABLE: AnomalyKind.MOTION_REJECTED,
    FailureCode.GRASP_FAILED: AnomalyKind.GRASP_FAILED,
    FailureCode.REJECTED_BY_SAFETY: AnomalyKind.MOTION_REJECTED,
    FailureCode.ABORTED: AnomalyKind.MOTION_ABORTED,
    FailureCode.ESTOP: AnomalyKind.ESTOP,
    FailureCode.TIMEOUT: AnomalyKind.TIMEOUT,
    FailureCode.NO_STATE: AnomalyKind.SCENE_STALE,
    FailureCode.PLACE_FAILED: AnomalyKind.PLACE_FAILED,
    FailureCode.BLOCKED: AnomalyKind.TARGET_OCCUPIED,
}


def kind_for_failure(code: FailureCode) -> AnomalyKind:
    """The anomaly kind a primitive's own failure code stands for."""
    return _KIND_OF_FAILURE.get(code, AnomalyKind.PRIMITIVE_FAILED)


class Tier(int, enum.Enum):
    """Escalation tiers of the multi-level anomaly handling."""

    NONE = 0
    CODED = 1  # program handler or built-in coded recovery
    LOCAL_EXPERT = 2  # frozen small language model ranks candidate tree edits
    VLM_REPLAN = 3  # planner replans with one counted VLM call


class RecoveryOutcome(str, enum.Enum):
    RECOVERED = "recovered"
    ESCALATED = "escalated"
    FAILED = "failed"
    PENDING = "pending"

