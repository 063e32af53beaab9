"""`bench --phrasings`: the TSV is checked before anything runs; placeholders fill from the task."""

from __future__ import annotations

import pytest

from frankenbot.errors import ConfigError
from frankenbot.eval.language_set import FIXTURES
from frankenbot.eval.phrasings_bench import fill, read_rows
from frankenbot.sim.tasks import sample_task


def test_placeholders_become_the_sampled_tasks_objects_in_words():
    params = dict(sample_task("tower", 10_000).task.params)
    a, b, c = (n.replace("_", " ") for n in params["order"])
    assert fill("stack {b} on {a}, then {c} on {b}", params) == f"stack {b} on {a}, then {c} on {b}"
    put = dict(sample_task("put_in_bowl", 10_000).task.params)
    text = fill("I'd like the {obj} to be in the {target}", put)
    assert text == (f"I'd like the {put['object'].replace('_', ' ')} to be in the "
                    f"{put['target'].replace('_', ' ')}")
    assert fill("put the {obj} on the {target}", dict(sample_task("open_drawer", 1).task.params)) \
        is None  # open_drawer has no object: the runner reports the row instead of guessing


def test_bad_rows_are_refused_with_their_line(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("pick_up\tpick up the {obj}\nflying\tfly away\n")
    with pytest.raises(ConfigError, match=r"p.tsv:2: unknown family 'flying'"):
        read_rows(path)
    path.write_text("pick_up\tpick up the {thing}\n")
    with pytest.raises(ConfigError, match="unknown placeholder"):
        read_rows(path)
    path.write_text("pick_up pick up the {obj}\n")
    with pytest.raises(ConfigError, match="family<TAB>phrasing"):
        read_rows(path)
    with pytest.raises(ConfigError, match="no phrasings file"):
        read_rows(tmp_path / "missing.tsv")


def test_the_executed_development_file_is_valid_and_has_every_family_but_conditional():
    rows = read_rows(FIXTURES / "executed.tsv")
    assert len(rows) >= 50
    assert len({r.family for r in rows}) == 10 and "conditional" not in {r.family for r in rows}
