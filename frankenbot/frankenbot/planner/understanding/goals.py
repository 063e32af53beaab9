"""Goal states and ellipsis: clauses without a leading verb ("I'd like the X to be in the Y",
"the drawer should be open", "... then C on B").
"""

from __future__ import annotations

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Act, NotParsed, Ref
from frankenbot.planner.understanding.phrases import every, parse_np
from frankenbot.planner.understanding.roles import (
    SORT_WORDS,
    juxtaposed,
    sort_like,
    sortish,
    split_dest,
)
from frankenbot.planner.understanding.towers import names_structure, reciprocal, tower_act

_GOAL_HEADS = ("i would like", "i want", "i need", "i wish", "i would love", "i prefer",
               "we want", "we need", "we would like", "make sure that", "make sure",
               "ensure that", "ensure", "see to it that", "see that", "i want to see",
               "i would like to see", "it would be good if", "it would be nice if",
               "it would be great if", "can we have", "could we have", "can i have",
               "could i have", "i would like to have", "let us have", "let us get",
               "i expect", "the goal is that", "i would love it if", "i would like it if",
               "i would be happy if", "it would be lovely if", "i would prefer it if",
               "the idea is that", "arrange for", "get",
               "have", "leave", "the plan is for", "i would like for", "for")


def _goal_body(words: list[str]) -> list[str]:
    """The words after a goal head ("I'd like", "make sure", "have", "get") and "that"."""
    w = list(words)
    for gh in sorted(_GOAL_HEADS, key=lambda x: -len(x.split())):
        p = gh.split()
        if w[:len(p)] == p and len(w) > len(p):
            w = w[len(p):]
            break
    return w[1:] if w[:1] == ["that"] else w


def participle_command(words: list[str]) -> list[str] | None:
    """A goal state said with a participle or adjective -> the command that reaches it:
    "have the X raised" -> "raise the X", "I want the drawer shut" -> "shut the drawer",
    "the X should end up pushed into the zone" -> "push the X into the zone". The words
    between the object phrase and the state word may only be copulas ("should be", "needs to
    be", "end up"); None when the words are not of that shape."""
    w = _goal_body(words)
    for i, x in enumerate(w):
        x = lx.STATE_WORDS.get(x, x)  # "closed": the state "close" reaches
        if i == 0 or x not in lx.VERBS:
            continue
        j = i
        while j > 0 and w[j - 1] in lx.COPULAS:
            j -= 1
        head = w[:j]
        if not head or w[i + 1:i + 2] in (["it"], ["them"]) or (
                "," in head or "and" in head) and not getattr(parse_np(head), "items", ()):
            return None  # a list may be the subject ("A, B and C stacked"); a clause not
        table = any(h in lx.TABLE_WORDS for h in head) and all(
            h in lx.TABLE_WORDS or h in lx.DETERMINERS for h in head)  # "the table cleared"
        subject = Ref(" ".join(head)) if table else parse_np(head)
        if subject is None or subject.self_ref:
            return None
        return [x, *head, *w[i + 1:]]
    return None


def verbless(words: list[str], prev: Act | None, manner: str, text: str) -> Act:
    """Goal-state phrasing and ellipsis: "I'd like the X to be in the Y", "then C on B"."""
    w = _goal_body(words)
    if names_structure(w):  # "A, B and C in a stack", "a tower: A at the bottom, ..."
        return tower_act(w, manner, text)
    if reciprocal(w) is not None:  # "A, B and C on top of each other"
        return tower_act(reciprocal(w) or [], manner, text)
    if sort_like(w):
        return Act("sort", manner=manner, text=text)
    kept = []
    for i, x in enumerate(w):  # "the X placed in the Y", "the X pushed into the zone"
        if i > 0 and x in lx.VERBS and lx.VERBS[x] in ("put", "stack", "push", "pick") and (
                w[i - 1] not in lx.DETERMINERS):  # "the rest of the blocks": a noun there
            if lx.VERBS[x] == "push":
                manner = "push"
            if lx.VERBS[x] == "pick" and x not in ("hold", "lift", "raise"):
                raise NotParsed(text)
            if lx.VERBS[x] == "pick":
                kept.append("held")
            continue
        kept.append(x)
    w = [x for i, x in enumerate(kept)  # copulas go; "the rest" after a determiner stays
         if x not in lx.COPULAS or i and kept[i - 1] in lx.DETERMINERS]
    w = [x for x in w if x not in ("to",)] if not any(x in lx.DEST_PREPS and x != "to"
                                                        for x in w) else [
        x for i, x in enumerate(w) if not (x == "to" and i + 1 < len(w) and w[i + 1] in (
            "be", "end"))]
    if not w:
        raise NotParsed(text)
    if w[-1] in ("open", "opened", "closed", "shut"):
        ref = parse_np(w[:-1])
        if ref is not None and (ref.shape in lx.OPENABLE or ref.pronoun):
            return Act("open" if w[-1] in ("open", "opened") else "close", obj=ref,
                       manner=manner, text=text)
    if w[-1] in ("sort", "sorted", "organised", "organized", "grouped", "matched") or (
            "sort" in w and all(x in SORT_WORDS or x in lx.NOUNS or x in lx.DETERMINERS
                                  or x in ("sorted", "organised", "grouped") for x in w)):
        return Act("sort", manner=manner, text=text)
    if w[-1] in ("clear", "cleared", "empty", "emptied", "tidy", "tidied", "clean"):
        if all(x in ("the", "table", "tabletop", "surface", "desk", "workspace") for x in w[:-1]):
            return Act("clear", manner=manner, text=text)
    if w[-1] in ("picked", "lifted", "held", "raised", "hoisted", "air", "grasped", "gripper",
                 "hand"):
        core = w[:-1]
        for tail in ("in the", "in your", "up in the", "in"):
            p = tail.split()
            if core[-len(p):] == p:
                core = core[:-len(p)]
                break
        ref = parse_np([x for x in core if x != "up"])
        if ref is not None:
            return Act("pick", obj=ref, manner=manner, text=text)
    split = split_dest(w)
    splits = [split] if split is not None else juxtaposed(w)  # "blue block to plate"
    readings = []
    for obj, prep, dest in splits:
        kind = "push" if manner == "push" or (prev is not None and prev.kind == "push") else \
            "place"
        if every(obj) and not sortish(dest):
            readings.append(Act("clear", dest=dest, manner=manner, text=text))
        elif sortish(dest) and obj.quantifier == "all":
            readings.append(Act("sort", manner=manner, text=text))
        else:
            readings.append(Act(kind, obj=obj, dest=dest, prep=prep, manner=manner, text=text))
    if len(readings) == 1:
        return readings[0]
    if readings:  # the scene keeps one reading, or binding asks which
        return Act("either", then=tuple(readings), manner=manner, text=text)
    if prev is not None and prev.obj is not None and w[0] in lx.DEST_PREPS:
        said = parse_np(w[1:])
        if said is not None:  # "otherwise on the plate": the same verb and object
            return Act(prev.kind if prev.kind in ("place", "push") else "place",
                       obj=Ref("it", pronoun=True), dest=said, prep=lx.DEST_PREPS[w[0]],
                       manner=manner, text=text)
    if prev is not None and prev.kind in ("place", "push") and prev.obj is not None:
        also = parse_np(w)
        if also is not None and not also.pronoun and prev.dest is not None and (
                also.shape in ("block", "") and (also.colour or also.shape
                                                 or also.quantifier == "all")
                and not (also.shape == "" and also.colour in ("white",))):
            # "... and then the green block too": the same action for another object
            return Act(prev.kind, obj=also, dest=prev.dest, prep=prev.prep, manner=manner,
                       text=text)
        if also is not None and not also.pronoun and also.shape != "block":
            return Act("place", obj=Ref("it", pronoun=True), dest=also, prep=prev.prep,
                       manner=manner, text=text)
    raise NotParsed(text)
