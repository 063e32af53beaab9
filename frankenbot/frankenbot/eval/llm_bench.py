"""The local LLM server benchmark: llama.cpp (``frankenbot llm serve``) on the packaged Gemma.

Measures, through the real HTTP path and ``openai`` client:

- decoding speed and time to first token (streamed), unconstrained and under the program's
  GBNF, on the planner's real prompt for a task;
- first-call validity with and without the constraint on the planner's task prompts (sim task
  families on evaluation seeds, scene from the task sampler, no image: the model reads text);
- tier-2 decision time and accuracy: the llama.cpp server expert (``ServerExpert``) against the
  in-process transformers expert, on the labelled tier-2 situations.

Targets (issue 18): >= 20 tokens/s and tier 2 <= 0.5 s on 2 cores. The printout states the
machine load (1-minute load average / cores), because a shared machine slows everything.

    python -m frankenbot.eval.llm_bench [--quick] [--base-url URL] [--tasks N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any, Sequence

from frankenbot.eval.seeds import evaluation_seeds

FIXTURE_SITUATIONS = Path(__file__).resolve().parent / "data" / "tier2_situations.json"


def _load() -> str:
    try:
        one = os.getloadavg()[0]
    except OSError:
        return "load unknown"
    return f"load average {one:.1f} on {os.cpu_count()} cores"


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _prompt_messages(family: str, seed: int) -> tuple[str, Any, list[dict[str, Any]]]:
    from frankenbot.eval.taskset import scene_of_task
    from frankenbot.planner.prompt import PromptBuilder
    from frankenbot.planner.request import PlanRequest
    from frankenbot.planner.vlm_client import flatten_for_text_model
    from frankenbot.program.catalog import default_catalog

    instruction, scene = scene_of_task(family, seed)
    prompt = PromptBuilder(default_catalog()).build(PlanRequest(instruction, scene))
    return instruction, scene, flatten_for_text_model(prompt.messages())


def bench_speed(url: str, messages: list[dict[str, Any]], grammar: str, max_tokens: int
                ) -> dict[str, float]:
    """Stream one answer: time to first token and decode tokens/s (chunks after the first)."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=1800)
    extra = {"grammar": grammar} if grammar else {}
    # the server keeps the last prompt's KV cache: a tiny other prompt first, so the time to
    # first token includes the whole prompt's prefill every time (not a cached prefix)
    client.chat.completions.create(model="gemma-3-270m", max_tokens=1, temperature=0.0,
                                   messages=[{"role": "user", "content": "hi"}])
    t0 = time.monotonic()
    first = last = 0.0
    chunks = 0
    stream = client.chat.completions.create(model="gemma-3-270m", messages=messages,
                                            max_tokens=max_tokens, temperature=0.0,
                                            stream=True, extra_body=extra)
    prompt_tokens = 0
    for ev in stream:
        usage = getattr(ev, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", 0):
            prompt_tokens = usage.prompt_tokens
        if ev.choices and ev.choices[0].delta and ev.choices[0].delta.content:
            now = time.monotonic()
            if not chunks:
                first = now
            last = now
            chunks += 1
    ttft = (first - t0) if chunks else float("nan")
    rate = (chunks - 1) / (last - first) if chunks > 1 and last > first else float("nan")
    if not prompt_tokens:  # the stream carries no usage: count the prompt as the server does
        prompt_tokens = _count_prompt(url, messages)
    return {"ttft_s": ttft, "tokens": chunks, "tokens_per_s": rate,
            "prompt_tokens": prompt_tokens}


def _count_prompt(url: str, messages: list[dict[str, Any]]) -> int:
    """Prompt tokens of ``messages`` (one non-streamed 1-token call reports its usage)."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=1800)
    r = client.chat.completions.create(model="gemma-3-270m", messages=messages, max_tokens=1,
                                       temperature=0.0)
    return int(getattr(r.usage, "prompt_tokens", 0) or 0)


def bench_validity(url: str, n_tasks: int, max_tokens: int) -> dict[str, Any]:
    """First-call validity (parse + validate, no repair) with and without the GBNF."""
    from frankenbot.eval.taskset import scene_of_task
    from frankenbot.planner.planner import Planner, PlannerConfig, make_client
    from frankenbot.planner.request import PlanRequest
    from frankenbot.planner.vlm_client import vlm_config_for
    from frankenbot.sim.tasks import TASK_FAMILIES

    families = list(TASK_FAMILIES)[:n_tasks]
    seed = evaluation_seeds(1)[0]
    out: dict[str, Any] = {"families": families, "seed": seed}
    for label, mode in (("constrained", "auto"), ("unconstrained", "text")):
        cfg = PlannerConfig(planner_mode="vlm", max_repairs=0, vlm=vlm_config_for(
            "llamacpp", base_url=url, mode=mode, max_tokens=max_tokens))
        planner = Planner(cfg, make_client(cfg))
        valid, parsed, times, tokens = 0, 0, [], []
        for fam in families:
            instruction, scene = scene_of_task(fam, seed)
            o = planner.plan(PlanRequest(instruction, scene))
            valid += int(o.first_call_valid)
            parsed += int(o.first_call_valid or "error syntax" not in o.diagnostics)
            times.append(o.latency)
            tokens.append(o.tokens_out)
            print(f"  {label:<13} {fam:<20} valid={o.first_call_valid!s:<5} "
                  f"{o.tokens_out:4d} tokens {o.latency:6.1f} s", flush=True)
        out[label] = {"first_call_valid": valid, "parsed": parsed, "n": len(families),
                      "median_s": statistics.median(times) if times else float("nan"),
                      "median_tokens": statistics.median(tokens) if tokens else 0}
    return out


def bench_tier2(url: str, n: int, with_transformers: bool) -> dict[str, Any]:
    """Decision time (and accuracy) of the tier-2 expert through llama.cpp vs transformers."""
    from frankenbot.anomaly.local_expert import (
        ExpertNotReady,
        LocalExpert,
        ServerExpert,
        gemma_loader,
    )
    from frankenbot.eval.situations import load_situations
    from frankenbot.eval.tier2_eval import evaluate

    items = load_situations(FIXTURE_SITUATIONS)[:n]
    out: dict[str, Any] = {"situations": len(items)}
    # a generous HTTP timeout: the benchmark measures how long a decision takes, also when
    # that is long (the tier-2 node's own timeout decides what it waits for)
    experts: list[tuple[str, LocalExpert]] = [("llama.cpp server",
                                               ServerExpert(url, timeout=600.0))]
    if with_transformers:
        experts.append(("transformers in-process", LocalExpert(gemma_loader(), torch_threads=2)))
    for name, expert in experts:
        if not expert.wait_ready(timeout=600):
            out[name] = {"error": repr(expert.error)}
            continue
        try:
            scores = evaluate(items, expert)
        except ExpertNotReady as e:  # an answer that never came: report it, keep going
            out[name] = {"error": str(e)}
            expert.close()
            continue
        lm = scores["lm"]
        times = sorted(lm.decision_s)
        out[name] = {"accuracy": lm.accuracy, "median_s": statistics.median(times),
                     "p95_s": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
                     "max_s": times[-1], "load_s": expert.load_seconds}
        if isinstance(expert, ServerExpert):
            out[name]["scoring"] = ("POST /frankenbot/score (one batch per decision)"
                                    if expert.scoring_endpoint else
                                    "echo + logprobs (one request per candidate)")
        expert.close()
    return out


PARTS = ("speed", "validity", "tier2")


def run_benchmark(quick: bool = False, base_url: str = "", n_tasks: int = 0,
                  parts: Sequence[str] = PARTS) -> dict[str, Any]:
    from frankenbot.llm.server import LlmServer, LlmServerConfig, llama_cpp_available
    from frankenbot.planner import language
    from frankenbot.program.catalog import default_catalog

    if not base_url and not llama_cpp_available():
        print("== llm benchmark: skipped (llama-cpp-python not installed: make setup-llm)")
        return {"skipped": "llama-cpp-python not installed (make setup-llm)"}
    server = None
    url = base_url
    if not url:
        server = LlmServer(LlmServerConfig(port=0)).start()
        url = server.url
    threads = min(4, os.cpu_count() or 1)  # LlmServerConfig's default
    results: dict[str, Any] = {"conditions": _load() + "; greedy; Gemma 3 270M Q4_K_M; "
                               f"llama-cpp-python 0.3.36 (AVX2 build), {threads} threads; "
                               f"grammar: specialised to the scene; commit {_commit()}"}
    try:
        print(f"== llm benchmark ({results['conditions']})", flush=True)
        if "speed" in parts:
            _instr, scene, messages = _prompt_messages("put_in_bowl", evaluation_seeds(1)[0])
            # the grammar the planner sends for this request (specialised to the scene)
            grammar = language.RequestGrammars.for_scene(default_catalog(), scene).get("gbnf")
            n_out = 24 if quick else 64
            free = bench_speed(url, messages, "", n_out)
            cons = bench_speed(url, messages, grammar, n_out)
            results["speed"] = {"unconstrained": free, "constrained": cons}
            if server is not None and not quick:  # llama-cpp-python's stock grammar sampler
                server.stop()
                server = LlmServer(LlmServerConfig(port=0, grammar_top_k=0)).start()
                url = server.url
                results["speed"]["constrained, stock sampler"] = bench_speed(url, messages, grammar,
                                                                             16)
                server.stop()
                server = LlmServer(LlmServerConfig(port=0)).start()
                url = server.url
            for k, v in results["speed"].items():
                print(f"speed {k:<13}: time to first token {v['ttft_s']:.2f} s (prompt "
                      f"{v.get('prompt_tokens', 0)} tokens), decode {v['tokens_per_s']:.1f} "
                      f"tokens/s over {v['tokens']} tokens (target >= 20)", flush=True)
        if "validity" in parts:
            tasks = n_tasks or (2 if quick else 6)
            val = bench_validity(url, tasks, 200 if quick else 400)
            results["validity"] = val
            for k in ("constrained", "unconstrained"):
                v = val[k]
                print(f"first-call validity {k:<13}: {v['first_call_valid']}/{v['n']} valid, "
                      f"{v['parsed']}/{v['n']} parsed, median {v['median_s']:.1f} s "
                      f"(seed {val['seed']})", flush=True)
        if "tier2" in parts:
            t2 = bench_tier2(url, 4 if quick else 10_000, with_transformers=not quick)
            results["tier2"] = t2
            for k, v in t2.items():
                if isinstance(v, dict):
                    print(f"tier 2 {k:<24}: " + (v["error"] if "error" in v else
                          f"median {v['median_s'] * 1000:.0f} ms, p95 {v['p95_s'] * 1000:.0f} ms, "
                          f"max {v['max_s'] * 1000:.0f} ms, "
                          f"accuracy {v['accuracy']:.0%} on {t2['situations']} (target <= 500 ms)"),
                          flush=True)
    finally:
        if server is not None:
            server.stop()
    results["conditions_end"] = _load()
    return results


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m frankenbot.eval.llm_bench",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--base-url", default="", help="a running server (default: start one)")
    p.add_argument("--tasks", type=int, default=0, help="task families for validity")
    p.add_argument("--parts", default=",".join(PARTS),
                   help=f"comma-separated parts to run (default: {','.join(PARTS)})")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", type=Path, default=None, metavar="FILE.json",
                   help="also write the results with provenance (e.g. docs/results/bench-llm.json)")
    args = p.parse_args(argv)
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        p.error(f"unknown parts: {', '.join(unknown)} (choose from {', '.join(PARTS)})")
    from frankenbot.eval.provenance import provenance, write_result

    meta = provenance(component="llm", quick=args.quick, parts=parts)  # commit and load at start
    res = run_benchmark(args.quick, args.base_url, args.tasks, parts)
    if args.out is not None:
        res["conditions_by_part"] = {k: res.get("conditions", "") for k in parts if k in res}
        if args.out.exists() and set(parts) != set(PARTS):
            # a run of some parts keeps the others' earlier results, each with its own
            # conditions and the commit and date it was measured at
            old = json.loads(args.out.read_text())
            old_res, old_meta = old.get("results", {}), old.get("meta", {})
            earlier = dict(old_meta.get("conditions", {}).get("earlier_parts", {}))
            for k in PARTS:
                if k not in parts and k in old_res:
                    res[k] = old_res[k]
                    res["conditions_by_part"][k] = old_res.get("conditions_by_part", {}).get(
                        k, old_res.get("conditions", ""))
                    earlier.setdefault(k, {"commit": old_meta.get("commit", "?"),
                                           "date": old_meta.get("date", "?")})
            meta["conditions"]["earlier_parts"] = {k: v for k, v in earlier.items()
                                                   if k not in parts}
        path = write_result(args.out.parent, args.out.stem, res, meta)
        print(f"results: {path}")
    if args.json:
        print(json.dumps(res, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
