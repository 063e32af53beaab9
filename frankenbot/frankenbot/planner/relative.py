"""Relative placement instructions for the offline planner: "put the red block left of the bowl".

One task frame: move one object to a spot named by its relation to one reference object (left
of, right of, behind, in front of, next to) or two (between). It becomes a pick, the matching
relative placement primitive (which picks a free spot at run time from the perceived scene) and
a bounded check of the relation's predicate. The spatial convention is frankenbot/spatial.py's.

Read before the general understanding stage, whose lexicon folds "next to" and "in front of"
into "beside": object phrases go through its noun-phrase parser and scene binding.
"""

from __future__ import annotations

import re

from frankenbot.planner.frames import Frame, ObjectNotResolved
from frankenbot.planner.understanding.acts import Ref
from frankenbot.planner.understanding.phrases import parse_np
from frankenbot.planner.understanding.resolve import Binding, any_object, resolve
from frankenbot.planner.understanding.roles import strip_wrappers
from frankenbot.planner.understanding.words import tokenise
from frankenbot.state import Scene

NEAR_DISTANCE = 0.25  # m: what "next to" is checked against after place_near

_VERB = r"(?:put|place|move|set|lay|drop|leave|position|push|slide|shove|nudge)"
_PUSH_VERBS = ("push", "slide", "shove", "nudge")  # along the table, never lifted
_RELATIONS = (
    (r"(?:to |on |at )?the left(?: side)? of|left of", "left_of"),
    (r"(?:to |on |at )?the right(?: side)? of|right of", "right_of"),
    (r"in front of|(?:to |at )?the front of", "in_front_of"),
    (r"behind|in back of|(?:to |at )?the back of", "behind"),
    (r"between", "between"),
    (r"next to|near|beside|close to", "near"),
)
_PATTERN = re.compile(
    rf"^(?:please )?(?P<verb>{_VERB}) (?P<obj>.+?)(?: down)? "
    rf"(?P<rel>{'|'.join(p for p, _ in _RELATIONS)})"
    rf" (?P<ref>.+?)(?: please)?$")
TASKS = {"left_of": "place_left_of", "right_of": "place_right_of", "behind": "place_behind",
         "in_front_of": "place_in_front_of", "between": "place_between", "near": "place_near"}
# pushed to a side of the reference (no push between two objects or "near" one)
PUSH_TASKS = {rel: f"push_{rel}" for rel in ("left_of", "right_of", "behind", "in_front_of")}


def _np(phrase: str) -> Ref | None:
    return parse_np([t.w for t in tokenise(phrase, [])])


def relative_frame(text: str, scene: Scene) -> Frame | None:
    """The relative placement frame ``text`` asks for (ids bound in ``scene``), or None when
    the instruction is not one. Raises ObjectNotResolved for phrases the scene cannot bind."""
    # the relation words as typed: the understanding stage's normaliser folds "in front of"
    # and "next to" into "beside"
    plain = re.sub(r"\s+", " ", re.sub(r"[^a-z0-9_' ]+", " ", text.lower())).strip()
    # politeness and manner around the request ("carefully", "I want you to", "thanks")
    plain = " ".join(strip_wrappers(plain.split())[0])
    m = _PATTERN.match(plain)
    if m is None:
        return None
    relation = next(name for pat, name in _RELATIONS if re.fullmatch(pat, m.group("rel")))
    pushed = m.group("verb") in _PUSH_VERBS
    if pushed and relation not in PUSH_TASKS:
        raise ObjectNotResolved(f"the robot pushes things to a side of an object (left, "
                                f"right, in front, behind), not {m.group('rel')} it",
                                kind="impossible")
    obj_ref = _np(m.group("obj"))
    if relation == "between":
        parts = re.split(r"\s+and\s+", m.group("ref"), maxsplit=1)
        if len(parts) != 2:
            return None
        refs = [_np(p) for p in parts]
    else:
        refs = [_np(m.group("ref"))]
    if obj_ref is None or any(r is None for r in refs):
        return None
    ctx = Binding(scene)
    obj = resolve(obj_ref, ctx, "item")
    bound = [any_object(r, ctx) for r in refs if r is not None]
    ids = [o.object_id for o in bound]
    if obj.object_id in ids or len(set(ids)) != len(ids):
        raise ObjectNotResolved(f"a relative placement needs distinct objects, got "
                                f"{obj.object_id} and {', '.join(ids)}")
    keys = ("a", "b") if relation == "between" else ("ref",)
    task = PUSH_TASKS[relation] if pushed else TASKS[relation]
    return Frame(task, (("obj", obj.object_id), *zip(keys, ids, strict=True)))


def placement_call(frame: Frame) -> tuple[str, str]:
    """(the placing primitive call, the goal predicate that checks it) of a relative frame."""
    r = dict(frame.roles)
    obj = r["obj"]
    if frame.task == "place_between":
        return (f"place_between(obj={obj}, a={r['a']}, b={r['b']})",
                f"between({obj}, {r['a']}, {r['b']})")
    ref = r["ref"]
    if frame.task.startswith("push_"):
        relation = frame.task[len("push_"):]
        return f"{frame.task}(obj={obj}, ref={ref})", f"{relation}({obj}, {ref})"
    if frame.task == "place_near":
        return f"place_near(obj={obj}, ref={ref})", f"near({obj}, {ref}, {NEAR_DISTANCE:g})"
    relation = frame.task[len("place_"):]
    return f"{frame.task}(obj={obj}, ref={ref})", f"{relation}({obj}, {ref})"
