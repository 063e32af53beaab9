"""Chunk and coordinate: a sentence's words -> clauses in the order they must happen.

Splits at ordering words ("then", "once that is done", "before that", "after opening ..."),
at "and" and commas, and tries each split until every part reads as a clause.
"""

from __future__ import annotations

from dataclasses import replace

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Act, NotParsed
from frankenbot.planner.understanding.clauses import parse_clause
from frankenbot.planner.understanding.phrases import parse_np
from frankenbot.planner.understanding.roles import strip_wrappers
from frankenbot.planner.understanding.words import find

_SPLIT_PRIORITY: tuple[tuple[str, ...], ...] = (
    tuple(sorted(lx.THEN_WORDS, key=lambda x: -len(x.split()))),
    tuple(sorted(lx.BEFORE_WORDS, key=lambda x: -len(x.split()))),
    ("before", "after", "and", ","),
)


def parse_sequence(words: list[str], prev: Act | None = None, depth: int = 0) -> list[Act]:
    """Clauses in order; raises NotParsed when no split parses every part."""
    words = [w for w in words]
    while words and words[0] in (",", "and"):
        words = words[1:]
    while words and words[-1] in (",", "and"):
        words = words[:-1]
    if not words:
        raise NotParsed("")
    if depth > 8:
        raise NotParsed(" ".join(words))
    head, _m = strip_wrappers(list(words))
    # leading "after opening the drawer, put ..." / "before putting X, open ..."
    if head and head[0] in ("after", "before", "once") and "," in head:
        k = head.index(",")
        first, second = head[1:k], head[k + 1:]
        if first and second:
            try:
                a = parse_sequence(first, prev, depth + 1)
                b = parse_sequence(second, a[-1], depth + 1)
                return a + b if head[0] in ("after", "once") else b + a
            except NotParsed:
                pass
    try:
        return [parse_clause(words, prev)]
    except NotParsed:
        pass
    serial = _serial_verbs(words, prev, depth)  # "grasp and raise X": one object, two verbs
    if serial is not None:
        return serial
    if head and head[0] in lx.FRONTED_HEADS and "," in head:
        # "by sliding it, get X into the zone", "from the table, put X in Y": a manner,
        # source or path phrase said before the verb reads as if said after it
        k = head.index(",")
        try:
            return parse_sequence(head[k + 1:] + head[:k], prev, depth + 1)
        except NotParsed:
            pass
    if "," in words:  # "the red block, please put it in the bowl": the phrase is "it"
        k = words.index(",")
        topic = parse_np(words[:k])
        if topic is not None and not topic.pronoun and "it" in words[k + 1:]:
            try:
                loc = Act("locate", obj=topic, text=" ".join(words[:k]))
                return [loc, *parse_sequence(words[k + 1:], loc, depth + 1)]
            except NotParsed:
                pass
    for marker in (", but", "but"):  # "put X in the drawer but open it first"
        i = find(words, marker, 1)
        if i > 0:
            right = words[i + len(marker.split()):]
            if right[-1:] == ["first"] or right[:1] == ["first"]:
                right = [w for w in right if w != "first"]
                try:
                    a = parse_sequence(words[:i], prev, depth + 1)
                    b = parse_sequence(right, a[-1], depth + 1)
                    return b + a
                except NotParsed:
                    pass
    for group in _SPLIT_PRIORITY:
        for marker in group:
            m = marker.split()
            i = find(words, marker, 1)
            while i > 0:
                left, right = words[:i], words[i + len(m):]
                if marker in (",", "and") and right and right[0] in lx.DEST_PREPS and False:
                    pass
                try:
                    if marker in ("before", "after"):
                        # "open the drawer before putting X in it"; "put X in after opening"
                        a = parse_sequence(left, prev, depth + 1)
                        b = parse_sequence(_drop_you(right), a[-1], depth + 1)
                        return a + b if marker == "before" else b + a
                    a = parse_sequence(left, prev, depth + 1)
                    b = parse_sequence(right, a[-1], depth + 1)
                    if marker in lx.BEFORE_WORDS:
                        b = [with_order(x, "before") for x in b]
                        return a[:-1] + b + a[-1:]
                    return a + b
                except NotParsed:
                    i = find(words, marker, i + 1)
    raise NotParsed(" ".join(words))


def _drop_you(words: list[str]) -> list[str]:
    if words[:2] in (["you", "have"], ["you", "are"]):
        return words[2:]
    return words[1:] if words[:1] == ["you"] else words


def with_order(a: Act, order: str) -> Act:
    from dataclasses import replace

    return replace(a, order=order)


def _is_verb(w: str) -> bool:
    return w in lx.VERBS or w in lx.LOCATE_VERBS


def _serial_verbs(words: list[str], prev: Act | None, depth: int) -> list[Act] | None:
    """Verbs coordinated before one object share it, in the order said: "grasp and raise X",
    "pick up and place X in Y", "find, grab and lift X", "open and then close the drawer".
    None when the words do not start with two or more verbs joined by "and", "then", ","."""
    groups: list[list[str]] = []
    i = 0
    while i < len(words) and _is_verb(words[i]):
        group = [words[i]]
        i += 1
        while i < len(words) and words[i] in lx.PARTICLES:
            group.append(words[i])
            i += 1
        groups.append(group)
        j = i
        while j < len(words) and words[j] in (",", "and", "then"):
            j += 1
        if j == i or j >= len(words) or not _is_verb(words[j]):
            break
        i = j
    if len(groups) < 2 or i >= len(words):
        return None
    last = parse_sequence(groups[-1] + words[i:], prev, depth + 1)
    obj = last[0].obj
    if obj is None:
        return None
    earlier = [parse_clause(g + obj.text.split(), prev) for g in groups[:-1]]
    return earlier + last


def carry_over(acts: list[Act]) -> list[Act]:
    """"Gather up everything and put it in the bin", "pick up and put A and then B into the
    bowl": a set or list picked up and then placed is the set placed (one block at a time is
    how the robot does it)."""
    out: list[Act] = []
    for a in acts:
        before = out[-1] if out else None
        if (before is not None and before.kind in ("pick", "carry", "locate")
                and before.obj is not None and (before.obj.quantifier == "all"
                                                or before.obj.items)
                and a.kind in ("place", "push") and a.obj is not None
                and (a.obj.pronoun or a.obj == before.obj)):
            out[-1] = replace(a, obj=before.obj)
            continue
        out.append(a)
    return out
