"""Memory benchmark: program size, prompt size and planning calls per task, with and without memory.

One run plans a scripted sequence of sim tasks (the sim's task families, interleaved, seeded
scenes) three ways, in the same order:

* ``none``    no memory: the base catalog only, no exemplars;
* ``seeds``   memory with the seed skill library, promotion on;
* ``learned`` memory starting empty (no seeds), so every skill it uses was promoted.

Programs come from the planner (offline mode; zero VLM calls) given memory's context, as the
planner node gives it: with memory, ``get_context`` offers skills, exemplars and experience, and
the offline planner calls the offered library skills where they fit (``Planner._with_skills``:
spelled-out skill bodies become calls, as a VLM reading the skill list would write them). The
prompt is the planner's real ``PromptBuilder`` output for the same request. Sizes: non-blank
lines of the canonical program text, and tokens by ``memory.tokens.estimate_tokens``
(calibrated below against the packaged MiniLM WordPiece tokenizer).

Success: by default a program counts as successful when the validator finds no error against
the scene's object ids and the catalog it was planned with; nothing is executed, and the report
says so. An ``executor`` callable (family, seed, program, catalog) -> (oracle success, program
success, detail, trace) runs the program in the sim instead; the report counts the oracle's
verdict, while memory records only the program's own outcome (its exit status and checks),
which is all a robot knows: memory never learns from the oracle. Planning
calls are counted, not assumed: one planner invocation per task in every arm; memory can only
change that through repairs, which the offline planner never needs.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from frankenbot.eval.seeds import EVALUATION_FIRST_SEED
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import EpisodeRecord
from frankenbot.memory.retrieval import Embedder, TransformerEmbedder, packaged_model_dir
from frankenbot.memory.store import MemoryStore
from frankenbot.memory.tokens import estimate_tokens
from frankenbot.program.catalog import Catalog, default_catalog
from frankenbot.program.printer import print_program
from frankenbot.program.tree import Program, count_lines
from frankenbot.program.validator import validate

ARMS = ("none", "seeds", "learned")
QUICK_TASKS = 30
FULL_TASKS = 44

# (family, seed, program, catalog) -> (oracle success, program success, detail, trace JSON): the
# sim executor or validation. A trace lets memory attribute outcomes to the sequences that ran.
Executor = Callable[[str, int, Program, Catalog], tuple[bool, bool, str, str]]


@dataclass
class ArmResult:
    lines: int = 0
    tokens: int = 0
    prompt_tokens: int = 0
    prompt_chars: int = 0
    planning_calls: int = 0
    vlm_calls: int = 0
    skill_calls: int = 0
    exemplars: int = 0
    success: bool = False  # the oracle's verdict (validator-clean when not executed)
    program_ok: bool = False  # the program's own outcome: what memory records
    detail: str = ""
    promoted: tuple[str, ...] = ()
    context_ms: float = 0.0  # memory's get_context
    record_ms: float = 0.0  # memory's record_episode (mining and promotion included)


@dataclass
class TaskRow:
    index: int
    family: str
    seed: int
    instruction: str
    arms: dict[str, ArmResult] = field(default_factory=dict)


def task_sequence(n: int) -> list[tuple[str, int, str, object]]:
    """``n`` sim tasks: families interleaved, seeds counting up, unsamplable seeds skipped."""
    from frankenbot.errors import SimError
    from frankenbot.eval.taskset import scene_of_task
    from frankenbot.sim.tasks import TASK_FAMILIES

    out: list[tuple[str, int, str, object]] = []
    seeds = {f: EVALUATION_FIRST_SEED for f in TASK_FAMILIES}
    i = 0
    while len(out) < n:
        family = TASK_FAMILIES[i % len(TASK_FAMILIES)]
        i += 1
        for _ in range(20):
            seed = seeds[family]
            seeds[family] += 1
            try:
                instruction, scene = scene_of_task(family, seed)
            except SimError:
                continue
            out.append((family, seed, instruction, scene))
            break
    return out


def validation_executor(object_ids: Callable[[str, int], tuple[str, ...]]) -> Executor:
    """Success = the validator finds no error (nothing is run); used when not executing."""

    def run(family: str, seed: int, program: Program, catalog: Catalog
            ) -> tuple[bool, bool, str, str]:
        ids = object_ids(family, seed)
        errors = [d for d in validate(program, catalog, ids) if d.is_error]
        return (not errors, not errors, "; ".join(d.message for d in errors) or "validated", "[]")

    return run


def _plan(store: MemoryStore | None, instruction: str, scene, planner
          ) -> tuple[Program, Catalog, ArmResult]:
    from frankenbot.errors import PlannerError
    from frankenbot.execution.episode import plan_request, store_context
    from frankenbot.planner.prompt import PromptBuilder

    result = ArmResult(planning_calls=1)
    context = None
    if store is not None:
        t0 = time.perf_counter()
        context = store_context(store)(instruction)
        result.context_ms = (time.perf_counter() - t0) * 1000
        result.exemplars = len(context.exemplars)
    request = plan_request(instruction, scene, context=context, planner="offline")
    planned = planner.plan(request)
    if not planned.ok:
        raise PlannerError(f"the offline planner refused a sim task {instruction!r}: "
                           f"{planned.message}")
    program = planned.program  # self-contained: carries the library skills it calls
    catalog = default_catalog()
    skill_names = {s.name for s in request.skills}
    # what the planner wrote: the program less the library definitions it appended
    written = replace(program, skills=tuple(s for s in program.skills
                                            if s.name not in skill_names))
    result.skill_calls = sum(1 for c in written.calls() if c.name in skill_names)
    result.vlm_calls = planned.vlm_calls
    prompt = PromptBuilder(default_catalog()).build(request)
    result.prompt_chars = prompt.chars
    result.prompt_tokens = estimate_tokens(prompt.system) + estimate_tokens(prompt.user_text)
    result.lines = count_lines(written)
    result.tokens = estimate_tokens(print_program(written))
    return program, catalog, result


def run(n_tasks: int, executor: Executor | None = None, embedder: Embedder | None = None,
        db_dir: Path | None = None, min_support: int = 3,
        progress: Callable[[str], None] | None = None) -> tuple[list[TaskRow], dict]:
    """Plan (and record) ``n_tasks`` tasks in all arms; returns rows and the final libraries."""
    from frankenbot.planner.planner import Planner

    planner = Planner()
    tasks = task_sequence(n_tasks)
    scenes = {(f, s): sc for f, s, _i, sc in tasks}
    executed = executor is not None
    if executor is None:
        executor = validation_executor(
            lambda f, s: scenes[(f, s)].ids())  # type: ignore[attr-defined]
    tmp = Path(db_dir or tempfile.mkdtemp(prefix="fb-memory-bench-"))
    common = dict(use_embeddings=embedder is not None, min_support=min_support)
    stores = {
        "seeds": MemoryStore.open(tmp / "seeds.sqlite3", MemoryConfig(**common),  # type: ignore[arg-type]
                                  embedder=embedder),
        "learned": MemoryStore.open(tmp / "learned.sqlite3",
                                    MemoryConfig(load_seeds=False, **common),  # type: ignore[arg-type]
                                    embedder=embedder),
    }
    rows: list[TaskRow] = []
    try:
        for i, (family, seed, instruction, scene) in enumerate(tasks):
            row = TaskRow(i, family, seed, instruction)
            for arm in ARMS:
                store = stores.get(arm)
                t0 = time.monotonic()
                program, catalog, res = _plan(store, instruction, scene, planner)
                planning = time.monotonic() - t0
                oracle_ok, program_ok, detail, trace_json = executor(family, seed, program,
                                                                     catalog)
                res.success, res.program_ok, res.detail = oracle_ok, program_ok, detail
                if store is not None:  # memory learns the program's outcome, never the oracle's
                    t1 = time.perf_counter()
                    rec = store.record_episode(EpisodeRecord(
                        instruction, print_program(program), res.program_ok,
                        "success" if res.program_ok else "failure", task_id=f"{family}-{seed}",
                        vlm_calls=res.vlm_calls, planning_time=planning,
                        trace_json=trace_json))
                    res.promoted = rec.promoted
                    res.record_ms = (time.perf_counter() - t1) * 1000
                row.arms[arm] = res
            rows.append(row)
            if progress is not None:
                progress(_row_line(row))
        libraries = {arm: s.list_skills() for arm, s in stores.items()}
        retrieval = {arm: s.get_context(tasks[0][2]).retrieval for arm, s in stores.items()}
    finally:
        for s in stores.values():
            s.close()
    return rows, {"libraries": libraries, "retrieval": retrieval, "db_dir": str(tmp),
                  "executed": executed}


def _row_line(row: TaskRow) -> str:
    a = row.arms
    promoted = ", ".join(p for arm in ARMS for p in a[arm].promoted)
    ok = "".join("y" if a[arm].success else "n" for arm in ARMS)
    return (f"{row.index:>3} {row.family:<15} lines {a['none'].lines:>3} {a['seeds'].lines:>3}"
            f" {a['learned'].lines:>3}  tokens {a['none'].tokens:>4} {a['seeds'].tokens:>4}"
            f" {a['learned'].tokens:>4}  prompt {a['none'].prompt_tokens:>5}"
            f" {a['seeds'].prompt_tokens:>5} {a['learned'].prompt_tokens:>5}  calls"
            f" {a['none'].planning_calls}/{a['seeds'].planning_calls}/{a['learned'].planning_calls}"
            f"  ok {ok}" + (f"  promoted: {promoted}" if promoted else ""))


def token_calibration(texts: list[str]) -> dict[str, float]:
    """Estimate vs the packaged MiniLM WordPiece tokenizer on the same texts (ratio of sums)."""
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(packaged_model_dir()), local_files_only=True)
    except Exception as e:  # calibration is informative only
        return {"error": str(e)}  # type: ignore[dict-item]
    est = sum(estimate_tokens(t) for t in texts)
    ref = sum(len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts)
    return {"estimate": est, "wordpiece": ref, "ratio": est / ref if ref else 0.0}


def summarise(rows: list[TaskRow], info: dict) -> dict[str, object]:
    def mean(arm: str, attr: str) -> float:
        return statistics.fmean(getattr(r.arms[arm], attr) for r in rows)

    out: dict[str, object] = {"tasks": len(rows), "executed": info["executed"]}
    for arm in ARMS:
        out[arm] = {
            "lines_mean": mean(arm, "lines"), "tokens_mean": mean(arm, "tokens"),
            "prompt_tokens_mean": mean(arm, "prompt_tokens"),
            "prompt_chars_mean": mean(arm, "prompt_chars"),
            "planning_calls_mean": mean(arm, "planning_calls"),
            "vlm_calls_mean": mean(arm, "vlm_calls"),
            "skill_calls_mean": mean(arm, "skill_calls"),
            "success": sum(r.arms[arm].success for r in rows),
            "context_ms_median": statistics.median(r.arms[arm].context_ms for r in rows),
            "record_ms_median": statistics.median(r.arms[arm].record_ms for r in rows),
        }
    half = len(rows) // 2
    for arm in ARMS:  # later tasks profit from skills promoted earlier
        out[arm]["lines_mean_second_half"] = statistics.fmean(  # type: ignore[index]
            r.arms[arm].lines for r in rows[half:])
    out["promoted"] = {arm: [s.name for s in info["libraries"][arm] if s.origin == "promoted"]
                       for arm in ("seeds", "learned")}
    out["retrieval"] = info["retrieval"]
    return out


def run_benchmark(quick: bool = False, execute: bool | None = None,
                  n_tasks: int | None = None) -> dict[str, object]:
    """Print the with/without-memory report over >= 30 sim tasks and return the numbers.

    ``quick``: 30 tasks; full: 44 (4 per family); ``n_tasks`` overrides. Success is
    validator-clean, or with ``execute`` the sim oracle's verdict after running every arm's
    program in MuJoCo (``memory.sim_execution``; about 5 s of wall time per program and arm).
    """
    n = n_tasks or (QUICK_TASKS if quick else FULL_TASKS)
    execute = (not quick) if execute is None else execute  # the full run executes every arm
    t0 = time.monotonic()
    try:
        embedder: Embedder | None = TransformerEmbedder.from_directory(num_threads=1)
    except Exception as e:
        print(f"note: embedding model unavailable ({e}); lexical retrieval")
        embedder = None
    sim = None
    if execute:
        from frankenbot.eval.memory_sim_execution import SimExecutor

        sim = SimExecutor()
    how = ("sim oracle after running each arm's program in MuJoCo (interpreter + primitives,"
           " no monitor thread)" if execute
           else "validator-clean against scene ids and catalog; not executed")
    print(f"memory benchmark: {n} sim tasks, arms none | seeds | learned (success = {how})")
    print("  #  family          lines n/s/l     tokens n/s/l      prompt tokens n/s/l"
          "   calls  ok")
    try:
        rows, info = run(n, executor=sim, embedder=embedder, progress=print)
    finally:
        if sim is not None:
            sim.close()
    summary = summarise(rows, info)
    texts = [r.instruction for r in rows] + [s.body for s in info["libraries"]["seeds"]]
    summary["token_calibration"] = token_calibration(texts)
    summary["wall_s"] = time.monotonic() - t0
    print()
    print(f"{'':<8}{'lines':>8}{'tokens':>9}{'prompt tok':>12}{'prompt chr':>12}"
          f"{'plan calls':>12}{'VLM calls':>11}{'skill calls':>13}{'success':>10}"
          f"{'lines 2nd half':>16}")
    for arm in ARMS:
        s = summary[arm]
        print(f"{arm:<8}{s['lines_mean']:>8.2f}{s['tokens_mean']:>9.1f}"
              f"{s['prompt_tokens_mean']:>12.1f}{s['prompt_chars_mean']:>12.0f}"
              f"{s['planning_calls_mean']:>12.2f}{s['vlm_calls_mean']:>11.2f}"
              f"{s['skill_calls_mean']:>13.2f}{s['success']:>6}/{len(rows):<3}"
              f"{s['lines_mean_second_half']:>16.2f}")
    none = summary["none"]
    for arm in ("seeds", "learned"):
        s = summary[arm]
        print(f"{arm} vs none: program lines {_pct(s['lines_mean'], none['lines_mean'])},"
              f" program tokens {_pct(s['tokens_mean'], none['tokens_mean'])},"
              f" prompt tokens {_pct(s['prompt_tokens_mean'], none['prompt_tokens_mean'])},"
              f" planning calls {_pct(s['planning_calls_mean'], none['planning_calls_mean'])}")
    for arm in ("seeds", "learned"):
        lib = [s for s in info["libraries"][arm] if s.origin == "promoted"]
        print(f"skills promoted ({arm}): {len(lib)}")
        for s in lib:
            print(f"  {s.name}({', '.join(f'{n}: {t}' for n, t in s.params)})"
                  f"  uses {s.uses}, successes {s.successes}")
    for arm in ("seeds", "learned"):
        s = summary[arm]
        print(f"memory cost ({arm}): get_context median {s['context_ms_median']:.1f} ms,"
              f" record_episode median {s['record_ms_median']:.1f} ms")
    print(f"retrieval: {info['retrieval']}; token estimate vs WordPiece:"
          f" {summary['token_calibration']}")
    print(f"wall time {summary['wall_s']:.1f} s")
    return summary


def _pct(new: float, old: float) -> str:
    return f"{new:.2f} vs {old:.2f} ({(new - old) / old * 100:+.1f} %)" if old else "n/a"


if __name__ == "__main__":  # pragma: no cover
    import sys

    count = [int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--tasks=")]
    run_benchmark(quick="--quick" in sys.argv, execute="--execute" in sys.argv,
                  n_tasks=count[0] if count else None)
