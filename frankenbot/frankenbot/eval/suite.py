"""The task-suite benchmark: every sim task family over seeds, judged by the sim's oracle."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from frankenbot.errors import ConfigError
from frankenbot.eval.provenance import provenance
from frankenbot.eval.tables import EpisodeOutcome, markdown_table, summarise, write_results


@dataclass(frozen=True)
class SuiteSpec:
    families: tuple[str, ...]
    seeds: tuple[int, ...]
    planner: str = "offline"
    inject: tuple[str, str] | None = None  # (anomaly kind, phase) injected in every episode
    record: bool = False  # an MCAP recording per episode under <out>/recordings/<name>/


# names for groups of families: the first waves' twelve, and the open world's
FAMILY_GROUPS = ("first_wave", "new_world")


def resolve_families(requested: Sequence[str]) -> tuple[str, ...]:
    """The task families named (all when none; a group name stands for its families)."""
    from frankenbot.sim.tasks import FIRST_WAVE_FAMILIES, TASK_FAMILIES

    if not requested:
        return tuple(TASK_FAMILIES)
    groups = {"first_wave": FIRST_WAVE_FAMILIES,
              "new_world": tuple(f for f in TASK_FAMILIES if f not in FIRST_WAVE_FAMILIES)}
    unknown = [f for f in requested if f not in TASK_FAMILIES and f not in groups]
    if unknown:
        raise ConfigError(f"unknown task famil{'y' if len(unknown) == 1 else 'ies'} "
                          f"{', '.join(unknown)}; valid: {', '.join(TASK_FAMILIES)} "
                          f"(groups: {', '.join(FAMILY_GROUPS)})")
    out: list[str] = []
    for name in requested:
        for family in groups.get(name, (name,)):
            if family not in out:
                out.append(family)
    return tuple(out)


def _first_notes(notes: tuple[str, ...], most: int = 3) -> list[str]:
    """The first ``most`` distinct anomaly notes of a failed episode, for its progress line."""
    return [n[:200] for n in dict.fromkeys(notes)][:most]


def run_suite(spec: SuiteSpec, *, out_dir: Path, realtime_factor: float = 2.0,
              log: Callable[[str], None] = print,
              noise: str = "none") -> tuple[list[EpisodeOutcome], Path, Path]:
    """Run every (family, seed) in one in-process brain; write JSON + Markdown (and plots) to
    ``out_dir``. Progress is a bar on a terminal and one line per episode elsewhere."""
    from frankenbot.eval.inprocess import BrainOptions, InProcessBrain
    from frankenbot.eval.progress import Progress

    outcomes: list[EpisodeOutcome] = []
    t0 = time.monotonic()
    name = (f"suite-{spec.planner}" + (f"-{spec.inject[0]}" if spec.inject else "")
            + (f"-{noise}" if noise != "none" else ""))  # suite-offline-realistic.json
    options = BrainOptions(planner=spec.planner, realtime_factor=realtime_factor, noise=noise)
    total = len(spec.families) * len(spec.seeds)
    with InProcessBrain(options) as brain, Progress(total, "suite", log=log) as progress:
        for family in spec.families:
            for seed in spec.seeds:
                record_to = (out_dir / "recordings" / name / f"{family}-{seed}.mcap"
                             if spec.record else None)
                o = brain.run_episode(family, seed, inject=spec.inject, record_to=record_to)
                outcomes.append(o)
                mark = "ok  " if o.success else "FAIL"
                progress.write(
                    f"  {mark} {family:15s} seed {seed:3d}  {o.wall_time:6.1f} s  "
                    f"VLM {o.vlm_calls}  anomalies {o.anomalies}  {o.instruction!r}"
                    + ("" if o.success else "".join(
                        f"\n         {line}" for line in (o.detail.splitlines()[0][:160],
                                                          *_first_notes(o.anomaly_notes)))))
                progress.step(f"{family} seed {seed} {'ok' if o.success else 'FAIL'}; "
                              f"{sum(x.success for x in outcomes)}/{len(outcomes)} ok")
    meta = provenance(planner=spec.planner, seeds=list(spec.seeds),
                      families=list(spec.families),
                      inject=list(spec.inject) if spec.inject else None,
                      scene="perceived (MuJoCo renders through the perception pipeline)",
                      sensor_noise=noise, realtime_factor=realtime_factor,
                      scene_stale_after_s=options.scene_stale_after_s,
                      review=options.review, judge="sim oracle")
    meta.update(title=f"Task suite, {spec.planner} planner, sensor noise {noise}"
                + (f", injected {spec.inject[0]}" if spec.inject else ""),
                wall_time_s=round(time.monotonic() - t0, 1))
    json_path, md_path = write_results(out_dir, name, outcomes, meta)
    from frankenbot.eval.plots import plot_suite

    for plot in plot_suite(json_path):
        log(f"plot: {plot}")
    if spec.record:
        log(f"recordings: {out_dir / 'recordings' / name}/ (one .mcap per episode)")
    log("")
    log(markdown_table(summarise(outcomes), title=meta["title"]))
    return outcomes, json_path, md_path
