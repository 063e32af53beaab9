"""Anomaly experience as a tier-2 prior: generalised keys, signs and weights."""

from __future__ import annotations

import pytest

from frankenbot.anomaly.candidates import Call, Situation
from frankenbot.common import AnomalyClass, AnomalyKind
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.experience import candidate_keys, experience_prior
from frankenbot.memory.records import EpisodeAnomaly, EpisodeRecord
from frankenbot.memory.store import MemoryStore

PROGRAM = 'task "t" {\n  main {\n    pick(obj=green_block)\n  }\n}\n'


def situation(obj: str = "blue_block", kind: AnomalyKind = AnomalyKind.GRASP_FAILED) -> Situation:
    return Situation(kind, AnomalyClass.PREDICTABLE, "fingers closed on nothing",
                     failed_call=Call("pick", {"obj": obj}), node_path="main/0")


@pytest.fixture
def store(memory_url: str):  # type: ignore[no-untyped-def]
    """On both backends (an SQLite file and a PostgreSQL database)."""
    s = MemoryStore.open(memory_url, MemoryConfig(use_embeddings=False, load_seeds=False))
    yield s
    s.close()


def record(store: MemoryStore, action: str, outcome: str, primitive: str = "pick",
           kind: str = "grasp_failed") -> None:
    store.record_episode(EpisodeRecord("pick up the green block", PROGRAM, True, anomalies=(
        EpisodeAnomaly(kind, 2, action, outcome, primitive=primitive),)))


def test_keys_are_generalised_to_the_new_situations_objects() -> None:
    s = situation("blue_block")
    assert candidate_keys("insert:detect(obj=green_block)", s) == ["insert:detect(obj=blue_block)"]
    assert candidate_keys("retry:pick(obj=green_block)", s) == ["retry:pick(obj=blue_block)"]
    assert candidate_keys("insert:wait(seconds=1)", s) == ["insert:wait(seconds=1)"]
    assert candidate_keys("goto:start", s) == ["goto:start"]
    assert candidate_keys("handler dropped", s) == []


def test_prior_rewards_what_worked_and_penalises_what_failed(store: MemoryStore) -> None:
    for _ in range(3):
        record(store, "insert:detect(obj=green_block)", "recovered")
        record(store, "retry:pick(obj=green_block)", "failed")
    record(store, "abort", "recovered", primitive="place_in")  # other primitive: ignored
    prior = experience_prior(store)(situation("blue_block"))
    assert prior == {"insert:detect(obj=blue_block)": pytest.approx(1.0),
                     "retry:pick(obj=blue_block)": pytest.approx(-1.0)}


def test_little_experience_weighs_less_and_other_kinds_do_not_count(store: MemoryStore) -> None:
    record(store, "insert:detect(obj=green_block)", "recovered")
    record(store, "replan", "recovered", kind="object_moved")
    prior = experience_prior(store, weight=2.0)(situation())
    assert prior == {"insert:detect(obj=blue_block)": pytest.approx(2.0 / 3.0)}
    assert experience_prior(store)(situation(kind=AnomalyKind.STALL)) == {}
