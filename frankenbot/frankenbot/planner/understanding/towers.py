"""List orders: the blocks of a tower and which of them goes at the bottom."""

from __future__ import annotations

from frankenbot.planner.understanding.acts import Act, NotParsed, Ref
from frankenbot.planner.understanding.phrases import POSITION, parse_np
from frankenbot.planner.understanding.words import find


def tower_act(rest: list[str], manner: str, text: str) -> Act:
    """``a tower of A, B and C``, ``a tower: A at the bottom, then B, then C on top``."""
    words = list(rest)
    reverse = False
    for marker in ("from the top down", "from top to bottom", "top to bottom", "from the top",
                   "top down", "from top", "starting from the top", "starting at the top"):
        i = find(words, marker)
        if i >= 0:
            reverse = True
            words = words[:i] + [","] + words[i + len(marker.split()):]
    for marker in ("from the bottom up", "from bottom to top", "bottom to top", "bottom up",
                   "from the bottom", "starting from the bottom", "starting at the bottom",
                   "in this order", "in that order", "in the order", "in order"):
        i = find(words, marker)
        if i >= 0:
            words = words[:i] + [","] + words[i + len(marker.split()):]
    # items: split at commas, "and", "then", "followed by", "with", "next"
    seps = {",", "and", "then", "next", "followed", "with", "using", "of", "from", "out",
            "finally", "after", "that", "afterwards", "lastly", "by", "plus"}
    items: list[list[str]] = [[]]
    for w in words:
        if w in seps:
            if items[-1]:
                items.append([])
        else:
            items[-1].append(w)
    items = [it for it in items if it]
    slots: list[tuple[str, Ref]] = []
    skip = {"a", "tower", "the", "three", "two", "four", "3", "2", "4", "block", "blocks",
            "cube", "cubes", "high", "tall", "level", "levels", "storey", "story", "stack",
            "put", "place", "add", "set", "one", "is", "goes", "go", "should", "be",
            "at", "on", "in", "as", "it", "its", "itself", "that", "them", "this", "very",
            "onto", "to", "up", "make", "build", "piece", "pieces", "layer", "layers",
            "above", "below", "under", "over", "comes", "come", "sits", "sit", "me", "us",
            "you", "into", "where", "i", "would", "like", "want", "need", "please"}
    for it in items:
        pos = ""
        for w in it:
            if w in POSITION:
                pos = POSITION[w]
        if pos == "" and it[-1] in ("it", "that", "them") and len(it) > 2:
            pos = ""
        core = [w for w in it if w not in POSITION and w not in ("of", "the", "at", "on",
                                                                  "in", "as", "onto")]
        if all(w in skip for w in core):
            continue
        noun_ok = [w for w in core if w not in skip or w in ("block", "cube")]
        ref = parse_np([w for w in noun_ok if w not in ("put", "place", "stack", "add", "set",
                                                        "goes", "go", "comes", "sits")])
        if ref is None or ref.pronoun:
            raise NotParsed(text)
        if ref.items:
            for r in ref.items:
                slots.append(("", r))
        else:
            slots.append((pos, ref))
    if not slots:
        raise NotParsed(text)
    if len(slots) == 1 and slots[0][1].quantifier == "all":
        return Act("tower", tower=(slots[0][1],), manner=manner, text=text)
    def key(r: Ref) -> tuple[str, str, str, str]:
        return (r.colour, r.shape or "block", r.superlative, r.object_id)

    placed = {key(r) for p, r in slots if p}
    # "A, B and C into a tower, A first": A's position is said twice, it is one block
    ordered = [r for p, r in slots if not p and (key(r) not in placed or not r.colour)]
    bottom = [r for p, r in slots if p == "bottom"]
    middle = [r for p, r in slots if p == "middle"]
    top = [r for p, r in slots if p == "top"]
    if reverse:
        ordered.reverse()
    seq = [*bottom, *middle, *ordered, *top] if not middle else [*bottom, *ordered[:0], *middle,
                                                                   *ordered, *top]
    if bottom and top and not middle and not ordered and "three" in words:
        seq = [bottom[0], Ref("the other block", shape="block", remaining=True), top[0]]
    if len(seq) < 2:
        raise NotParsed(text)
    return Act("tower", tower=tuple(seq), manner=manner, text=text)
