"""Object phrases: the words of one noun phrase -> a symbolic ``Ref``.

Colour, shape, superlative, quantifier, pronoun, part-of-object and list ("the red and the
blue block") readings; a word that does not belong in an object phrase makes it None.
"""

from __future__ import annotations

import re

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Ref

_PRONOUNS = {"it", "them", "that", "this", "there", "those", "these", "they"}
POSITION = {"bottom": "bottom", "base": "bottom", "foundation": "bottom", "lowest": "bottom",
             "first": "bottom", "middle": "middle", "centre": "middle", "center": "middle",
             "second": "middle", "top": "top", "last": "top", "highest": "top",
             "uppermost": "top", "third": "top", "summit": "top", "peak": "top"}
REL = {"closest", "farthest"}


def parse_np(toks: list[str]) -> Ref | None:
    """Words of an object phrase -> Ref, or None when a word does not belong in one."""
    words = list(toks)
    if "," in words:  # "the red, green and blue blocks": commas separate a list
        words = ["and" if w == "," else w for w in words]
        words = [w for i, w in enumerate(words) if not (w == "and" and i and words[i - 1]
                                                         == "and")]
    while words and words[0] == "and":
        words = words[1:]
    while words and words[-1] in ("and", "then"):
        words = words[:-1]
    if not words:
        return None
    text = " ".join(words)
    if len(words) <= 2 and words[-1] in _PRONOUNS | {"one"} and (
            len(words) == 1 or words[0] in ("that", "this", "the", "same")):
        if words == ["one"]:
            return None
        return Ref(text, pronoun=True)
    if words in (["the", "same", "place"], ["in", "there"], ["that", "place"]):
        return Ref(text, pronoun=True)
    # lists: "the red and the blue block", "red, green and blue blocks"
    if "and" in words:
        parts: list[list[str]] = [[]]
        for w in words:
            if w == "and":
                parts.append([])
            else:
                parts[-1].append(w)
        if all(parts) and len(parts) >= 2:
            shared = next((w for w in reversed(parts[-1]) if w in lx.NOUNS), "")
            refs = []
            for p in parts:
                r = parse_np(p)
                if r is not None and not r.shape and shared:
                    r = parse_np([*p, shared])
                if r is None or r.pronoun or r.items:
                    return None
                refs.append(r)
            return Ref(text, items=tuple(refs))
        return None
    # "the block closest to the bowl", "the one nearest you"
    for i, w in enumerate(words):
        if w in lx.SUPERLATIVES and lx.SUPERLATIVES[w] in REL and i + 1 < len(words):
            rest = words[i + 1:]
            if rest[0] in ("to", "from", "the", "you", "me", "robot", "arm", "base"):
                if rest[0] in ("to", "from"):
                    rest = rest[1:]
                head = parse_np(words[:i]) if i else Ref("one")
                if head is None or not rest:
                    return None
                if rest[-1] in lx.SELF_WORDS and all(
                        x in lx.DETERMINERS | lx.SELF_WORDS for x in rest):
                    anchor = None
                else:
                    anchor = parse_np(rest)
                    if anchor is None or anchor.pronoun or anchor.items:
                        return None
                return Ref(text, colour=head.colour, shape=head.shape,
                           superlative=lx.SUPERLATIVES[w], relative_to=anchor,
                           quantifier=head.quantifier)
    # "the handle of the drawer", "the drawer's knob"
    for i, w in enumerate(words):
        if w in lx.PARTS:
            owner_words = []
            if i + 1 < len(words) and words[i + 1] == "of":
                owner_words = words[i + 2:]
            elif i >= 2 and words[i - 1] == "'s":
                owner_words = words[:i - 1]
            elif i >= 1 and words[i - 1] in lx.NOUNS:
                owner_words = words[:i]
            if owner_words:
                owner = parse_np(owner_words)
                return owner
            default = lx.PARTS[w]
            if not default:
                return None
            pre = parse_np(words[:i] + [default]) if i else Ref(text, shape=default)
            return pre
    if words[0] in ("the", "a", "an") and len(words) >= 2 and words[1] in ("other", "third",
                                                                             "remaining",
                                                                             "last"):
        if all(w in lx.NOUNS or w in ("other", "third", "remaining", "last", "the", "a", "an",
                                      "one")
               for w in words):
            return Ref(text, shape="block", remaining=True)
    quantifier = "the"
    colour = shape = superlative = object_id = ""
    plural = False
    selfref = False
    cupboard = False
    for i, w in enumerate(words):
        if w in lx.DETERMINERS and i == 0:
            quantifier = "a" if w in ("a", "an", "any", "some") else "the"
            if w in ("those", "these"):
                plural = True
        elif w in lx.QUANTIFIERS:
            quantifier = "all"
        elif w == "everything":
            quantifier = "all"
        elif w in lx.COLOUR_WORDS and not colour:
            colour = w
        elif w in lx.SUPERLATIVES and not superlative and lx.SUPERLATIVES[w] not in REL:
            superlative = lx.SUPERLATIVES[w]
        elif w in lx.SUPERLATIVES and not superlative:
            superlative = lx.SUPERLATIVES[w]  # "the nearest block": to the robot
        elif w in ("left", "right") and not superlative:
            superlative = "leftmost" if w == "left" else "rightmost"
        elif w in lx.NOUNS:
            s = lx.NOUNS[w]
            if w in ("cupboard", "cabinet", "dresser", "chest"):
                cupboard = True
            if shape and s and s != shape:
                if cupboard and "drawer" in (s, shape):
                    shape = "drawer"
                    continue
                if {s, shape} == {"zone", "block"} or s == "zone" and w == "target":
                    continue  # "target block": the noun that follows decides
                if shape == "zone" and words[i - 1] == "target":
                    shape = s
                    continue
                return None
            shape = shape or s
        elif w in ("blocks", "cubes") or (w == "'s"):
            continue
        elif re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", w) and not object_id:
            object_id = w
        elif w in lx.SELF_WORDS:
            selfref = True
        elif w in ("two", "three", "four", "2", "3", "4") and i > 0 and words[i - 1] in (
                "all", "the", "both", "these", "those", "every"):
            continue  # "all three blocks": the count the scene already has
        elif w in lx.NP_NOISE or w in ("one", "ones", "items", "other"):
            continue
        else:
            return None
    plural = plural or any(t in ("ones", "everything") or t.endswith("s") and t in lx.NOUNS
                           for t in words)
    if plural and not colour and not superlative and not object_id:
        quantifier = "all"  # "the blocks": every block
    if not (colour or shape or superlative or object_id or quantifier == "all" or selfref):
        if not any(w in ("one", "ones", "thing", "object", "item") for w in words):
            return None
    return Ref(text, colour=colour, shape=shape, superlative=superlative,
               quantifier=quantifier, object_id=object_id, plural=plural, self_ref=selfref)
