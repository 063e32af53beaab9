"""A documented, model-free token estimate for prompt budgets.

Budgets must be enforced without a tokenizer (the VLM's is remote and unknown), so the estimate is
a deterministic rule that tracks BPE tokenizers on this kind of text (program code and short
English) and errs on the high side:

* every punctuation or symbol character is one token (``(``, ``=``, ``{`` ...);
* every run of letters/digits/underscores counts ``ceil(len / 4)`` tokens, at least one; common
  English words and identifiers like ``place_in`` come out at 1-3 tokens, long ids a bit more;
* whitespace is free (BPE merges it into the next token).

The benchmark prints this estimate next to the packaged MiniLM WordPiece tokenizer's count on the
same texts, so its error is measured, not assumed. The same rule is used on both sides of the
with/without-memory comparison, so ratios between them do not depend on its calibration.
"""

from __future__ import annotations

import re

_TOKEN_RE = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def estimate_tokens(text: str) -> int:
    """Estimated number of LLM tokens in ``text`` (see the module docstring for the rule)."""
    total = 0
    for piece in _TOKEN_RE.findall(text):
        if piece[0].isalnum() or piece[0] == "_":
            total += max(1, -(-len(piece) // 4))
        else:
            total += 1
    return total
