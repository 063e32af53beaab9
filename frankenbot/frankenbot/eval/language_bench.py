"""`frankenbot bench --component language`: how well the offline planner understands phrasings.

Over the language development set (``language_set.py``: hand-written phrasings of every sim
task families plus multi-step ones, and refusals, each bound to a sampled development scene):

- frame accuracy: the understood frames equal the expected ones (task, roles, order, condition);
- refusal accuracy: a refusal case is refused with the expected kind (unsafe, out_of_scope,
  impossible, ambiguous) and its message names what it must (the candidates, the reason);
- precision of plans: of every program the planner wrote (refusal cases included), the share
  whose frames were right: a wrong program that moves is worse than a refusal;
- wrong programs: the count of programs written that were not what was asked (judged by the
  expected frames, the set's oracle), reported apart from refusals (a phrasing refused is a
  miss, never a wrong program);
- refusal accuracy by kind (unsafe, out_of_scope, impossible, ambiguous) and scores by phrasing
  class (coordination, terse, source_path, goal_state, quantified, list_order, manner_until);
- coverage: the share of phrasings that got a program at all;
- median understanding time per instruction, with the language tools already loaded.

Reported separately for the development part and the held-out part (every fifth row, scored but
never tuned on). Planning uses the offline planner only; nothing runs the sim here.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from frankenbot.eval.language_set import LanguageCase, load, scene_for


@dataclass(frozen=True)
class CaseResult:
    case: LanguageCase
    got: str  # rendered frames, or "" when refused
    refusal_kind: str
    message: str
    seconds: float

    @property
    def planned(self) -> bool:
        return not self.refusal_kind

    @property
    def correct(self) -> bool:
        c = self.case
        if c.refusal:
            return (self.refusal_kind == c.refusal
                    and all(m.lower() in self.message.lower() for m in c.must_contain))
        return self.planned and self.got == c.expect


def run_case(case: LanguageCase, scene: Any = None) -> CaseResult:
    from frankenbot.planner.frames import Refusal, render_frames
    from frankenbot.planner.offline import synthesise
    from frankenbot.planner.understanding import understand

    scene = scene if scene is not None else scene_for(case)
    t0 = time.perf_counter()
    try:
        u = understand(case.text, scene)
        seconds = time.perf_counter() - t0
        synthesise(u.frames, scene, case.text)  # a plan, not just frames
        return CaseResult(case, render_frames(u.frames), "", "", seconds)
    except Refusal as e:
        return CaseResult(case, "", e.kind, str(e), time.perf_counter() - t0)


@dataclass(frozen=True)
class Scores:
    phrasings: int
    frames_right: int
    refusals: int
    refusals_right: int
    plans: int
    plans_right: int
    median_ms: float
    covered: int  # phrasings that got a program

    @property
    def wrong_programs(self) -> int:
        """Programs written that were not what was asked (refusal cases included)."""
        return self.plans - self.plans_right

    @property
    def frame_accuracy(self) -> float:
        return self.frames_right / self.phrasings if self.phrasings else float("nan")

    @property
    def refusal_accuracy(self) -> float:
        return self.refusals_right / self.refusals if self.refusals else float("nan")

    @property
    def precision(self) -> float:
        return self.plans_right / self.plans if self.plans else float("nan")

    @property
    def coverage(self) -> float:
        return self.covered / self.phrasings if self.phrasings else float("nan")


def score(results: list[CaseResult]) -> Scores:
    phr = [r for r in results if not r.case.refusal]
    ref = [r for r in results if r.case.refusal]
    plans = [r for r in results if r.planned]
    times = [r.seconds for r in results]
    return Scores(len(phr), sum(r.correct for r in phr), len(ref), sum(r.correct for r in ref),
                  len(plans), sum(1 for r in plans if not r.case.refusal and r.correct),
                  1000 * statistics.median(times) if times else float("nan"),
                  sum(r.planned for r in phr))


def run_all(cases: list[LanguageCase] | None = None) -> list[CaseResult]:
    from frankenbot.planner.understanding import load_models

    load_models()  # loading is excluded from the timings
    cases = cases if cases is not None else load()
    scenes: dict[tuple[str, int], Any] = {}
    out = []
    for c in cases:
        key = (c.family, c.seed)
        if key not in scenes:
            scenes[key] = scene_for(c)
        out.append(run_case(c, scenes[key]))
    return out


def _line(name: str, s: Scores) -> str:
    return (f"{name:9s} frames {s.frames_right}/{s.phrasings} ({s.frame_accuracy:.1%})  "
            f"refusals {s.refusals_right}/{s.refusals} ({s.refusal_accuracy:.1%})  "
            f"precision {s.plans_right}/{s.plans} ({s.precision:.1%})  "
            f"wrong programs {s.wrong_programs}  "
            f"coverage {s.coverage:.1%}  median {s.median_ms:.2f} ms")


def _summary(s: Scores) -> dict[str, Any]:
    return {"frame_accuracy": s.frame_accuracy, "frames": s.phrasings,
            "refusal_accuracy": s.refusal_accuracy, "refusals": s.refusals,
            "precision": s.precision, "plans": s.plans, "wrong_programs": s.wrong_programs,
            "coverage": s.coverage, "median_ms": s.median_ms}


def by_kind(results: list[CaseResult]) -> dict[str, tuple[int, int]]:
    """Refusal cases by expected kind: (right, total)."""
    out: dict[str, tuple[int, int]] = {}
    for r in results:
        if r.case.refusal:
            right, total = out.get(r.case.refusal, (0, 0))
            out[r.case.refusal] = (right + r.correct, total + 1)
    return dict(sorted(out.items()))


def by_class(results: list[CaseResult]) -> dict[str, dict[str, Scores]]:
    """Scores per phrasing class, per split (rows written for a class; "" rows left out)."""
    out: dict[str, dict[str, Scores]] = {}
    for cls in sorted({r.case.phrasing_class for r in results} - {""}):
        mine = [r for r in results if r.case.phrasing_class == cls]
        out[cls] = {split: score([r for r in mine if r.case.split == split])
                    for split in ("dev", "held_out")}
    return out


def run_benchmark(quick: bool = False) -> dict:
    """Print and return the scores (``quick``: the development part only)."""
    import os

    t0 = time.perf_counter()
    results = run_all()
    report: dict[str, Any] = {}
    for split in ("dev", "held_out", "all"):
        part = [r for r in results if split == "all" or r.case.split == split]
        if quick and split != "dev":
            continue
        s = score(part)
        print(_line(split, s), flush=True)
        report[split] = _summary(s)
    kinds = by_kind(results)
    print("refusals by kind: " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in kinds.items()))
    report["refusals_by_kind"] = {k: {"right": a, "cases": n} for k, (a, n) in kinds.items()}
    report["classes"] = {}
    for cls, parts in by_class(results).items():
        for split, s in parts.items():
            print(_line(f"{cls}/{split}", s))
        report["classes"][cls] = {split: _summary(s) for split, s in parts.items()}
    if not quick:
        from frankenbot.eval.language_set import build
        from frankenbot.eval.seeds import EVALUATION_FIRST_SEED

        # the same phrasings on evaluation scenes: objects and layouts never used in development
        unseen = run_all(build(first_seed=EVALUATION_FIRST_SEED))
        s = score(unseen)
        print(_line("eval-scn", s) + "  (same phrasings, evaluation-seed scenes)", flush=True)
        report["evaluation_scenes"] = {
            **_summary(s),
            "misses": [f"{r.case.case_id} {r.case.text!r}" for r in unseen if not r.correct]}
    wrong = [r for r in results if not r.correct]
    # misses of the development part only: the held-out part is scored, never read for tuning
    for r in [r for r in wrong if r.case.split == "dev"][:60]:
        c = r.case
        what = (f"refused ({r.refusal_kind}): {r.message[:150]}" if not r.planned
                else f"got {r.got}")
        want = f"refusal {c.refusal}" if c.refusal else c.expect
        print(f"  MISS {c.case_id} [{c.split}] {c.text!r}\n       want {want}\n       {what}")
    report["misses"] = [r.case.case_id for r in wrong]
    report["cases"] = len(results)
    report["cpus"] = os.cpu_count()
    report["wall_s"] = round(time.perf_counter() - t0, 2)
    print(f"{len(results)} cases in {report['wall_s']} s (median excludes model loading)")
    return report


if __name__ == "__main__":  # pragma: no cover
    run_benchmark()
