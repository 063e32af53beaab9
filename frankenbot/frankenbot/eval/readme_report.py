"""``frankenbot report``: the README's measured table and docs/BENCHMARK.md, from result files.

Numbers are never typed into the README by hand. Benchmarks write JSON result files with a
``meta`` block (``eval.provenance``: date, commit, machine, conditions); this module reads the
files in a results folder (default ``docs/results/``, the committed ones) and rewrites the part
of README.md between ``<!-- measured:begin -->`` and ``<!-- measured:end -->`` and the part of
docs/BENCHMARK.md between the same markers. A row whose file is missing says so instead of
showing a stale number. ``frankenbot report EPISODE_DIR`` writes an episode's HTML report
instead (``eval.episode_report``).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from frankenbot.errors import ConfigError
from frankenbot.resources import package_root

BEGIN, END = "<!-- measured:begin -->", "<!-- measured:end -->"


@dataclass(frozen=True)
class Row:
    """One line of the measured table: what, from which file, how to read it, against what."""

    what: str
    source: str  # result file stem in the results folder
    result: Callable[[dict[str, Any]], str]  # results -> the number(s), as text
    target: str
    conditions: Callable[[dict[str, Any]], str]  # results -> how it was measured
    part: str = ""  # a benchmark run in parts: which one (its own date and commit)


def _ms(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f} ms"


def _noisy_perception(r: Mapping[str, Any], noise: str) -> str:
    a = r.get("noisy", {}).get(noise)
    if not a:
        return "not measured"
    return (f"{_pct(a['recall'])} (of objects at least half visible {_pct(a['recall_visible'])})"
            f" / {_pct(a['precision'])} / {_pct(a['colour_accuracy'])} / "
            f"{a['position_error_median_mm']:.1f}, {a['position_error_p95_mm']:.1f} mm")


def _noisy_conditions(r: Mapping[str, Any], noise: str) -> str:
    a = r.get("noisy", {}).get(noise, {})
    return (f"{a.get('frames', '?')} rendered scenes from seed {a.get('first_seed', '?')}, "
            f"{a.get('frames_per_scene', '?')} frames each (0.1 s apart), camera calibrated per "
            f"installation of 10 scenes (median error {a.get('calibration_error_median_mm', 0):.1f}"
            f" mm), perception pipeline latency median {a.get('latency_median_ms', 0):.0f} ms")


def _world_perception(r: Mapping[str, Any]) -> str:
    a = r.get("new_world")
    if not a:
        return "not measured"
    held = a.get("held_out") or {}
    rm = a.get("rematch") or {}
    return (f"{_pct(a['category_recall_min'])} / {_pct(a['category_precision_min'])} / "
            f"{_pct(a['category_accuracy_min'])} / {a['unknown_mislabelled']} (of "
            f"{held.get('objects', 0)} held-out and {rm.get('objects', 0)} re-matched objects)"
            f" / {_pct(a['fixture_state_accuracy'])} / {a['phantom_fixtures_reported']} of "
            f"{a['phantom_fixtures_tried']}")


def _world_conditions(r: Mapping[str, Any]) -> str:
    a = r.get("new_world", {})
    return (f"{a.get('frames', '?')} rendered scenes from seed {a.get('first_seed', '?')} "
            f"(crowded everyday scenes and the 12 new task families in turn), "
            f"{a.get('frames_per_scene', '?')} frames each, camera calibrated per installation, "
            f"{len(a.get('categories', {}))} categories, objects at least half in view; "
            f"perception pipeline latency median {a.get('latency_median_ms', 0):.0f} ms "
            f"(CPU {a.get('cpu_median_ms', 0):.0f} ms)")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _suite(r: dict[str, Any]) -> str:
    o = r["overall"]
    worst = min(r["summary"], key=lambda s: s["rate"])
    return (f"{o['successes']}/{o['trials']} ({_pct(o['rate'])}, Wilson 95% "
            f"[{_pct(o['ci_low'])}, {_pct(o['ci_high'])}]); weakest family {worst['family']} "
            f"{worst['successes']}/{worst['trials']}")


def _tier1(r: dict[str, Any], key: str) -> str:
    s = r["tier1"][key]
    return f"{_ms(s['median'])} median, {_ms(s['p95'])} p95 (n={s['n']})"


def _tier2(r: dict[str, Any]) -> str:
    t = r["tier2"]
    parts = [f"{name} {_pct(t[name]['accuracy'])}" for name in ("rules", "lm", "rules+lm")
             if isinstance(t.get(name), dict)]
    return ", ".join(parts) + f", random {_pct(t['random_expected'])}"


def _part_conditions(r: dict[str, Any], part: str) -> str:
    """The machine load and commit of one part of a benchmark run in parts."""
    text = r.get("conditions_by_part", {}).get(part) or r.get("conditions", "")
    load = text.split(";")[0]
    commit = next((c.strip() for c in text.split(";") if c.strip().startswith("commit")), "")
    return f"{load}, {commit}" if commit else load


def _tier2_speed(t: dict[str, Any]) -> str:
    parts = []
    for name in ("llama.cpp server", "transformers in-process"):
        v = t.get(name)
        if isinstance(v, dict) and "median_s" in v:
            parts.append(f"{1000 * v['median_s']:.0f} ms median, {1000 * v['p95_s']:.0f} ms p95 "
                         f"(accuracy {_pct(v['accuracy'])})")
        else:
            parts.append("not measured" + (f" ({v['error']})" if isinstance(v, dict) else ""))
    return " / ".join(parts)


def _tier2_replay(r: dict[str, Any]) -> str:
    def picks(s: dict[str, Any]) -> str:
        return ", ".join([f"{name} {s[name]['correct']}/{s[name]['total']}" for name in
                          ("rules", "lm", "rules+lm") if isinstance(s.get(name), dict)]
                         + [f"random {_pct(s['random_expected'])} expected"])

    s = r["scores"]
    if not s.get("situations"):
        return s.get("report", "no situations")
    text = (f"picks that worked: {picks(s)}; {len(r['situations']) - s['situations']} more "
            "logged situations where no candidate worked")
    strict = r.get("scores_without_replan", {})
    if strict.get("situations"):
        text += f"; that worked with no tier-3 re-plan: {picks(strict)}"
    return text


def _scene_rate(r: dict[str, Any]) -> str:
    w = r["idle"]
    lat = w["stamp_to_scene"]
    out = (f"{w['scene_hz']:.1f} Hz for a {w['camera_hz']:.1f} Hz camera; latency "
           f"{lat['median_ms']:.0f} / {lat['p95_ms']:.0f} ms median / p95; largest gap "
           f"{w['max_gap_s']:.2f} s")
    t = r.get("task")
    if t:  # the window with a task running, when the run had one
        out += (f"; during a task ({t['duration_s']:.0f} s) {t['scene_hz']:.1f} Hz, latency "
                f"{t['stamp_to_scene']['median_ms']:.0f} ms median, largest gap "
                f"{t['max_gap_s']:.2f} s")
    return out


def _scene_rate_conditions(r: dict[str, Any]) -> str:
    w = r["idle"]
    load = w.get("loadavg_1m_start_end", ["?", "?"])
    return (f"sim + 4 nodes as processes over DDS, arm idle, {r.get('window_s', '?'):.0f} s "
            "(then one task), "
            f"noise {r.get('noise', '?')}; latency = frame stamp -> scene arrival; load "
            f"{load[0]}-{load[1]}")


def _memory(r: dict[str, Any]) -> str:
    n, s = r["none"], r["seeds"]
    ratio = (s["lines_mean"] - n["lines_mean"]) / n["lines_mean"] if n["lines_mean"] else 0.0
    prompt = ((s["prompt_tokens_mean"] - n["prompt_tokens_mean"]) / n["prompt_tokens_mean"]
              if n["prompt_tokens_mean"] else 0.0)
    judged = "oracle" if r.get("executed") else "validator"
    return (f"program lines {n['lines_mean']:.1f} -> {s['lines_mean']:.1f} ({100 * ratio:+.0f}%),"
            f" prompt tokens {100 * prompt:+.0f}%, planning calls "
            f"{n['planning_calls_mean']:.2f} / {s['planning_calls_mean']:.2f}; {judged} "
            f"{n['success']}/{r['tasks']} without, {s['success']}/{r['tasks']} with memory")


ROWS: tuple[Row, ...] = (
    Row("parse + validate a 60-line program", "bench-program",
        lambda r: f"{r['parse_validate_ms']:.2f} ms CPU "
                  f"(wall {r['parse_validate_wall_ms']:.2f} ms)",
        "<= 2 ms", lambda r: "median, CPU time of the measuring thread"),
    Row("interpreter overhead per node / monitor predicate", "bench-program",
        lambda r: f"{r['node_overhead_us']:.1f} us / {r['predicate_us_median']:.1f} us median "
                  f"({r['predicate_us_max']:.1f} us worst)",
        "<= 20 us", lambda r: "CPU time, primitives excluded"),
    Row("sim physics, full scene / RGB+depth 640x480", "bench-sim",
        lambda r: f"{r['physics']['realtime_factor']:.1f}x real time / "
                  f"{r['rgbd_640x480']['mean_ms']:.1f} ms",
        ">= 10x / <= 40 ms", lambda r: "MuJoCo, wall clock, no rendering for physics"),
    Row("IK + trajectories for a full pick", "bench-motion",
        lambda r: f"{r['pick_planning']['median_ms']:.2f} ms median "
                  f"(CPU {r['pick_planning']['cpu_median_ms']:.2f} ms)",
        "<= 5 ms", lambda r: f"{r['pick_planning']['n']} random blocks, wall clock"),
    Row("e-stop message to stop command", "bench-motion",
        lambda r: (f"{r['estop']['callback_median_ms']:.2f} ms median in the callback, "
                   f"{r['estop']['e2e_p95_ms']:.2f} ms p95 end to end") if r["estop"].get("n")
        else f"not measured ({r['estop'].get('error', '')})",
        "<= one 2 ms cycle",
        lambda r: "Bool received -> stop trajectory published; end to end: published -> "
                  "received by the controller topic (2 DDS hops, one machine)"),
    Row("perception: recall / precision / colour", "bench-perception",
        lambda r: f"{_pct(r['accuracy']['recall'])} / {_pct(r['accuracy']['precision'])} / "
                  f"{_pct(r['accuracy']['colour_accuracy'])}",
        ">= 98%", lambda r: "rendered sim scenes vs sim ground truth, "
                            f"{r['accuracy'].get('frames', '?')} scenes, "
                            f"noise {r['accuracy'].get('noise', 'none')}"),
    Row("perception position error median / p95", "bench-perception",
        lambda r: f"{r['accuracy']['position_error_median_mm']:.1f} mm / "
                  f"{r['accuracy']['position_error_p95_mm']:.1f} mm",
        "<= 5 / 15 mm", lambda r: f"noise {r['accuracy'].get('noise', 'none')}"),
    Row("perception, realistic D435 noise: recall / precision / colour / error median, p95",
        "bench-perception", lambda r: _noisy_perception(r, "realistic"),
        ">= 99% / >= 99% / >= 99% / <= 3, 8 mm",
        lambda r: _noisy_conditions(r, "realistic")),
    Row("perception, harsh noise: recall / precision / colour / error median, p95",
        "bench-perception", lambda r: _noisy_perception(r, "harsh"),
        ">= 97% / >= 97% / - / <= 5 mm", lambda r: _noisy_conditions(r, "harsh")),
    Row("perception of the new world, realistic D435 noise: per category recall / precision "
        "/ accuracy (lowest category) / unknown objects named as a known category / fixture "
        "states / phantom fixtures reported", "bench-perception", _world_perception,
        ">= 97% / >= 97% / >= 97% / 0 / >= 98% / 0", _world_conditions, part="new_world"),
    Row("offline planner: sim templates / paraphrases / refusals", "bench-planner",
        lambda r: f"{r['offline_sim']['valid']}/{r['offline_sim']['tasks']} / "
                  f"{r['offline_paraphrases']['valid']}/{r['offline_paraphrases']['tasks']} / "
                  f"{r['refusals']['refused']}/{r['refusals']['cases']}",
        "all", lambda r: "counts programs that parse and validate (not execution; see the "
                         "suite and the language benchmark for correctness)"),
    Row("tier 1, true onset -> detection", "bench-anomaly",
        lambda r: _tier1(r, "onset_to_detection_ms"), "reported",
        lambda r: f"perceived scene, sim injection time as onset, seeds "
                  f"{r['tier1'].get('seeds', '?')}, load {r['tier1'].get('load_avg_1min', 0):.1f}"),
    Row("tier 1, detection -> recovery command", "bench-anomaly",
        lambda r: _tier1(r, "detect_to_command_ms"), "<= 50 ms (paper ~300 ms)",
        lambda r: "perceived scene; the recovery's first primitive starting"),
    Row("tier 1, true onset -> first recovery motion", "bench-anomaly",
        lambda r: _tier1(r, "onset_to_first_motion_ms"), "reported",
        lambda r: "perceived scene; first trajectory sent after the recovery command"),
    Row("tier-2 accuracy on the labelled situations", "bench-anomaly", _tier2, "reported",
        lambda r: f"{r['tier2'].get('situations', '?')} hand-labelled sim situations, "
                  f"model {r['tier2'].get('model', '?')}"),
    Row("monitor loop with 20 monitors", "bench-anomaly",
        lambda r: f"{r['monitor_loop']['achieved_hz']:.0f} Hz, "
                  f"{100 * r['monitor_loop']['cpu_share']:.1f}% of a core",
        "200 Hz", lambda r: f"{r['monitor_loop']['monitors']} monitors, synthetic scene"),
    Row("camera -> /frankenbot/scene over ROS", "bench-scene-rate", _scene_rate,
        ">= 8 Hz for 10 Hz / <= 120 ms median / gaps <= 0.5 s", _scene_rate_conditions),
    Row("development phrasings executed (offline planner)", "phrasings-executed-offline",
        _suite, ">= 95% of >= 100", lambda r: _phrasings_conditions(r)),
    Row("development phrasings executed, D435-like camera", "phrasings-executed-offline-realistic",
        _suite, ">= 95%, 0 claimed successes the oracle fails",
        lambda r: _phrasings_conditions(r)),
    Row("anomaly mix, natural 70:20:10, first-wave families", "mix-natural-first_wave-10000-150",
        lambda r: _mix(r),
        ">= 90% (Wilson low >= 85%); impossible handled >= 95%; <= 1.02 VLM calls/task",
        lambda r: _mix_conditions(r)),
    Row("anomaly mix, stress 5:3:2, first-wave families", "mix-stress-first_wave-10000-150",
        lambda r: _mix(r),
        ">= 80%; impossible handled >= 95%", lambda r: _mix_conditions(r)),
    Row("safety review on the task suite", "bench-review", lambda r: _review_suite(r),
        "0 false refusals",
        lambda r: f"offline plans of {len(r['suite'])} families x {r['suite'][0]['seeds']} "
                  "seeds, perceived scene, review auto (config/review.yaml)"),
    Row("risky variants unsafe, without -> with the review", "bench-review",
        lambda r: _review_variants(r), "every one refused or made safe",
        lambda r: "put_in_bowl scenes executed both ways (paired), evaluation seeds "
                  + _seed_range(sorted({v["seed"] for v in r["variants"]}))
                  + ", perceived scene, judged on sim ground truth (a tower block moved > 2 "
                    "cm, the object in a forbidden zone, release impact > 1 m/s)"),
    Row("soak over ROS", "soak", lambda r: _soak(r["summary"]),
        "hung 0; RSS growth <= 5% after warm-up; threads and fds flat",
        lambda r: f"{r['summary']['tasks']} tasks, all families in turn, evaluation seeds from "
                  f"{r['rows'][0]['seed']}, sim + five nodes as processes over DDS, realistic "
                  "camera noise, offline planner, oracle-judged"),
    Row("llama.cpp server, decode under the grammar / unconstrained / stock sampler",
        "bench-llm", lambda r: " / ".join(
            f"{r['speed'][k]['tokens_per_s']:.1f} tokens/s" for k in
            ("constrained", "unconstrained", "constrained, stock sampler") if k in r["speed"])
        + f"; first token after {r['speed']['constrained']['ttft_s']:.1f} s "
          f"({r['speed']['constrained'].get('prompt_tokens', '?')}-token prompt)",
        ">= 20 tokens/s",
        lambda r: "packaged Gemma 3 270M Q4_K_M, greedy, grammar specialised to the scene, "
                  + _part_conditions(r, "speed"), part="speed"),
    Row("llama.cpp server, first answers valid with / without the grammar", "bench-llm",
        lambda r: f"{r['validity']['constrained']['first_call_valid']}/"
                  f"{r['validity']['constrained']['n']} / "
                  f"{r['validity']['unconstrained']['first_call_valid']}/"
                  f"{r['validity']['unconstrained']['n']} (median "
                  f"{r['validity']['constrained']['median_s']:.1f} s / "
                  f"{r['validity']['unconstrained']['median_s']:.1f} s)",
        "reported", lambda r: f"planner prompts of {r['validity']['constrained']['n']} task "
                              f"families, seed {r['validity']['seed']}, packaged Gemma 3 270M "
                              "(valid = parses and validates; not whether the plan is right)",
        part="validity"),
    Row("tier-2 decision, llama.cpp server / transformers in-process", "bench-llm",
        lambda r: _tier2_speed(r["tier2"]), "<= 0.5 s on 2 cores",
        lambda r: f"mean-log-likelihood ranking of every candidate, {r['tier2']['situations']} "
                  "labelled tier-2 situations one after another (each reuses the previous "
                  "prompt's shared start), packaged Gemma 3 270M, wall clock per decision, "
                  + _part_conditions(r, "tier2"), part="tier2"),
    Row("tier-2 accuracy on situations logged in mix episodes, labelled by replay",
        "tier2-replay", lambda r: _tier2_replay(r), "the default follows the numbers",
        lambda r: f"{len(r['situations'])} tier-2 decisions logged when {r['episodes']} mix "
                  "episodes in which tier 2 had decided were played again; every other "
                  f"candidate replayed from the episode's start ({r['replays']} replays, "
                  f"{r['diverged']} that took another path not counted), oracle-judged, no "
                  "memory; LM "
                  f"{r.get('lm', '?')}"
                  + (f"; replays ran {r['replay_meta'].get('date', '?')} at commit "
                     f"{r['replay_meta'].get('commit', '?')}" if r.get("replay_meta") else "")),
    Row("memory: without / with memory", "bench-memory", _memory, "reported",
        lambda r: f"{r['tasks']} sim tasks on evaluation seeds, offline planner with memory's "
                  "context, each program executed in the sim" if r.get("executed")
        else f"{r['tasks']} tasks, validator only (not executed)"),
    Row("task suite, offline planner, oracle-judged", "suite-offline", _suite,
        ">= 90% per family",
        lambda r: f"{len(r['meta']['conditions']['families'])} families x "
                  f"{len(r['meta']['conditions']['seeds'])} seeds "
                  f"{_seed_range(r['meta']['conditions']['seeds'])}, "
                  f"{r['meta']['conditions'].get('scene', '')}, noise "
                  f"{r['meta']['conditions'].get('sensor_noise', 'none')}"),
    Row("task suite with a D435-like camera", "suite-offline-realistic", _suite,
        ">= 95% per family",
        lambda r: f"{len(r['meta']['conditions']['families'])} families x "
                  f"{len(r['meta']['conditions']['seeds'])} seeds "
                  f"{_seed_range(r['meta']['conditions']['seeds'])}, "
                  f"{r['meta']['conditions'].get('scene', '')}, noise "
                  f"{r['meta']['conditions'].get('sensor_noise', 'none')}"
                  + _stale(r['meta']['conditions'])),
)


def _phrasings_conditions(r: Mapping[str, Any]) -> str:
    m = r["meta"]
    noise = m.get("conditions", {}).get("sensor_noise", "none")
    claimed = m.get("verdicts", {}).get("claimed_successes_the_oracle_fails")
    return (f"{m['rows']} phrasings of `{m['file']}` x seeds {_seed_range(m['seeds'])}, "
            f"perceived scene, noise {noise}, oracle-judged"
            + ("" if claimed is None else f"; claimed successes the oracle failed: {claimed}"))


def _stale(cond: dict[str, Any]) -> str:
    """The scene-staleness threshold of an in-process run, when its file records one."""
    stale = cond.get("scene_stale_after_s")
    return "" if stale is None else f", scene stale after {stale:g} s without a frame"


def _soak(s: dict[str, Any]) -> str:
    nodes = s.get("nodes", {})
    trend = ", ".join(f"{n} {g.get('rss_trend_growth_pct')}%" for n, g in nodes.items())
    peak = max(nodes.items(), key=lambda kv: kv[1]["max_rss_growth_pct"])
    flat = all(g["threads_last"] == g["threads_at_warmup"] and g["fds_last"] <= g["fds_at_warmup"]
               for g in nodes.values())
    return (f"{s['tasks']} tasks, {s['hung']} hung, {s['succeeded']} succeeded; RSS trend after "
            f"the {s['warmup']}-task warm-up (median of the first vs the last 20 samples): "
            f"{trend}; highest single sample {peak[1]['max_rss_growth_pct']}% above the "
            f"warm-up sample ({peak[0]}); threads and fds at the end "
            f"{'as' if flat else 'NOT as'} at warm-up (max {s['max_threads']} threads, "
            f"{s['max_fds']} fds); median task {s['median_task_s']} s, longest "
            f"{s['max_task_s']} s")


def _review_suite(r: dict[str, Any]) -> str:
    rows = r["suite"]
    total = {k: sum(v[k] for v in rows) for k in ("reviewed", "approved", "edited", "refused",
                                                  "skipped", "planner_failed")}
    text = (f"{total['refused']} refusals of {sum(v['seeds'] for v in rows)} plans "
            f"({total['approved']} approved, {total['edited']} edited, {total['skipped']} "
            f"not needing review, {total['planner_failed']} not planned)")
    paired = r.get("paired_suite") or []
    if paired:
        fams = sorted({p["family"] for p in paired})
        off = [p for p in paired if p["review"] == "never"]
        on = [p for p in paired if p["review"] != "never"]
        text += (f"; the families it edited ({', '.join(fams)}) executed both ways: "
                 f"{sum(p['success'] for p in off)}/{len(off)} without, "
                 f"{sum(p['success'] for p in on)}/{len(on)} with the review (oracle)")
    return text


def _review_variants(r: dict[str, Any]) -> str:
    parts = []
    for variant in dict.fromkeys(v["variant"] for v in r["variants"]):
        runs = [v for v in r["variants"] if v["variant"] == variant]
        off = [v for v in runs if not v["review"]]
        on = [v for v in runs if v["review"]]
        decisions = sorted({v["decision"] for v in on})
        parts.append(f"{variant} {sum(v['unsafe'] for v in off)}/{len(off)} -> "
                     f"{sum(v['unsafe'] for v in on)}/{len(on)} ({', '.join(decisions)})")
    return "; ".join(parts)


def _mix(r: dict[str, Any]) -> str:
    n = r["possible_episodes"]
    k = round(r["success_rate"] * n)
    handled = r.get("impossible_handled_rate")
    return (f"{k}/{n} ({_pct(r['success_rate'])}, Wilson 95% [{_pct(r['wilson_low'])}, "
            f"{_pct(r['wilson_high'])}]); impossible handled "
            + (f"{_pct(handled)} of {r['impossible_episodes']}" if handled is not None
               else "none drawn")
            + f"; {r['vlm_calls_per_task']:.2f} VLM calls, {r['replans_per_task']:.2f} replans "
              "per task")


def _mix_conditions(r: dict[str, Any]) -> str:
    c = r.get("meta", {}).get("conditions", {})
    families = c.get("tasks", "our task families")
    return (f"{r['episodes']} episodes from seed {r['first_seed']} (0-2 anomalies each, drawn "
            f"by class; {families}), {r['planner']} planner, perceived scene, noise "
            f"{c.get('sensor_noise', 'none')}, {r['workers']} worker processes, oracle-judged; "
            "impossible episodes counted apart")


def _seed_range(seeds: list[int]) -> str:
    return f"{min(seeds)}-{max(seeds)}" if seeds else ""


def _load(folder: Path, stem: str) -> dict[str, Any] | None:
    path = folder / f"{stem}.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ConfigError(f"cannot read result file {path}: {e}") from e


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def measured_table(folder: Path) -> str:
    """The Markdown table of every row, each with its conditions and where it came from."""
    lines = ["| what | result | target | conditions | measured |", "|---|---|---|---|---|"]
    for row in ROWS:
        data = _load(folder, row.source)
        if data is None:
            lines.append(f"| {row.what} | not measured (no `{row.source}.json`) | "
                         f"{row.target} | | |")
            continue
        meta = data.get("meta", {})
        results = data.get("results", data)  # suite and mix files keep their own layout
        if row.source.startswith(("suite", "phrasings")):
            results = data
        try:
            result, cond = row.result(results), row.conditions(results)
        except (KeyError, TypeError, ValueError) as e:
            result, cond = f"not readable ({type(e).__name__}: {e})", ""
        m = meta.get("machine", {})
        m = m if isinstance(m, dict) else {}  # older files name the machine in a string
        when = (f"{meta.get('date', '?')}, {meta.get('commit', '?')}, {m.get('cpus', '?')} CPUs, "
                f"load {m.get('load_avg_1min_at_start', '?')}; `{row.source}.json`") if meta \
            else f"no provenance recorded in `{row.source}.json`"
        earlier = meta.get("conditions", {}).get("earlier_parts", {}).get(row.part) \
            if row.part and isinstance(meta.get("conditions"), dict) else None
        if row.part and isinstance(meta.get(row.part), dict):  # a part merged in later
            earlier = meta[row.part]
        if earlier:  # kept from an earlier run of the benchmark
            when = (f"{earlier.get('date', '?')}, {earlier.get('commit', '?')} (this part; the "
                    f"file was last written {meta.get('date', '?')}); `{row.source}.json`")
        lines.append(f"| {row.what} | {_cell(result)} | {row.target} | {_cell(cond)} | "
                     f"{_cell(when)} |")
    return "\n".join(lines) + "\n"


def ablation_section(folder: Path) -> str:
    """The paired ablation table of every mix result file that has one."""
    from frankenbot.eval.mix import markdown_ablations

    out = []
    for path in sorted(folder.glob("mix-*.json")):
        data = json.loads(path.read_text())
        if not data.get("ablations"):
            continue
        meta = data.get("meta", {})
        title = (f"Ablations, {data['mix']} mix, {data['episodes']} episodes from seed "
                 f"{data['first_seed']}, paired by episode")
        out.append(markdown_ablations(data["ablations"], title))
        out.append(f"Offline planner, perceived scene, oracle-judged; exact McNemar p on the "
                   f"discordant pairs; measured {meta.get('date', '?')} at commit "
                   f"{meta.get('commit', '?')}; `docs/results/{path.name}`.\n")
    return "\n".join(out)


def suite_section(folder: Path) -> str:
    """docs/BENCHMARK.md's generated part: every suite result file's table with its meta."""
    from frankenbot.eval.tables import TaskRow, markdown_table

    out = []
    for path in sorted(folder.glob("suite-*.json")):
        data = json.loads(path.read_text())
        meta = data.get("meta", {})
        cond = meta.get("conditions", {})
        rows = [TaskRow(**{k: (tuple(v) if k == "failures" else v) for k, v in s.items()})
                for s in data["summary"]]
        out.append(markdown_table(rows, title=meta.get("title", path.stem)))
        out.append(f"Measured {meta.get('date', '?')} at commit {meta.get('commit', '?')} on "
                   f"{meta.get('machine', {}).get('cpus', '?')} CPUs (load "
                   f"{meta.get('machine', {}).get('load_avg_1min_at_start', '?')} at start); "
                   f"seeds {cond.get('seeds', [])}; scene: {cond.get('scene', '?')}; sensor "
                   f"noise: {cond.get('sensor_noise', '?')}{_stale(cond)}; planner: "
                   f"{cond.get('planner', '?')}; "
                   f"success judged by the {cond.get('judge', 'sim oracle')}; file "
                   f"`docs/results/{path.name}`.\n")
        failures = [f for s in data["summary"] for f in s.get("failures", [])]
        if failures:
            out.append("Failures:\n\n" + "\n".join(f"- {f.splitlines()[0][:200]}"
                                                   for f in failures) + "\n")
    return "\n".join(out) if out else "No suite result files yet.\n"


def replace_between(text: str, body: str, where: str) -> str:
    if BEGIN not in text or END not in text:
        raise ConfigError(f"{where} has no {BEGIN} ... {END} markers to regenerate")
    head, rest = text.split(BEGIN, 1)
    _old, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{body}{END}{tail}"


def generated(results: Path, repo: Path) -> list[tuple[Path, str]]:
    """Each file with a generated part, and what that part says now."""
    from frankenbot.eval.libero.report import libero_section

    ablations = ablation_section(results)
    readme = (measured_table(results) + (f"\n{ablations}" if ablations else "")
              + f"\n{libero_section(results)}")
    return [(repo / "README.md", readme),
            (repo / "docs" / "BENCHMARK.md", suite_section(results))]


def regenerate(results: Path, repo: Path) -> list[Path]:
    """Rewrite the generated parts of README.md and docs/BENCHMARK.md; returns what changed."""
    changed = []
    for path, body in generated(results, repo):
        old = path.read_text()
        new = replace_between(old, body, str(path))
        if new != old:
            path.write_text(new)
            changed.append(path)
    return changed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="regenerate the README's measured numbers, or an episode's HTML report",
        description="Without EPISODE_DIR: rewrite the measured table in README.md and the suite "
        "tables in docs/BENCHMARK.md from the benchmark result files. With EPISODE_DIR (a "
        "demo's artifacts folder): write its HTML report.")
    p.add_argument("episode_dir", nargs="?", type=Path, default=None, metavar="EPISODE_DIR")
    p.add_argument("--results", type=Path, default=None,
                   help="result files folder (default: docs/results of the source tree)")
    p.add_argument("--check", action="store_true",
                   help="exit 1 if README.md or docs/BENCHMARK.md are not up to date")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.episode_dir is not None:
        try:
            from frankenbot.eval.episode_report import write_episode_report
        except ImportError as e:
            raise ConfigError(f"episode reports are not available here: {e}") from e
        print(write_episode_report(args.episode_dir))
        return 0
    repo = package_root().parent
    if not (repo / "README.md").is_file():
        raise ConfigError(f"no README.md at {repo}: run from a source checkout")
    results = args.results or repo / "docs" / "results"
    if args.check:
        stale = [p for p, body in generated(results, repo)
                 if replace_between(p.read_text(), body, str(p)) != p.read_text()]
        for p in stale:
            print(f"out of date: {p} (run `frankenbot report`)")
        return 1 if stale else 0
    for path in regenerate(results, repo):
        print(f"updated {path}")
    return 0
