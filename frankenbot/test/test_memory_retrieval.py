"""Exemplar retrieval: lexical ranking, embedding plumbing with a tiny model, the real MiniLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import EpisodeRecord
from frankenbot.memory.retrieval import Bm25, TransformerEmbedder, packaged_model_dir, rank
from frankenbot.memory.store import MemoryStore

PROGRAM = 'task "{i}" {{\n  main {{\n    home()\n    exit success\n  }}\n}}\n'
HISTORY = (
    "put the red block in the green bowl",
    "stack the blue block on the yellow block",
    "open the drawer and put the green block inside",
    "push the red block into the left zone",
    "sort the blocks by colour into the bowls",
)


def fill(store: MemoryStore, success: bool = True) -> None:
    for i, text in enumerate(HISTORY):
        store.record_episode(EpisodeRecord(text, PROGRAM.format(i=i), success))


@pytest.fixture(scope="session")
def minilm() -> TransformerEmbedder:
    """The packaged all-MiniLM-L6-v2, loaded once per test session (~2 s)."""
    return TransformerEmbedder.from_directory()


@pytest.fixture(scope="session")
def tiny_embedder() -> TransformerEmbedder:
    """A 1-layer random BERT with the real tokenizer: exercises the plumbing, not the meaning."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(packaged_model_dir()), local_files_only=True)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    return TransformerEmbedder(BertModel(cfg), tok, name="tiny-bert", max_length=64)


def lexical_store(tmp_path: Path) -> MemoryStore:
    return MemoryStore.open(tmp_path / "m.db", MemoryConfig(use_embeddings=False,
                                                            load_seeds=False))


def test_bm25_prefers_rare_shared_words() -> None:
    scores = Bm25.build(HISTORY).scores("put the pink block in the drawer")
    assert rank(scores, 1) == [2]  # "drawer" is rare; "block" is nearly everywhere
    assert scores[2] > 3 * max(s for i, s in enumerate(scores) if i != 2)


def test_bm25_ignores_stopwords() -> None:
    assert Bm25.build(HISTORY).scores("put it in the") == [0.0] * len(HISTORY)


def test_lexical_retrieval_ranks_and_limits(tmp_path: Path) -> None:
    with lexical_store(tmp_path) as store:
        fill(store)
        found, method = store.retrieve("stack the red block on the blue block", 2)
    assert method == "lexical"
    assert [e.instruction for e in found][0] == HISTORY[1]
    assert len(found) == 2


def test_failed_episodes_are_never_exemplars(tmp_path: Path) -> None:
    with lexical_store(tmp_path) as store:
        fill(store, success=False)
        found, _ = store.retrieve("put the red block in the green bowl", 3)
    assert found == ()


def test_unrelated_instruction_gets_no_exemplar(tmp_path: Path) -> None:
    with lexical_store(tmp_path) as store:
        fill(store)
        found, _ = store.retrieve("wave hello", 3)
    assert found == ()


def test_duplicate_episodes_give_one_exemplar(tmp_path: Path) -> None:
    with lexical_store(tmp_path) as store:
        for _ in range(3):
            store.record_episode(EpisodeRecord(HISTORY[0], PROGRAM.format(i=0), True))
        found, _ = store.retrieve(HISTORY[0], 3)
    assert len(found) == 1 and found[0].episode_id == 3


def test_embedder_output_is_normalised(tiny_embedder: TransformerEmbedder) -> None:
    vecs = tiny_embedder.embed(["pick the red block", "open the drawer please"])
    assert vecs.shape == (2, 16)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_embeddings_are_stored_at_record_time_and_reused(
        tmp_path: Path, tiny_embedder: TransformerEmbedder) -> None:
    config = MemoryConfig(load_seeds=False)
    with MemoryStore.open(tmp_path / "m.db", config, embedder=tiny_embedder) as store:
        fill(store)
        n = store.conn.execute("SELECT count(*) FROM embeddings WHERE model = 'tiny-bert'")
        assert n.fetchone()[0] == len(HISTORY)
        found, method = store.retrieve(HISTORY[3], 1)
    assert method == "embedding"
    assert found[0].instruction == HISTORY[3]  # identical text: cosine 1


def test_missing_embeddings_are_filled_in_later(
        tmp_path: Path, tiny_embedder: TransformerEmbedder) -> None:
    path = tmp_path / "m.db"
    with MemoryStore.open(path, MemoryConfig(use_embeddings=False, load_seeds=False)) as store:
        fill(store)  # recorded without a model
    with MemoryStore.open(path, MemoryConfig(load_seeds=False), embedder=tiny_embedder) as store:
        found, method = store.retrieve(HISTORY[2], 1)
        n = store.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    assert method == "embedding" and found[0].instruction == HISTORY[2] and n == len(HISTORY)


def test_unloadable_model_falls_back_to_lexical(tmp_path: Path) -> None:
    config = MemoryConfig(load_seeds=False, embedding_model_dir=str(tmp_path / "no-model"))
    with MemoryStore.open(tmp_path / "m.db", config) as store:
        fill(store)
        found, method = store.retrieve("stack the red block on the blue block", 1)
    assert method == "lexical" and found[0].instruction == HISTORY[1]


def test_minilm_ranks_paraphrases_above_other_tasks(
        tmp_path: Path, minilm: TransformerEmbedder) -> None:
    with MemoryStore.open(tmp_path / "m.db", MemoryConfig(load_seeds=False),
                          embedder=minilm) as store:
        fill(store)
        found, method = store.retrieve("place the crimson cube into the emerald dish", 2)
        drawer, _ = store.retrieve("stow the block in the cabinet drawer", 1)
    assert method == "embedding"
    assert found[0].instruction == HISTORY[0]
    assert drawer[0].instruction == HISTORY[2]
