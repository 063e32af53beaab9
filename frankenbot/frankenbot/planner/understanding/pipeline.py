"""The pipeline: safety -> words -> sentences and clauses -> acts -> frames -> checks."""

from __future__ import annotations

import re
import time
from typing import Any

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import (
    InstructionNotUnderstood,
)
from frankenbot.planner.understanding.acts import PENDING, Act, NotParsed
from frankenbot.planner.understanding.build import bind_all
from frankenbot.planner.understanding.check import check_frames
from frankenbot.planner.understanding.chunks import carry_over, parse_sequence, with_order
from frankenbot.planner.understanding.conditions import parse_conditional
from frankenbot.planner.understanding.explain import Understanding, closest_reading
from frankenbot.planner.understanding.safety import check_safety
from frankenbot.planner.understanding.towers import merge_slots
from frankenbot.planner.understanding.words import tokenise, tools, words_of
from frankenbot.state import Scene

MAX_WORDS = 120


def _starts_with_before(sent: list[str]) -> bool:
    """Does the sentence start with "before that" (it then refers to the previous one)?"""
    return any(sent[:len(b.split())] == b.split() for b in lx.BEFORE_WORDS)


def _join_tower_sentences(sentences: list[list[str]]) -> list[list[str]]:
    """"Build a tower? The red block at the bottom, then ...": one instruction, two sentences."""
    out: list[list[str]] = []
    for s in sentences:
        if out and "tower" in out[-1] and _tower_is_empty(out[-1]):
            out[-1] = out[-1] + [","] + s
        else:
            out.append(s)
    return out


def _tower_is_empty(words: list[str]) -> bool:
    i = words.index("tower")
    return all(w in lx.DETERMINERS or w in ("of", "three", "blocks", "block", "with", ",")
               for w in words[i + 1:])


def parse(text: str, notes: list[str] | None = None) -> list[Act]:
    """Instruction -> symbolic acts in order (no scene yet). Raises Refusal."""
    if not isinstance(text, str) or not text.strip():
        raise InstructionNotUnderstood("empty instruction: say what the robot should do")
    check_safety(text)
    notes = notes if notes is not None else []
    toks = tokenise(text, notes)
    if len(toks) > MAX_WORDS:
        raise InstructionNotUnderstood(f"too long for the offline planner ({len(toks)} words)")
    words = words_of(toks)
    sentences: list[list[str]] = [[]]
    for w in words:
        if w == ".":
            sentences.append([])
        else:
            sentences[-1].append(w)
    acts: list[Act] = []
    PENDING.refusals = []
    sentences = _join_tower_sentences([s for s in sentences if s])
    sentence_start = 0
    for sent in sentences:
        if acts:
            sentence_start = len(acts) if not _starts_with_before(sent) else sentence_start
        cond = None
        try:
            cond = parse_conditional(sent)
        except NotParsed:
            cond = None
        try:
            if cond is not None:
                new = [cond]
            else:
                # "before that, open the drawer" as its own sentence
                lead = next((b for b in sorted(lx.BEFORE_WORDS, key=lambda x: -len(x))
                             if sent[:len(b.split())] == b.split()), None)
                if lead is not None and acts:
                    body = sent[len(lead.split()):]
                    new = [with_order(a, "before")
                           for a in parse_sequence(body, acts[-1])]
                    acts = acts[:sentence_start] + new + acts[sentence_start:]
                    continue
                new = parse_sequence(sent, acts[-1] if acts else None)
        except NotParsed:
            pending = PENDING.refusals
            if pending:
                raise pending[0] from None
            raise InstructionNotUnderstood(
                f"not understood: {text.strip()[:120]!r}. The offline planner knows: "
                f"{lx.OUT_OF_SCOPE_HINT}") from None
        acts += new
    if not acts:
        raise InstructionNotUnderstood(f"not understood: {text.strip()[:120]!r}")
    return merge_slots(carry_over(acts))


def taught_names(text: str, scene: Scene) -> str:
    """``text`` with the names a user taught for things in this scene ("the alphabet soup", the
    label perception reports for a recognised object) replaced by the object's id, so a name
    of words the lexicon does not know still binds to that one object. A name two objects
    share is left as said (binding then asks or refuses)."""
    known = set(lx.NOUNS) | set(lx.COLOUR_WORDS) | lx.DETERMINERS
    by_label: dict[str, list[str]] = {}
    for o in scene.objects:
        label = " ".join(o.label.lower().split())
        if label and label != o.object_id.replace("_", " ") and not all(
                w in known for w in label.split()):
            by_label.setdefault(label, []).append(o.object_id)
    out = f" {text} "
    for label in sorted(by_label, key=lambda x: -len(x)):
        ids = by_label[label]
        if len(ids) == 1:
            out = re.sub(rf"(?i)(?<![\w-]){re.escape(label)}(?![\w-])", ids[0], out)
    return out.strip()


def understand(text: str, scene: Scene) -> Understanding:
    """Instruction + the scene's objects -> frames in order, or a Refusal that says why."""
    t0 = time.perf_counter()
    from frankenbot.planner.relative import relative_frame  # local: it uses this module

    text = taught_names(text, scene)
    relative = relative_frame(text, scene)  # "put X left of Y": before the general reading
    if relative is not None:
        return Understanding(text, (relative,), ("relative placement",),
                             time.perf_counter() - t0)
    notes: list[str] = list(tools().messages)
    try:
        acts = parse(text, notes)
    except InstructionNotUnderstood as e:
        if not e.suggestion:
            sugg = closest_reading(text, scene)
            if sugg:
                raise InstructionNotUnderstood(e.reason, suggestion=sugg) from None
        raise
    frames, ctx = bind_all(acts, scene)
    return Understanding(text, check_frames(frames, ctx, text), tuple(notes),
                         time.perf_counter() - t0)


def load_models() -> Any:
    """Load the language tools now (the benchmark excludes this from its timings)."""
    return tools()
