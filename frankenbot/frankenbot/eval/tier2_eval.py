"""Tier-2 accuracy: the local expert against the rule-only baseline and random choice.

For every labelled situation the candidates are generated exactly as the escalator does, and each
method picks one: ``rules`` (the coded table), ``lm`` (the local expert alone), ``rules+lm`` (the
expert with a bonus on the rule's pick), ``random`` (uniform; its exact expected accuracy, plus
one seeded draw). A pick is right when its key is one of the situation's acceptable repairs.
The default tier-2 method in config follows these numbers.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from frankenbot.anomaly.candidates import generate_candidates
from frankenbot.anomaly.escalation import Tier2Settings
from frankenbot.anomaly.local_expert import LocalExpert, softmax
from frankenbot.anomaly.repair_rules import rule_choice
from frankenbot.eval.situations import LabelledSituation

_TIER2 = Tier2Settings()  # the executor's defaults


@dataclass(frozen=True)
class MethodScore:
    method: str
    correct: int
    total: int
    by_class: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    decision_s: tuple[float, ...] = ()  # per-situation decision times (LM methods)
    decision_cpu_s: tuple[float, ...] = ()  # CPU seconds per decision (all threads)
    confident: int = 0  # LM: decisions at or above the confidence threshold ...
    confident_correct: int = 0  # ... and how many of those were right

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def _tally(method: str, items: Sequence[LabelledSituation], hits: Sequence[bool],
           times: Sequence[float] = (), conf: Sequence[bool] = (),
           cpu: Sequence[float] = ()) -> MethodScore:
    by: dict[str, list[int]] = {}
    for it, h in zip(items, hits, strict=True):
        c = by.setdefault(it.situation.anomaly_class.value, [0, 0])
        c[0] += int(h)
        c[1] += 1
    return MethodScore(method, sum(hits), len(items), {k: (v[0], v[1]) for k, v in by.items()},
                       decision_s=tuple(times), decision_cpu_s=tuple(cpu), confident=sum(conf),
                       confident_correct=sum(1 for h, c in zip(hits, conf, strict=False)
                                             if h and c))


def random_expected(items: Sequence[LabelledSituation]) -> float:
    """Exact expected accuracy of a uniform random pick among the generated candidates."""
    vals = []
    for it in items:
        keys = [c.key for c in generate_candidates(it.situation)]
        vals.append(sum(1 for k in keys if k in it.correct) / len(keys))
    return statistics.fmean(vals) if vals else 0.0


def evaluate(items: Sequence[LabelledSituation], expert: LocalExpert | None = None, *,
             threshold: float = _TIER2.confidence_threshold,
             rule_bonus: float = _TIER2.rule_bonus, seed: int = 0,
             progress: Callable[[int, int, float], None] | None = None
             ) -> dict[str, MethodScore]:
    """Score every method on ``items``; LM methods only when a ready ``expert`` is given."""
    rng = random.Random(seed)
    rules_hits, rand_hits = [], []
    for it in items:
        cands = generate_candidates(it.situation)
        rc = rule_choice(it.situation, cands)
        rules_hits.append(rc is not None and rc.key in it.correct)
        rand_hits.append(rng.choice(cands).key in it.correct)
    out = {"rules": _tally("rules", items, rules_hits),
           "random": _tally("random", items, rand_hits)}
    if expert is None or not expert.ready:
        return out
    # one LM pass per situation: rules+lm only adds the bonus to the rule's pick, so its ranking
    # follows from the same scores (identical to calling rank() with that prior)
    lm_hits, plus_hits, times, lm_conf, plus_conf, cpu = [], [], [], [], [], []
    for n, it in enumerate(items):
        cands = generate_candidates(it.situation)
        r = expert.rank(it.situation, cands)
        times.append(r.elapsed_s)
        cpu.append(r.cpu_s)
        lm_hits.append(r.choice.key in it.correct)
        lm_conf.append(r.confidence >= threshold)
        rc = rule_choice(it.situation, cands)
        scores = [sc + (rule_bonus if rc is not None and c.key == rc.key else 0.0)
                  for sc, c in zip(r.scores, cands, strict=True)]
        probs = softmax(scores, expert.temperature)
        best = max(range(len(scores)), key=lambda i: scores[i])
        plus_hits.append(cands[best].key in it.correct)
        plus_conf.append(probs[best] >= threshold)
        if progress is not None:
            progress(n + 1, len(items), r.elapsed_s)
    out["lm"] = _tally("lm", items, lm_hits, times, lm_conf, cpu)
    out["rules+lm"] = _tally("rules+lm", items, plus_hits, times, plus_conf, cpu)
    return out


def report(scores: Mapping[str, MethodScore], items: Sequence[LabelledSituation]) -> str:
    lines = [f"tier-2 accuracy on {len(items)} labelled sim situations",
             f"  random (expected)  {random_expected(items):6.1%}"]
    for name, sc in scores.items():
        classes = ", ".join(f"{k} {c}/{n}" for k, (c, n) in sorted(sc.by_class.items()))
        extra = ""
        if sc.decision_s:
            cpu_ms = statistics.median(sc.decision_cpu_s) * 1000 if sc.decision_cpu_s else 0.0
            extra = (f"; decision median {statistics.median(sc.decision_s) * 1000:.0f} ms wall, "
                     f"{cpu_ms:.0f} ms CPU; "
                     f"confident {sc.confident}/{sc.total} ({sc.confident_correct} right)")
        lines.append(f"  {name:<18} {sc.accuracy:6.1%} ({sc.correct}/{sc.total}; {classes}){extra}")
    return "\n".join(lines)


def experience_leave_one_out(items: Sequence[LabelledSituation], *, weight: float = 1.0,
                             escalated_fix: bool = True) -> tuple[MethodScore, MethodScore]:
    """Rules without and with the memory experience prior, leave-one-out over ``items``.

    What a robot would have in memory: for every *other* situation, one recovery record — the
    rule's pick, and whether it recovered (observable by the executor). Situation ``i`` is then
    decided by the escalation policy's rule path with that experience, exactly as tier 2 decides
    in the executor (a clearly better record overrides the rule table). Records go through a real
    SQLite MemoryStore, so the prior sees what ``experience_for`` returns in production.
    """
    import tempfile
    from pathlib import Path

    from frankenbot.anomaly.escalation import EXPERIENCE_OVERRIDE
    from frankenbot.memory.config import MemoryConfig
    from frankenbot.memory.experience import experience_prior
    from frankenbot.memory.records import EpisodeAnomaly, EpisodeRecord
    from frankenbot.memory.store import MemoryStore

    config = MemoryConfig(load_seeds=False, use_embeddings=False)
    picks = []
    for it in items:
        cands = generate_candidates(it.situation)
        picks.append((cands, rule_choice(it.situation, cands)))
    plain = [rc is not None and rc.key in it.correct
             for it, (_, rc) in zip(items, picks, strict=True)]
    informed: list[bool] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, it in enumerate(items):
            with MemoryStore.open(Path(tmp) / f"fold{i}.db", config) as store:
                for j, other in enumerate(items):
                    rc = picks[j][1]
                    if j == i or rc is None:
                        continue
                    call = other.situation.failed_call
                    primitive = call.name if call is not None else ""
                    kind = other.situation.kind.value
                    tried = [EpisodeAnomaly(kind=kind, tier=2, action=rc.key, primitive=primitive,
                                           outcome="recovered" if plain[j] else "failed")]
                    if not plain[j] and escalated_fix:  # what the next tier then did, and it worked
                        fix = next((c.key for c in picks[j][0] if c.key in other.correct), None)
                        if fix is not None:
                            tried.append(EpisodeAnomaly(kind=kind, tier=3, action=fix,
                                                       primitive=primitive, outcome="recovered"))
                    store.record_episode(EpisodeRecord(
                        instruction=f"situation {j}", program="", success=plain[j],
                        anomalies=tuple(tried)))
                prior = experience_prior(store, weight=weight)(it.situation)
            cands, rule = picks[i]
            choice = rule
            best = max(cands, key=lambda c: prior.get(c.key, 0.0))
            if prior.get(best.key, 0.0) > max(EXPERIENCE_OVERRIDE,
                                              prior.get(rule.key, 0.0) if rule else 0.0):
                choice = best
            informed.append(choice is not None and choice.key in it.correct)
    return (_tally("rules", items, plain),
            _tally("rules+experience", items, informed))
