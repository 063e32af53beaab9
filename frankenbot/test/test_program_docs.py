"""Every example in docs/LANGUAGE.md's reference parses (snippets are wrapped as needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from frankenbot.program import parse_program, parse_skills

DOC = Path(__file__).resolve().parents[2] / "docs" / "LANGUAGE.md"


def _examples() -> list[str]:
    text = DOC.read_text()
    reference = text[text.index("# Reference"):]
    blocks = re.findall(r"```\n(.*?)```", reference, re.S)
    return [b for b in blocks if "..." not in b]  # the shape sketch has placeholders


def test_the_reference_has_examples():
    assert len(_examples()) >= 9


@pytest.mark.parametrize("block", _examples())
def test_reference_example_parses(block):
    stripped = block.strip()
    if stripped.startswith("skill"):
        assert parse_skills(stripped)
    elif stripped.startswith("monitor"):
        assert parse_program(f'task "doc" {{ main {{ home() }}\n{stripped}\n}}').program.monitors
    else:
        labels = "\n".join(f"{name}:" for name in ("start", "done")
                           if f"goto {name}" in stripped and f"{name}:" not in stripped)
        assert parse_program(f'task "doc" {{ main {{\n{stripped}\n{labels}\n}} }}').program
