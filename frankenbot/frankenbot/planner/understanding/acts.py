"""The symbolic types between the stages: object phrases (``Ref``) and clauses (``Act``).

Nothing here is bound to a scene yet. ``NotParsed`` is the internal signal that a span of
words did not read (the chunker then tries another split); ``Deferred`` keeps the refusal
a span did earn, in case no split reads at all.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from frankenbot.errors import FrankenbotError
from frankenbot.planner.frames import Refusal


@dataclass(frozen=True)
class Ref:
    """An object phrase, symbolic until bound: colour word, shape, superlative, pronoun..."""

    text: str
    colour: str = ""  # the colour word as said ("crimson")
    shape: str = ""
    superlative: str = ""
    relative_to: "Ref | None" = None
    quantifier: str = "the"  # the | a | all
    pronoun: bool = False
    object_id: str = ""
    plural: bool = False
    items: tuple["Ref", ...] = ()  # "the red and the blue block"
    remaining: bool = False  # "the other block" (tower middle, inferred)
    self_ref: bool = False  # "you", "me": the robot or the user
    where: "tuple[str, Ref] | None" = None  # "in the bowl": (in | on | in_or_on, anchor)
    exclude: tuple["Ref", ...] = ()  # "every block except the red one"
    count: int = 0  # "both", "all three": how many there must be (0: unsaid)
    match: str = ""  # "the bowl that matches it": "colour" (chosen per item)
    position: str = ""  # "the top drawer": top | middle | bottom, a word of the part's label
    # "the cookie box": words the lexicon does not know before the noun, a name the object's
    # label must hold (a name taught for it)
    name_words: tuple[str, ...] = ()


@dataclass(frozen=True)
class Act:
    """One clause, understood symbolically: ``kind`` is pick | place | push | tower | sort |
    clear | open | close | switch (``prep`` on | off) | operate (a control) | home | if."""

    kind: str
    obj: Ref | None = None
    dest: Ref | None = None
    prep: str = ""
    manner: str = ""
    tower: tuple[Ref, ...] = ()  # bottom first when ``ordered``; as listed otherwise
    ordered: bool = True  # False: the words name a tower's blocks but not which end is down
    cond: tuple[str, Ref, Ref | None, bool] | None = None  # (kind, subject, other, negated)
    then: tuple["Act", ...] = ()
    otherwise: tuple["Act", ...] = ()
    postfix: bool = False  # "X if COND": pronouns in COND refer to X's objects
    order: str = "after"  # after | before (the clause goes before the one said before it)
    text: str = ""


class NotParsed(FrankenbotError):
    """A clause did not parse (internal: the caller tries another split)."""


class Deferred(NotParsed):
    """A clause parsed far enough to know what to refuse; kept in case no split parses."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


PENDING = threading.local()


def defer(refusal: Refusal) -> Deferred:
    pending = getattr(PENDING, "refusals", None)
    if pending is not None:
        pending.append(refusal)
    return Deferred(refusal)
