"""Planner benchmark: coverage, first-call validity, calls, tokens, latency, sizes.

Always measured: the offline planner over every sim task template (several seeded scenes each),
the paraphrase list, the refusal list and (full mode) scenes perceived from MuJoCo renders
(coverage, first-call validity, planning latency, program lines). When a VLM endpoint is
configured (OPENAI_API_KEY / OPENAI_BASE_URL), the same sim cases go through the VLM planner too
and the report gives its first-call validity, validity after the single repair, planning calls
per task, tokens and latency beside the offline baseline. Without an endpoint those numbers are
reported as not measured, never invented.

Run: ``python -c "from frankenbot.eval.planner_bench import run_benchmark; run_benchmark()"``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from frankenbot.eval.seeds import EVALUATION_FIRST_SEED
from frankenbot.eval.taskset import PlanCase, paraphrase_cases, refusal_cases, sim_cases
from frankenbot.planner.planner import Planner, PlannerConfig, make_client
from frankenbot.planner.prompt import PromptBuilder
from frankenbot.planner.request import PlanOutcome, PlanRequest
from frankenbot.program.catalog import default_catalog
from frankenbot.program.tree import count_lines


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


def _run(planner: Planner, cases: list[PlanCase]) -> list[tuple[PlanCase, PlanOutcome]]:
    return [(c, planner.plan(PlanRequest(c.instruction, c.scene))) for c in cases]


def perceived_cases(seeds: int) -> list[PlanCase]:
    """Sim tasks as the brain sees them: MuJoCo render -> perception pipeline -> scene."""
    from frankenbot.eval.perception_eval import perceived_sim_scene
    from frankenbot.sim.tasks import TASK_FAMILIES

    cases = []
    for family in TASK_FAMILIES:
        for seed in range(EVALUATION_FIRST_SEED, EVALUATION_FIRST_SEED + seeds):
            instruction, scene, _image, _table = perceived_sim_scene(family, seed)
            cases.append(PlanCase(family, instruction, scene, seed))
    return cases


def _summarise(results: list[tuple[PlanCase, PlanOutcome]]) -> dict[str, Any]:
    n = len(results)
    ok = [o for _c, o in results if o.ok]
    lat = [o.latency for _c, o in results]
    return {
        "tasks": n,
        "valid": len(ok),
        "valid_rate": len(ok) / n if n else float("nan"),
        "first_call_valid_rate": (sum(o.first_call_valid for _c, o in results) / n
                                  if n else float("nan")),
        "calls_per_task": (sum(o.vlm_calls for _c, o in results) / n) if n else float("nan"),
        "repairs": sum(o.repair_calls for _c, o in results),
        "tokens_in_per_task": (sum(o.tokens_in for _c, o in results) / n) if n else 0.0,
        "tokens_out_per_task": (sum(o.tokens_out for _c, o in results) / n) if n else 0.0,
        "latency_median_s": statistics.median(lat) if lat else float("nan"),
        "latency_p95_s": _pct(lat, 0.95),
        "program_lines_median": (statistics.median(count_lines(o.program) for o in ok)
                                 if ok else float("nan")),
        "failures": [(c.family, c.instruction, o.message[:160]) for c, o in results
                     if o.ok != c.expect_ok],
    }


def run_benchmark(quick: bool = False) -> dict[str, Any]:
    """Measure and print; returns the numbers. ``quick``: fewer seeds and VLM tasks."""
    t0 = time.perf_counter()
    cases = sim_cases(seeds_per_template=1 if quick else 5, first_seed=EVALUATION_FIRST_SEED)
    offline = Planner(PlannerConfig(planner_mode="offline"))
    sim = _summarise(_run(offline, cases))
    para = _summarise(_run(offline, paraphrase_cases()))
    refusals = _run(offline, refusal_cases())
    refused = sum(not o.ok for _c, o in refusals)
    families = sorted({c.family for c in cases})
    per_family = {}
    for fam in families:
        sub = _run(offline, [c for c in cases if c.family == fam])
        per_family[fam] = _summarise(sub)
    builder = PromptBuilder(default_catalog())
    prompt_chars = [builder.build(PlanRequest(c.instruction, c.scene)).chars for c in cases]
    report: dict[str, Any] = {
        "offline_sim": sim, "offline_paraphrases": para,
        "refusals": {"cases": len(refusals), "refused": refused},
        "per_family": {f: {k: v for k, v in s.items() if k != "failures"}
                       for f, s in per_family.items()},
        "prompt_chars_median": statistics.median(prompt_chars),
        "prompt_tokens_est_median": statistics.median(prompt_chars) / 4.0,
    }
    if not quick:
        report["offline_perceived"] = _summarise(_run(offline, perceived_cases(seeds=2)))
    config = PlannerConfig(planner_mode="vlm")
    client = make_client(config)
    if client is None:
        report["vlm"] = "not measured: no endpoint (set OPENAI_API_KEY and/or OPENAI_BASE_URL)"
    else:
        try:
            vlm_cases = cases[: (6 if quick else len(cases))]
            report["vlm"] = _summarise(_run(Planner(config, client), vlm_cases))
            report["vlm"]["model"] = config.vlm.model
            report["vlm"]["mode"] = client.mode.value
        finally:
            client.close()
    report["wall_s"] = time.perf_counter() - t0
    print(format_report(report))
    return report


def format_report(r: dict[str, Any]) -> str:
    def block(name: str, s: dict[str, Any]) -> list[str]:
        lines = [f"{name}: {s['valid']}/{s['tasks']} valid ({s['valid_rate']:.1%}), "
                 f"first-call valid {s['first_call_valid_rate']:.1%}, "
                 f"{s['calls_per_task']:.2f} VLM calls/task, {s['repairs']} repairs, "
                 f"tokens in/out per task {s['tokens_in_per_task']:.0f}/"
                 f"{s['tokens_out_per_task']:.0f}, latency median "
                 f"{s['latency_median_s'] * 1000:.1f} ms p95 {s['latency_p95_s'] * 1000:.1f} ms, "
                 f"program lines median {s['program_lines_median']}"]
        lines += [f"    MISS {fam}: {text!r} -> {msg}" for fam, text, msg in s["failures"]]
        return lines

    out = ["== planner benchmark =="]
    out += block("offline, sim templates", r["offline_sim"])
    out += block("offline, paraphrases ", r["offline_paraphrases"])
    if "offline_perceived" in r:
        out += block("offline, sim render -> perception scenes", r["offline_perceived"])
    out.append(f"refusals: {r['refusals']['refused']}/{r['refusals']['cases']} refused "
               "(unknown, injection, missing or ambiguous objects)")
    out.append("per family (offline): " + ", ".join(
        f"{f} {s['valid']}/{s['tasks']} ({s['program_lines_median']} lines)"
        for f, s in r["per_family"].items()))
    out.append(f"prompt: median {r['prompt_chars_median']:.0f} chars "
               f"(~{r['prompt_tokens_est_median']:.0f} tokens of text, image extra)")
    if isinstance(r["vlm"], str):
        out.append(f"VLM: {r['vlm']}")
    else:
        out += block(f"VLM {r['vlm']['model']} ({r['vlm']['mode']})", r["vlm"])
    out.append(f"wall time {r['wall_s']:.1f} s")
    return "\n".join(out)
