"""Merge the JSON reports of several ``bench --mix`` runs (chunks of one mix) into one report.

``python -m frankenbot.eval.mix_merge OUT.json RUN.json...``: the outcomes of every run are
pooled (an episode index/ablation seen twice is kept once, the first), and the summary and the
ablation table are recomputed from them, so chunks run one after another on a shared machine
give the same report as one long run would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

from frankenbot.eval.mix import MixOutcome, _from_json, ablation_table, summarise


def load_outcomes(paths: Sequence[Path]) -> tuple[list[MixOutcome], list[dict]]:
    seen: set[tuple[str, int, str]] = set()
    out: list[MixOutcome] = []
    metas = []
    for p in paths:
        data = json.loads(Path(p).read_text())
        metas.append({k: data.get(k) for k in ("mix", "first_seed", "episodes", "workers",
                                               "wall_time_s", "machine")})
        for d in data["outcomes"]:
            key = (data.get("mix", ""), int(d["seed"]), str(d["ablation"]))
            if key not in seen:
                seen.add(key)
                out.append(_from_json(d))
    out.sort(key=lambda o: (o.seed, o.ablation))
    return out, metas


def merged_report(paths: Sequence[Path]) -> dict:
    outcomes, metas = load_outcomes(paths)
    # pair by seed: indices restart in every chunk
    outcomes = [MixOutcome(**{**o.__dict__, "index": o.seed}) for o in outcomes]
    report = summarise(o for o in outcomes if o.ablation == "full")
    ablations = sorted({o.ablation for o in outcomes}, key=lambda a: (a != "full", a))
    if len(ablations) > 1:
        paired = {o.seed for o in outcomes if o.ablation != "full"}
        report["ablations"] = ablation_table([o for o in outcomes if o.seed in paired],
                                             ablations)
    report["runs"] = metas
    report["seeds"] = sorted({o.seed for o in outcomes})
    return report


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print("usage: python -m frankenbot.eval.mix_merge OUT.json RUN.json...", file=sys.stderr)
        return 2
    report = merged_report([Path(a) for a in args[1:]])
    Path(args[0]).write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps({k: v for k, v in report.items() if k not in ("failures", "runs")},
                     indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
