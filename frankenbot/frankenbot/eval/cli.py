"""`frankenbot bench`: the task suite in-process, and each component's micro-benchmarks."""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

from frankenbot.eval.seeds import EVALUATION_FIRST_SEED, evaluation_seeds

# component name -> the module whose run_benchmark(quick=...) measures it. Eval's own; the
# ``frankenbot`` command adds the layers above eval (``frankenbot.cli.BENCH_COMPONENTS``), since
# eval may not import bring-up.
COMPONENTS: dict[str, str] = {
    "program": "frankenbot.eval.program_bench",
    "sim": "frankenbot.eval.sim_bench",
    "motion": "frankenbot.eval.motion_bench",
    "perception": "frankenbot.eval.perception_bench",
    "planner": "frankenbot.eval.planner_bench",
    "anomaly": "frankenbot.eval.anomaly_bench",
    "memory": "frankenbot.eval.memory_bench",
    "language": "frankenbot.eval.language_bench",
    "llm": "frankenbot.eval.llm_bench",  # the local llama.cpp server (needs make setup-llm)
    "memory-fleet": "frankenbot.eval.memory_fleet_bench",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench", help="task-suite benchmark (oracle-judged) and component benchmarks",
        description="Run the sim task suite in-process (every family x seeds, success judged by "
        "the sim's oracle, Wilson 95%% intervals), or a component's benchmark with --component.")
    p.add_argument("--tasks", nargs="*", default=[], metavar="FAMILY",
                   help="task families of the suite or the --mix (default: all; 'first_wave' "
                   "and 'new_world' name groups of them)")
    p.add_argument("--seeds", type=int, default=5, help="seeds per family")
    p.add_argument("--first-seed", type=int, default=EVALUATION_FIRST_SEED,
                   help=f"first scene seed (default: evaluation seeds, {EVALUATION_FIRST_SEED}+; "
                   "development seeds are below it)")
    p.add_argument("--dev-seeds", action="store_true",
                   help="allow development seeds (below the evaluation range) for --first-seed")
    p.add_argument("--mix", choices=("natural", "stress"), default="",
                   help="anomaly mix: each episode draws a family and 0-2 anomalies by class")
    p.add_argument("--episodes", type=int, default=20, help="episodes of the --mix")
    p.add_argument("--workers", type=int, default=1, help="processes running --mix episodes "
                   "(with --ray local: the CPUs of the local Ray instance)")
    p.add_argument("--ray", metavar="ADDRESS", default="",
                   help="run the --mix episodes as Ray tasks: 'local' starts a Ray instance here, "
                        "'auto' joins this machine's cluster, ray://HOST:10001 a remote one")
    p.add_argument("--ablations", nargs="*", default=["full"], metavar="NAME",
                   help="configurations run on the same --mix episodes (full, no_tier1, "
                   "no_tier2, no_tier3, no_program_monitors, no_memory; 'all' for every one)")
    p.add_argument("--planner", choices=("offline", "vlm"), default="offline")
    p.add_argument("--inject", default="", metavar="KIND[:PHASE]",
                   help="inject this sim anomaly in every episode")
    p.add_argument("--realtime-factor", type=float, default=None,
                   help="sim seconds per wall second (suite: 2.0; --mix: 1.0)")
    p.add_argument("--noise", choices=("none", "realistic", "harsh"), default="none",
                   help="sim camera sensor model (docs/CAMERA.md) of the suite and of "
                   "--phrasings; default none")
    p.add_argument("--out", type=Path, default=Path("results"), help="results folder")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--component", choices=tuple(COMPONENTS), action="append", default=[],
                   help="run this component's benchmark instead of the suite (repeatable)")
    p.add_argument("--all-benchmarks", action="store_true",
                   help="every component benchmark, then the suite")
    p.add_argument("--quick", action="store_true", help="short component benchmarks")
    p.add_argument("--record", action="store_true",
                   help="the suite: an MCAP recording (ROS 2 encoding) per episode under "
                   "OUT/recordings/")
    p.add_argument("--suite", default="", metavar="SUITE",
                   help="an external suite instead of our families: libero (all 130 LIBERO "
                   "tasks), libero-spatial, libero-object, libero-goal, libero-10, libero-90; "
                   "each set-up task on --seeds seeds, judged by its BDDL goal")
    p.add_argument("--language", choices=("benchmark", "bddl"), default="benchmark",
                   help="--suite libero*: LIBERO's instruction as its benchmark gives it to a "
                   "policy (the task's name, default) or the BDDL file's :language text")
    p.add_argument("--memory-compare", action="store_true",
                   help="--suite: run the tasks twice, without and with a memory that grows "
                   "from this run's episodes; program lines, tokens, planning calls per task")
    p.add_argument("--limit", type=int, default=0, metavar="N",
                   help="--suite: only the first N set-up tasks of each suite (smoke runs)")
    p.add_argument("--match", default="", metavar="TEXT",
                   help="--suite: only tasks whose name contains TEXT")
    p.add_argument("--probe-planner", action="store_true",
                   help="--suite: plan every set-up task's instruction (both LIBERO wordings) "
                   "on its scene and compare the program with the goal; nothing is executed")
    p.add_argument("--mix-suite", default="", metavar="SUITE",
                   help="--mix: draw the episodes' tasks from this LIBERO suite's set-up tasks "
                   "instead of our task families")
    p.add_argument("--phrasings", type=Path, default=None, metavar="FILE.tsv",
                   help="run each 'family<TAB>phrasing' row ({obj} {target} {a} {b} {c} = the "
                   "sampled task's objects in words) on every seed, executed and judged by the "
                   "oracle (seeds: --first-seed/--seeds, evaluation seeds by default)")
    p.set_defaults(func=_bench)


def _component(name: str, quick: bool, out_dir: Path) -> dict:
    from frankenbot.eval.provenance import provenance, write_result

    module = importlib.import_module(COMPONENTS[name])
    print(f"\n=== {name} benchmark ===", flush=True)
    meta = provenance(component=name, quick=quick)
    results = module.run_benchmark(quick=quick)
    path = write_result(out_dir, f"bench-{name}", results, meta)
    print(f"results: {path}")
    from frankenbot.eval.plots import plots_for

    for plot in plots_for(path):
        print(f"plot: {plot}")
    return results


def _seeds(args: argparse.Namespace) -> tuple[int, ...]:
    """Evaluation seeds unless development seeds are asked for explicitly."""
    if args.first_seed < EVALUATION_FIRST_SEED and not args.dev_seeds:
        from frankenbot.errors import ConfigError

        raise ConfigError(f"--first-seed {args.first_seed} is a development seed; benchmarks "
                          "report evaluation seeds (pass --dev-seeds to run development seeds)")
    return tuple(range(args.first_seed, args.first_seed + args.seeds)) if args.dev_seeds \
        else evaluation_seeds(args.seeds, args.first_seed)


def _bench(args: argparse.Namespace) -> int:
    from frankenbot.eval.suite import SuiteSpec, resolve_families, run_suite

    results: dict[str, object] = {}
    if args.ray and not args.mix:
        from frankenbot.errors import ConfigError

        raise ConfigError("--ray runs --mix episodes; give --mix natural|stress with it")
    components = list(COMPONENTS) if args.all_benchmarks else args.component
    for name in components:
        results[name] = _component(name, args.quick, args.out)
    if components and not args.all_benchmarks:
        if args.json:
            print(json.dumps(results, indent=2, default=str))
        return 0
    if args.phrasings is not None:
        from frankenbot.eval.phrasings_bench import run_phrasings

        seeds = _seeds(args)
        print(f"\n=== phrasings {args.phrasings} x {len(seeds)} seeds from {seeds[0]}, "
              f"{args.planner} planner ===", flush=True)
        _o, json_path, md_path = run_phrasings(args.phrasings, seeds, out_dir=args.out,
                                               planner=args.planner,
                                               realtime_factor=args.realtime_factor or 2.0,
                                               noise=args.noise,
                                               log=lambda s: print(s, flush=True))
        print(f"results: {json_path} and {md_path}")
        return 0
    if args.suite:
        from frankenbot.eval.libero.bench import LiberoSpec, run_libero

        if args.mix or args.tasks or args.phrasings is not None:
            from frankenbot.errors import ConfigError

            raise ConfigError("--suite runs an external suite; it does not combine with "
                              "--mix, --tasks or --phrasings (for a mix of LIBERO tasks: "
                              "--mix ... --mix-suite SUITE)")
        seeds = _seeds(args)
        spec = LiberoSpec(args.suite, seeds, planner=args.planner, noise=args.noise,
                          language=args.language, memory_compare=args.memory_compare,
                          limit=args.limit, match=args.match,
                          realtime_factor=args.realtime_factor or 2.0,
                          probe_planner=args.probe_planner)
        quiet = args.json
        results, path = run_libero(spec, out_dir=args.out,
                                   log=(lambda s: None) if quiet else
                                   (lambda s: print(s, flush=True)))
        if quiet:
            print(json.dumps({k: v for k, v in results.items() if k != "episodes"}, indent=2,
                             default=str))
        else:
            print(f"results: {path}")
        return 0
    if args.mix:
        from frankenbot.eval.mix_cli import run_mix_command

        if args.mix_suite and args.tasks:
            from frankenbot.errors import ConfigError

            raise ConfigError("--mix-suite draws LIBERO tasks; --tasks draws our families: "
                              "give one of them")

        _seeds(args)  # the same rule: development seeds only when asked for
        return run_mix_command(args)
    kind, _, phase = args.inject.partition(":")
    spec = SuiteSpec(families=resolve_families(args.tasks),
                     seeds=_seeds(args),
                     planner=args.planner, inject=(kind, phase) if kind else None,
                     record=args.record)
    print(f"\n=== task suite: {len(spec.families)} families x {len(spec.seeds)} seeds, "
          f"{spec.planner} planner ===", flush=True)
    outcomes, json_path, md_path = run_suite(spec, out_dir=args.out,
                                             realtime_factor=args.realtime_factor or 2.0,
                                             noise=args.noise,
                                             log=lambda s: print(s, flush=True))
    print(f"results: {json_path} and {md_path}")
    if args.json:
        print(json_path.read_text())
    return 0
