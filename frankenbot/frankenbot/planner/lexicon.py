"""The offline planner's vocabulary: which words name which actions, objects, colours, parts.

Words are looked up by lemma (``understanding/words.py`` lemmatises with lemminflect), so
"hoisting", "hoisted" and "hoists" all find "hoist". Everything here is data; the rules that use
it live in ``understanding/``.
"""

from __future__ import annotations

from frankenbot import shapes

# verb lemma -> action class
VERBS: dict[str, str] = {}
for _cls, _words in {
    "pick": "pick grab grasp lift hoist raise take seize snatch hold collect retrieve elevate "
            "remove "
            "fetch pluck clutch grip nab snag scoop gather",
    "put": "put place drop move set transfer bring carry deposit load stick toss throw stash "
           "store pop position lay rest relocate shift park leave plop dump insert lower land "
           "slot tuck get have return drive ferry haul shuttle plonk chuck hide",
    "stack": "stack pile heap balance perch mount",
    "build": "build make create form assemble erect construct",
    "sort": "sort group organise organize match arrange separate distribute classify pair "
            "segregate",
    "clear": "clear tidy clean declutter empty",
    "open": "open unshut",
    "close": "close shut",
    "pull": "pull draw yank tug swing",
    "push": "push slide shove nudge sweep scoot drag glide scrape bump roll",
    "home": "home",
    "switch": "turn switch flip toggle power press activate deactivate ignite extinguish",
}.items():
    for _w in _words.split():
        VERBS[_w] = _cls

# noun lemma -> shape ("" = any object, the role decides)
NOUNS: dict[str, str] = {}
for _shape, _words in {
    "block": "block cube brick piece",
    "bowl": "bowl basin",
    "plate": "plate dish platter saucer",
    "bin": "bin trash garbage rubbish wastebasket trashcan",
    "drawer": "drawer cabinet dresser chest compartment",
    "zone": "zone area region square patch spot mark pad rectangle target",
    # the everyday world (frankenbot.shapes): each word its own category, with a first-world
    # stand-in in SHAPE_FALLBACKS for a scene that has none of it
    "box": "box", "basket": "basket", "tray": "tray", "can": "can tin",
    "mug": "mug cup", "bottle": "bottle", "carton": "carton", "apple": "apple",
    "lemon": "lemon", "ball": "ball sphere", "marker": "marker pen", "spatula": "spatula",
    "door": "door", "microwave": "microwave oven", "cupboard": "cupboard",
    "button": "button", "switch": "switch", "knob": "knob dial", "light": "light lamp bulb",
    "stove": "stove cooktop hob cooker", "burner": "burner",
    "": "one object thing item",
}.items():
    for _w in _words.split():
        NOUNS[_w] = _shape

for _shape in ("block", "bowl", "plate", "bin", "drawer", "zone", "box", "basket", "tray",
               "can", "mug", "bottle", "carton", "apple", "ball", "marker", "spatula", "door",
               "microwave", "cupboard", "button", "switch", "knob", "light", "stove",
               "burner", "lemon"):
    NOUNS.setdefault(_shape + "s", _shape)  # the understanding stage writes plurals as "<shape>s"
NOUNS["switches"] = "switch"
NOUNS["boxes"] = "box"
NOUNS["things"] = ""
# a category the scene does not have -> what the same word meant in the first world ("the box"
# on a table of blocks is a block, "the basket" the bin); judged per scene when a phrase is bound
SHAPE_FALLBACKS: dict[str, tuple[str, ...]] = {
    "box": ("block",), "basket": ("bin",), "tray": ("plate",), "can": ("bin",),
    "cupboard": ("drawer",), "knob": ("drawer",),
}
# where a part sits in its fixture ("the top drawer", "the lower drawer"): words of the part's
# label, as the fixture map names it
POSITION_WORDS: dict[str, str] = {"top": "top", "upper": "top", "uppermost": "top",
                                  "highest": "top", "middle": "middle", "centre": "middle",
                                  "center": "middle", "bottom": "bottom", "lower": "bottom",
                                  "lowest": "bottom", "bottommost": "bottom"}
POSITIONED_SHAPES = ("drawer", "door", "shelf")  # nouns a position word can pick a part of

# part lemma -> shape of the object it belongs to when none is named
PARTS: dict[str, str] = {"handle": "drawer", "knob": "drawer", "front": "drawer",
                         "rim": "", "edge": "", "lip": "", "side": ""}

# colour word -> the scene colours it can mean, closest first
COLOUR_WORDS: dict[str, tuple[str, ...]] = {
    "red": ("red",), "crimson": ("red",), "scarlet": ("red",), "ruby": ("red",),
    "cherry": ("red",), "maroon": ("red",), "vermilion": ("red",), "burgundy": ("red",),
    "green": ("green",), "lime": ("green",), "emerald": ("green",), "olive": ("green",),
    "mint": ("green",), "jade": ("green",), "forest": ("green",),
    "blue": ("blue", "cyan"), "navy": ("blue",), "azure": ("blue",), "cobalt": ("blue",),
    "sapphire": ("blue",), "royal": ("blue",), "cerulean": ("blue",),
    "yellow": ("yellow",), "lemon": ("yellow",), "golden": ("yellow",), "gold": ("yellow",),
    "mustard": ("yellow",), "canary": ("yellow",), "sunflower": ("yellow",),
    "orange": ("orange",), "tangerine": ("orange",), "amber": ("orange", "yellow"),
    "apricot": ("orange",), "peach": ("orange",), "rust": ("orange", "red"),
    "purple": ("purple",), "violet": ("purple",), "lilac": ("purple",),
    "lavender": ("purple",), "mauve": ("purple",), "plum": ("purple",),
    "magenta": ("purple", "pink", "red"), "indigo": ("purple", "blue"),
    "pink": ("pink", "red", "purple"), "rose": ("pink", "red"),
    "white": ("white",), "ivory": ("white",), "cream": ("white",), "snow": ("white",),
    "black": ("black",), "ebony": ("black",), "jet": ("black",),
    "gray": ("gray",), "grey": ("gray",), "silver": ("gray", "white"),
    "charcoal": ("gray", "black"), "slate": ("gray",),
    "cyan": ("cyan",), "aqua": ("cyan",), "teal": ("cyan", "green", "blue"),
    "turquoise": ("cyan", "blue", "green"),
    "brown": ("brown", "orange"),
}
# "reddish", "bluish": the base colour
for _c in list(COLOUR_WORDS):
    COLOUR_WORDS.setdefault(_c + "ish", COLOUR_WORDS[_c])
COLOUR_WORDS.update({"reddish": ("red",), "bluish": ("blue",), "blueish": ("blue",),
                     "greenish": ("green",), "yellowish": ("yellow",),
                     "purplish": ("purple",), "greyish": ("gray",), "grayish": ("gray",)})

SUPERLATIVES: dict[str, str] = {
    "largest": "largest", "biggest": "largest", "big": "largest", "large": "largest",
    "bigger": "largest", "larger": "largest", "smallest": "smallest", "tiniest": "smallest",
    "small": "smallest", "smaller": "smallest", "little": "smallest",
    "closest": "closest", "nearest": "closest", "closer": "closest", "nearer": "closest",
    "farthest": "farthest", "furthest": "farthest", "farther": "farthest",
    "further": "farthest", "leftmost": "leftmost", "rightmost": "rightmost",
    "tallest": "tallest",
}
# "the bowl next to the plate": of the objects the words fit, the one nearest the anchor
NEAR_PREPS = ("right next to", "next to", "close to", "near to", "adjacent to", "right by",
              "beside", "near", "by", "alongside", "nearby")
# "the bowl between the plate and the cup": the one nearest the middle of the two anchors
BETWEEN_PREPS = ("in between", "between")
# "the bowl in the middle of the table", "the block at the centre": nearest the middle of
# everything on the table (the brain has no model of the table itself)
CENTRE_WORDS = {"centre", "center", "middle"}
CENTRE_PREPS = ("at", "in", "from", "on", "near", "by", "off")
# the robot itself as a reference point ("closest to you")
SELF_WORDS = {"you", "me", "robot", "arm", "base", "yourself", "us", "gripper"}

DETERMINERS = {"the", "a", "an", "that", "this", "those", "these", "your", "my", "its",
               "their", "our", "some", "any", "one", "whichever"}
QUANTIFIERS = {"all", "every", "each", "both", "everything", "whole", "entire", "remaining"}
# words that may sit in an object phrase without changing what it means
NP_NOISE = {"coloured", "colored", "colour", "color", "wooden", "plastic", "toy", "solid",
            "shiny", "lone", "single", "of", "there", "here", "over", "sitting", "lying",
            "standing", "resting", "which", "is", "that", "currently", "now", "up", "down",
            "away", "back", "please", "again", "too", "as", "well", "also", "just", "on",
            "table", "tabletop", "off", "from", "shaped", "bowl-shaped", "square", "thing",
            "stuff", "so", "exact", "same", "very", "tiny", "poor", "little", "the", "only",
            "are"}

# prepositions that introduce a destination, by relation
DEST_PREPS: dict[str, str] = {
    "in": "in", "into": "in", "inside": "in", "within": "in", "onto": "on", "on": "on",
    "atop": "on", "upon": "on", "above": "on", "to": "to", "towards": "to", "toward": "to",
    "over": "to",
    "at": "to", "onto-": "on",
}

# ordering words between clauses (all of these mean: the next clause comes after)
THEN_WORDS = ("and then", "then", "and after that", "after that", "afterwards", "afterward",
              "and afterwards", "after which", "next", "and next", "finally", "and finally",
              "lastly", "subsequently", "once that is done", "once that is finished",
              "once you are done", "once you have done that", "once done", "once finished",
              "when that is done", "when you are done", "when done", "when finished",
              "when you have done that", "after you have done that", "as soon as that is done",
              "and once that is done", "and when you are done", "following that",
              "and following that", "after doing that", "after this", "and after this")
BEFORE_WORDS = ("before that", "but before that", "before doing that", "before you do that",
                "but first", "first of all though", "before this")

# Unsafe or code-like words: any of these refuses the instruction outright.
UNSAFE_WORDS = {
    "knife", "knives", "blade", "scissors", "fire", "flame", "lighter",
    "person", "human", "people", "child", "kid", "baby", "someone", "somebody", "face",
    "eye", "eyes", "finger", "fingers", "hurt", "harm", "injure", "kill", "attack",
    "stab", "punch", "hit", "smash", "crush", "destroy", "break", "shatter", "burn", "wreck",
    "python", "exec", "eval", "import", "sudo", "shell", "rm", "script", "code", "os",
    "prompt", "jailbreak", "override", "disable", "bypass", "hack", "window", "dog", "cat",
    "pet", "weapon", "gun", "explode", "bomb", "poison", "violently", "hurl", "fling",
    "slam", "ram", "whack", "stomp", "tear", "rip", "damage",
}
UNSAFE_PHRASES = ("ignore the rules", "ignore all", "ignore previous", "ignore your",
                  "system prompt", "safety limit", "speed limit", "full speed",
                  "as fast as you can", "as fast as possible", "maximum speed", "top speed",
                  "turn off the safety", "without safety", "no safety", "at me", "at you",
                  "at the camera", "off the table and onto the floor", "on the floor",
                  "onto the floor", "to the floor", "throw the robot", "the operator",
                  "the user", "limits off", "rules and")

# Words that begin a wrapper around the real request; dropped from the front of a clause.
LEADING_FILLERS = (
    "i would be grateful if you could", "i would appreciate it if you could",
    "would you be so kind as to", "be so kind as to", "do me a favour and",
    "do me a favor and", "i would like you to", "i would love for you to",
    "i would love you to", "i want you to", "i need you to", "i wish you would",
    "i would like to ask you to", "i am asking you to", "i am going to ask you to",
    "your job is to", "your task is to", "the task is to", "the job is to", "the goal is to",
    "your goal is to", "your next task is to", "what i need is for you to",
    "what i want is for you to", "all i need is for you to", "it would be great if you could",
    "it would be nice if you could", "would you mind", "do you mind", "could you please",
    "can you please", "would you please", "will you please", "could you", "can you",
    "would you", "will you", "you should", "you need to", "you must", "you have to",
    "you can", "you could", "you may", "try to", "try and", "please try to", "go ahead and",
    "go and", "let us", "lets", "let's", "we need to", "we should", "we want to",
    "i want to", "time to", "it is time to", "help me", "i need to", "we have to",
    "if you could", "if you would", "if you can", "kindly", "please", "pls", "plz",
    "ok", "okay", "alright", "all right", "right", "hey", "hi", "hello", "yo", "robot",
    "frankenbot", "now", "so", "well", "keep", "um", "uh", "just", "also", "and", "quickly",
    "carefully", "gently", "slowly", "simply", "then", "first", "firstly", "to start",
    "to begin", "to begin with", "for starters", "next", "finally", "lastly",
    "at last", "buddy", "mate", "friend", "dear robot", "would it be possible to",
    "is it possible to", "can i ask you to", "could i ask you to", "may i ask you to",
    "i would appreciate it if you would", "i would like it if you would",
    "i need", "i want", "i would like", "i wish", "make sure to", "be sure to",
    "remember to", "do not forget to", "don't forget to", "see if you can", "i'd like you to",
) + THEN_WORDS + ("afterwards", "after that", "now then", "and now")
TRAILING_FILLERS = (
    "please", "for me", "thanks", "thank you", "thank you very much", "thanks a lot", "now",
    "right now", "when you can", "when you get a chance", "if you can", "if you could",
    "if possible", "if you would", "if you do not mind", "if you don't mind", "asap",
    "carefully", "gently", "slowly", "quickly", "fully", "completely", "all the way",
    "again", "cheers", "ok", "okay", "right away", "straight away", "at once", "soon",
    "for me please", "please and thank you", "would you", "will you", "could you",
    "with care", "nicely", "neatly", "properly", "safely", "softly", "steadily", "too",
    "as well", "for now", "today", "already", "mate", "buddy", "afterwards", "afterward",
    "after that", "later", "then", "towards you", "toward you", "out towards you", "to you",
    "when you are done", "once done", "once you are done",
    "if that is okay", "if that is ok", "thanks in advance", "in one go", "one by one",
    "one at a time", "wide", "all the way open", "all the way out", "now please", "first",
    "as well please", "for me thanks",
)
# purpose/reason tails ("so that the table is tidy"): what follows says why, not what
PURPOSE_WORDS = ("so that", "so", "because", "since", "in order to", "as i", "as we",
                 "to make room", "to make space", "to tidy up", "to keep", "for later",
                 "to free up", "to clean up", "for safe keeping", "for safekeeping",
                 "to get it out of the way", "out of the way", "to be safe")
MANNER_WORDS = {"carefully", "gently", "slowly", "quickly", "softly", "neatly", "nicely",
                "steadily", "safely", "firmly"}

# Known request words the planner cannot do (out of scope, but worth naming).
OUT_OF_SCOPE_HINT = ("pick up X; put X in/on Y; stack X on Y; build a tower of A, B and C "
                     "from the bottom up; "
                     "sort the blocks by colour; clear the table; open/close the drawer; put X "
                     "in the drawer and close it; push X into the zone; go home; "
                     "'if the bowl is empty ... otherwise ...'; 'the largest/closest block'")


def vocabulary() -> tuple[str, ...]:
    """Every word the rules know, for spelling correction (sorted: ties break the same way)."""
    words = set(VERBS) | set(NOUNS) | set(PARTS) | set(COLOUR_WORDS) | set(SUPERLATIVES)
    words |= DETERMINERS | QUANTIFIERS | set(DEST_PREPS) | MANNER_WORDS
    words |= {"tower", "drawer", "closed", "empty", "bottom", "middle", "top", "otherwise",
              "else", "unless", "colour", "matching", "everything", "afterwards", "before",
              "after", "first", "then", "table", "there", "inside", "until", "handle", "left",
              "right", "please", "could", "would", "should", "sorted", "beside", "position",
              "pose", "start"}
    words |= {w for w in UNSAFE_WORDS if w.isalpha()}
    return tuple(sorted(w for w in words if len(w) >= 3))


# ------------------------------------------------------------------------------------------
# Readings added for issue 34 (the field's phrasings). Each table is read by one mechanism of
# the understanding pipeline, named beside it; new words go here, never into the rules.

# tower slots (towers.py): a word that says where in the column a block goes
TOWER_POSITIONS: dict[str, str] = {
    "bottom": "bottom", "base": "bottom", "foundation": "bottom", "lowest": "bottom",
    "first": "bottom", "middle": "middle", "centre": "middle", "center": "middle",
    "second": "middle", "top": "top", "last": "top", "highest": "top", "uppermost": "top",
    "third": "top", "summit": "top", "peak": "top", "starting": "bottom", "start": "bottom",
    "begin": "bottom", "beginning": "bottom", "finishing": "top", "finish": "top",
    "ending": "top"}
# a list read top first / bottom first; or a list that is a build sequence (the first named is
# placed first, so it goes at the bottom: VIMA-Bench follow_order, RLBench tower variations)
TOP_FIRST_MARKERS = ("from the top down", "from top to bottom", "top to bottom",
                     "from the top", "top down", "from top", "starting from the top",
                     "starting at the top", "top first", "beginning at the top")
BOTTOM_FIRST_MARKERS = ("from the bottom up", "from bottom to top", "bottom to top",
                        "bottom up", "from the bottom", "starting from the bottom",
                        "starting at the bottom", "bottom first", "beginning at the bottom",
                        "upwards", "upward")
SEQUENCE_MARKERS = ("in this order", "in that order", "in the order given", "in the order",
                    "in order", "in sequence", "in that sequence", "in this sequence",
                    "one after another", "one after the other", "sequentially")
# words between list items that say "and after that": the list is a build sequence
SEQUENCE_SEPARATORS = {"then", "next", "followed", "finally", "after", "afterwards", "lastly"}
# "X on Y" inside a tower description: the first object directly above / below the second
ABOVE_WORDS = {"on", "onto", "upon", "atop", "above", "over"}
BELOW_WORDS = {"under", "below", "beneath", "underneath"}
# "each other" / "one another": a stacking relation among the items listed
RECIPROCALS = ("each other", "one another")
# a clause that only gives one block's slot in a column being built (towers.slot_act)
SLOT_LEADS: dict[str, str] = {
    "first": "bottom", "firstly": "bottom", "start with": "bottom", "begin with": "bottom",
    "starting with": "bottom", "use": "bottom", "finish with": "top", "end with": "top",
    "finishing with": "top", "lastly": "top", "finally": "top", "last": "top"}
SLOT_TAILS: dict[str, str] = {
    "as the base": "bottom", "as base": "bottom", "as the bottom": "bottom",
    "at the bottom": "bottom", "on the bottom": "bottom", "as the foundation": "bottom",
    "first": "bottom", "on top": "top", "at the top": "top", "as the top": "top",
    "last": "top", "on top of it all": "top", "the base": "bottom", "the bottom": "bottom",
    "in the middle": "middle", "as the middle": "middle", "the middle": "middle",
    "the top": "top", "at the very top": "top", "at the very bottom": "bottom"}
# verbs that also head a goal state ("have the X raised", "get the drawer open")
GOAL_VERBS = {"have", "get", "leave", "keep"}
# the table itself: a place, never an object to move ("clear the table", "off the table")
TABLE_WORDS = {"table", "tabletop", "surface", "desk", "workspace", "worktop", "countertop"}
# "until it sits in the zone", "until it reaches the zone": verbs of a state, as "is ..."
STATE_VERBS: dict[str, str] = {
    "sits": "is", "sit": "is", "lies": "is", "lie": "is", "rests": "is", "stands": "is",
    "ends up": "is", "end up": "is", "winds up": "is", "gets": "is", "lands": "is",
    "reaches": "is in", "reach": "is in", "arrives at": "is in", "arrives in": "is in",
    "gets to": "is in", "enters": "is in", "is at": "is in", "comes to rest in": "is in"}
# words of degree that say nothing about which state ("all the way open", "fully inside")
DEGREE_WORDS = ("all the way", "fully", "completely", "entirely", "properly", "well",
                "right", "safely")
# "push X until it is in the zone": the clause after these words is the goal state
UNTIL_WORDS = {"until", "till", "til", "untill"}
# a phrase before the verb, set off by a comma, that reads as if said after the clause
FRONTED_HEADS = {"by", "without", "using", "with", "via", "from", "off", "out", "along",
                 "across"}
# "as carefully as you can": a manner said as a comparison (the speed limits are unsafe words)
AS_AS_ENDS = ("you can", "possible", "you are able", "you could", "you may")
# quantified and relative object phrases (understanding/phrases.py, resolve.py)
EXCEPT_WORDS = ("except for", "except", "but", "other than", "apart from", "besides",
                "excluding", "save for", "aside from", "bar")
# "the block in the bowl", "whatever is on the plate", "take X out of the bowl": a relation to
# another object that narrows what a phrase means, judged on the scene when it is bound
WHERE_PREPS: dict[str, str] = {
    "in": "in", "inside": "in", "within": "in", "into": "in", "on": "on", "onto": "on",
    "upon": "on", "atop": "on", "from": "in_or_on", "off": "in_or_on", "out of": "in"}
RELATIVE_WORDS = {"that", "which", "who", "is", "are", "currently", "now", "sitting",
                  "lying", "resting", "standing", "placed", "already", "still"}
RELATIVE_PRONOUNS = {"that", "which", "who", "is", "are"}  # a phrase cannot end on these
# "all the other blocks", "the rest of the blocks": those not named before
REMAINDER_WORDS = {"other", "others", "rest", "remaining"}
# "both", "all three": how many a quantified phrase says there are
COUNT_WORDS: dict[str, int] = {"both": 2, "two": 2, "three": 3, "four": 4, "five": 5, "2": 2,
                               "3": 3, "4": 4, "5": 5}
# "the bowl that matches it", "the bowl of the same colour as it": a bowl chosen per item
MATCH_WORDS = {"same", "matching", "match", "matches", "corresponding", "respective", "own",
               "its", "their", "it", "them", "as", "that", "which", "with", "of", "colour",
               "colours", "hue", "shade", "identical", "the", "a", "has", "have", "shares",
               "share", "is", "are", "whose", "to", "coloured"}
MATCH_MARKERS = {"same", "matching", "match", "matches", "corresponding", "respective", "own",
                 "identical"}
# the place an object already is: a source phrase that says nothing ("from where it is")
HERE_PHRASES = ("where it is", "where it sits", "where it lies", "its spot", "its place",
                "its position", "its current position", "its current spot", "its location",
                "its current location", "there", "here")
SOURCE_PREPS = ("off of", "out of", "from", "off")
PATH_PREPS = ("along", "across", "over", "through", "via")
# verbs of carrying: said without a destination, the clause after says where
TRANSPORT_VERBS = {"carry", "bring", "move", "transfer", "haul", "ferry", "shuttle", "convey",
                   "take"}
# the relation a telegraphic command means when it drops the preposition ("red block bowl")
DEFAULT_PREP: dict[str, str] = {"bowl": "in", "bin": "in", "drawer": "in", "plate": "on",
                                "zone": "in", "block": "on"}
# particles of phrasal verbs ("pick up", "put down", "push along"): direction, not a place
PARTICLES = {"up", "down", "away", "back", "over", "off", "out", "aside", "along", "across",
             "forward", "forwards"}
# verbs that find an object without moving it ("find the block and lift it")
LOCATE_VERBS = {"find", "locate", "spot", "identify", "choose", "select"}
# adjectives of a state, as the verb that reaches it ("I want the drawer closed")
STATE_WORDS: dict[str, str] = {"closed": "close", "shut": "close", "open": "open",
                               "opened": "open", "cleared": "clear", "sorted": "sort",
                               "tidied": "clear", "lifted": "lift", "raised": "raise"}
# words between a subject and its state ("the X should end up ...", "the drawer is ...")
COPULAS = {"be", "is", "are", "to", "end", "up", "should", "must", "need", "needs", "has",
           "have", "ought", "will", "would", "go", "goes", "belong", "belongs", "sit", "sits",
           "rest", "rests", "put", "placed", "moved", "lying", "sitting", "resting", "located",
           "stay", "remain", "being", "got", "gets", "get", "can", "could", "wind", "finish",
           "ends", "going", "land", "lands", "living", "positioned", "set", "stored",
           "stacked", "kept", "keep", "sat"}
# nouns of a column to build from the listed blocks ("put A, B and C in a stack")
STRUCTURE_NOUNS = {"tower", "stack", "pile", "column", "heap"}

# ------------------------------------------------------------------------------------------
# Kinds of object by what the robot can do with them (the understanding stage reads only
# these tables, never a shape's name): a new object category or fixture is rows here, plus a
# frame kind in frames.py (and its synthesis in offline.py) when it brings a new action.
PICKABLE_SHAPES: tuple[str, ...] = tuple(sorted(shapes.GRASPABLE))  # the gripper moves these
# what "it", "one" or a colour alone means as the thing to move: not a container, unless named
ITEM_SHAPES: tuple[str, ...] = tuple(s for s in PICKABLE_SHAPES
                                     if s not in shapes.OPEN_CONTAINERS)
CONTAINER_SHAPES: tuple[str, ...] = ("bowl", "bin", "plate", "drawer", "zone", "basket", "tray",
                                     "microwave", "cupboard")  # places things go in or on
FLAT_SHAPES = ("plate", "tray")  # containers one puts things on: "on" and "in" both hold there
SUPPORT_SHAPES: tuple[str, ...] = tuple(sorted(shapes.SUPPORTS))  # flat tops to put things on
PUSH_TARGETS = ("zone",)  # places reached by pushing, not by carrying
DISCARD_SHAPE = "bin"  # where "throw away" and an unnamed "clear the table" put things
# fixtures that open and close: shape -> (opening task, closing task, the frames' role)
OPENABLE: dict[str, tuple[str, str, str]] = {
    "drawer": ("open_drawer", "close_drawer", "drawer"),
    "door": ("open_door", "close_door", "door"),
    "microwave": ("open_door", "close_door", "door"),  # by its door
    "cupboard": ("open_door", "close_door", "door"),
}
# furniture opened by a part of its own: shape -> the part's shape
OPENED_BY_PART: dict[str, str] = {"microwave": "door", "cupboard": "door"}
# words for furniture that houses a fixture: "the cupboard drawer", "the drawer of the cabinet"
# ("the light switch", "the stove's knob": the part is meant)
HOUSING_WORDS: dict[str, tuple[str, ...]] = {
    "cupboard": ("drawer", "door"), "cabinet": ("drawer", "door"), "dresser": ("drawer",),
    "chest": ("drawer",), "microwave": ("door",), "oven": ("door",),
    "stove": ("knob", "burner"), "cooktop": ("knob", "burner"), "hob": ("knob", "burner"),
    "cooker": ("knob", "burner"), "light": ("switch", "button"), "lamp": ("switch", "button")}
# things that are on or off, and the controls that switch them (frankenbot.shapes)
SWITCHED_SHAPES: tuple[str, ...] = ("light", "burner", "stove", "light_panel")
CONTROL_SHAPES: dict[str, str] = {"switch": "toggle", "button": "press", "knob": "turn"}
# verbs of switching; "on" / "off" say which way ("turn the lamp on", "switch off the stove")
SWITCH_STATES: dict[str, str] = {"on": "on", "off": "off", "activate": "on",
                                 "deactivate": "off", "ignite": "on", "extinguish": "off"}
KNOB_ON_DEGREES = 90.0  # a knob turned this far counter-clockwise from off lights a burner
KNOB_OFF_DEGREES = -180.0  # back to its stop (the primitive stops at the knob's end)

# multi-word units read as one word (normalised text -> the lexicon's word; "" drops it)
UNITS: tuple[tuple[str, str], ...] = (
    ("on top of", "onto"), ("on to", "onto"), ("in to", "into"), ("inside of", "into"),
    ("into the inside of", "into"), ("in the inside of", "into"), ("over to", "to"),
    ("over into", "into"), ("down into", "into"), ("down onto", "onto"), ("down on", "onto"),
    ("up onto", "onto"), ("up on", "onto"), ("across to", "to"), ("all the way into", "into"),
    ("left most", "leftmost"), ("right most", "rightmost"), ("left-most", "leftmost"),
    ("right-most", "rightmost"), ("far left", "leftmost"), ("far right", "rightmost"),
    ("trash can", "bin"), ("garbage can", "bin"), ("waste bin", "bin"),
    ("waste basket", "bin"), ("rubbish bin", "bin"), ("recycling bin", "bin"),
    ("get rid of", "discard"), ("throw away", "discard"), ("throw out", "discard"),
    ("put away", "stash"),
    ("take hold of", "grab"), ("grab hold of", "grab"),
    ("get hold of", "grab"), ("catch hold of", "grab"), ("keep holding", "hold"),
    ("keep hold of", "hold"), ("no longer", "not"), ("next to", "beside"),
    ("in front of", "beside"), ("a bit", ""), ("a little", ""), ("one by one", ""),
    ("the one", "one"), ("colour coded", "colour"), ("colour-coded", "colour"),
    ("colour match", "sort"), ("colour-match", "sort"), ("home position", "home"),
    ("home pose", "home"), ("starting position", "home"), ("start position", "home"),
    ("rest position", "home"), ("resting position", "home"), ("neutral position", "home"),
    ("ready position", "home"), ("original position", "home"),
)
# the containers "sort by colour" sorts into (roles.sort_like, roles.sortish)
SORT_SHAPE = "bowl"
