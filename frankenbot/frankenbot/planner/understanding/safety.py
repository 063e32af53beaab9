"""Safety first: code, harm and limit-overriding words refuse an instruction before it is read."""

from __future__ import annotations

import re

from frankenbot.planner import lexicon as lx
from frankenbot.planner.frames import UnsafeInstruction
from frankenbot.planner.understanding.words import normalise


def check_safety(text: str) -> None:
    s = " " + normalise(text) + " "
    for phrase in lx.UNSAFE_PHRASES:
        if f" {phrase} " in s:
            raise UnsafeInstruction(f"refused as unsafe: {phrase!r} asks for something the "
                                    "robot must not do")
    for w in re.findall(r"[a-z_]+", s):
        if w in lx.UNSAFE_WORDS:
            raise UnsafeInstruction(f"refused as unsafe: {w!r} is not something the robot "
                                    "will act on (no harm, no code, no overriding its limits)")
    if re.search(r"[{}]|__|\bos\.|\(\s*'|\bimport\s", text):
        raise UnsafeInstruction("refused as unsafe: the instruction contains code")
