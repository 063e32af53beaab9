"""`frankenbot bench --phrasings FILE.tsv`: other people's words, executed and oracle-judged.

Each row is ``family<TAB>phrasing``; in the phrasing ``{obj}``, ``{target}``, ``{a}``, ``{b}``,
``{c}`` stand for the sampled task's object, target and tower order written as words ("red
block"). Every row is run on every chosen seed of its family: the sim samples the task, the
placeholders are filled from that sample, the in-process brain plans the phrasing (offline
planner unless asked otherwise) from the perceived scene and executes it, and the sim's oracle
judges the family's task. A refused phrasing is a failure. Results per family, Wilson intervals,
and apart from them: refusals (the planner asked or declined: nothing moved) and claimed
successes the oracle fails (the program ended with success but the task is not done: a wrong
program, or a right one that did not hold). ``noise`` picks the sim camera's sensor model
(docs/CAMERA.md). Default seeds are evaluation seeds (``frankenbot.eval.seeds``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from frankenbot.errors import ConfigError

PLACEHOLDERS = ("obj", "target", "a", "b", "c")


@dataclass(frozen=True)
class PhrasingRow:
    family: str
    phrasing: str
    line: int


def read_rows(path: Path) -> list[PhrasingRow]:
    """Rows of a phrasings TSV; '#' lines and blank lines are skipped. Bad rows are errors."""
    from frankenbot.sim.tasks import TASK_FAMILIES

    if not path.is_file():
        raise ConfigError(f"no phrasings file {path}")
    rows = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[1].strip():
            raise ConfigError(f"{path}:{i}: want 'family<TAB>phrasing', got {line[:80]!r}")
        family = parts[0].strip()
        if family not in TASK_FAMILIES:
            raise ConfigError(f"{path}:{i}: unknown family {family!r}; valid: "
                              f"{', '.join(TASK_FAMILIES)}")
        unknown = set(re.findall(r"\{(\w+)\}", parts[1])) - set(PLACEHOLDERS)
        if unknown:
            raise ConfigError(f"{path}:{i}: unknown placeholder(s) {sorted(unknown)}; "
                              f"use {', '.join('{' + p + '}' for p in PLACEHOLDERS)}")
        rows.append(PhrasingRow(family, parts[1].strip(), i))
    if not rows:
        raise ConfigError(f"{path} has no phrasings")
    return rows


def fill(phrasing: str, params: dict) -> str | None:
    """The phrasing with the sampled task's objects in words; None if it names a role this
    task has none of (a {target} for pick_up)."""
    words: dict[str, str] = {}
    if "object" in params:
        words["obj"] = str(params["object"]).replace("_", " ")
    if "target" in params:
        words["target"] = str(params["target"]).replace("_", " ")
    for k, name in zip("abc", params.get("order", ()), strict=False):
        words[k] = str(name).replace("_", " ")
    try:
        return re.sub(r"\{(\w+)\}", lambda m: words[m.group(1)], phrasing)
    except KeyError:
        return None


@dataclass(frozen=True)
class Verdicts:
    """What the oracle's verdicts do not show per family: how the failures failed."""

    episodes: int
    successes: int
    refused: int  # the planner wrote no program (asked, declined)
    claimed_but_failed: int  # the program ended with success, the oracle says not done

    def as_dict(self) -> dict[str, int]:
        return {"episodes": self.episodes, "successes": self.successes, "refused": self.refused,
                "claimed_successes_the_oracle_fails": self.claimed_but_failed}


def verdicts(outcomes: list) -> Verdicts:
    return Verdicts(len(outcomes), sum(o.success for o in outcomes),
                    sum(o.detail.startswith("planner:") for o in outcomes),
                    sum(o.program_ok and not o.success for o in outcomes))


def run_phrasings(path: Path, seeds: tuple[int, ...], *, out_dir: Path, planner: str = "offline",
                  realtime_factor: float = 2.0, noise: str = "none",
                  log: Callable[[str], None] = print,
                  rows: list[PhrasingRow] | None = None) -> tuple[list, Path, Path]:
    """Every row on every seed, in one in-process brain; JSON + Markdown to ``out_dir``.
    ``rows`` (a subset of the file's rows) runs only those."""

    from frankenbot.eval.inprocess import BrainOptions, InProcessBrain
    from frankenbot.eval.tables import markdown_table, summarise, write_results
    from frankenbot.sim.tasks import sample_task

    rows = rows if rows is not None else read_rows(path)
    outcomes = []
    t0 = time.monotonic()
    with InProcessBrain(BrainOptions(planner=planner, realtime_factor=realtime_factor,
                                     noise=noise)) as brain:
        for row in rows:
            for seed in seeds:
                params = dict(sample_task(row.family, seed).task.params)
                text = fill(row.phrasing, params)
                if text is None:
                    raise ConfigError(f"{path}:{row.line}: {row.phrasing!r} names a role the "
                                      f"{row.family} task does not have")
                o = brain.run_episode(row.family, seed, instruction=text)
                o = replace(o, detail=(o.detail + f" [row {row.line}]").strip())
                outcomes.append(o)
                mark = "ok  " if o.success else "FAIL"
                log(f"  {mark} {row.family:15s} seed {seed:5d} {o.wall_time:6.1f} s  {text!r}"
                    + ("" if o.success else f"\n         {o.detail.splitlines()[0][:160]}"))
    from frankenbot.eval.provenance import provenance

    v = verdicts(outcomes)
    meta = {**provenance(planner=planner, scene="perceived", sensor_noise=noise,
                         judge="sim oracle"),
            "title": f"Phrasings from {path.name}, {planner} planner, noise {noise}",
            "planner": planner, "seeds": list(seeds), "rows": len(rows), "file": str(path),
            "realtime_factor": realtime_factor, "verdicts": v.as_dict(),
            "wall_time_s": round(time.monotonic() - t0, 1)}
    suffix = "" if noise == "none" else f"-{noise}"
    json_path, md_path = write_results(out_dir, f"phrasings-{path.stem}-{planner}{suffix}",
                                       outcomes, meta)
    log("")
    log(markdown_table(summarise(outcomes), title=meta["title"]))
    log(f"{v.successes}/{v.episodes} oracle successes; {v.refused} refused by the planner; "
        f"{v.claimed_but_failed} claimed successes the oracle fails")
    return outcomes, json_path, md_path
