"""Candidate repairs: the small, closed set of tree edits tier 2 may choose from.

Given the anomaly and where the program stands (failed node, labels in scope, what the robot holds
and sees), this module lists what could be done next: retry the node, go back to a label, insert a
primitive call (detect, pick, wait, open the gripper) before retrying, skip the node, hand over to
the planner, or abort. Each candidate carries a stable ``key`` (used by the labelled evaluation set)
and a plain-English ``description`` (what the local language model scores). Only catalog primitives
ever appear, so nothing the model "says" can run outside the whitelist.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Mapping

from frankenbot.common import AnomalyClass, AnomalyKind

# Primitives that need the object in hand before they can run.
NEEDS_HELD = frozenset({"place_on", "place_in", "place_at"})
WAIT_SECONDS = 1.0
DRAWER_ID = "drawer"  # the fixture id perception reports for the cabinet's drawer
# Kinds after which looking inside the drawer is a sensible search.
SEARCH_KINDS = frozenset({AnomalyKind.OBJECT_MISSING})


class RepairAction(str, enum.Enum):
    RETRY = "retry"  # run the failed node again
    GOTO = "goto"  # jump back to a label and redo the steps from there
    INSERT = "insert"  # run one primitive call, then retry the failed node
    SKIP = "skip"  # leave the failed node out and continue
    REPLAN = "replan"  # hand over to tier 3 (the planner)
    ABORT = "abort"  # stop the task with a failure


@dataclass(frozen=True)
class Call:
    """A primitive call with named arguments (values already checked against the catalog)."""

    name: str
    args: Mapping[str, str | float] = field(default_factory=dict)

    def text(self) -> str:
        parts = []
        for k, v in self.args.items():
            parts.append(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
        return f"{self.name}({', '.join(parts)})"

    def describe(self) -> str:
        """Plain English for the language model, e.g. "putting the red block in the green bowl"."""
        a = {k: (str(v).replace("_", " ") if isinstance(v, str) else f"{v:g}")
             for k, v in self.args.items()}
        phrase = _PHRASES.get(self.name)
        try:
            return phrase.format(**a) if phrase else self.text()
        except KeyError:
            return self.text()


_PHRASES = {
    "home": "moving the arm home",
    "detect": "looking for the {obj}",
    "move_above": "moving above the {obj}",
    "pick": "picking up the {obj}",
    "place_on": "putting the {obj} on the {target}",
    "place_in": "putting the {obj} in the {container}",
    "place_at": "putting the {obj} down at x {x}, y {y}",
    "push_to": "pushing the {obj} to the {target}",
    "open_drawer": "opening the {drawer}",
    "close_drawer": "closing the {drawer}",
    "open_door": "opening the {door}",
    "close_door": "closing the {door}",
    "press": "pressing the {obj}",
    "toggle": "flipping the {obj}",
    "turn": "turning the {obj} by {degrees} degrees",
    "open_gripper": "opening the gripper",
    "close_gripper": "closing the gripper",
    "wait": "waiting {seconds} s",
}


@dataclass(frozen=True)
class Situation:
    """Everything tier 2 knows about one anomaly, in a form that fits a compact prompt."""

    kind: AnomalyKind
    anomaly_class: AnomalyClass
    detail: str
    task: str = ""  # the instruction or the program's title
    failed_call: Call | None = None  # the primitive that was running or failed
    node_path: str = ""
    labels: tuple[str, ...] = ()  # labels a goto may target (before the failed node)
    held_object: str | None = None
    visible: tuple[str, ...] = ()  # object ids in the current scene
    objects: tuple[str, ...] = ()  # objects the anomaly concerns (e.g. the occupier)
    tried: tuple[str, ...] = ()  # candidate keys already tried for this node

    def prompt_lines(self) -> list[str]:
        step = (f"{self.failed_call.describe()} [{self.failed_call.text()}]"
                if self.failed_call else "(between steps)")
        lines = [
            f"Task: {self.task or 'unknown'}",
            f"Step: {step}",
            f"Problem: {self.kind.value.replace('_', ' ')} - {self.detail}",
            f"Holding: {self.held_object or 'nothing'}",
            f"Visible: {', '.join(self.visible) or 'nothing'}",
        ]
        if self.objects:
            lines.append(f"Concerns: {', '.join(self.objects)}")
        if self.labels:
            lines.append(f"Labels: {', '.join(self.labels)}")
        if self.tried:
            lines.append(f"Already tried: {'; '.join(self.tried)}")
        return lines


@dataclass(frozen=True)
class Candidate:
    action: RepairAction
    key: str  # stable identifier, e.g. "insert:detect(obj=red_block)"
    description: str  # plain English, scored by the local expert
    label: str = ""  # GOTO only
    call: Call | None = None  # INSERT only


def _object_args(call: Call | None) -> list[str]:
    if call is None:
        return []
    return [str(v) for k, v in call.args.items()
            if k in ("obj", "target", "container", "drawer") and isinstance(v, str)]


def generate_candidates(s: Situation) -> tuple[Candidate, ...]:
    """All sensible repairs for ``s``, deduplicated, in a fixed order (so results are stable).

    Descriptions are short verb phrases (the failed step is already in the prompt): the local
    expert scores every token of every description, so brevity is decision time.
    """
    out: list[Candidate] = []
    call = s.failed_call
    if call is not None:
        out.append(Candidate(RepairAction.RETRY, f"retry:{call.text()}", "retry the step"))
    for name in dict.fromkeys(list(s.objects) + _object_args(call)):
        detect = Call("detect", {"obj": name})
        out.append(Candidate(RepairAction.INSERT, f"insert:{detect.text()}",
                             f"look for the {name.replace('_', ' ')} again", call=detect))
    obj = call.args.get("obj") if call is not None else None
    if call is not None and isinstance(obj, str) and call.name in NEEDS_HELD | {"push_to"} \
            and s.held_object != obj:
        pick = Call("pick", {"obj": obj})
        out.append(Candidate(RepairAction.INSERT, f"insert:{pick.text()}",
                             f"pick up the {obj.replace('_', ' ')} again", call=pick))
    if s.kind in SEARCH_KINDS and DRAWER_ID in s.visible:
        # an object that vanished from the table may have been put away in the drawer
        search = Call("open_drawer", {"drawer": DRAWER_ID})
        out.append(Candidate(RepairAction.INSERT, f"insert:{search.text()}",
                             "look inside the drawer", call=search))
    if call is not None and call.name == "pick":
        opener = Call("open_gripper", {})
        out.append(Candidate(RepairAction.INSERT, f"insert:{opener.text()}",
                             "open the gripper and retry", call=opener))
    wait = Call("wait", {"seconds": WAIT_SECONDS})
    out.append(Candidate(RepairAction.INSERT, f"insert:{wait.text()}",
                         "wait a moment and retry", call=wait))
    if call is not None and call.name != "home":
        home = Call("home", {})
        out.append(Candidate(RepairAction.INSERT, f"insert:{home.text()}",
                             "move the arm home and retry", call=home))
    for label in s.labels:
        out.append(Candidate(RepairAction.GOTO, f"goto:{label}",
                             f"go back to {label} and redo the steps", label=label))
    if call is not None:
        out.append(Candidate(RepairAction.SKIP, f"skip:{call.text()}", "skip this step"))
    out.append(Candidate(RepairAction.REPLAN, "replan", "ask the planner for a new plan"))
    out.append(Candidate(RepairAction.ABORT, "abort", "give up the task"))
    seen: set[str] = set()
    unique = []
    for c in out:
        if c.key not in seen and c.key not in s.tried:
            seen.add(c.key)
            unique.append(c)
    return tuple(unique)
