"""List orders: the blocks of a tower and which of them goes at the bottom.

A tower description is read as constraints, never as a guess: slots ("A at the bottom", "C on
top", "B in the middle"), relations ("B on A", "A under B", "C resting on B"), and whether the
list is a build sequence ("then", "first", "in that order", "from the bottom up": the first named
is placed first, at the bottom) or read top first ("from the top down"). Every order of the
named blocks is tried against them; exactly one must remain. A bare list ("a tower of A, B and
C") leaves the order open: the act says so (``ordered=False``) and binding asks which block goes
at the bottom (docs/LANGUAGE.md says why: the public suites do not agree on one reading).
"""

from __future__ import annotations

from itertools import permutations

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Act, NotParsed, Ref
from frankenbot.planner.understanding.phrases import every, parse_np
from frankenbot.planner.understanding.words import find

MAX_TOWER = 5  # blocks a description may name (orders tried: 5! = 120)
ORDINALS = {"first", "second", "third", "last"}
COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "2": 2, "3": 3, "4": 4, "5": 5}
# separators between list items (the sequence separators also make the list a sequence)
_SEPS = {",", "and", "with", "using", "of", "from", "out", "that", "by", "plus"}
# words of a tower description that name no block
_FILLER = {"a", "tower", "pile", "column", "heap", "single", "tall", "the", "block", "blocks",
           "cube", "cubes", "high", "level",
           "levels", "storey", "story", "stack", "put", "place", "add", "set", "one", "is",
           "goes", "go", "should", "be", "at", "on", "in", "as", "it", "its", "itself", "that",
           "them", "this", "very", "onto", "to", "up", "make", "build", "piece", "pieces",
           "layer", "layers", "above", "below", "under", "over", "comes", "come", "sits",
           "sit", "me", "us", "you", "into", "where", "i", "would", "like", "want", "need",
           "please", "read", "reads", "resting", "rest", "sitting", "lying", "standing",
           "placed", "stacked", "use", "start", "begin", "finish", "end", "of", *COUNTS}
_VERBS = {"put", "place", "stack", "add", "set", "goes", "go", "comes", "sits", "rest",
          "resting", "sitting", "lying", "standing", "placed", "stacked", "use"}


def _key(r: Ref) -> tuple[str, str, str, str, bool]:
    return (r.colour, r.shape or "block", r.superlative, r.object_id, r.remaining)


def _markers(words: list[str], markers: tuple[str, ...]) -> tuple[list[str], bool]:
    """``words`` with every marker phrase replaced by a comma, and whether one was found."""
    found = False
    for marker in sorted(markers, key=lambda m: -len(m.split())):
        i = find(words, marker)
        while i >= 0:
            found = True
            words = words[:i] + [","] + words[i + len(marker.split()):]
            i = find(words, marker)
    return words, found


def _chain(item: list[str]) -> tuple[list[list[str]], list[str]] | None:
    """``C on B on A`` -> ([C, B, A] words, ["above", "above"]); None without a relation."""
    parts: list[list[str]] = [[]]
    how: list[str] = []
    for w in item:
        if parts[-1] and (w in lx.ABOVE_WORDS or w in lx.BELOW_WORDS):
            how.append("above" if w in lx.ABOVE_WORDS else "below")
            parts.append([])
        else:
            parts[-1].append(w)
    if not how or not all(parts):
        return None
    return parts, how


def _np(words: list[str]) -> Ref | None:
    core = [w for w in words if w not in _VERBS and w not in ("at", "as", "of")]
    ref = parse_np(core) if core else None
    return None if ref is not None and ref.quantifier == "all" else ref


def tower_act(rest: list[str], manner: str, text: str) -> Act:
    """``a tower of A, B and C``, ``a tower: A at the bottom, then B, then C on top``."""
    words = ["it" if w == "that" and i and rest[i - 1] in lx.ABOVE_WORDS | lx.BELOW_WORDS
             else w for i, w in enumerate(rest)]  # "C on top of that": the block before
    words, reverse = _markers(words, lx.TOP_FIRST_MARKERS)
    words, upward = _markers(words, lx.BOTTOM_FIRST_MARKERS + lx.SEQUENCE_MARKERS)
    # "then" between items, or an ordinal ("C first", "A last"): the list is a build sequence
    sequence = reverse or upward or any(w in lx.SEQUENCE_SEPARATORS or w in ORDINALS
                                        for w in words)
    count = next((COUNTS[w] for w in words if w in COUNTS), 0)
    whole = parse_np([w for w in words if w not in _VERBS and w not in (",", "tower")])
    if whole is not None and whole.quantifier == "all" and not whole.items:
        # "stack all the blocks", "stack the three blocks in sequence": order unsaid
        return Act("tower", tower=(whole,), manner=manner, text=text)
    whole = None
    items: list[list[str]] = [[]]
    for w in words:
        if w in _SEPS or w in lx.SEQUENCE_SEPARATORS:
            if items[-1]:
                items.append([])
        else:
            items[-1].append(w)
    refs: list[Ref] = []  # distinct blocks in the order first named
    slots: dict[int, str] = {}  # block index -> bottom | middle | top
    above: list[tuple[int, int]] = []  # (upper, lower) directly on one another
    listed: list[int] = []  # blocks named without a slot, in the order named
    last: int | None = None  # the block the item before named ("B on it")

    def index(r: Ref) -> int:
        for i, known in enumerate(refs):
            if _key(known) == _key(r):
                return i
        refs.append(r)
        return len(refs) - 1

    pending = ""  # "starting with A": the slot an item gives the item after it
    for it in (i for i in items if i):
        pos = next((lx.TOWER_POSITIONS[w] for w in it if w in lx.TOWER_POSITIONS), pending)
        pending = ""
        core = [w for w in it if w not in lx.TOWER_POSITIONS]
        all_of = parse_np([w for w in core if w not in lx.STRUCTURE_NOUNS]) if any(
            w not in _FILLER or w in ("blocks", "cubes") for w in core) else None
        if all_of is not None and every(all_of):
            whole = whole or all_of  # "a tower out of the blocks": all of them, order unsaid
            continue
        if all(w in _FILLER for w in core):
            if pos and any(lx.NOUNS.get(w) == "block" for w in core):
                # "then the last block on top": a block named by its slot alone, the one
                # the description has not named (binding asks if that is not one block)
                slots[index(Ref("the other block", shape="block", remaining=True))] = pos
            elif pos:
                pending = pos  # "starting | with A", "finish | with C"
            continue
        chain = _chain(core)
        if chain is not None:
            parts, how = chain
            ids: list[int] = []
            for k, part in enumerate(parts):
                if part in (["it"], ["that"], ["them"]) and k:
                    if last is None:  # "B on it": the block named in the item before
                        raise NotParsed(text)
                    ids.append(last)
                    continue
                r = _np([w for w in part if w not in lx.TOWER_POSITIONS])
                if r is None or r.items or r.pronoun:
                    raise NotParsed(text)
                ids.append(index(r))
            for k, rel in enumerate(how):
                upper, lower = ids[k], ids[k + 1]
                above.append((upper, lower) if rel == "above" else (lower, upper))
            last = ids[0]
            continue
        ref = _np([w for w in core if w not in _FILLER or w in ("block", "cube")])
        if ref is None or ref.pronoun:
            raise NotParsed(text)
        for r in ref.items or (ref,):
            i = index(r)
            last = i
            if pos and not ref.items:
                slots[i] = pos
            elif i not in listed:
                listed.append(i)
    if not refs and whole is not None:
        return Act("tower", tower=(whole,), manner=manner, text=text)
    while count > len(refs) and (slots or above):  # "three blocks, A at the bottom, C on top"
        refs.append(Ref("the other block", shape="block", remaining=True))
    if not 2 <= len(refs) <= MAX_TOWER:
        raise NotParsed(text)
    seq = [i for i in listed if i not in slots]
    if reverse:
        seq.reverse()
    return solve(refs, slots, above, seq if sequence else [], manner, text)


def solve(refs: list[Ref], slots: dict[int, str], above: list[tuple[int, int]],
          seq: list[int], manner: str, text: str) -> Act:
    """The tower act whose order keeps every constraint; ``ordered=False`` when several
    orders do (asked about when bound); NotParsed when none does."""
    if not 2 <= len(refs) <= MAX_TOWER:
        raise NotParsed(text)
    orders = [order for order in permutations(range(len(refs)))
              if _fits(order, slots, above, seq)]
    if not orders:
        raise NotParsed(text)  # the constraints contradict each other
    if len(orders) > 1:
        return Act("tower", tower=tuple(refs), manner=manner, text=text, ordered=False)
    return Act("tower", tower=tuple(refs[i] for i in orders[0]), manner=manner, text=text)


def merge_slots(acts: list[Act]) -> list[Act]:
    """"A goes at the bottom, B in the middle and C on top", said as clauses of their own in
    any order: a run of slot clauses is one tower, its order from the slots alone."""
    out: list[Act] = []
    run: list[Act] = []
    for a in [*acts, Act("end")]:
        if a.kind == "slot":
            run.append(a)
            continue
        if len(run) >= 2 and all(r.obj is not None for r in run):
            refs = [r.obj for r in run if r.obj is not None]
            slots = {i: r.prep for i, r in enumerate(run)}
            try:
                run = [solve(refs, slots, [], [], run[0].manner, "; ".join(r.text for r in run))]
            except NotParsed:
                pass
        out += run
        run = []
        if a.kind != "end":
            out.append(a)
    return out


def _fits(order: tuple[int, ...], slots: dict[int, str], above: list[tuple[int, int]],
          seq: list[int]) -> bool:
    """Does ``order`` (block indices, bottom first) keep every constraint?"""
    level = {b: k for k, b in enumerate(order)}
    top = len(order) - 1
    for b, pos in slots.items():
        if pos == "bottom" and level[b] != 0 or pos == "top" and level[b] != top:
            return False
        if pos == "middle" and not 0 < level[b] < top:
            return False
    if any(level[u] != level[d] + 1 for u, d in above):
        return False
    return all(level[a] < level[b] for a, b in zip(seq, seq[1:], strict=False))


def reciprocal(words: list[str]) -> list[str] | None:
    """``A, B and C on top of each other`` -> the words without the reciprocal relation
    ("onto each other"), or None when there is none: the items form a tower, order unsaid."""
    for rec in lx.RECIPROCALS:
        i = find(words, rec)
        if i > 0:
            j = i - 1 if words[i - 1] in lx.ABOVE_WORDS else i
            return words[:j] + words[i + len(rec.split()):]
    return None


def slot_act(words: list[str]) -> Act | None:
    """A clause that only says where one block goes in a column being built: "first A",
    "use A as the base", "start with A", "finish with C", "C on top" (``prep`` = its slot)."""
    w = [x for x in words if x != "," and x not in _SLOT_COPULAS]  # "A goes at the bottom"
    pos = ""
    for lead, where in lx.SLOT_LEADS.items():
        p = lead.split()
        if w[:len(p)] == p and len(w) > len(p):
            pos, w = where, w[len(p):]
            break
    for tail in sorted(lx.SLOT_TAILS, key=lambda x: -len(x.split())):
        p = tail.split()
        if len(w) > len(p) and w[-len(p):] == p:
            pos, w = lx.SLOT_TAILS[tail], w[:-len(p)]
            break
    if not pos:
        return None
    ref = parse_np(w)
    if ref is None or ref.pronoun or ref.items or ref.where or ref.quantifier == "all":
        return None
    return Act("slot", obj=ref, prep=pos, text=" ".join(words))


_SLOT_COPULAS = {"is", "are", "be", "goes", "go", "sits", "sit", "comes", "come", "should",
                 "must", "will", "belongs", "belong"}


def names_structure(words: list[str]) -> bool:
    """Do the words name a column to build ("a tower", "into a stack", "one pile")? A verb
    word counts only as a noun after a determiner ("stack" in "into a stack")."""
    return any(w in lx.STRUCTURE_NOUNS and (w == "tower" or i > 0 and words[i - 1] in (
        lx.DETERMINERS | {"single", "tall"})) for i, w in enumerate(words))
