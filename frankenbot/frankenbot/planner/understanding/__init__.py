"""Understanding: a plain-language instruction + the scene's objects -> task frames, in order.

The offline planner's language stage. It never guesses: every word of an instruction must play
a part the rules know (an action, an object phrase, an ordering or condition word, a wrapper
such as "would you kindly"), or the instruction is refused with a reason and, where it can, the
closest reading it did understand. A pipeline of small modules, each with one job:

1. ``safety``: code, harm and limit-overriding words refuse outright (before anything is read);
2. ``words``: lower-cased tokens, contractions opened, misspellings corrected against the known
   vocabulary (rapidfuzz, optimal-string-alignment distance, only for words lemminflect does
   not know as English), each word reduced to its lemma (lemminflect) so "hoisting" is "hoist";
3. chunk and coordinate: ``pipeline`` (sentences) -> ``conditions`` (``if``/``unless``/postfix
   ``if``, ``otherwise``) -> ``chunks`` (clauses split at ordering words: "then", "once that
   is done", "before that", "after opening ...") -> ``clauses`` (one symbolic ``Act`` per
   clause: action class + object phrases from ``phrases`` + roles from ``roles`` + manner),
   with ``goals`` for goal-state phrasing ("I'd like the X to be in the Y") and ellipsis ("...
   and then C on B"), and ``towers`` for list orders;
4. ``resolve``: object phrases against the scene's objects (colour words and near-colours mapped
   to the scene's colours, parts naming their object, pronouns to what was named before,
   superlatives and "closest to"), refusing the ambiguous and the absent;
5. ``build``: acts -> frames with every role bound to an id;
6. ``check``: the canonical frames (one pick-and-place, no restated clause, one tower).

``explain`` says in words what was understood. The vocabulary is data (``planner/lexicon.py``).
The same instruction and scene always give the same frames.
"""

from __future__ import annotations

from frankenbot.planner.understanding.explain import Understanding, closest_reading, describe
from frankenbot.planner.understanding.pipeline import load_models, parse, understand
from frankenbot.planner.understanding.safety import check_safety
from frankenbot.planner.understanding.words import normalise, tokenise, tools

__all__ = ["Understanding", "check_safety", "closest_reading", "describe", "load_models",
           "normalise", "parse", "tokenise", "tools", "understand"]
