"""Seed skills and get_context: validated loading, file:line reports, the token budget."""

from __future__ import annotations

import shutil
from pathlib import Path

from frankenbot import resources
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import EpisodeAnomaly, EpisodeRecord
from frankenbot.memory.store import MemoryStore, exemplar_tokens, skill_tokens
from frankenbot.memory.tokens import estimate_tokens
from frankenbot.program.catalog import default_catalog

PROGRAM = ('task "t" {\n  main {\n    pick(obj=red_block)\n'
           '    place_in(obj=red_block, container=green_bowl)\n    exit success\n  }\n}\n')
GOOD = 'skill fetch(obj: object) "detect then pick" {\n  detect(obj=obj)\n  pick(obj=obj)\n}\n'


def open_with_seeds(tmp_path: Path, seed_dir: Path) -> MemoryStore:
    config = MemoryConfig(use_embeddings=False, seed_dir=str(seed_dir))
    return MemoryStore.open(tmp_path / "m.db", config)


def test_packaged_seed_skills_all_load_and_validate(tmp_path: Path) -> None:
    with open_with_seeds(tmp_path, resources.skills_dir()) as store:
        names = {s.name for s in store.list_skills()}
        problems = store.seed_problems
        catalog = store.catalog(default_catalog())
    assert problems == ()
    assert {"pick_and_place", "stack_on", "put_in_drawer", "sort_into"} <= names
    assert all(catalog.get(n) is not None for n in names)


def test_invalid_seed_file_is_reported_with_line_and_skipped(tmp_path: Path) -> None:
    seeds = tmp_path / "skills"
    seeds.mkdir()
    (seeds / "a_good.fb").write_text(GOOD)
    (seeds / "b_syntax.fb").write_text(
        '# comment\nskill broken(obj: object) "x" {\n  pick(obj=\n}\n')
    (seeds / "c_invalid.fb").write_text(
        '# comment\n\nskill hoist(obj: object) "x" {\n  pick(obj=obj)\n  fly(obj=obj)\n}\n')
    with open_with_seeds(tmp_path, seeds) as store:
        names = {s.name for s in store.list_skills()}
        problems = store.seed_problems
    assert names == {"fetch"}
    assert len(problems) == 2
    assert problems[0].startswith(f"{seeds / 'b_syntax.fb'}:")
    assert problems[1].startswith(f"{seeds / 'c_invalid.fb'}:5:") and "fly" in problems[1]


def test_seed_loading_is_idempotent_and_picks_up_edits(tmp_path: Path) -> None:
    seeds = tmp_path / "skills"
    seeds.mkdir()
    (seeds / "a.fb").write_text(GOOD)
    with open_with_seeds(tmp_path, seeds) as store:
        store.record_episode(EpisodeRecord("fetch it", 'task "t" { main { fetch(obj=a) } }', True))
    with open_with_seeds(tmp_path, seeds) as store:
        assert store.get_skill("fetch").uses == 1  # type: ignore[union-attr]
    (seeds / "a.fb").write_text(GOOD.replace("detect then pick", "look, then grasp"))
    with open_with_seeds(tmp_path, seeds) as store:
        skill = store.get_skill("fetch")
    assert skill is not None and skill.description == "look, then grasp" and skill.uses == 1


def test_context_respects_the_token_budget(tmp_path: Path) -> None:
    seeds = tmp_path / "skills"
    shutil.copytree(resources.skills_dir(), seeds)
    with open_with_seeds(tmp_path, seeds) as store:
        for i in range(5):
            store.record_episode(EpisodeRecord(
                f"put the red block in the green bowl {i}", PROGRAM, True,
                anomalies=(EpisodeAnomaly("grasp_lost", 1, "retry main/0", "recovered",
                                         primitive="pick"),)))
        full = store.get_context("put the red block in the green bowl", 100_000, 3)
        assert len(full.skills) == len(store.list_skills()) and len(full.exemplars) == 3
        assert full.experience and full.tokens == (
            sum(skill_tokens(s) for s in full.skills)
            + sum(exemplar_tokens(e) for e in full.exemplars)
            + sum(estimate_tokens(x) for x in full.experience))
        budget = sum(skill_tokens(s) for s in full.skills) + 10
        small = store.get_context("put the red block in the green bowl", budget, 3)
        assert small.tokens <= budget
        assert len(small.skills) == len(full.skills) and small.exemplars == ()
        assert small.dropped["exemplars"] == 3
        tiny = store.get_context("put the red block in the green bowl", 20, 3)
    assert tiny.tokens <= 20 and tiny.dropped["skills"] > 0


def test_context_ranks_relevant_skills_first(tmp_path: Path) -> None:
    with open_with_seeds(tmp_path, resources.skills_dir()) as store:
        ctx = store.get_context("put the green block in the drawer", 100_000, 0)
    assert ctx.skills[0].name in ("put_in_drawer", "take_from_drawer")


def test_experience_for_prefers_the_primitive_and_the_best_recovery(tmp_path: Path) -> None:
    with open_with_seeds(tmp_path, tmp_path) as store:
        def rec(action: str, outcome: str, primitive: str) -> None:
            store.record_episode(EpisodeRecord("x", PROGRAM, True, anomalies=(
                EpisodeAnomaly("grasp_lost", 1, action, outcome, primitive=primitive),)))
        rec("retry main/0", "recovered", "pick")
        rec("retry main/0", "failed", "pick")
        rec("goto start", "recovered", "pick")
        rec("replan", "recovered", "place_in")
        store.record_episode(EpisodeRecord("y", PROGRAM, True, anomalies=(
            EpisodeAnomaly("object_moved", 1, "detect", "recovered",
                           node_path="main/1/place_in"),)))
        best = store.experience_for("grasp_lost", "pick")
        moved = store.experience_for("object_moved")
    assert [(e.action, e.tries, e.recovered) for e in best] == [
        ("goto start", 1, 1), ("retry main/0", 2, 1), ("replan", 1, 1)]
    assert moved[0].primitive == "place_in"  # taken from the node path
    assert "grasp_lost during pick -> goto start (tier 1) -> recovered 1/1" == best[0].line()
