"""What goes into a planning call and what comes out of it.

The planner core takes plain inputs (instruction, scene, image, skills, exemplars) so the same code
runs in-process (CLI, benchmarks, tests) and behind the ROS node, which fills a ``PlanRequest`` from
perception's topics and memory's ``get_context`` service.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from frankenbot.program.catalog import Signature
from frankenbot.state import Scene


class PlannerKind(str, enum.Enum):
    """Which planner produced (or should produce) a program."""

    OFFLINE = "offline"  # deterministic rule-based planner, no model call
    VLM = "vlm"  # one call to an OpenAI-compatible endpoint (+ at most one repair)


@dataclass(frozen=True)
class Exemplar:
    """A past (instruction, program) pair retrieved by memory and shown to the model."""

    instruction: str
    program: str


@dataclass(frozen=True)
class PlanImage:
    """Encoded image bytes (PNG or JPEG) for the prompt: perception's set-of-mark view."""

    data: bytes
    mime: str = "image/png"

    def __post_init__(self) -> None:
        if self.mime not in ("image/png", "image/jpeg"):
            raise ValueError(f"image mime must be image/png or image/jpeg, got {self.mime!r}")
        if not self.data:
            raise ValueError("image data is empty")


@dataclass(frozen=True)
class PlanRequest:
    """Everything one planning call may use.

    ``object_table`` is perception's compact table (its ``annotate`` output); when empty the prompt
    builder derives one from ``scene``. ``planner`` selects a planner for this request ("" = the
    planner's configured default).
    """

    instruction: str
    scene: Scene = field(default_factory=Scene)
    image: PlanImage | None = None
    skills: tuple[Signature, ...] = ()
    exemplars: tuple[Exemplar, ...] = ()
    anomaly_experience: tuple[str, ...] = ()
    object_table: str = ""
    planner: str = ""
    task_id: str = ""


@dataclass(frozen=True)
class FailureContext:
    """What tier 3 tells the planner about a failed run: the program, what failed, and where."""

    program: str
    failure: str  # anomaly kind, detail, trace summary
    failed_node: str = ""  # tree path of the node that failed, e.g. main/2/place_in
    # The same facts in structured form, for the offline recovery planner (planner/recovery.py)
    kind: str = ""  # AnomalyKind value, e.g. "target_occupied"
    objects: tuple[str, ...] = ()  # objects the anomaly concerns (target, occupier, ...)
    held_object: str | None = None
    failed_call: str = ""  # e.g. "place_on(obj=red_block, target=blue_block)"


@dataclass(frozen=True)
class PlanOutcome:
    """Result of ``Planner.plan`` / ``Planner.replan``.

    ``vlm_calls`` counts planning requests (first call + repair); HTTP retries after transport
    errors are counted apart in ``transport_retries`` and never as planning calls.
    ``first_call_valid`` is true when the first model answer (or the offline planner's
    program) validated without repair.
    ``program`` is the parsed tree from the program language (None unless ``ok``).
    """

    ok: bool
    program_text: str
    program: Any
    message: str
    vlm_calls: int = 0
    repair_calls: int = 0
    first_call_valid: bool = False
    tokens_in: int = 0
    tokens_out: int = 0
    latency: float = 0.0  # seconds spent planning (all calls, parsing and validation)
    planner: str = PlannerKind.OFFLINE.value
    transport_retries: int = 0
    diagnostics: str = ""  # compact validator output of the last rejected answer ("" if none)
    prompt_chars: int = 0
    trimmed: tuple[str, ...] = ()  # prompt sections dropped to fit the size budget
    # an object the instruction names is not in the scene (the offline planner's reading):
    # another look at the table may find it (EpisodeRunner looks once more before giving up)
    not_seen: bool = False

    def summary(self) -> str:
        """One line for logs and the CLI."""
        state = "ok" if self.ok else "failed"
        return (f"{self.planner} planner {state}: {self.message} (calls={self.vlm_calls}, "
                f"repairs={self.repair_calls}, first_call_valid={self.first_call_valid}, "
                f"tokens={self.tokens_in}/{self.tokens_out}, latency={self.latency:.3f}s)")
