"""Prepositional roles and wrappers of a clause: politeness and purpose words, manner
phrases ("by sliding it"), the destination split ("X in Y"), and the colour-matching
phrasings that mean "sort".
"""

from __future__ import annotations

import re

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Ref
from frankenbot.planner.understanding.phrases import REL, parse_np
from frankenbot.planner.understanding.words import find

SORT_WORDS = {"block", "bowl", "colour", "matching", "same", "their", "its", "by", "into",
               "in", "to", "according", "based", "on", "the", "all", "every", "each", "of",
               "with", "that", "match", "has", "have", "corresponding", "respective", "own",
               "correct", "appropriate", "table", "one", "ones", "a", "an", "bowls",
               "blocks", "right", "proper", "coloured", "identical", "shares", "share", "is",
               "are", "it", "they", "them", "up", "whose", "everything", "object",
               "item", "thing", "cube", "cubes", "where", "belong", "belongs", "go", "goes",
               "respectively", "sort", "sorted", "hue", "shade", "appropriately",
               "matches", "out", "other", "onto", "inside", "together", "piece",
               "group", "grouped", "per", "different", "colours", "and", "so", "should", "must",
               "need", "needs", "want", "i", "would", "like"}
COLOURISH = {"colour", "matching", "match", "matches", "corresponding", "respective", "hue",
              "shade", "identical", "same", "own", "colours", "appropriate", "respectively",
              "sort"}


# the wrappers as word lists, longest first (a longer wrapper wins over its own start)
_LEADING = sorted(([*f.replace("'", " '").split()] if "'" in f else f.split()
                   for f in lx.LEADING_FILLERS), key=lambda p: -len(p))
_TRAILING = sorted((f.split() for f in lx.TRAILING_FILLERS), key=lambda p: -len(p))


def strip_wrappers(words: list[str]) -> tuple[list[str], str]:
    """Drop politeness, filler and purpose words around a clause; return (words, manner)."""
    manner = ""
    changed = True
    while changed and words:
        changed = False
        # "as carefully as you can, ...": a manner said as a comparison
        if words[:1] == ["as"] and len(words) > 3 and words[1] in lx.MANNER_WORDS:
            for end in lx.AS_AS_ENDS:
                p = ["as", *end.split()]
                if words[2:2 + len(p)] == p:
                    manner, words = manner or words[1], words[2 + len(p):]
                    changed = True
                    break
        for p in _LEADING:
            if words[:len(p)] == p and len(words) > len(p):
                if p[0] in lx.MANNER_WORDS and not manner:
                    manner = p[0]
                words = words[len(p):]
                changed = True
                break
        while words and words[0] == ",":
            words = words[1:]
            changed = True
        for p in _TRAILING:
            if p == ["first"] and "tower" in words:
                continue  # "A, B and C into a tower, C first": C's place in the tower
            if len(words) > len(p) and words[-len(p):] == p:
                if p[0] in lx.MANNER_WORDS and not manner:
                    manner = p[0]
                words = words[:-len(p)]
                changed = True
                break
        while words and words[-1] == ",":
            words = words[:-1]
            changed = True
        for pw in lx.PURPOSE_WORDS:
            i = find(words, pw, 1)
            if i > 1:
                words = words[:i]
                changed = True
                break
        # "... to make room": "to" + a verb that is not a destination
        for i, w in enumerate(words[1:], 1):
            if w == "to" and i + 1 < len(words) and words[i + 1] in (
                    "make", "keep", "free", "tidy", "clean", "help", "get", "save", "stop",
                    "avoid", "prevent", "see", "check", "test", "show", "practise",
                    "practice", "prepare", "finish", "complete", "open", "close", "shut"):
                words = words[:i]
                changed = True
                break
    while words and words[-1] in (",", "and"):
        words = words[:-1]
    return words, manner


def read_manner(words: list[str]) -> tuple[list[str], str]:
    """``by sliding it``, ``without lifting it``, ``using the handle`` -> (rest, manner)."""
    for i, w in enumerate(words):
        if w in ("by", "without", "using", "via", "with") and i > 0 and i + 1 < len(words):
            nxt = words[i + 1]
            if w == "by" and nxt in lx.VERBS:
                cls = lx.VERBS[nxt]
                tail = words[i + 2:]
                dest_i = next((k for k, t in enumerate(tail) if t in lx.DEST_PREPS), -1)
                keep = tail[dest_i:] if dest_i >= 0 and words[:i].count("it") == 0 and not any(
                    t in lx.DEST_PREPS for t in words[:i]) else []
                return words[:i] + keep, {"pull": "pull", "push": "push"}.get(cls, cls)
            if w == "without" and nxt in lx.VERBS and lx.VERBS[nxt] == "pick":
                return words[:i], "push"
            if w in ("using", "with", "via", "by") and any(
                    t in lx.PARTS for t in words[i + 1:]) and all(
                    t in lx.PARTS or t in lx.DETERMINERS or t in lx.NOUNS or t in (
                        "'s", "of", "grip", "gripper", "hand", "fingers")
                    for t in words[i + 1:]):
                return words[:i], "by its handle"
            if w == "with" and all(t in lx.DETERMINERS or t in ("gripper", "hand", "fingers",
                                                                 "claw", "care")
                                   for t in words[i + 1:]):
                return words[:i], "gently" if "care" in words[i + 1:] else ""
    return words, ""


def dest_splits(rest: list[str]) -> list[tuple[Ref, str, Ref]]:
    """``X in Y``: every preposition where both sides are object phrases, first one first.
    Relative phrases ("the block in the bowl") make several splits read; binding keeps the
    reading the scene allows. A split whose sides read as plain phrases wins outright."""
    out: list[tuple[Ref, str, Ref]] = []
    for i, w in enumerate(rest):
        if w in ("to", "from") and i > 0 and lx.SUPERLATIVES.get(rest[i - 1]) in REL:
            continue  # "closest to": part of the object phrase
        if w in lx.DEST_PREPS and i > 0:
            left, right = rest[:i], rest[i + 1:]
            if not right:
                continue
            a, b = parse_np(left), parse_np(right)
            if a is not None and b is not None and not b.items:  # one place, not a list
                if a.where is None and b.where is None:
                    return [(a, lx.DEST_PREPS[w], b)]
                out.append((a, lx.DEST_PREPS[w], b))
    return out


def split_dest(rest: list[str]) -> tuple[Ref, str, Ref] | None:
    """The first of ``dest_splits``, or None."""
    splits = dest_splits(rest)
    return splits[0] if splits else None


# the words an object phrase is made of, and nothing else (no preposition, particle, verb)
_NP_CONTENT = (lx.DETERMINERS | lx.QUANTIFIERS | set(lx.COLOUR_WORDS) | set(lx.NOUNS)
               | set(lx.SUPERLATIVES) | set(lx.COUNT_WORDS)) - set(lx.VERBS) - {"one"}


def juxtaposed(rest: list[str]) -> list[tuple[Ref, str, Ref]]:
    """Telegraphic commands that drop the preposition: "red block green bowl", "all blocks
    bin". The one place where the words split into an object phrase and a phrase naming a
    kind of place; the relation is that kind's usual one (lexicon DEFAULT_PREP). Every such
    split is returned ("block blue bowl": the block and the blue bowl, or the blue block and
    the bowl)."""
    if not all(w in _NP_CONTENT or re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", w) for w in rest):
        return []  # a telegraphic command is object words only: this one has others
    if parse_np(rest) is not None:
        return []  # "every block": one phrase, not two
    found = []
    for i in range(1, len(rest)):
        a, b = parse_np(rest[:i]), parse_np(rest[i:])
        if a is None or b is None or a.pronoun or b.pronoun or b.shape not in lx.DEFAULT_PREP:
            continue
        if not (a.shape or a.object_id) or b.quantifier == "all" or a.items:
            continue
        found.append((a, lx.DEFAULT_PREP[b.shape], b))
    return found  # several: binding keeps the one the scene allows, or asks


def strip_path(rest: list[str]) -> list[str]:
    """Drop path phrases that say nothing about where things end: "along the table",
    "across the tabletop", "over the table" (a path past an object is left to fail)."""
    out = list(rest)
    for i in range(len(out) - 1, 0, -1):
        if out[i] in lx.PATH_PREPS:
            j = i + 1
            while j < len(out) and (out[j] in lx.DETERMINERS or out[j] in lx.TABLE_WORDS):
                j += 1
            if j > i + 1 and any(w in lx.TABLE_WORDS for w in out[i + 1:j]):
                out = out[:i] + out[j:]
    return out


def sort_like(words: list[str]) -> bool:
    """``each block in the bowl that matches its colour``: every block to its colour's bowl."""
    ws = set(words)
    allowed = SORT_WORDS | set(lx.NOUNS) | lx.DETERMINERS | lx.QUANTIFIERS
    blocks = any(lx.NOUNS.get(w) == "block" or w in ("everything", "thing", "things", "one",
                                                      "ones") for w in words)
    return (ws <= allowed and any(lx.NOUNS.get(w) == lx.SORT_SHAPE for w in ws)
            and bool(ws & COLOURISH) and blocks
            and bool(ws & (lx.QUANTIFIERS | {"blocks", "things", "ones", "everything"})))


def sortish(dest: Ref) -> bool:
    return dest.shape == lx.SORT_SHAPE and (dest.plural or any(
        w in COLOURISH for w in dest.text.split()) or " its " in f" {dest.text} "
        or "their" in dest.text.split())
