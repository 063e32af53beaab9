"""Prepositional roles and wrappers of a clause: politeness and purpose words, manner
phrases ("by sliding it"), the destination split ("X in Y"), and the colour-matching
phrasings that mean "sort".
"""

from __future__ import annotations

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


def split_dest(rest: list[str]) -> tuple[Ref, str, Ref] | None:
    """``X in Y``: the first preposition where both sides are object phrases."""
    for i, w in enumerate(rest):
        if w in ("to", "from") and i > 0 and lx.SUPERLATIVES.get(rest[i - 1]) in REL:
            continue  # "closest to": part of the object phrase
        if w in lx.DEST_PREPS and i > 0:
            left, right = rest[:i], rest[i + 1:]
            if not right:
                continue
            a, b = parse_np(left), parse_np(right)
            if a is not None and b is not None:
                return a, lx.DEST_PREPS[w], b
    return None


def sort_like(words: list[str]) -> bool:
    """``each block in the bowl that matches its colour``: every block to its colour's bowl."""
    ws = set(words)
    allowed = SORT_WORDS | set(lx.NOUNS) | lx.DETERMINERS | lx.QUANTIFIERS
    blocks = any(lx.NOUNS.get(w) == "block" or w in ("everything", "thing", "things", "one",
                                                      "ones") for w in words)
    return (ws <= allowed and any(lx.NOUNS.get(w) == "bowl" for w in ws)
            and bool(ws & COLOURISH) and blocks
            and bool(ws & (lx.QUANTIFIERS | {"blocks", "things", "ones", "everything"})))


def sortish(dest: Ref) -> bool:
    return dest.shape == "bowl" and (dest.plural or any(
        w in COLOURISH for w in dest.text.split()) or " its " in f" {dest.text} "
        or "their" in dest.text.split())
