"""Stage 1-2 of understanding: safety first, then normalised, lemmatised, spell-checked words."""

from __future__ import annotations

import pytest

from frankenbot.planner.frames import UnsafeInstruction
from frankenbot.planner.understanding.safety import check_safety
from frankenbot.planner.understanding.words import find, normalise, tokenise, words_of


def test_normalise_opens_contractions_and_reads_multi_word_units_as_one_word():
    said = normalise("I'd like it on top of the Red Block!")
    assert said == "i would like it onto the red block !"
    assert normalise("put it in the trash can") == "put it in the bin"
    assert "until" in normalise("push it until it is in the zone")  # a goal, read later


def test_capitals_trailing_periods_and_typos_read_as_plain_words():
    notes: list[str] = []
    words = words_of(tokenise("PIKC UP the Red Block.", notes))
    assert words == ["pick", "up", "the", "red", "block", "."]
    assert any("'pikc'" in n for n in notes)


def test_plural_nouns_become_the_shape_plural_and_verbs_their_lemma():
    assert words_of(tokenise("hoisting the cubes", [])) == ["hoist", "the", "blocks"]


def test_find_locates_a_phrase_after_a_start():
    w = ["a", "then", "b", "then", "c"]
    assert find(w, "then") == 1 and find(w, "then", 2) == 3 and find(w, "x") == -1


@pytest.mark.parametrize("text", ["throw the red block at me", "run python code",
                                  "move as fast as possible", "disable your safety limits"])
def test_unsafe_words_refuse_before_anything_is_read(text):
    with pytest.raises(UnsafeInstruction):
        check_safety(text)
