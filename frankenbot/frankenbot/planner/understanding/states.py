"""States of the scene a clause can name: "the bowl is empty", "the drawer is open", "it is
in the zone", "you see the red block". Conditionals keep them for run time; "until" clauses
read them as the goal the action must reach.
"""

from __future__ import annotations

from frankenbot.planner import lexicon as lx
from frankenbot.planner.understanding.acts import Ref
from frankenbot.planner.understanding.phrases import parse_np
from frankenbot.planner.understanding.words import find

State = tuple[str, Ref, "Ref | None", bool]  # (kind, subject, other, negated)


def parse_condition(words: list[str]) -> tuple[str, Ref, Ref | None, bool] | None:
    w = [x for x in words if x not in ("already", "currently", "still", "actually", "really")]
    if not w:
        return None
    neg = False

    def subject(ws: list[str]) -> Ref | None:
        return parse_np(ws)

    s = " ".join(w)
    for pre, kind, n in (("there is nothing in", "empty", False),
                         ("nothing is in", "empty", False),
                         ("there is something in", "empty", True),
                         ("something is in", "empty", True),
                         ("there is a block in", "empty", True),
                         ("there is no block in", "empty", False),
                         ("there are no blocks in", "empty", False)):
        if s.startswith(pre + " "):
            ref = subject(w[len(pre.split()):])
            return (kind, ref, None, n) if ref is not None else None
    for pre in ("there is", "there are", "you see", "you can see", "you spot", "you find",
                "you can find"):
        if s.startswith(pre + " "):
            rest = w[len(pre.split()):]
            if rest and rest[0] in ("no", "not"):
                neg, rest = True, rest[1:]
            ref = subject(rest)
            return ("visible", ref, None, neg) if ref is not None else None
    for verb in ("is", "are", "looks", "seems", "has", "contains", "does", "holds"):
        if verb in w:
            i = w.index(verb)
            subj, pred = w[:i], w[i + 1:]
            if pred[:1] == ["not"]:
                neg, pred = True, pred[1:]
            ref = subject(subj)
            if ref is None:
                return None
            if verb in ("has", "contains", "holds", "does"):
                if pred[:1] == ["have"] or pred[:1] == ["contain"] or pred[:1] == ["hold"]:
                    pred = pred[1:]
                ps = " ".join(pred)
                if ps in ("nothing", "nothing in it", "nothing inside", "no block",
                          "no blocks", "no block in it", "nothing on it"):
                    return ("empty", ref, None, neg)
                if ps in ("something", "something in it", "anything", "anything in it",
                          "a block", "a block in it", "a block inside", "an object",
                          "an object in it", "something inside", "anything inside",
                          "stuff in it", "something on it", "any block", "any blocks",
                          "blocks in it", "items in it"):
                    return ("empty", ref, None, not neg)
                return None
            ps = " ".join(pred)
            if ps in ("empty", "free", "clear", "vacant", "unoccupied", "available",
                      "empty of blocks", "unused", "still empty", "empty right now", "bare"):
                return ("empty", ref, None, neg)
            if ps in ("full", "occupied", "taken", "in use", "not empty", "filled",
                      "not free", "busy"):
                return ("empty", ref, None, not neg)
            if ps in ("open", "opened", "pulled out", "out"):
                return ("drawer_open", ref, None, neg)
            if ps in ("closed", "shut", "pushed in", "close"):
                return ("drawer_open", ref, None, not neg)
            if ps in ("visible", "there", "present", "here", "on the table", "in view",
                      "in sight"):
                return ("visible", ref, None, neg)
            if pred and pred[0] in lx.DEST_PREPS:
                other = subject(pred[1:])
                rel = lx.DEST_PREPS[pred[0]]
                if other is not None and rel in ("in", "on"):
                    return (rel, ref, other, neg)
            return None
    return None


def goal_state(words: list[str]) -> State | None:
    """The state an "until" clause names: "it is inside the zone", "it sits in the zone",
    "it reaches the zone", "it ends up in the zone", "it is all the way out"."""
    w = [x for x in words if x != ","]
    for degree in lx.DEGREE_WORDS:
        i = find(w, degree)
        if i >= 0:
            w = w[:i] + w[i + len(degree.split()):]
    for verb, said in lx.STATE_VERBS.items():
        i = find(w, verb)
        if i > 0:
            w = w[:i] + said.split() + w[i + len(verb.split()):]
            break
    return parse_condition(w)
