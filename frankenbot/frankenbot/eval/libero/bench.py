"""``frankenbot bench --suite libero...``: LIBERO's tasks planned, executed and judged on our table.

Each set-up task runs on N seeds (a layout drawn in its mapped BDDL regions per seed, evaluation
seeds by default) with the instruction as LIBERO writes it, through the whole in-process brain
(``eval.inprocess``: perceived scene, planner, executor with its monitors and tiers); success is
the sim's verdict on the BDDL goal (``sim.scene_spec``). Per suite and per task: success with
Wilson 95% intervals, VLM calls, wall time; the tasks not set up are listed with their reasons.

``memory_compare`` runs the tasks twice in one benchmark, without memory and with a memory that
starts empty (no seed skills) and grows from this run's own episodes, as the executor reports
them (never from the oracle): program lines, program tokens and planning calls per task side by
side, as the paper's ablation compared them.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from frankenbot.errors import ConfigError, SimError
from frankenbot.eval.libero import bddl
from frankenbot.eval.libero.mapping import MappedTask, map_tasks
from frankenbot.eval.libero.scenes import LANGUAGES, sample_scene
from frankenbot.eval.stats import wilson_interval
from frankenbot.eval.tables import EpisodeOutcome

# Published LIBERO numbers of other systems, for the README beside ours (their conditions, not
# ours: another robot or simulator, learned policies or other planners, LIBERO's own assets).
ANCHORS: tuple[tuple[str, str, str], ...] = (
    ("an LLM agent on a UR5e with a RealSense", "70.8% Pass@1 over all 130 tasks",
     "as published: another system's planner and tools, its own robot cell"),
    ("an LLM planner over a learned policy", "92.6% on LIBERO-PRO",
     "as published: LIBERO-PRO's variants of the tasks, a trained policy executing"),
    ("learned policies", "~98%",
     "as published: LIBERO's simulator and assets, policies trained on its demonstrations"),
)


@dataclass(frozen=True)
class LiberoSpec:
    suite: str  # libero | libero-spatial | -object | -goal | -10 | -90
    seeds: tuple[int, ...]
    planner: str = "offline"
    noise: str = "none"
    language: str = "benchmark"  # benchmark | bddl (see scenes.instruction_of)
    memory_compare: bool = False
    limit: int = 0  # first N set-up tasks per suite (0: all): smoke runs
    match: str = ""  # only tasks whose name contains this
    realtime_factor: float = 2.0
    probe_planner: bool = False  # plan every instruction on its scene, execute nothing


@dataclass(frozen=True)
class Selection:
    """What a run covers: the tasks it runs, those not set up (with why), and per suite how
    many tasks LIBERO has and how many of them are set up on our table."""

    run: list[MappedTask]
    skipped: list[tuple[bddl.BddlTask, str]]
    totals: dict[str, int]
    set_up: dict[str, int]


def select(spec: LiberoSpec) -> Selection:
    if spec.language not in LANGUAGES:
        raise ConfigError(f"--language must be one of {', '.join(LANGUAGES)}")
    tasks = bddl.load_tasks(spec.suite)
    totals = {s: sum(t.suite == s for t in tasks) for s in bddl.suite_names(spec.suite)}
    done, skipped = map_tasks(tasks)
    set_up = {s: sum(m.task.suite == s for m in done) for s in totals}
    if spec.match:
        done = [m for m in done if spec.match in m.task.name]
    if spec.limit > 0:
        kept: list[MappedTask] = []
        for suite in totals:
            kept += [m for m in done if m.task.suite == suite][:spec.limit]
        done = kept
    return Selection(done, skipped, totals, set_up)


def run_tasks(brain: Any, tasks: Sequence[MappedTask], seeds: Sequence[int], language: str,
              log: Callable[[str], None], tag: str = "") -> list[EpisodeOutcome]:
    """Every (task, seed) through ``brain`` (an ``InProcessBrain``), in order."""
    out: list[EpisodeOutcome] = []
    for m in tasks:
        for seed in seeds:
            try:
                scene = sample_scene(m, seed, language)
            except SimError as e:  # counted as a failure, never dropped
                o = EpisodeOutcome(m.task.task_id, seed, m.task.benchmark_language, False,
                                   False, 0, 0.0, detail=f"no layout: {e}")
            else:
                o = brain.run_episode(m.task.task_id, seed, scene=scene, names=m.names)
            out.append(o)
            mark = "ok  " if o.success else "FAIL"
            log(f"  {mark}{tag} {m.task.task_id[:72]:72s} seed {seed}  {o.wall_time:5.1f} s  "
                f"VLM {o.vlm_calls}  lines {o.program_lines}  {o.instruction!r}"
                + ("" if o.success else f"\n         {o.detail.splitlines()[0][:200]}"
                   if o.detail else ""))
    return out


def _rate(outcomes: Sequence[EpisodeOutcome]) -> dict[str, Any]:
    n = len(outcomes)
    k = sum(o.success for o in outcomes)
    ci = wilson_interval(k, n)
    return {"episodes": n, "successes": k, "success_rate": k / n if n else 0.0,
            "wilson_95": [ci.low, ci.high],
            "vlm_calls_per_episode": statistics.fmean(o.vlm_calls for o in outcomes)
            if n else 0.0,
            "mean_wall_time_s": statistics.fmean(o.wall_time for o in outcomes) if n else 0.0}


def summarise(sel: Selection, outcomes: Sequence[EpisodeOutcome]) -> dict[str, Any]:
    """The result's JSON body: tasks_set_up, tasks_total, success_rate, per_suite, per_task."""
    tasks, skipped, totals = sel.run, sel.skipped, sel.totals
    by_task = {m.task.task_id: m for m in tasks}
    per_task = []
    for m in tasks:
        eps = [o for o in outcomes if o.family == m.task.task_id]
        per_task.append({"task": m.task.task_id, "suite": m.task.suite,
                         "instruction": eps[0].instruction if eps else "",
                         "goal": m.goal, **_rate(eps),
                         "failures": [f"seed {o.seed}: {o.detail.splitlines()[0][:300]}"
                                      for o in eps if not o.success and o.detail]})
    per_suite = {}
    for suite, total in totals.items():
        eps = [o for o in outcomes if by_task[o.family].task.suite == suite]
        per_suite[suite] = {"tasks_total": total, "tasks_set_up": sel.set_up[suite],
                            "tasks_run": sum(m.task.suite == suite for m in tasks),
                            "tasks_not_set_up": sum(t.suite == suite for t, _ in skipped),
                            **_rate(eps)}
    whole = _rate(outcomes)
    return {"tasks_total": sum(totals.values()), "tasks_set_up": sum(sel.set_up.values()),
            "tasks_run": len(tasks),
            "success_rate": whole["success_rate"], "overall": whole, "per_suite": per_suite,
            "per_task": per_task,
            "not_set_up": [{"task": t.task_id, "reason": why} for t, why in skipped],
            "episodes": [asdict(o) for o in outcomes]}


def memory_table(without: Sequence[EpisodeOutcome], with_memory: Sequence[EpisodeOutcome]
                 ) -> dict[str, Any]:
    """Per task and in total: program lines, tokens, planning calls and success, both arms."""
    rows: list[dict[str, Any]] = []
    for a, b in zip(without, with_memory, strict=True):
        rows.append({"task": a.family, "seed": a.seed,
                     "lines": [a.program_lines, b.program_lines],
                     "tokens": [a.program_tokens, b.program_tokens],
                     "planning_calls": [a.planning_calls, b.planning_calls],
                     "vlm_calls": [a.vlm_calls, b.vlm_calls],
                     "success": [a.success, b.success]})

    # sizes compare programs, so only pairs planned in both arms count (a refusal has none)
    planned = [r for r in rows if r["lines"][0] > 0 and r["lines"][1] > 0]

    def mean(arm: int, key: str, among: list[dict[str, Any]]) -> float:
        return statistics.fmean(r[key][arm] for r in among) if among else 0.0

    total: dict[str, Any] = {key: [mean(0, key, planned), mean(1, key, planned)]
                             for key in ("lines", "tokens")}
    for key in ("planning_calls", "vlm_calls"):
        total[key] = [mean(0, key, rows), mean(1, key, rows)]
    total["successes"] = [sum(r["success"][0] for r in rows), sum(r["success"][1] for r in rows)]
    half = planned[len(planned) // 2:]
    total["lines_second_half"] = [mean(i, "lines", half) for i in (0, 1)]
    return {"arms": ["without memory", "with memory (starts empty, grows from this run)"],
            "episodes": len(rows), "planned_in_both": len(planned), "mean": total,
            "per_task": rows}


def result_name(spec: LiberoSpec) -> str:
    return (f"{spec.suite}-{spec.planner}-{spec.noise}"
            + ("-memory" if spec.memory_compare else "")
            + (f"-{spec.language}" if spec.language != "benchmark" else ""))


def run_libero(spec: LiberoSpec, *, out_dir: Path, log: Callable[[str], None] = print
               ) -> tuple[dict[str, Any], Path]:
    """Run the suite as ``spec`` says; write ``<out_dir>/<result_name>.json``."""
    from frankenbot.eval.inprocess import BrainOptions, InProcessBrain
    from frankenbot.eval.provenance import provenance, write_result

    sel = select(spec)
    tasks = sel.run
    if spec.probe_planner:
        return probe_planner(spec, sel, out_dir=out_dir, log=log)
    log(f"{spec.suite}: {len(tasks)} tasks to run ({sum(sel.set_up.values())} of "
        f"{sum(sel.totals.values())} set up; {len(sel.skipped)} not set up), seeds "
        f"{list(spec.seeds)}, "
        f"{spec.planner} planner, noise {spec.noise}, LIBERO's {spec.language} language")
    options = BrainOptions(planner=spec.planner, realtime_factor=spec.realtime_factor,
                           noise=spec.noise)
    t0 = time.monotonic()
    with InProcessBrain(options) as brain:
        outcomes = run_tasks(brain, tasks, spec.seeds, spec.language, log)
    results = summarise(sel, outcomes)
    if spec.memory_compare:
        db = Path(tempfile.mkdtemp(prefix="fb-libero-memory-")) / "memory.sqlite3"
        from frankenbot.memory.config import MemoryConfig

        log("second run, with a memory that starts empty and learns from this run's "
            "executor reports")
        mem_options = replace(options, memory_path=db,
                              memory_config=MemoryConfig(load_seeds=False))
        with InProcessBrain(mem_options) as brain:
            with_memory = run_tasks(brain, tasks, spec.seeds, spec.language, log, tag=" mem")
            assert brain.memory is not None
            skills = [s.name for s in brain.memory.list_skills()]
        results["memory"] = memory_table(outcomes, with_memory)
        results["memory"]["skills_learned"] = skills
        results["memory"]["with_memory_summary"] = {
            k: v for k, v in summarise(sel, with_memory).items()
            if k in ("success_rate", "overall", "per_suite")}
    meta = provenance(suite=spec.suite, seeds=list(spec.seeds), planner=spec.planner,
                      sensor_noise=spec.noise, language=spec.language,
                      scene="perceived (MuJoCo renders through the perception pipeline)",
                      realtime_factor=spec.realtime_factor,
                      scene_stale_after_s=options.scene_stale_after_s,
                      judge="sim oracle on the BDDL goal", limit=spec.limit, match=spec.match,
                      source=f"{bddl.PACKAGE} {bddl.PACKAGE_VERSION} "
                             f"(licence {bddl.package_licence() or '?'})")
    meta.update(title=f"LIBERO {spec.suite} on our UR5e table, {spec.planner} planner, "
                      f"sensor noise {spec.noise}",
                wall_time_s=round(time.monotonic() - t0, 1))
    path = write_result(out_dir, result_name(spec), results, meta)
    log("")
    log(markdown(results, meta))
    return results, path


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def suite_cell(s: dict[str, Any]) -> str:
    lo, hi = s["wilson_95"]
    ran = s.get("tasks_run", s["tasks_set_up"])
    return (f"{s['successes']}/{s['episodes']} ({_pct(s['success_rate'])}, Wilson 95% "
            f"[{_pct(lo)}, {_pct(hi)}]); {s['tasks_set_up']} of {s['tasks_total']} tasks set up"
            + (f", {ran} run" if ran != s["tasks_set_up"] else ""))


def markdown(results: dict[str, Any], meta: dict[str, Any]) -> str:
    """Per suite, then per task, then what was not set up."""
    out = [f"### {meta.get('title', 'LIBERO')}", "",
           "| suite | result | VLM calls / episode | mean wall time (s) |", "|---|---|---|---|"]
    for suite, s in results["per_suite"].items():
        out.append(f"| {suite} | {suite_cell(s)} | {s['vlm_calls_per_episode']:.2f} | "
                   f"{s['mean_wall_time_s']:.1f} |")
    out += ["", "| task | successes | Wilson 95% | instruction |", "|---|---|---|---|"]
    for t in results["per_task"]:
        lo, hi = t["wilson_95"]
        out.append(f"| {t['task']} | {t['successes']}/{t['episodes']} | [{_pct(lo)}, "
                   f"{_pct(hi)}] | {t['instruction']} |")
    if results["not_set_up"]:
        out += ["", "Not set up:", ""]
        out += [f"- {n['task']}: {n['reason']}" for n in results["not_set_up"]]
    mem = results.get("memory")
    if mem:
        m = mem["mean"]
        out += ["", f"Memory: program lines {m['lines'][0]:.1f} -> {m['lines'][1]:.1f}, tokens "
                f"{m['tokens'][0]:.1f} -> {m['tokens'][1]:.1f}, planning calls "
                f"{m['planning_calls'][0]:.2f} -> {m['planning_calls'][1]:.2f}, successes "
                f"{m['successes'][0]} -> {m['successes'][1]} (without -> with memory); skills "
                f"learned: {', '.join(mem.get('skills_learned', [])) or 'none'}"]
    return "\n".join(out) + "\n"


def probe_planner(spec: LiberoSpec, sel: Selection, *, out_dir: Path,
                  log: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    """``--probe-planner``: which instruction forms the offline planner reads, misreads or
    refuses (``planner_probe``); nothing is executed. Scenes of the first seed given."""
    from frankenbot.eval.libero import planner_probe
    from frankenbot.eval.provenance import provenance, write_result

    seed = spec.seeds[0]
    log(f"planner probe: {len(sel.run)} set-up tasks, both LIBERO wordings, scenes of seed "
        f"{seed}, offline planner, perfect-camera scenes, nothing executed")
    rows = planner_probe.probe(sel.run, seed=seed, log=log)
    result = planner_probe.report(rows)
    meta = provenance(suite=spec.suite, seed=seed, planner="offline",
                      scene="the layout's objects as a perfect camera reports them, labelled "
                            "with the taught names; the scene's fixture map",
                      judge="program calls compared with the BDDL goal's atoms (not executed)")
    meta.update(title=f"Offline planner on LIBERO {spec.suite} instructions")
    path = write_result(out_dir, f"{spec.suite}-planner-probe", result, meta)
    log("")
    log(f"totals: {result['totals']}")
    log(planner_probe.markdown(result))
    return result, path


# ------------------------------------------------------------------------------ anomaly mixes
def mix_like(mapped: MappedTask) -> str:
    """The task family a LIBERO task behaves like for the anomaly kinds a mix may draw: into a
    bowl/basket/tray or onto a plate (the container kinds), another pick and place, or "" when
    it grasps nothing (drawers, doors, the stove: arm-level kinds only)."""
    from frankenbot.sim import layout
    from frankenbot.sim.scene_spec import parse_goal

    like = ""
    for atom in parse_goal(mapped.goal):
        if atom.predicate in ("open", "closed", "turned_on", "turned_off"):
            continue
        target = layout.OBJECT_BY_NAME.get(atom.args[1])
        if target is not None and target.shape == "plate":
            return "put_on_plate"
        if target is not None and target.shape in ("bowl", "basket", "tray", "bin"):
            return "put_in_bowl"
        like = "pick_up"
    return like


def mix_tasks(suite: str) -> dict[str, str]:
    """``--mix-suite``: the suite's set-up task ids -> the family each behaves like."""
    done, _skipped = map_tasks(bddl.load_tasks(suite))
    return {m.task.task_id: mix_like(m) for m in done}


_MAPPED: dict[str, MappedTask] = {}


def scene_for(task_id: str, seed: int, language: str = "benchmark"
              ) -> tuple[Any, dict[str, str]]:
    """(scene, taught names) of a LIBERO task id for ``seed`` (a mix episode's scene)."""
    if not _MAPPED:
        _MAPPED.update({m.task.task_id: m for m in map_tasks(bddl.load_tasks())[0]})
    m = _MAPPED.get(task_id)
    if m is None:
        raise ConfigError(f"{task_id} is not a set-up LIBERO task")
    return sample_scene(m, seed, language), m.names
