"""Chunk and coordinate: sentences -> clauses in order (chunks.py, conditions.py)."""

from __future__ import annotations

from frankenbot.planner.understanding.chunks import parse_sequence
from frankenbot.planner.understanding.conditions import parse_conditional
from frankenbot.planner.understanding.pipeline import parse
from frankenbot.planner.understanding.words import tokenise, words_of


def kinds(text: str) -> list[str]:
    return [a.kind for a in parse(text)]


def test_ordering_words_split_clauses_in_the_order_they_must_happen():
    assert kinds("put the red block in the bowl, then go home") == ["place", "home"]
    assert kinds("pick up the red block. Before that, open the drawer.") == ["open", "pick"]


def test_coordinated_verbs_share_their_object_in_the_order_said():
    acts = parse("pick up and place the red block in the green bowl")
    assert [a.kind for a in acts] == ["pick", "place"]
    assert acts[0].obj.colour == acts[1].obj.colour == "red"
    assert kinds("open and then close the drawer") == ["open", "close"]
    assert kinds("find, grab and lift the red block") == ["locate", "pick", "pick"]


def test_a_phrase_said_before_the_verb_reads_as_if_said_after_it():
    acts = parse("by sliding it, get the red block into the zone")
    assert [a.kind for a in acts] == ["push"]
    assert kinds("from the table, put the red block in the bowl") == ["place"]


def test_a_set_picked_up_and_then_placed_as_it_is_the_set_placed():
    [a] = parse("gather up everything on the table and put it in the bin")
    assert a.kind == "place" and a.obj.quantifier == "all"


def test_conditions_before_and_after_the_action():
    words = words_of(tokenise("if the green bowl is empty put the red block in it", []))
    c = parse_conditional(words)
    assert c.kind == "if" and c.cond[0] == "empty" and c.then[0].kind == "place"
    assert parse_sequence(words_of(tokenise("open the drawer", [])))[0].kind == "open"
