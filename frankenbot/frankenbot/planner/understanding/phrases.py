"""Object phrases: the words of one noun phrase -> a symbolic ``Ref``.

Colour, shape, superlative, quantifier, pronoun, part-of-object and list ("the red and the
blue block") readings; a word that does not belong in an object phrase makes it None.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Ref

_PRONOUNS = {"it", "them", "that", "this", "there", "those", "these", "they"}
REL = {"closest", "farthest"}


def every(ref: Ref) -> bool:
    """Does ``ref`` mean every loose block, no more said ("all the blocks", "everything")?"""
    return (ref.quantifier == "all" and not (
        ref.colour or ref.items or ref.where or ref.exclude or ref.remaining or ref.count
        or ref.superlative or ref.object_id or ref.match) and ref.shape in ("", "block"))


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
    for reading in (_excluding, _central, _between, _near, _restricted, _matching):
        ref = reading(words)
        if ref is not None:
            return ref
    if words[-1] in lx.RELATIVE_PRONOUNS:  # "whatever is", "the block that": not yet one
        return None
    # lists: "the red and the blue block", "red, green and blue blocks"
    if "and" in words:
        parts: list[list[str]] = [[]]
        for w in words:
            if w == "and":
                parts.append([])
            elif w != "then" or parts[-1]:  # "the red block and then the blue one"
                parts[-1].append(w)
        if all(parts) and len(parts) >= 2:
            shared = next((w for w in reversed(parts[-1]) if w in lx.NOUNS), "")
            refs = []
            for p in parts:
                r = parse_np(p)
                if r is not None and not r.shape and shared:
                    r = parse_np([*p, shared])
                if r is None or r.pronoun or r.items or r.where or r.exclude:
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
                lead = list(words[:i])
                while lead and lead[-1] in lx.RELATIVE_WORDS:  # "the block that is closest"
                    lead = lead[:-1]
                head = parse_np(lead) if lead else Ref("one")
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
                if words[i + 1:i + 2] == ["of"] and any(x not in lx.DETERMINERS
                                                        for x in words[:i]):
                    return None  # "the right side of the plate": a place by it, not the plate
                owner = parse_np(owner_words)
                if owner is not None and w in lx.HOUSING_WORDS.get(owner.shape, ()):
                    return Ref(text, shape=w)  # "the stove's knob": a control of its own
                if owner is not None and lx.PARTS[w] and owner.shape != lx.PARTS[w] and (
                        owner.shape not in lx.SHAPE_FALLBACKS.get(lx.PARTS[w], ())):
                    return None  # "the front of the mug": a place by it, not a part of it
                return owner
            default = lx.PARTS[w]
            if not default:
                return None
            pre = parse_np(words[:i] + [default]) if i else Ref(text, shape=default)
            return pre
    lead = words[1:] if words[0] in ("the", "a", "an") else words
    if lead and lead[0] in ("other", "third", "remaining", "last") and not any(
            w.endswith("s") and w in lx.NOUNS for w in lead):  # "(the) remaining block"
        if all(w in lx.NOUNS or w in ("other", "third", "remaining", "last", "one")
               for w in lead):
            return Ref(text, shape="block", remaining=True)
    quantifier = "the"
    colour = shape = superlative = object_id = ""
    plural = False
    selfref = False
    housing: tuple[str, ...] = ()
    position = ""
    count = 0
    name_words: list[str] = []
    for i, w in enumerate(words):
        if w in lx.DETERMINERS and i == 0:
            quantifier = "a" if w in ("a", "an", "any", "some") else "the"
            if w in ("those", "these"):
                plural = True
        elif w in lx.COUNT_WORDS and (w == "both" or i > 0 and words[i - 1] in (
                "all", "the", "both", "these", "those", "every")):
            count = lx.COUNT_WORDS[w]  # "all three blocks": binding checks the scene has three
            quantifier = "all"
        elif w in lx.QUANTIFIERS:
            quantifier = "all"
        elif w == "everything":
            quantifier = "all"
        elif w in lx.POSITION_WORDS and not position and any(
                lx.NOUNS.get(x) in lx.POSITIONED_SHAPES for x in words[i + 1:]):
            position = lx.POSITION_WORDS[w]  # "the top drawer", "the lower drawer"
        elif w in lx.CENTRE_WORDS | {"central"} and not superlative:
            superlative = "middle"  # "the middle bowl": the one amid the others
        elif w in lx.COLOUR_WORDS and not colour and not (
                w in lx.NOUNS and i == len(words) - 1):  # "the lemon": the fruit, not a hue
            colour = w
        elif w in lx.SUPERLATIVES and not superlative and lx.SUPERLATIVES[w] not in REL:
            superlative = lx.SUPERLATIVES[w]
        elif w in lx.SUPERLATIVES and not superlative:
            superlative = lx.SUPERLATIVES[w]  # "the nearest block": to the robot
        elif w in ("left", "right") and not superlative:
            if words[i + 1:i + 2] == ["of"]:
                return None  # "the right of the plate": a place beside it, not an object
            superlative = "leftmost" if w == "left" else "rightmost"
        elif w in lx.NOUNS:
            s = lx.NOUNS[w]
            housing = lx.HOUSING_WORDS.get(w, housing)  # "the cupboard drawer"
            if shape and s and s != shape:
                if housing and (s in housing or shape in housing):
                    shape = s if s in housing else shape  # the part is meant
                    continue
                if shape == "block" and s == "zone":
                    return None  # "red block zone": two objects, not one
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
        elif w in lx.NP_NOISE or w in lx.REMAINDER_WORDS or w in ("one", "ones", "items"):
            continue
        elif _name_word(words, i):
            name_words.append(w)
        else:
            return None
    plural = plural or any(t in ("ones", "everything", "others")
                           or t.endswith("s") and t in lx.NOUNS for t in words)
    if plural and not colour and not superlative and not object_id:
        quantifier = "all"  # "the blocks": every block
    remaining = quantifier == "all" and any(w in lx.REMAINDER_WORDS for w in words)
    if position and not shape:
        return None
    if not (colour or shape or superlative or object_id or quantifier == "all" or selfref
            or name_words):
        if not any(w in ("one", "ones", "thing", "object", "item") for w in words):
            return None
    return Ref(text, colour=colour, shape=shape, superlative=superlative,
               quantifier=quantifier, object_id=object_id, plural=plural, self_ref=selfref,
               count=count, remaining=remaining,  # "the rest of the blocks": not named yet
               position=position, name_words=tuple(name_words))


def _name_word(words: list[str], i: int) -> bool:
    """Is ``words[i]``, a word the lexicon does not know, part of a name: before the phrase's
    noun ("the cookie box", "the alphabet soup can": the run of such words that ends just
    before its last word, the noun), or the whole phrase after its determiner ("the
    ramekin")?"""
    if words[0] not in ("the", "a", "an") or i == 0:
        return False
    if words[-1] not in lx.NOUNS:
        return all(_unknown_word(x) for x in words[1:])
    return i < len(words) - 1 and all(_unknown_word(x) for x in words[i:-1])


@functools.cache
def _known_words() -> frozenset[str]:
    return frozenset(lx.vocabulary()) | lx.RELATIVE_WORDS | lx.NP_NOISE | lx.REMAINDER_WORDS


def _unknown_word(w: str) -> bool:
    """A word no rule knows: letters only, three or more, not an adverb."""
    return (len(w) >= 3 and w.isalpha() and w not in _known_words()
            and not w.endswith("ly"))


def _split_at(words: list[str], phrases: tuple[str, ...] | dict[str, str]
              ) -> tuple[list[str], str, list[str]] | None:
    """The first of ``phrases`` after the first word: (words before, phrase, words after)."""
    for i in range(1, len(words) - 1):
        for ph in sorted(phrases, key=lambda x: -len(x.split())):
            p = ph.split()
            if words[i:i + len(p)] == p and i + len(p) < len(words):
                return words[:i], ph, words[i + len(p):]
    return None


def _excluding(words: list[str]) -> Ref | None:
    """``every block except the red one``, ``both blocks other than X``: a set minus some."""
    cut = _split_at(words, lx.EXCEPT_WORDS)
    if cut is None:
        return None
    left, _ph, right = cut
    whole, out = parse_np(left), parse_np(right)
    if whole is None or out is None or whole.quantifier != "all" or out.pronoun:
        return None
    return replace(whole, text=" ".join(words), exclude=out.items or (out,))


def _restricted(words: list[str]) -> Ref | None:
    """``the block in the bowl``, ``whatever is on the plate``, ``all blocks that are on the
    plate``: a phrase narrowed by its relation to another object (judged when bound)."""
    cut = _split_at(words, lx.WHERE_PREPS)
    if cut is None:
        return None
    left, ph, right = cut
    while left and left[-1] in lx.RELATIVE_WORDS:
        left = left[:-1]
    if not left:
        return None
    head = (Ref(" ".join(left), quantifier="all") if left == ["whatever"]
            else parse_np(left))
    if head is not None and (" ".join(right) in lx.HERE_PHRASES or all(
            w in lx.TABLE_WORDS or w in lx.DETERMINERS for w in right)):
        # "on the table", "from where it is": where every loose object is; says nothing
        return replace(head, text=" ".join(words))
    anchor = parse_np(right)
    if head is None or anchor is None or head.items or head.pronoun or anchor.items or not (
            anchor.shape or anchor.colour or anchor.object_id or anchor.pronoun
            or anchor.name_words):
        return None
    return replace(head, text=" ".join(words), where=(lx.WHERE_PREPS[ph], anchor))


def _head(words: list[str]) -> Ref | None:
    """The object phrase before a relation ("the bowl that is" -> "the bowl")."""
    while words and words[-1] in lx.RELATIVE_WORDS:
        words = words[:-1]
    head = parse_np(words) if words else None
    if head is None or head.items or head.pronoun or head.where or head.superlative:
        return None
    return head


def _near(words: list[str]) -> Ref | None:
    """``the bowl next to the plate``, ``the block beside the box``: of the objects the head
    fits, the one nearest the anchor (judged when bound)."""
    cut = _split_at(words, lx.NEAR_PREPS)
    if cut is None:
        return None
    left, _ph, right = cut
    head, anchor = _head(left), parse_np(right)
    if head is None or anchor is None or anchor.items or anchor.quantifier == "all" or not (
            anchor.shape or anchor.colour or anchor.object_id or anchor.pronoun):
        return None
    return replace(head, text=" ".join(words), superlative="near", relative_to=anchor)


def _between(words: list[str]) -> Ref | None:
    """``the bowl between the plate and the cup``: of the objects the head fits, the one
    nearest the middle of the two anchors."""
    cut = _split_at(words, lx.BETWEEN_PREPS)
    if cut is None:
        return None
    left, _ph, right = cut
    head, anchors = _head(left), parse_np(right)
    if head is None or anchors is None or len(anchors.items) != 2 or any(
            a.pronoun or a.quantifier == "all" for a in anchors.items):
        return None
    return replace(head, text=" ".join(words), superlative="between", relative_to=anchors)


def _central(words: list[str]) -> Ref | None:
    """``the bowl in the middle of the table``, ``the block at the centre``, ``the bowl from
    table center``: of the objects the head fits, the one nearest the middle of everything on
    the table."""
    for i in range(1, len(words) - 1):
        if words[i] not in lx.CENTRE_PREPS:
            continue
        tail = [w for w in words[i + 1:] if w not in lx.DETERMINERS]
        if tail and tail[0] in lx.TABLE_WORDS:
            tail = tail[1:]  # "table center"
        if not tail or tail[0] not in lx.CENTRE_WORDS or tail[1:] and not (
                len(tail) == 3 and tail[1] == "of" and tail[2] in lx.TABLE_WORDS):
            continue
        head = _head(words[:i])
        if head is not None:
            return replace(head, text=" ".join(words), superlative="central")
    return None


def _matching(words: list[str]) -> Ref | None:
    """``the bowl that matches it``, ``the bowl of the same colour as it``, ``its matching
    bowl``: a container of the item's own colour, chosen per item when bound."""
    if not any(w in lx.MATCH_MARKERS for w in words):
        return None
    nouns = [w for w in words if w in lx.NOUNS]
    if len(nouns) != 1 or not all(w in lx.MATCH_WORDS or w in lx.NOUNS for w in words):
        return None
    return Ref(" ".join(words), shape=lx.NOUNS[nouns[0]], match="colour",
               plural=nouns[0].endswith("s"))
