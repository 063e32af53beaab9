"""The example programs under fixtures/program: valid, canonical round trip, and they run."""

from __future__ import annotations

from pathlib import Path

import pytest

from frankenbot.common import ExitStatus
from frankenbot.ports import PrimitiveResult
from frankenbot.program import (
    check_text,
    count_lines,
    default_catalog,
    parse_program,
    print_program,
)
from frankenbot.program.interpreter import Interpreter
from frankenbot.state import WorldSnapshot

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "program"
EXAMPLES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".fb", ".txt"))
SCENE_IDS = ("red_block", "green_block", "blue_block", "yellow_block", "orange_block",
             "purple_block", "green_bowl", "blue_bowl", "red_bowl", "white_plate", "gray_bin",
             "drawer", "zone")
FAMILIES = {  # task family -> a primitive or predicate whose use marks it
    "pick": "pick(", "place-in": "place_in(", "stack": "place_on(", "tower": "tower",
    "sort by colour": "sort", "clear into bin": "gray_bin", "open drawer": "open_drawer(",
    "put in drawer and close": "close_drawer(", "push into zone": "push_to(",
    "conditional": "else", "handlers": "monitor",
}


def test_there_are_at_least_twenty_examples_covering_every_task_family():
    assert len(EXAMPLES) >= 20
    texts = [p.read_text() for p in EXAMPLES]
    for family, marker in FAMILIES.items():
        assert any(marker in t for t in texts), f"no example for {family}"
    assert sum("monitor " in t for t in texts) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_is_valid_without_errors_or_warnings(path):
    result = check_text(path.read_text(), default_catalog(), SCENE_IDS)
    assert result.ok, [d for d in result.diagnostics]
    assert result.diagnostics == ()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_round_trips_through_the_printer(path):
    program = parse_program(path.read_text()).program
    text = print_program(program)
    assert parse_program(text).program == program
    assert print_program(parse_program(text).program) == text  # canonical is a fixed point
    assert count_lines(program) == len([ln for ln in text.splitlines() if ln.strip()])


class _AlwaysOk:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def execute(self, name, args, cancel):
        self.calls.append(name)
        return PrimitiveResult.success()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_to_a_clean_end_on_a_static_world(path):
    program = parse_program(path.read_text()).program
    ex = _AlwaysOk()
    result = Interpreter(program, default_catalog(), ex, snapshot=WorldSnapshot).run()
    assert result.status in (ExitStatus.SUCCESS, ExitStatus.FAILURE), result.reason
    assert ex.calls or "refuse" in path.name
