"""`frankenbot bench`: the task suite in-process, and each component's micro-benchmarks."""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

COMPONENTS = ("program", "sim", "motion", "perception", "planner", "anomaly", "memory")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench", help="task-suite benchmark (oracle-judged) and component benchmarks",
        description="Run the sim task suite in-process (every family x seeds, success judged by "
        "the sim's oracle, Wilson 95%% intervals), or a component's benchmark with --component.")
    p.add_argument("--tasks", nargs="*", default=[], metavar="FAMILY",
                   help="task families (default: all)")
    p.add_argument("--seeds", type=int, default=5, help="seeds per family (0..N-1)")
    p.add_argument("--first-seed", type=int, default=None,
                   help="first seed (suite: 0; --mix: the first evaluation seed)")
    p.add_argument("--mix", choices=("natural", "stress"), default="",
                   help="anomaly mix: each episode draws a family and 0-2 anomalies by class")
    p.add_argument("--episodes", type=int, default=20, help="episodes of the --mix")
    p.add_argument("--workers", type=int, default=1, help="processes running --mix episodes")
    p.add_argument("--ablations", nargs="*", default=["full"], metavar="NAME",
                   help="configurations run on the same --mix episodes (full, no_tier1, "
                   "no_tier2, no_tier3, no_program_monitors, no_memory; 'all' for every one)")
    p.add_argument("--planner", choices=("offline", "vlm"), default="offline")
    p.add_argument("--inject", default="", metavar="KIND[:PHASE]",
                   help="inject this sim anomaly in every episode")
    p.add_argument("--realtime-factor", type=float, default=None,
                   help="sim seconds per wall second (suite: 2.0; --mix: 1.0)")
    p.add_argument("--out", type=Path, default=Path("results"), help="results folder")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--component", choices=COMPONENTS, action="append", default=[],
                   help="run this component's benchmark instead of the suite (repeatable)")
    p.add_argument("--all-benchmarks", action="store_true",
                   help="every component benchmark, then the suite")
    p.add_argument("--quick", action="store_true", help="short component benchmarks")
    p.set_defaults(func=_bench)


def _component(name: str, quick: bool) -> dict:
    module = importlib.import_module(f"frankenbot.{name}.benchmark")
    print(f"\n=== {name} benchmark ===", flush=True)
    return module.run_benchmark(quick=quick)


def _bench(args: argparse.Namespace) -> int:
    from frankenbot.bench.suite import SuiteSpec, resolve_families, run_suite

    results: dict[str, object] = {}
    components = list(COMPONENTS) if args.all_benchmarks else args.component
    for name in components:
        results[name] = _component(name, args.quick)
    if components and not args.all_benchmarks:
        if args.json:
            print(json.dumps(results, indent=2, default=str))
        return 0
    if args.mix:
        from frankenbot.eval.mix_cli import run_mix_command

        return run_mix_command(args)
    first = 0 if args.first_seed is None else args.first_seed
    kind, _, phase = args.inject.partition(":")
    spec = SuiteSpec(families=resolve_families(args.tasks),
                     seeds=tuple(range(first, first + args.seeds)),
                     planner=args.planner, inject=(kind, phase) if kind else None)
    print(f"\n=== task suite: {len(spec.families)} families x {len(spec.seeds)} seeds, "
          f"{spec.planner} planner ===", flush=True)
    outcomes, json_path, md_path = run_suite(spec, out_dir=args.out,
                                             realtime_factor=args.realtime_factor or 2.0,
                                             log=lambda s: print(s, flush=True))
    print(f"results: {json_path} and {md_path}")
    if args.json:
        print(json_path.read_text())
    return 0
