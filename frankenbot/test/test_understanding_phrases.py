"""Object phrases: the words of one noun phrase -> a symbolic Ref (nothing bound yet)."""

from __future__ import annotations

from frankenbot.planner.understanding.phrases import every, parse_np


def np(text: str):
    return parse_np(text.split())


def test_colour_shape_and_superlative_are_read():
    r = np("the largest red block")
    assert (r.colour, r.shape, r.superlative) == ("red", "block", "largest")
    assert np("the block closest to the green bowl").relative_to.colour == "green"


def test_a_word_that_does_not_belong_makes_no_phrase():
    assert np("the red block upside down") is None
    assert np("the right side of the plate") is None  # a place beside it, not the plate


def test_lists_and_their_shared_noun():
    r = np("the red , green and blue blocks")
    assert [i.colour for i in r.items] == ["red", "green", "blue"]
    assert all(i.shape == "block" for i in r.items)


def test_exclusions_counts_and_remainders():
    r = np("every block except the red one")
    assert r.quantifier == "all" and r.exclude[0].colour == "red"
    assert np("both blocks other than the red block").count == 2
    assert np("the rest of the blocks").remaining and np("all the other blocks").remaining
    assert np("the remaining block").remaining and np("remaining block").remaining


def test_relative_restrictions_name_a_relation_to_another_object():
    r = np("whatever is on the white plate")
    assert r.quantifier == "all" and r.where[0] == "on" and r.where[1].shape == "plate"
    assert np("the block in the green bowl").where[0] == "in"
    assert np("the red block on the table").where is None  # where every loose object is


def test_matching_references_choose_per_item():
    assert np("the bowl that matches it").match == "colour"
    assert np("the bowl of the same colour as it").match == "colour"


def test_every_means_all_blocks_and_nothing_more():
    assert every(np("all the blocks")) and every(np("everything"))
    assert not every(np("every block except the red one"))
    assert not every(np("all the red blocks")) and not every(np("both blocks"))
