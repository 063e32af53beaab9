"""One clause -> one symbolic act: verbs and particles, roles, goal states, "until", telegraphic
commands, path phrases (clauses.py, roles.py, goals.py, states.py)."""

from __future__ import annotations

from frankenbot.planner.understanding.clauses import parse_clause
from frankenbot.planner.understanding.goals import participle_command
from frankenbot.planner.understanding.roles import (
    dest_splits,
    juxtaposed,
    strip_path,
    strip_wrappers,
)
from frankenbot.planner.understanding.states import goal_state
from frankenbot.planner.understanding.words import tokenise, words_of


def w(text: str) -> list[str]:
    return words_of(tokenise(text, []))


def clause(text: str):
    return parse_clause(w(text), None)


def test_a_placing_clause_names_object_destination_and_relation():
    a = clause("put the red block into the green bowl")
    assert (a.kind, a.obj.colour, a.prep, a.dest.shape) == ("place", "red", "in", "bowl")


def test_wrappers_and_comparative_manners_are_dropped_around_the_request():
    words, manner = strip_wrappers(w("as carefully as you can put the red block down"))
    assert manner == "carefully" and words[0] == "put"


def test_a_goal_state_reads_as_the_command_that_reaches_it():
    assert participle_command(w("have the red block raised")) == w("raise the red block")
    assert participle_command(w("i want the drawer shut")) == w("close the drawer")
    assert participle_command(w("put the red block in the bowl")) is None
    assert clause("the red block should end up pushed into the zone").kind == "push"


def test_until_names_the_goal_of_the_motion():
    a = clause("keep pushing the red block until it sits in the zone")
    assert (a.kind, a.dest.shape) == ("push", "zone")
    assert clause("pull the drawer until it is all the way out").kind == "open"
    assert goal_state(w("it touches the blue block")) is None


def test_telegraphic_commands_take_the_relation_from_the_place():
    [(obj, prep, dest)] = juxtaposed(w("red block green bowl"))
    assert (obj.colour, prep, dest.colour) == ("red", "in", "green")
    assert juxtaposed(w("every block")) == []  # one phrase, not two
    assert len(juxtaposed(w("block blue bowl"))) == 2  # two readings: binding decides


def test_path_phrases_over_the_table_say_nothing_about_where_things_end():
    assert strip_path(w("the red block along the table to the zone")) == w("the red block to "
                                                                          "the zone")
    assert strip_path(w("the red block past the bowl")) == w("the red block past the bowl")


def test_relative_phrases_make_several_destination_splits():
    assert len(dest_splits(w("the red block on the blue block on the yellow block"))) == 2
    assert len(dest_splits(w("the red block in the bowl"))) == 1


def test_a_carrying_verb_without_a_destination_waits_for_the_next_clause():
    assert clause("carry the red block over").kind == "carry"
