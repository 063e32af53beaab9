"""`frankenbot bench --mix natural|stress`: the anomaly mix, its ablations, one JSON report."""

from __future__ import annotations

import argparse
import json
import platform
import time

from frankenbot.eval.mix import (
    ABLATIONS,
    MixOptions,
    ablation_table,
    draw_episodes,
    markdown_ablations,
    run_mix,
    summarise,
    write_report,
)
from frankenbot.eval.seeds import EVALUATION_FIRST_SEED


def run_mix_command(args: argparse.Namespace) -> int:
    first = EVALUATION_FIRST_SEED if args.first_seed is None else args.first_seed
    ablations = list(ABLATIONS) if args.ablations == ["all"] else list(args.ablations)
    if "full" not in ablations:
        ablations.insert(0, "full")
    tasks = None
    chosen = ""  # the families asked for with --tasks ("": all of ours)
    if getattr(args, "mix_suite", ""):
        from frankenbot.eval.libero.bench import mix_tasks

        tasks = mix_tasks(args.mix_suite)
    elif getattr(args, "tasks", None):
        from frankenbot.eval.suite import resolve_families

        tasks = {f: f for f in resolve_families(args.tasks)}
        chosen = "-".join(args.tasks) if len(args.tasks) == 1 else f"{len(tasks)}families"
    specs = draw_episodes(args.mix, args.episodes, first, tasks)
    quiet = args.json
    say = (lambda s: None) if quiet else (lambda s: print(s, flush=True))
    say(f"\n=== {args.mix} mix: {len(specs)} episodes x {len(ablations)} configuration(s), "
        f"seeds {specs[0].seed}..{specs[-1].seed}, "
        + (f"Ray at {args.ray}" if args.ray else f"{args.workers} worker(s)") + " ===")
    from frankenbot.eval.provenance import provenance

    # taken before the run: the commit the workers import and the load they start under
    meta = provenance(
        mix=args.mix, episodes=len(specs), first_seed=specs[0].seed, workers=args.workers,
        tasks=(f"LIBERO {args.mix_suite} (set-up tasks)" if getattr(args, "mix_suite", "") and tasks
               else f"our task families: {' '.join(args.tasks)} ({len(tasks)})" if tasks
               else "our task families (all)"),
        ray=args.ray or "",
        planner=args.planner, realtime_factor=args.realtime_factor or 1.0, ablations=ablations,
        scene="perceived (MuJoCo renders through the perception pipeline)", sensor_noise="none",
        clock="robot (sim) time for the executor", judge="sim oracle")
    t0 = time.monotonic()
    outcomes = run_mix(specs, ablations, workers=args.workers,
                       options=MixOptions(realtime_factor=args.realtime_factor or 1.0,
                                          planner=args.planner), log=say,
                       ray_address=args.ray or "")
    report = summarise(o for o in outcomes if o.ablation == "full")
    report["meta"] = meta
    report["mix"] = args.mix
    report["first_seed"] = specs[0].seed
    report["workers"] = args.workers
    report["planner"] = args.planner
    report["wall_time_s"] = round(time.monotonic() - t0, 1)
    report["machine"] = f"{platform.machine()}, {platform.python_version()}, {platform.node()}"
    report["episode_list"] = [s.key() for s in specs]
    if len(ablations) > 1:
        report["ablations"] = ablation_table(outcomes, ablations)
        report["ablation_summaries"] = {a: {k: v for k, v in summarise(
            o for o in outcomes if o.ablation == a).items() if k != "failures"}
            for a in ablations}
    report["outcomes"] = [o.__dict__ | {"fired": [f.__dict__ for f in o.fired]}
                          for o in outcomes]
    name = f"mix-{args.mix}-{specs[0].seed}-{len(specs)}"
    if chosen:
        name = f"mix-{args.mix}-{chosen}-{specs[0].seed}-{len(specs)}"
    elif tasks:
        name = f"mix-{args.mix_suite}-{args.mix}-{specs[0].seed}-{len(specs)}"
    path = write_report(args.out, name, report)
    if quiet:
        print(json.dumps({k: v for k, v in report.items() if k != "outcomes"}, indent=2,
                         default=str))
        return 0
    say("")
    for key in ("episodes", "possible_episodes", "success_rate", "wilson_low", "wilson_high",
                "impossible_episodes", "impossible_handled_rate", "vlm_calls_per_task",
                "replans_per_task", "per_tier", "latency_onset_to_recovery_s"):
        say(f"{key}: {report[key]}")
    say("per_class: " + ", ".join(f"{c} {r['successes']}/{r['n']}"
                                  for c, r in report["per_class"].items()))
    say("per_kind: " + ", ".join(f"{c} {r['successes']}/{r['n']}"
                                 for c, r in report["per_kind"].items()))
    if "ablations" in report:
        say(markdown_ablations(report["ablations"], f"Ablations, {args.mix} mix"))
    say(f"results: {path}")
    return 0
