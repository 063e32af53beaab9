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


def test_verdicts_count_refusals_and_claimed_successes_the_oracle_fails_apart():
    from frankenbot.eval.phrasings_bench import verdicts
    from frankenbot.eval.tables import EpisodeOutcome

    def ep(success: bool, program_ok: bool, detail: str = "") -> EpisodeOutcome:
        return EpisodeOutcome("stack", 1, "x", success, program_ok, 0, 1.0, detail=detail)

    v = verdicts([ep(True, True), ep(False, True, "success: ...; oracle: not on"),
                  ep(False, False, "planner: which block goes at the bottom? [row 3]"),
                  ep(False, False, "escalated: ...")])
    assert (v.episodes, v.successes, v.refused, v.claimed_but_failed) == (4, 1, 1, 1)


def test_every_executed_phrasing_is_understood_as_its_family_on_development_scenes():
    """The executed set is read before it is run: each row, filled from a development seed of
    its family, gets the frames of that family's own task (so a failure in the sim is the
    execution's, never the reading's)."""
    from frankenbot.eval.taskset import scene_of_task
    from frankenbot.planner.frames import render_frames
    from frankenbot.planner.understanding import understand

    def effect(frames) -> str:  # an explicit "open the drawer" first: the put opens it anyway
        return render_frames([f for i, f in enumerate(frames) if not (
            f.task == "open_drawer" and i + 1 < len(frames) and frames[i + 1].task == "put_in")])

    template_frames = {}
    for row in read_rows(FIXTURES / "executed.tsv"):
        params = dict(sample_task(row.family, 7).task.params)
        instruction, scene = scene_of_task(row.family, 7)
        if row.family not in template_frames:
            template_frames[row.family] = effect(understand(instruction, scene).frames)
        text = fill(row.phrasing, params)
        assert effect(understand(text, scene).frames) == template_frames[row.family], text
