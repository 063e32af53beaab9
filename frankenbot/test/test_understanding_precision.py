"""Precision first: what the words leave open is asked about, never guessed; a plan only when
every role is bound; meaning-preserving rewrites never change a plan (docs/LANGUAGE.md)."""

from __future__ import annotations

import re

import pytest

from frankenbot.eval.language_set import load, scene_for
from frankenbot.eval.taskset import standard_scene
from frankenbot.planner.frames import ObjectNotResolved, Refusal, render_frames
from frankenbot.planner.understanding import understand


@pytest.mark.parametrize("text,asks", [
    ("build a tower of the red, blue and yellow blocks", "which block goes at the bottom"),
    ("stack all the blocks", "which order"),
    ("put the block in the green bowl", "which block"),
    ("put the red block in the bowl", "which bowl"),
    ("pick up and place the red block", "where"),
    ("carry the red block over", "where"),
    ("put both blocks in the bin", "says 2"),
    ("put the red block and the blue block on the yellow block", "only one block fits"),
    ("block blue bowl", "which"),
])
def test_what_the_words_leave_open_is_asked_about(text, asks):
    with pytest.raises(Refusal) as e:
        understand(text, standard_scene())
    assert e.value.kind == "ambiguous" and asks in str(e.value)


@pytest.mark.parametrize("text", [
    "take the red block out of the green bowl",  # it is not in the bowl
    "put whatever is on the white plate in the bin",  # nothing is on the plate
    "have the green bowl opened",  # a bowl does not open
    "slide the red block until it is in the green bowl",  # pushing reaches the zone only
])
def test_what_the_scene_contradicts_is_refused(text):
    with pytest.raises(ObjectNotResolved) as e:
        understand(text, standard_scene())
    assert e.value.kind == "impossible"


def _rewrites() -> dict[str, object]:
    def sub(a: str, b: str):
        return lambda s: re.sub(r"\b" + a + r"\b", b, s)
    return {
        "no articles": lambda s: re.sub(r"\b(the|a|an) ", "", s),
        "fronted manner": lambda s: "carefully, " + s,
        "wrapper": lambda s: "could you " + s.rstrip(".") + "?",
        "thanks": lambda s: s.rstrip(".") + ", thanks",
        "capitals": lambda s: s.upper(),
        "cube": sub("block", "cube"),
        "each": sub("every", "each"),
        "till": sub("until", "till"),
        "in this order": sub("in that order", "in this order"),
    }


def test_meaning_preserving_rewrites_never_change_a_plan():
    """A sample of the development rows, each rewritten without changing its meaning: a rewrite
    may be refused, but a plan it gets must be the original's (a changed plan is a wrong one)."""
    changed = []
    cases = [c for c in load() if c.split == "dev" and c.expect][::4]
    for c in cases:
        scene = scene_for(c)
        base = render_frames(understand(c.text, scene).frames)
        for name, rewrite in _rewrites().items():
            text = rewrite(c.text)
            try:
                got = render_frames(understand(text, scene).frames)
            except Refusal:
                continue
            if got != base:
                changed.append(f"[{name}] {text!r}: {got} (was {base})")
    assert not changed
