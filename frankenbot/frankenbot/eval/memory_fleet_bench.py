"""What a fleet memory costs: get_context and record_episode latency, SQLite vs PostgreSQL.

Both backends get the same history: the seed library plus ``n_episodes`` episodes whose programs
the offline planner wrote for the sim's task families (evaluation seeds, interleaved), recorded
as successes, so promotion runs as it does in service. Then ``n_queries`` get_context calls with
the task sequence's instructions (default budget), and further record_episode calls, are timed.
A second robot's store on the same database takes part in the PostgreSQL run (it recorded half
of the history), as in a fleet.

Conditions printed with the numbers: SQLite is a local file (WAL, synchronous=FULL); PostgreSQL
is a server on 127.0.0.1 (fsync on, TCP over loopback), started for the run by
``TemporaryPostgres`` (initdb in a temporary folder); a server across a network adds its round
trips (get_context makes 4 queries, record_episode about 10 + 2 per mined pattern). Retrieval is
lexical (BM25) unless ``embeddings`` is set, which loads the packaged MiniLM; the embedding
itself costs the same on both backends, reading the cached vectors does not.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from frankenbot.eval.memory_bench import task_sequence
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import EpisodeRecord
from frankenbot.memory.retrieval import Embedder
from frankenbot.memory.store import MemoryStore

QUICK = {"n_episodes": 200, "n_queries": 100, "n_records": 50}
FULL = {"n_episodes": 1000, "n_queries": 300, "n_records": 100}


def _episodes(n: int) -> list[EpisodeRecord]:
    """``n`` episodes: the offline planner's programs for sim tasks (no memory context)."""
    from frankenbot.execution.episode import plan_request
    from frankenbot.planner.planner import Planner
    from frankenbot.program.printer import print_program

    planner = Planner()
    distinct = task_sequence(min(n, 44))
    out = []
    for i in range(n):
        family, seed, instruction, scene = distinct[i % len(distinct)]
        planned = planner.plan(plan_request(instruction, scene, planner="offline"))
        out.append(EpisodeRecord(instruction, print_program(planned.program), True, "success",
                                 task_id=f"{family}-{seed}-{i}", vlm_calls=0))
    return out


def _ms(samples: list[float]) -> dict[str, float]:
    qs = statistics.quantiles(samples, n=20) if len(samples) >= 2 else samples * 19
    return {"median_ms": statistics.median(samples) * 1000, "p95_ms": qs[18] * 1000,
            "n": len(samples)}


def measure(open_store: Callable[[str], MemoryStore], episodes: list[EpisodeRecord],
            n_queries: int, n_records: int) -> dict[str, object]:
    """Fill through two robots' stores, then time get_context and record_episode on one."""
    a, b = open_store("arm1"), open_store("arm2")
    try:
        t0 = time.perf_counter()
        history, extra = episodes[:-n_records], episodes[-n_records:]
        for i, ep in enumerate(history):
            (a if i % 2 == 0 else b).record_episode(ep)
        fill_s = time.perf_counter() - t0
        queries = [e.instruction for e in episodes[:n_queries]]
        a.get_context(queries[0])  # warm caches (statements, unfit-skill check)
        context = []
        for q in queries:
            t = time.perf_counter()
            a.get_context(q)
            context.append(time.perf_counter() - t)
        record = []
        for ep in extra:
            t = time.perf_counter()
            a.record_episode(ep)
            record.append(time.perf_counter() - t)
        return {"get_context": _ms(context), "record_episode": _ms(record),
                "episodes": a.episode_count(), "skills": len(a.list_skills()),
                "fill_s": fill_s, "retrieval": a.get_context(queries[0]).retrieval}
    finally:
        a.close()
        b.close()


def run_benchmark(quick: bool = False, embeddings: bool = False,
                  sizes: dict[str, int] | None = None) -> dict[str, object]:
    """Print and return get_context / record_episode latency on SQLite and PostgreSQL."""
    from frankenbot.eval.pg_server import PostgresUnavailable, TemporaryPostgres

    size = dict(sizes or (QUICK if quick else FULL))
    embedder: Embedder | None = None
    if embeddings:
        from frankenbot.memory.retrieval import TransformerEmbedder

        embedder = TransformerEmbedder.from_directory(num_threads=1)
    print(f"memory fleet benchmark: {size['n_episodes']} episodes (offline-planner programs of"
          f" sim tasks, evaluation seeds), {size['n_queries']} get_context,"
          f" {size['n_records']} record_episode; retrieval"
          f" {'embedding (MiniLM)' if embedder else 'lexical'}", flush=True)
    episodes = _episodes(size["n_episodes"])
    results: dict[str, object] = {"sizes": size, "embeddings": embedder is not None}
    tmp = Path(tempfile.mkdtemp(prefix="fb-fleet-bench-"))

    def config(robot: str) -> MemoryConfig:
        return MemoryConfig(use_embeddings=embedder is not None, robot_id=robot,
                            fixtures="drawer,zone")

    results["sqlite"] = measure(
        lambda robot: MemoryStore.open(tmp / "memory.sqlite3", config(robot), embedder=embedder),
        episodes, size["n_queries"], size["n_records"])
    _print("sqlite (local file, WAL, synchronous=FULL)", results["sqlite"])  # type: ignore[arg-type]
    try:
        server = TemporaryPostgres(durable=True).start()
    except PostgresUnavailable as e:
        print(f"postgresql: not measured ({e})")
        results["postgresql"] = {"error": str(e)}
        return results
    try:
        url = server.create_database("fleet_bench")
        results["postgresql"] = measure(
            lambda robot: MemoryStore.open(url, config(robot), embedder=embedder),
            episodes, size["n_queries"], size["n_records"])
        _print("postgresql 15 (127.0.0.1, TCP loopback, fsync on)",
               results["postgresql"])  # type: ignore[arg-type]
    finally:
        server.stop()
    return results


def _print(label: str, r: dict[str, dict[str, float]]) -> None:
    c, w = r["get_context"], r["record_episode"]
    print(f"{label}: get_context median {c['median_ms']:.2f} ms, p95 {c['p95_ms']:.2f} ms;"
          f" record_episode median {w['median_ms']:.2f} ms, p95 {w['p95_ms']:.2f} ms"
          f" ({r['episodes']} episodes, {r['skills']} skills, retrieval {r['retrieval']},"
          f" fill {r['fill_s']:.1f} s)", flush=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--embeddings", action="store_true", help="MiniLM retrieval")
    args = parser.parse_args()
    run_benchmark(quick=args.quick, embeddings=args.embeddings)
