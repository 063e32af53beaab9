"""Tier 2 measured on what the world did: situations logged in real mix episodes, each labelled by
replaying every candidate repair in the sim and asking the oracle which ones worked.

1. **Log.** Mix episodes that reached tier 2 (taken from a mix report) are played again with
   tier 2 scripted to pick what the rule table picks (the default), and every tier-2 decision is
   logged: the situation the brain saw and the candidates it had.
2. **Replay.** For decision *i* of an episode and each of its other candidates *k* (the logged
   run is the replay of the rule's pick), the episode is played
   again from its start (same task, seed and anomaly draw) with decisions before *i* as logged and
   decision *i* forced to *k*. The replay counts only if it reaches the same situation at *i*
   (kind, step, node, what was held and tried): the sim runs in real time beside threads, so
   an episode can take another path, and those replays are reported as diverged, not labelled.
   The label of *k* is the oracle's verdict on the episode (for an impossible anomaly: a clean
   stop that says why).
3. **Score.** Rules, the local LM, rules+LM and random are scored on the situations with at least
   one candidate that worked (``tier2_eval.evaluate``): a pick is right when it worked.

Replaying from the episode's start rather than from a snapshot of the sim keeps the brain's own
state (tracker, beliefs, program position) honest: nothing is restored by hand. The episodes run
without memory (no experience prior), so each replay starts from the same brain.

    python -m frankenbot.eval.tier2_replay --from docs/results/mix-stress-10000-150.json \\
        [--max-episodes N] [--workers 2] [--lm none|transformers|URL] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from frankenbot.anomaly.candidates import Candidate, RepairAction, Situation
from frankenbot.anomaly.local_expert import ExpertNotReady, LocalExpert, Ranking, softmax
from frankenbot.anomaly.repair_rules import rule_choice
from frankenbot.eval.mix import ABLATIONS, EpisodeSpec, MixOptions, draw_episodes
from frankenbot.eval.situations import LabelledSituation, situation_from_json, situation_to_json

ABLATION = "no_memory"  # every replay starts from the same brain


def rule_key(s: Situation, cands: Sequence[Candidate]) -> str:
    """What the default tier 2 (the rule table) picks; its replan when the table has nothing."""
    rc = rule_choice(s, cands)
    if rc is not None:
        return rc.key
    return next((c.key for c in cands if c.action == RepairAction.REPLAN), "")


class ScriptedExpert(LocalExpert):
    """Tier 2 with its choices scripted: decision ``force_at`` picks ``force_key``, every other
    decision what the rule table picks; every decision is logged. Used as the executor's
    expert with ``tier2_method="lm"``, so the escalator treats the pick exactly as the LM's."""

    def __init__(self, force_at: int = -1, force_key: str = "") -> None:
        super().__init__(lambda: (None, None), name="scripted")
        self.force_at, self.force_key = force_at, force_key
        self.decisions: list[dict[str, Any]] = []
        self._model = "scripted"
        self._ready.set()

    def rank(self, s: Situation, candidates: Sequence[Candidate],
             prior: Mapping[str, float] | None = None) -> Ranking:
        i = len(self.decisions)
        key = self.force_key if i == self.force_at else rule_key(s, candidates)
        keys = [c.key for c in candidates]
        self.decisions.append({"situation": situation_to_json(s), "candidates": keys,
                               "picked": key})
        if key not in keys:
            raise ExpertNotReady(f"scripted pick {key!r} is not among the candidates")
        scores = tuple(0.0 if k == key else -50.0 for k in keys)
        return Ranking(tuple(candidates), scores, tuple(softmax(scores)), keys.index(key), 0.0)


def same_situation(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether a replay reached the logged situation (what the brain saw, bar perception's
    list of visible objects, which jitters)."""
    fields = ("kind", "node_path", "failed_call", "held_object", "tried", "labels")
    return all(a.get(f) == b.get(f) for f in fields)


# ------------------------------------------------------------------------------- the runs
_runner: Any = None


def _init(options: MixOptions) -> None:
    global _runner
    from frankenbot.eval.mix import MixRunner

    _runner = MixRunner(options)


def _play(job: tuple[int, EpisodeSpec, int, str]) -> dict[str, Any]:
    pos, spec, force_at, force_key = job
    expert = ScriptedExpert(force_at, force_key)
    t0 = time.monotonic()
    o = _runner.run(spec, ABLATIONS[ABLATION], expert=expert, tier2_method="lm")
    return {"pos": pos, "index": spec.index, "force_at": force_at, "force_key": force_key,
            "correct": o.correct, "success": o.success, "status": o.status,
            "replans": o.replans, "tiers": list(o.tiers),
            "reason": o.reason[:300], "decisions": expert.decisions,
            "wall_s": round(time.monotonic() - t0, 1)}


def _map(jobs: list[tuple[int, EpisodeSpec, int, str]], workers: int, options: MixOptions,
         log: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if workers <= 1:
        _init(options)
        try:
            for j in jobs:
                out.append(_play(j))
                log(_line(out[-1]))
        finally:
            _runner.close()
        return out
    ctx = multiprocessing.get_context("spawn")  # GL contexts do not survive a fork
    with ctx.Pool(workers, initializer=_init, initargs=(options,)) as pool:
        for r in pool.imap_unordered(_play, jobs):
            out.append(r)
            log(_line(r))
    return out


def _line(r: Mapping[str, Any]) -> str:
    what = "log" if r["force_at"] < 0 else f"decision {r['force_at']} -> {r['force_key']}"
    return (f"  #{r['index']:<4} {what:<60} {'worked' if r['correct'] else 'failed':<7} "
            f"{r['wall_s']:5.1f} s  ({len(r['decisions'])} tier-2 decisions)")


def episodes_reaching_tier2(report: Mapping[str, Any]) -> list[EpisodeSpec]:
    """The episodes of a mix report in which tier 2 decided at least once."""
    specs = draw_episodes(report["mix"], int(report["episodes"]), int(report["first_seed"]))
    by_index = {s.index: s for s in specs}
    hit = sorted({int(o["index"]) for o in report["outcomes"] if 2 in o.get("tiers", ())})
    return [by_index[i] for i in hit if i in by_index]


def relabel(specs: Sequence[EpisodeSpec], *, workers: int = 2,
            options: MixOptions = MixOptions(), max_decisions: int = 2,
            log: Any = print) -> dict[str, Any]:
    """Log each episode's tier-2 decisions, then replay every candidate of each decision."""
    log(f"== logging {len(specs)} episodes")
    logged = _map([(p, s, -1, "") for p, s in enumerate(specs)], workers, options, log)
    jobs = []
    for r in logged:  # the logged run is already the replay of each decision's rule pick
        for i, d in enumerate(r["decisions"][:max_decisions]):
            jobs += [(r["pos"], specs[r["pos"]], i, k) for k in d["candidates"]
                     if k != d["picked"]]
    log(f"== replaying {len(jobs)} candidate repairs")
    replays = _map(jobs, workers, options, log)
    situations = []
    for r in sorted(logged, key=lambda x: x["pos"]):
        spec = specs[r["pos"]]
        for i, d in enumerate(r["decisions"][:max_decisions]):
            outcomes: dict[str, Any] = {d["picked"]: {"worked": r["correct"],
                                                      "replans": r["replans"],
                                                      "status": r["status"], "logged": True}}
            for p in replays:
                if p["pos"] != r["pos"] or p["force_at"] != i:
                    continue
                reached = (len(p["decisions"]) > i
                           and same_situation(p["decisions"][i]["situation"], d["situation"]))
                outcomes[p["force_key"]] = ({"worked": p["correct"], "replans": p["replans"],
                                             "status": p["status"]}
                                            if reached else {"diverged": True})
            situations.append({
                "id": f"{spec.key()}#d{i}", "episode": spec.index,
                "family": spec.family, "seed": spec.seed,
                "anomalies": [j.kind for j in spec.injections], "decision": i,
                "situation": d["situation"], "candidates": d["candidates"],
                "rule_pick": d["picked"], "logged_run_correct": r["correct"],
                "outcomes": outcomes,
                "correct": sorted(k for k, v in outcomes.items() if v.get("worked")),
                # stricter: worked with no tier-3 re-plan at all in the episode
                "correct_without_replan": sorted(
                    k for k, v in outcomes.items() if v.get("worked") and v.get("replans") == 0),
            })
    return {"episodes": len(specs), "replays": len(replays), "situations": situations,
            "diverged": sum(1 for s in situations for v in s["outcomes"].values()
                            if v.get("diverged")),
            "replay_wall_s_median": statistics.median([p["wall_s"] for p in replays])
            if replays else 0.0}


def labelled(data: Mapping[str, Any], label: str = "correct") -> list[LabelledSituation]:
    """The situations with at least one candidate that worked, as tier2_eval items; ``label``
    "correct_without_replan" counts only what worked with no tier-3 re-plan."""
    return [LabelledSituation(s["id"], situation_from_json(s["situation"]), tuple(s[label]),
                              {"episode": s["episode"], "decision": s["decision"]})
            for s in data["situations"] if s.get(label)]


def score(data: Mapping[str, Any], expert: LocalExpert | None,
          label: str = "correct") -> dict[str, Any]:
    from frankenbot.eval.tier2_eval import evaluate, random_expected, report

    items = labelled(data, label)
    if not items:
        return {"situations": 0, "report": "no logged situation had a repair that worked"}
    scores = evaluate(items, expert)
    out: dict[str, Any] = {"situations": len(items), "random_expected": random_expected(items),
                           "report": report(scores, items).replace(
                               "labelled sim situations",
                               "situations logged in mix episodes, labelled by replay")}
    for name, sc in scores.items():
        out[name] = {"accuracy": sc.accuracy, "correct": sc.correct, "total": sc.total,
                     "by_class": {k: list(v) for k, v in sc.by_class.items()}}
        if sc.decision_s:
            out[name]["decision_ms_median"] = statistics.median(sc.decision_s) * 1000
    return out


def _expert(spec: str) -> LocalExpert | None:
    if spec == "none":
        return None
    if spec.startswith(("http://", "https://")):
        from frankenbot.anomaly.local_expert import ServerExpert

        e: LocalExpert = ServerExpert(spec, timeout=120.0)
    else:
        from frankenbot.anomaly.local_expert import gemma_loader

        e = LocalExpert(gemma_loader(), torch_threads=2)
    e.start()
    if not e.wait_ready(timeout=600):
        raise SystemExit(f"the local expert did not load: {e.error!r}")
    return e


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m frankenbot.eval.tier2_replay",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--from", dest="source", type=Path, action="append", default=[],
                   help="mix report(s) whose tier-2 episodes to relabel (repeatable)")
    p.add_argument("--labels", type=Path, default=None,
                   help="score an existing labelled file instead of replaying")
    p.add_argument("--max-episodes", type=int, default=0, help="0: all")
    p.add_argument("--max-decisions", type=int, default=2,
                   help="tier-2 decisions relabelled per episode (the default budget is 2)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--lm", default="transformers",
                   help="local expert to score: transformers (in-process Gemma), a server URL "
                   "(frankenbot llm serve), or none")
    p.add_argument("--out", type=Path, default=None, help="write labels and scores here")
    args = p.parse_args(argv)
    from frankenbot.eval.provenance import provenance, write_result

    meta = provenance(component="tier2-replay", ablation=ABLATION, scene="perceived",
                      planner="offline", realtime_factor=MixOptions().realtime_factor,
                      workers=args.workers, lm=args.lm)
    if args.labels:
        saved = json.loads(args.labels.read_text())
        data = saved.get("results", saved)
        if "meta" in saved:  # when and on what the replays ran (this run only scores)
            data["replay_meta"] = saved.get("results", {}).get("replay_meta", saved["meta"])
    else:
        if not args.source:
            p.error("--from REPORT.json (or --labels FILE) is needed")
        specs: list[EpisodeSpec] = []
        for src in args.source:  # an episode in several reports (same mix, seed, draw) once
            seen = {s.key() for s in specs}
            specs += [s for s in episodes_reaching_tier2(json.loads(src.read_text()))
                      if s.key() not in seen]
        if args.max_episodes:
            specs = specs[:args.max_episodes]
        t0 = time.monotonic()
        data = relabel(specs, workers=args.workers, max_decisions=args.max_decisions)
        data["wall_s"] = round(time.monotonic() - t0, 1)
        data["sources"] = [str(s) for s in args.source]
    expert = _expert(args.lm)
    data["scores"] = score(data, expert)
    data["scores_without_replan"] = score(data, expert, "correct_without_replan")
    data["lm"] = args.lm
    print(data["scores"]["report"])
    print("counting only repairs that worked with no tier-3 re-plan:")
    print(data["scores_without_replan"]["report"])
    n = len(data["situations"])
    print(f"{n} logged situations, {len(labelled(data))} with a repair that worked; "
          f"{data['diverged']} of {sum(len(s['outcomes']) for s in data['situations'])} replays "
          f"diverged")
    if args.out:
        print(f"wrote {write_result(args.out.parent, args.out.stem, data, meta)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
