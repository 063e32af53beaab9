"""What was understood, in words: the ``Understanding`` result, the reading offered back
in refusals and by ``--explain``, and the closest reading for an out-of-scope refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import Frame
from frankenbot.planner.understanding.resolve import CONTAINER_SHAPES, PICKABLE, say
from frankenbot.planner.understanding.words import normalise
from frankenbot.state import Scene


def describe(frames: tuple[Frame, ...], scene: Scene) -> str:
    """Frames in plain words (the reading offered back in a refusal or by --explain)."""
    def name(oid: str) -> str:
        o = scene.get(oid)
        return say(o) if o is not None else oid

    def one(f: Frame) -> str:
        r = dict(f.roles)
        if f.task == "pick_up":
            return f"pick up {name(r['obj'])}"
        if f.task == "put_in":
            return f"put {name(r['obj'])} in {name(r['target'])}"
        if f.task == "stack":
            return f"stack {name(r['obj'])} on {name(r['target'])}"
        if f.task == "push_to_zone":
            return f"push {name(r['obj'])} into {name(r['target'])}"
        if f.task == "tower":
            ids = [v for _k, v in f.roles]
            return "build a tower of " + ", ".join(name(i) for i in ids) + " (bottom first)"
        if f.task == "clear_table":
            return f"clear the table into {name(r['target'])}"
        if f.task == "sort_by_colour":
            return "sort the blocks into the bowls of their colour"
        if f.task in ("open_drawer", "close_drawer"):
            return f"{f.task.split('_')[0]} {name(r['drawer'])}"
        if f.task == "home":
            return "go home"
        if f.task == "if" and f.condition is not None:
            c = f.condition
            text = f"if {c.render()} then " + describe(f.then, scene)
            return text + (f", otherwise {describe(f.otherwise, scene)}" if f.otherwise else "")
        return f.render()

    return ", then ".join(one(f) for f in frames)



@dataclass(frozen=True)
class Understanding:
    """What an instruction was understood to ask, and how it was read."""

    instruction: str
    frames: tuple[Frame, ...]
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    def explain(self, scene: Scene) -> str:
        lines = [f"understood {len(self.frames)} frame{'s' if len(self.frames) != 1 else ''}:"]
        for i, f in enumerate(self.frames, 1):
            manner = f" [manner: {f.manner}]" if f.manner else ""
            lines.append(f"  {i}. {f.render()}{manner}")
        lines.append(f"  reading: {describe(self.frames, scene)}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def closest_reading(text: str, scene: Scene) -> str:
    """The task reading, among those this scene allows, whose words are nearest the instruction
    (rapidfuzz token-set similarity); "" when none is near. Offered in refusals only."""
    try:
        from rapidfuzz import fuzz
    except ImportError:
        return ""
    readings = _readings(scene)
    s = normalise(text)
    best, score = "", 0.0
    for r in readings:
        v = fuzz.token_set_ratio(s, r)
        if v > score:
            best, score = r, v
    return best if score >= 70 else ""


def _readings(scene: Scene) -> list[str]:
    objs = sorted(scene.objects, key=lambda o: o.object_id)
    blocks = [o for o in objs if o.shape in PICKABLE]
    conts = [o for o in objs if o.shape in CONTAINER_SHAPES and o.shape not in lx.PUSH_TARGETS]
    out = ["sort the blocks by colour", "clear the table", "go home"]
    for o in objs:
        if o.shape in lx.OPENABLE:
            out += [f"open {say(o)}", f"close {say(o)}"]
    for b in blocks:
        out.append(f"pick up {say(b)}")
        out += [f"put {say(b)} in {say(c)}" for c in conts]
        out += [f"stack {say(b)} on {say(o)}" for o in blocks if o is not b]
        out += [f"push {say(b)} into {say(z)}" for z in objs if z.shape in lx.PUSH_TARGETS]
    return out
