"""Task frames: what the offline planner understood an instruction to ask, bound to the scene.

A frame is one task (a family such as ``put_in``) whose roles name scene objects by id, plus the
modifiers the words carried (manner, condition). The understanding stage
(``understanding/``) turns an instruction into frames in the order they must happen; the
program synthesis (``offline.py``) turns frames into a program. Frames render to one canonical
line each, so the development set can say what a phrasing must bind and ``frankenbot plan
--explain`` can show it.

Refusals are exceptions with a ``kind`` (unsafe | out_of_scope | impossible | ambiguous) and,
where one exists, the closest reading that was understood or the candidates to choose from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from frankenbot.errors import PlannerError

# task -> its roles, in render order ("tower" takes a, b, c, ... bottom first)
TASK_ROLES: dict[str, tuple[str, ...]] = {
    "pick_up": ("obj",),
    "put_in": ("obj", "target"),
    "stack": ("obj", "target"),
    "tower": (),
    "sort_by_colour": (),
    "clear_table": ("target",),
    "open_drawer": ("drawer",),
    "close_drawer": ("drawer",),
    "open_door": ("door",),
    "close_door": ("door",),
    "switch_on": ("target", "control"),  # the light or stove, and the control that switches it
    "switch_off": ("target", "control"),
    "press": ("obj",),
    "toggle": ("obj",),
    "push_to_zone": ("obj", "target"),
    "home": (),
    "if": (),
}
REFUSAL_KINDS = ("unsafe", "out_of_scope", "impossible", "ambiguous")


class Refusal(PlannerError):
    """The offline planner will not write a program for this instruction, and says why.

    ``suggestion`` is the closest reading it did understand ("put the red block in the green
    bowl"), ``candidates`` the objects a vague phrase could mean; either may be empty."""

    kind = "out_of_scope"

    def __init__(self, reason: str, *, suggestion: str = "", candidates: tuple[str, ...] = (),
                 kind: str = "") -> None:
        self.reason = reason
        self.suggestion = suggestion
        self.candidates = candidates
        if kind:
            self.kind = kind
        text = reason
        if suggestion:
            text += f"; did you mean: {suggestion}?"
        super().__init__(text)


class InstructionNotUnderstood(Refusal):
    """Out of scope: not a task the offline planner knows (it never guesses)."""

    kind = "out_of_scope"


class UnsafeInstruction(Refusal):
    """Asks for something unsafe (harm, code, overriding limits): refused outright."""

    kind = "unsafe"


class ObjectNotResolved(Refusal):
    """An object phrase names nothing in the scene (impossible) or several things (ambiguous)."""

    kind = "impossible"


class ObjectNotSeen(ObjectNotResolved):
    """No object in the scene fits what the phrase names (kind, colour, name, position): the
    camera may not have made it out yet, so another look may find it."""


@dataclass(frozen=True)
class Condition:
    """A run-time predicate over scene ids: empty | in | on | drawer_open | visible."""

    kind: str
    args: tuple[str, ...]
    negated: bool = False

    def render(self) -> str:
        text = f"{self.kind}({', '.join(self.args)})"
        return f"not {text}" if self.negated else text


@dataclass(frozen=True)
class Frame:
    """One understood task with its roles bound to scene ids."""

    task: str
    roles: tuple[tuple[str, str], ...] = ()
    manner: str = ""  # "push", "gently", ...: how the words said to do it
    condition: Condition | None = None  # task == "if"
    then: tuple["Frame", ...] = ()
    otherwise: tuple["Frame", ...] = ()
    notes: tuple[str, ...] = field(default=(), compare=False)

    def role(self, name: str) -> str:
        for key, value in self.roles:
            if key == name:
                return value
        raise KeyError(name)

    def render(self) -> str:
        if self.task == "if":
            assert self.condition is not None
            out = f"if {self.condition.render()} {{{render_frames(self.then)}}}"
            if self.otherwise:
                out += f" else {{{render_frames(self.otherwise)}}}"
            return out
        args = ", ".join(f"{k}={v}" for k, v in self.roles)
        return f"{self.task}({args})"


def render_frames(frames: tuple[Frame, ...] | list[Frame]) -> str:
    """Canonical text of frames in order (what the development set stores)."""
    return "; ".join(f.render() for f in frames)


def chain_towers(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """Consecutive stacks that build one column (b on a, then c on b) are one tower frame, the
    same task however it was said."""
    out: list[Frame] = []
    for f in frames:
        prev = out[-1] if out else None
        if (f.task == "stack" and prev is not None and prev.task in ("stack", "tower")
                and (not f.manner or not prev.manner or f.manner == prev.manner)):
            column = ([prev.role("target"), prev.role("obj")] if prev.task == "stack"
                      else [v for _k, v in prev.roles])
            if f.role("target") == column[-1] and f.role("obj") not in column:
                column.append(f.role("obj"))
                out[-1] = tower_frame(column, prev.manner or f.manner)
                continue
        out.append(f)
    return tuple(out)


def tower_frame(ids: list[str] | tuple[str, ...], manner: str = "") -> Frame:
    letters = "abcdefgh"
    return Frame("tower", tuple((letters[i], oid) for i, oid in enumerate(ids)), manner=manner)
