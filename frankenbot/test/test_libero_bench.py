"""The LIBERO benchmark's bookkeeping, without running the sim: what the result file says per
suite and per task, the README rows beside the published anchors, the memory table, the taught
names the brain sees, the planner probe's verdicts, LIBERO tasks in anomaly mixes, and the
command line refusing what it cannot run."""

from __future__ import annotations

import argparse
import json

import pytest

from frankenbot.errors import ConfigError
from frankenbot.eval.libero import bench, planner_probe
from frankenbot.eval.libero.bddl import load_tasks
from frankenbot.eval.libero.mapping import map_task
from frankenbot.eval.libero.report import libero_section
from frankenbot.eval.mix import _ALL, KIND_USE, draw_episodes
from frankenbot.eval.stack import _names_by_look, named
from frankenbot.eval.tables import EpisodeOutcome
from frankenbot.program import parse_program
from frankenbot.state import Scene, SceneObject

BY_NAME = {t.name: t for t in load_tasks()}


def _outcome(task: str, seed: int, ok: bool, **kw) -> EpisodeOutcome:
    return EpisodeOutcome(task, seed, "words", ok, ok, 0, 2.0, detail="" if ok else "NO x",
                          **kw)


def test_the_result_says_how_many_are_set_up_and_how_each_suite_did():
    spec = bench.LiberoSpec("libero", (10000, 10001), limit=1)
    sel = bench.select(spec)
    assert sum(sel.totals.values()) == 130 and sum(sel.set_up.values()) >= 110
    assert len(sel.run) == 5  # one per suite
    outcomes = [_outcome(m.task.task_id, s, ok=(s == 10000)) for m in sel.run
                for s in spec.seeds]
    r = bench.summarise(sel, outcomes)
    assert r["tasks_total"] == 130 and r["tasks_set_up"] == sum(sel.set_up.values())
    assert r["tasks_run"] == 5 and r["success_rate"] == 0.5
    s = r["per_suite"]["libero-spatial"]
    assert s["tasks_set_up"] == 10 and s["tasks_run"] == 1 and s["episodes"] == 2
    assert s["successes"] == 1 and 0.0 < s["wilson_95"][0] < 0.5 < s["wilson_95"][1]
    assert len(r["not_set_up"]) == 130 - r["tasks_set_up"]
    assert all(n["reason"] for n in r["not_set_up"])
    task = r["per_task"][0]
    assert task["episodes"] == 2 and task["failures"] == ["seed 10001: NO x"]
    assert "suite" in bench.markdown(r, {"title": "t"})


def test_the_readme_rows_stand_beside_the_published_anchors(tmp_path):
    assert "not measured yet" in libero_section(tmp_path)
    sel = bench.select(bench.LiberoSpec("libero-goal", (10000,)))
    r = bench.summarise(sel, [_outcome(m.task.task_id, 10000, True) for m in sel.run])
    meta = {"date": "2026-12-02 10:00 UTC", "commit": "abc1234", "machine": {"cpus": 2},
            "conditions": {"suite": "libero-goal", "seeds": [10000, 10001, 10002],
                           "planner": "offline", "sensor_noise": "realistic",
                           "language": "benchmark"}}
    (tmp_path / "libero-goal-offline-realistic.json").write_text(
        json.dumps({"meta": meta, "results": r}))
    text = libero_section(tmp_path)
    assert "| libero-goal | 9/9 (100.0%" in text and "9 of 10 tasks set up" in text
    assert "sensor noise realistic" in text and "abc1234" in text
    assert "70.8% Pass@1" in text and "92.6% on LIBERO-PRO" in text and "~98%" in text
    assert "What differs" in text


def test_memory_table_pairs_the_two_runs_task_by_task():
    a = [_outcome("t1", 1, True, program_lines=10, program_tokens=80, planning_calls=1),
         _outcome("t2", 1, False, program_lines=12, program_tokens=90, planning_calls=2)]
    b = [_outcome("t1", 1, True, program_lines=4, program_tokens=30, planning_calls=1),
         _outcome("t2", 1, True, program_lines=6, program_tokens=40, planning_calls=1)]
    t = bench.memory_table(a, b)
    assert t["mean"]["lines"] == [11.0, 5.0] and t["mean"]["planning_calls"] == [1.5, 1.0]
    assert t["mean"]["successes"] == [1, 2]
    assert t["per_task"][1]["tokens"] == [90, 40]
    # a refused plan has no program: sizes average the pairs planned in both arms only
    a.append(_outcome("t3", 1, False, planning_calls=1))
    b.append(_outcome("t3", 1, False, planning_calls=1))
    t = bench.memory_table(a, b)
    assert t["mean"]["lines"] == [11.0, 5.0] and t["planned_in_both"] == 2
    assert t["episodes"] == 3


def test_taught_names_label_perceived_objects_by_their_look():
    names = _names_by_look({"red_can": "alphabet soup", "black_bowl": "black bowl"})
    scene = Scene.of([
        SceneObject("red_can", "red can", "can", "red", (0.4, 0.0, 0.05), (0.07, 0.07, 0.1)),
        SceneObject("red_bottle", "red bottle", "bottle", "red", (0.5, 0.0, 0.07),
                    (0.06, 0.06, 0.15)),
        SceneObject("cabinet", "cabinet", "cabinet", "brown", (0.4, 0.5, 0.18),
                    (0.26, 0.3, 0.36), is_fixture=True)])
    out = named(scene, names)
    assert [o.label for o in out.objects] == ["alphabet soup", "red bottle", "cabinet"]
    assert [o.object_id for o in out.objects] == ["red_can", "red_bottle", "cabinet"]


class _FakePlanner:
    def __init__(self, text: str | None):
        self.text = text

    def plan(self, request):
        from frankenbot.planner.request import PlanOutcome

        if self.text is None:
            return PlanOutcome(ok=False, program_text="", program=None, message="not understood")
        return PlanOutcome(ok=True, program_text=self.text,
                           program=parse_program(self.text).program, message="")


def test_the_planner_probe_tells_readings_from_misreadings_and_refusals():
    m = map_task(BY_NAME["pick_up_the_ketchup_and_place_it_in_the_basket"])
    good = ('task "t" { main { pick(obj=red_bottle)\n'
            'place_in(obj=red_bottle, container=brown_basket)\nexit success } }')
    wrong = ('task "t" { main { pick(obj=red_can)\n'
             'place_in(obj=red_can, container=brown_basket)\nexit success } }')
    verdicts = [planner_probe.probe([m], planner=_FakePlanner(t), languages=("benchmark",),
                                    log=lambda s: None)[0].verdict for t in (good, wrong, None)]
    assert verdicts == ["reads", "misreads", "refused"]
    m = map_task(BY_NAME["KITCHEN_SCENE3_turn_on_the_stove"])
    assert planner_probe.missed_atoms(m.goal, parse_program(good).program) == [
        "turned_on(stove)"]
    assert planner_probe.in_our_words(map_task(BY_NAME[
        "LIVING_ROOM_SCENE2_put_both_the_cream_cheese_box_and_the_butter_in_the_basket"])) == (
        "put both the blue box and the yellow box in the brown basket")
    assert planner_probe.form_of("put both moka pots on the stove") == "put both X and Y in/on Z"


def test_mixes_can_draw_libero_tasks_with_kinds_that_fit_them():
    tasks = bench.mix_tasks("libero-goal")
    assert tasks["libero-goal/turn_on_the_stove"] == ""
    assert tasks["libero-goal/put_the_bowl_on_the_plate"] == "put_on_plate"
    eps = draw_episodes("stress", 40, tasks=tasks)
    assert eps == draw_episodes("stress", 40, tasks=tasks)
    assert {e.family for e in eps} <= set(tasks)
    for e in eps:
        for inj in e.injections:
            like = tasks[e.family]
            fams = KIND_USE[inj.kind].families
            assert (like in fams) if like else set(_ALL) <= set(fams), (e.key(), inj)


def test_the_command_line_refuses_what_it_cannot_run(tmp_path):
    from frankenbot.eval.cli import _bench

    base = dict(suite="libero-fancy", tasks=[], seeds=1, first_seed=10000, dev_seeds=False,
                mix="", phrasings=None, component=[], all_benchmarks=False, ray="",
                planner="offline", noise="none", language="benchmark", memory_compare=False,
                limit=0, match="", realtime_factor=None, probe_planner=False, out=tmp_path,
                json=False, quick=False, inject="", record=False)
    with pytest.raises(ConfigError, match="unknown LIBERO suite"):
        _bench(argparse.Namespace(**base))
    with pytest.raises(ConfigError, match="does not combine"):
        _bench(argparse.Namespace(**{**base, "suite": "libero", "mix": "natural"}))
    with pytest.raises(ConfigError, match="development seed"):
        _bench(argparse.Namespace(**{**base, "suite": "libero", "first_seed": 3}))
