"""One clause (no ordering words left) -> one symbolic ``Act``: its verb class, object
phrases, destination preposition and manner.
"""

from __future__ import annotations

from dataclasses import replace

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import Refusal
from frankenbot.planner.understanding.acts import Act, Deferred, NotParsed, Ref, defer
from frankenbot.planner.understanding.goals import participle_command, verbless
from frankenbot.planner.understanding.phrases import every, parse_np
from frankenbot.planner.understanding.roles import (
    SORT_WORDS,
    dest_splits,
    juxtaposed,
    read_manner,
    sort_like,
    sortish,
    strip_path,
    strip_wrappers,
)
from frankenbot.planner.understanding.states import goal_state
from frankenbot.planner.understanding.towers import (
    names_structure,
    reciprocal,
    slot_act,
    tower_act,
)

_PARTICLES = lx.PARTICLES
_PICK_TAILS = ("in the air", "into the air", "up in the air", "up high", "high", "off the table",
               "off the surface", "from the table", "above the table", "for a moment",
               "for a second", "in your gripper", "in your hand", "in the gripper", "up",
               "off the ground", "and hold it", "and hold it up", "and keep it",
               "and keep holding it", "and lift it", "and lift it up", "and raise it",
               "and hold onto it", "so it is in the air", "up off the table",
               "off of the table", "and hold it there", "and keep it up", "and hold on")


def _switch(head: str, rest: list[str], manner: str, text: str) -> Act | None:
    """``turn on the light``, ``switch the stove off``, ``press the button``, ``turn the knob
    to on``: a light or stove switched (``on`` / ``off`` from the particle or the verb), or a
    control worked; None when the object is neither."""
    way = lx.SWITCH_STATES.get(head, "")
    w = list(rest)
    for end in (0, -1):
        if w and w[end] in ("on", "off"):
            way = way or w[end]
            w = w[1:] if end == 0 else w[:-1]
    if w[-1:] == ["to"]:  # "turn the knob to off"
        w = w[:-1]
    ref = parse_np(w)
    if ref is None or ref.items:
        return None
    if ref.shape == lx.PARTS["knob"] and {"knob", "dial"} & set(w):
        ref = replace(ref, shape="knob")  # "turn the knob": the control, not a drawer's pull
    if ref.shape in lx.SWITCHED_SHAPES:
        if not way:
            raise defer(Refusal(f"{text!r}: on or off? say 'turn {ref.text} on' or 'turn "
                                f"{ref.text} off'", kind="ambiguous"))
        return Act("switch", obj=ref, prep=way, manner=manner, text=text)
    if ref.shape in lx.CONTROL_SHAPES:
        return Act("operate", obj=ref, prep=way, manner=manner, text=text)
    return None


def _drawer_like(ref: Ref | None) -> bool:
    return ref is not None and ref.shape in lx.OPENABLE


def parse_clause(words: list[str], prev: Act | None) -> Act:
    """One clause (no ordering words left) -> an Act; raises NotParsed."""
    text = " ".join(words)
    w, manner = strip_wrappers(list(words))
    w = [x for x in w if x not in lx.MANNER_WORDS]
    # "have the X raised", "I want the drawer shut": the command that reaches the state; read
    # first unless the clause starts with a verb of its own ("put the X ...")
    command = participle_command(w) if w and (
        w[0] not in lx.VERBS or w[0] in lx.GOAL_VERBS) else None
    if command is not None:
        try:
            act = _parse_clause(command, prev)
            return replace(act, manner=act.manner or manner, text=text)
        except NotParsed:
            pass
    try:
        return _parse_clause(words, prev)
    except Deferred:
        raise
    except NotParsed:
        # "make sure the X ends up in the Y": a goal state after a verb-like wrapper
        if not w:
            raise
        return verbless(w, prev, manner, text)


def _parse_clause(words: list[str], prev: Act | None) -> Act:
    text = " ".join(words)
    until = next((i for i, x in enumerate(words) if x in lx.UNTIL_WORDS), -1)
    if until > 1:  # "push X until it is in the zone": the state is the goal
        return _until(words[:until], words[until + 1:], prev, text)
    slot = slot_act(words)  # "first A", "use A as the base": read before "first" is dropped
    if slot is not None:
        return slot
    words, manner = strip_wrappers(words)
    for w in words:
        if w in lx.MANNER_WORDS:
            manner = manner or w
    words = [w for w in words if w not in lx.MANNER_WORDS]
    words, how = read_manner(words)
    manner = how or manner
    if not words:
        raise NotParsed(text)
    # go home
    if "home" in words and all(w in ("go", "return", "move", "head", "back", "to", "the",
                                     "your", "home", "arm", "position", "pose", "get", "come",
                                     "drive", "bring", "yourself", "put", "park", "the")
                               for w in words):
        return Act("home", text=text)
    head = words[0]
    verb = lx.VERBS.get(head, "")
    if head in ("find", "locate", "spot", "identify", "choose", "select", "pick out"):
        target = parse_np(words[1:])  # "find the closest block and put it in the bowl"
        if target is None:
            raise NotParsed(text)
        return Act("locate", obj=target, text=text)
    if head in ("discard", "bin", "trash", "stash") and head not in ("stash",):
        obj = parse_np(words[1:])
        if obj is None:
            raise NotParsed(text)
        if every(obj):
            return Act("clear", manner=manner, text=text)
        return Act("place", obj=obj, dest=Ref(f"the {lx.DISCARD_SHAPE}",
                                              shape=lx.DISCARD_SHAPE), prep="in",
                   manner=manner, text=text)
    if head == "stash":
        verb = "put"
    if verb == "":
        return verbless(words, prev, manner, text)
    rest = words[1:]
    if rest[:1] in (["me"], ["us"]) and verb in ("put", "pick"):
        obj = parse_np(rest[1:])
        raise defer(Refusal("handing things to a person is not something the robot does",
                             kind="out_of_scope",
                             suggestion=f"pick up {obj.text}" if obj is not None else ""))
    if verb in ("switch", "push"):  # "turn on the light", "press the button"
        act = _switch(head, rest, manner, text)
        if act is not None:
            return act
        if verb == "switch":
            raise NotParsed(text)
    particles = []
    while rest and rest[0] in _PARTICLES | {"open", "shut", "closed", "in"} and not (
            rest[0] == "in" and len(rest) > 1 and rest[1] not in lx.DETERMINERS | set(lx.OPENABLE)):
        particles.append(rest[0])
        rest = rest[1:]
    while rest and rest[-1] in _PARTICLES | {"open", "shut", "closed", "opened", "in"}:
        if rest[-1] == "in" and verb not in ("push", "close", "slide"):
            break
        particles.append(rest[-1])
        rest = rest[:-1]
    if verb in ("open", "close", "pull", "push") or (
            verb in ("put", "pick") and {"open", "shut", "closed"} & set(particles)):
        target = parse_np(rest)
        if _drawer_like(target) or (target is not None and target.pronoun and (verb in (
                "open", "close") or {"open", "shut", "closed"} & set(particles))):
            opening = verb == "open" or (verb == "pull" and not {"shut", "closed", "in"}
                                         & set(particles)) or "open" in particles or (
                "out" in particles)  # "slide the drawer out", "pull it out"
            if verb in ("close", "push") and "open" not in particles and "out" not in particles:
                opening = False
            if {"shut", "closed"} & set(particles) or ("in" in particles and verb == "push"):
                opening = False
            return Act("open" if opening else "close", obj=target, manner=manner, text=text)
        if verb in ("open", "close") and target is not None and not target.items:
            return Act("open" if verb == "open" else "close", obj=target, text=text)
        if verb in ("open", "close"):
            raise NotParsed(text)
    if verb == "build" or names_structure(rest):  # "... into a stack", "a pile of A, B, C"
        return tower_act(rest, manner, text)
    if verb == "sort":
        if all(w in SORT_WORDS or w in lx.NOUNS or w in lx.DETERMINERS for w in rest):
            return Act("sort", manner=manner, text=text)
        raise NotParsed(text)
    if verb == "clear":
        return _clear(rest, manner, text)
    if verb == "stack" and reciprocal(rest) is not None:  # "stack A and B on each other"
        return tower_act(reciprocal(rest) or [], manner, text)
    if verb == "pick" and any(w in lx.PARTS for w in rest):
        part = parse_np(rest)  # "grab the drawer's knob": hold the part its action pulls
        if part is not None and part.shape in lx.OPENABLE:
            return Act("grip", obj=part, manner=manner, text=text)
    if verb == "pick":
        for tail in sorted(_PICK_TAILS, key=lambda x: -len(x.split())):
            p = tail.split()
            if len(rest) > len(p) and rest[-len(p):] == p:
                rest = rest[:-len(p)]
                break
    if sort_like(rest):
        return Act("sort", manner=manner, text=text)
    for there in (["in", "there"], ["inside"], ["there"], ["in", "it"], ["into", "it"],
                  ["inside", "it"], ["in", "here"], ["in", "that"], ["on", "it"],
                  ["onto", "it"], ["on", "top"], ["on", "that"], ["in", "the", "same", "place"],
                  ["in", "as", "well"], ["inside", "too"], ["in", "too"], ["in"]):
        if len(rest) > len(there) and rest[-len(there):] == there and verb != "pick":
            obj = parse_np(rest[:-len(there)])
            if obj is not None:
                prep = "on" if there[0] in ("on", "onto") else "in"
                return Act("push" if verb == "push" or manner == "push" else "place", obj=obj,
                           dest=Ref(" ".join(there), pronoun=True), prep=prep, manner=manner,
                           text=text)
    if verb == "stack" and not dest_splits(rest):  # "stack A, B and C [in that order]"
        try:
            return tower_act(rest, manner, text)
        except NotParsed:
            pass
    rest = _without_sequence_marker(strip_path(rest))  # "along the table", "in that order"
    splits = dest_splits(rest) or (juxtaposed(rest) if verb in ("put", "stack", "push")
                                   else [])
    if not splits:
        obj = parse_np(rest)
        if obj is None:
            raise NotParsed(text)
        if verb in ("pick",) or (verb == "put" and head in ("get", "fetch", "take", "hold")):
            return Act("pick", obj=obj, manner=manner, text=text)
        if verb in ("put", "stack", "push") and prev is not None and obj.pronoun is False and (
                prev.kind in ("place", "push") and prev.dest is not None):
            # "and then the blue one" after "put the red block in the bowl": same place
            return Act("push" if manner == "push" or verb == "push" else "place", obj=obj,
                       dest=prev.dest, prep=prev.prep, manner=manner, text=text)
        if verb == "push" and prev is None:
            raise defer(Refusal(f"where should {obj.text} be pushed to? (the zone is the only "
                                 "place it can push to)", kind="ambiguous",
                                 suggestion=f"push {obj.text} into the zone"))
        if head in lx.TRANSPORT_VERBS:  # "carry it over", then where: the next clause says
            return Act("carry", obj=obj, manner=manner, text=text)
        raise defer(Refusal(f"where should {obj.text} go? say where to put it",
                             kind="ambiguous"))
    readings = [_placing(verb, manner, *s, text) for s in splits]
    if verb == "pick" and head not in lx.TRANSPORT_VERBS:
        # "pick up the bowl on the box": the object is picked where it is, or (rarely said)
        # taken onto the box; the scene decides
        whole = parse_np(rest)
        if whole is not None and (whole.where is not None or whole.superlative):
            pick = Act("pick", obj=whole, manner=manner, text=text)
            # said with a word of place, not of motion ("on", not "onto"), a pick names
            # where the object is: "pick up the bowl on the cabinet" picks it there
            readings = ([pick] if not {"onto", "into", "to"} & set(rest)
                        else [*readings, pick])
    if verb in ("put", "stack") and sum(w in lx.ABOVE_WORDS for w in rest) >= 2:
        try:  # "stack A on B on C": a column, or "A on the B that is on C"
            readings.append(tower_act(rest, manner, text))
        except NotParsed:
            pass
    if len(readings) == 1:
        return readings[0]
    return Act("either", then=tuple(readings), manner=manner, text=text)


def _placing(verb: str, manner: str, obj: Ref, prep: str, dest: Ref, text: str) -> Act:
    """The act of moving ``obj`` to ``dest`` with this verb and manner."""
    if obj.self_ref or dest.self_ref:
        raise defer(Refusal("handing things to a person is not something the robot does",
                             kind="out_of_scope",
                             suggestion=f"pick up {obj.text}" if not obj.self_ref else ""))
    if verb == "push" or manner == "push":
        return Act("push", obj=obj, dest=dest, prep=prep, manner=manner, text=text)
    if every(obj) and dest.shape != "block" and not sortish(dest) and not dest.pronoun:
        return Act("clear", dest=dest, manner=manner, text=text)
    if sortish(dest) and obj.quantifier == "all":
        return Act("sort", manner=manner, text=text)
    return Act("place", obj=obj, dest=dest, prep=prep, manner=manner, text=text)


def _clear(rest: list[str], manner: str, text: str) -> Act:
    dest: Ref | None = None
    for i, w in enumerate(rest):
        if w in ("into", "in", "to", "inside") and i + 1 < len(rest):
            dest = parse_np(rest[i + 1:])
            if dest is None:
                raise NotParsed(text)
            rest = rest[:i]
            break
    ok = {"the", "table", "tabletop", "everything", "all", "of", "blocks", "block", "off",
          "up", "away", "from", "on", "every", "each", "surface", "workspace", "area", "it",
          "stuff", "things", "objects", "object", "thing", "item", "items", "cube", "cubes",
          "desk", "out", "this", "mess", "remaining", "piece"}
    if not all(w in ok for w in rest):
        raise NotParsed(text)
    return Act("clear", dest=dest, manner=manner, text=text)


def _without_sequence_marker(rest: list[str]) -> list[str]:
    """A list's own order is the order things are done in: "in that order" adds nothing."""
    for marker in lx.SEQUENCE_MARKERS:
        p = marker.split()
        if len(rest) > len(p) and rest[-len(p):] == p:
            rest = rest[:-len(p)]
            return rest[:-1] if rest[-1:] == [","] else rest
    return rest


def _until(main: list[str], goal: list[str], prev: Act | None, text: str) -> Act:
    """The clause an "until" goal makes of the words before it: "push X along | until it is
    in the zone" -> "push X into the zone"; "pull the drawer | until it is open" -> "pull the
    drawer open". Direction words before "until" give way to the goal; the goal's subject
    must be the object ("it", or the same phrase); other goals do not read."""
    state = goal_state(goal)
    if state is None:
        raise NotParsed(text)
    kind, subject, other, negated = state
    main = [w for w in main if w not in _PARTICLES]
    if kind in ("in", "on") and other is not None and not negated:
        words = [*main, "into" if kind == "in" else "onto", *other.text.split()]
    elif kind == "drawer_open":
        words = [*main, "shut" if negated else "open"]
    else:
        raise NotParsed(text)
    act = _parse_clause(words, prev)
    if not subject.pronoun and subject != act.obj:
        raise NotParsed(text)  # "push X until Y is in the zone": not what it moves
    return replace(act, text=text)
