"""List orders: a tower description is constraints; exactly one order must remain, else ask."""

from __future__ import annotations

import pytest

from frankenbot.eval.taskset import standard_scene
from frankenbot.planner.frames import ObjectNotResolved, render_frames
from frankenbot.planner.understanding import understand
from frankenbot.planner.understanding.pipeline import parse
from frankenbot.planner.understanding.towers import names_structure, reciprocal
from frankenbot.planner.understanding.words import tokenise, words_of

R, B, Y = "red_block", "blue_block", "yellow_block"


def tower(text: str) -> str:
    return render_frames(understand(text, standard_scene()).frames)


@pytest.mark.parametrize("text,order", [
    ("build a tower: the red block at the bottom, then the blue block, then the yellow block",
     (R, B, Y)),
    ("stack the red, blue and yellow blocks from the bottom up", (R, B, Y)),
    ("stack the red, blue and yellow blocks in that order", (R, B, Y)),
    ("build a tower from the top down: red block, blue block, yellow block", (Y, B, R)),
    ("stack the yellow block on the blue block on the red block", (R, B, Y)),
    ("make a tower with the blue block resting on the red block and the yellow block resting "
     "on the blue block", (R, B, Y)),
    ("the yellow block on top, the blue block under it, the red block at the bottom: build "
     "that tower", (R, B, Y)),
    ("the yellow block goes on top, the red block goes at the bottom and the blue block in the "
     "middle", (R, B, Y)),
    ("first the red block, then the blue block on it, then the yellow block on top", (R, B, Y)),
    ("stack the red, blue and yellow blocks into a tower, yellow first", (Y, R, B)),
])
def test_every_way_of_saying_the_order_binds_it(text, order):
    assert tower(text) == f"tower(a={order[0]}, b={order[1]}, c={order[2]})"


@pytest.mark.parametrize("text", [
    "build a tower of the red, blue and yellow blocks",
    "stack the red block, the blue block and the yellow block",
    "the red, blue and yellow blocks on top of each other",
    "put the red, blue and yellow blocks in a stack",
    "make a pile of the red, blue and yellow blocks",
])
def test_a_list_that_does_not_say_which_end_is_down_is_asked_about(text):
    assert not parse(text)[0].ordered
    with pytest.raises(ObjectNotResolved, match="which block goes at the bottom") as e:
        understand(text, standard_scene())
    assert e.value.kind == "ambiguous"


def test_all_the_blocks_in_a_tower_asks_for_the_order():
    with pytest.raises(ObjectNotResolved, match="which order"):
        understand("stack the blocks in sequence", standard_scene())


def test_a_block_named_by_its_slot_alone_is_the_one_not_named_never_dropped():
    # two blocks are left unnamed in the standard scene: asked, not guessed, never dropped
    with pytest.raises(ObjectNotResolved, match="which block"):
        understand("stack the blue block on the red block, then the last block on top",
                   standard_scene())


def test_structure_nouns_and_reciprocals():
    w = words_of(tokenise("put them into a stack", []))
    assert names_structure(w) and not names_structure(words_of(tokenise("stack them", [])))
    assert reciprocal(words_of(tokenise("a , b and c on top of each other", []))) == [
        "a", ",", "b", "and", "c"]
