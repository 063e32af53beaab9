"""Anomalies as the world makes them: the natural and stress mixes, with ablations.

Each episode draws a task family and 0-2 anomalies by class at the mix's ratio (natural
70:20:10, stress 5:3:2 over predictable : semi-predictable : unpredictable; the unpredictable
class holds the recoverable kinds and the impossible ones), each at a random phase the kind can
fire in, all from one seeded generator: the episode list depends only on (mix, first seed,
count). Episodes are independent, so ``run_mix`` spreads them over worker processes and merges
the outcomes in episode order; every ablation runs the same list, so results pair by
(family, seed, anomaly draw) for McNemar's exact test.

Success is the sim oracle's verdict. An episode in which an impossible anomaly fired is not
counted in ``success_rate``; it is handled correctly when the run stopped cleanly with a reason
that says why (or when the task was finished anyway), reported as ``impossible_handled_rate``.
Latency is measured from the true onset (the sim's injection time) to the first recovery
command after it, per tier that commanded it, in robot seconds: the executor runs on the robot's
clock (sim time), as a ROS node with ``use_sim_time`` would.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from frankenbot.errors import ConfigError, SimError
from frankenbot.eval.seeds import EVALUATION_FIRST_SEED, evaluation_seeds
from frankenbot.eval.stack import IN_PROCESS_STALE_S
from frankenbot.eval.stats import mcnemar_exact, wilson_interval

MIXES: dict[str, dict[str, float]] = {
    "natural": {"predictable": 70, "semi_predictable": 20, "unpredictable": 10},
    "stress": {"predictable": 5, "semi_predictable": 3, "unpredictable": 2},
}
ANOMALY_COUNTS = (0, 1, 2)  # drawn uniformly per episode
ARM_PHASES = ("now", "moving")  # phases that need no grasped block

_CARRY = ("put_in_bowl", "put_on_plate", "stack", "tower", "sort_by_colour", "clear_table",
          "put_in_drawer", "conditional")
_PICK = ("pick_up", *_CARRY)
_CONTAINER = ("put_in_bowl", "put_on_plate", "clear_table", "conditional")
_ALL = _PICK + ("open_drawer", "push_to_zone")


@dataclass(frozen=True)
class KindUse:
    """Where a sim anomaly kind can be drawn: task families and the phases it may fire in."""

    families: tuple[str, ...]
    phases: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)


KIND_USE: dict[str, KindUse] = {
    # predictable
    "drop_in_transport": KindUse(_CARRY, ("transport",)),
    "nudge_before_grasp": KindUse(_PICK, ("grasp_closing",)),
    "displace_before_pick": KindUse(_PICK, ("before_pick",)),
    "abort_trajectory": KindUse(_ALL, ("moving", "lift", "transport", "before_place")),
    "grasp_slip": KindUse(_PICK, ("lift",)),
    "camera_blip": KindUse(_ALL, ("moving", "before_pick", "transport", "before_place"),
                           {"duration": 5.0}),  # longer than the stale threshold
    # semi-predictable
    "occupy_target": KindUse(("put_on_plate", "stack", "put_in_bowl", "conditional"),
                             ("before_place",)),
    "topple_stack": KindUse(("tower", "stack"), ("after_place",)),
    "drawer_stuck": KindUse(("open_drawer", "put_in_drawer"), ("now",), {"duration": 4.0}),
    "rotate_object": KindUse(_PICK, ("before_pick",)),
    "lighting_change": KindUse(_ALL, ("now", "moving", "before_pick", "transport")),
    # unpredictable, recoverable
    "move_container": KindUse(_CONTAINER, ("transport", "before_pick")),
    "block_on_target": KindUse(("stack", "tower"), ("before_place",)),
    "shut_in_drawer": KindUse(("pick_up", "put_in_bowl", "put_on_plate", "stack",
                               "conditional"), ("before_pick",)),  # impossible in this cell
    "obstacle_on_path": KindUse(("push_to_zone", "put_in_bowl", "put_on_plate"), ("now",)),
    "swap_object": KindUse(("pick_up", "put_in_bowl", "put_on_plate", "stack"),
                           ("before_pick",)),
    # impossible
    "remove_object": KindUse(("pick_up", "put_in_bowl", "put_on_plate", "stack",
                              "conditional", "push_to_zone"), ("now", "before_pick")),
    "move_container_away": KindUse(_CONTAINER, ("transport", "before_pick")),
    "camera_dead": KindUse(_ALL, ("moving", "before_pick", "transport")),
}

# What a clean stop must say for each impossible kind (the report's "why").
IMPOSSIBLE_WHY: dict[str, tuple[str, ...]] = {
    "remove_object": ("no longer on the table", "no longer visible", "is not in the scene",
                      "there is no"),
    "move_container_away": ("no longer reachable", "not reachable", "unreachable"),
    "camera_dead": ("camera", "scene is stale", "no fresh scene"),
    "shut_in_drawer": ("no longer on the table",),
}


@dataclass(frozen=True)
class Injection:
    kind: str
    phase: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeSpec:
    index: int
    seed: int
    family: str
    injections: tuple[Injection, ...] = ()

    def key(self) -> str:
        inj = ",".join(f"{i.kind}@{i.phase}" for i in self.injections) or "none"
        return f"{self.family}/{self.seed}/{inj}"


@dataclass(frozen=True)
class Ablation:
    """One brain configuration of the ablation study."""

    name: str
    handler_retries: int = 2  # tier 1 (coded recoveries and program handlers)
    tier2_attempts: int = 2
    replans: int = 2
    program_monitors: bool = True
    memory: bool = True


ABLATIONS: dict[str, Ablation] = {a.name: a for a in (
    Ablation("full"), Ablation("no_tier1", handler_retries=0),
    Ablation("no_tier2", tier2_attempts=0), Ablation("no_tier3", replans=0),
    Ablation("no_program_monitors", program_monitors=False), Ablation("no_memory", memory=False),
)}


def catalogue_class(kind: str) -> str:
    from frankenbot.sim.anomalies import KINDS

    return KINDS[kind].catalogue_class


def kinds_by_class() -> dict[str, tuple[str, ...]]:
    """predictable / semi_predictable / unpredictable -> the mix's kinds (impossible ones are
    unpredictable kinds)."""
    from frankenbot.sim.anomalies import KINDS

    out: dict[str, list[str]] = {}
    for kind in KIND_USE:
        out.setdefault(KINDS[kind].anomaly_class.value, []).append(kind)
    return {k: tuple(v) for k, v in out.items()}


def _eligible(kind: str, proxy: str) -> bool:
    """May ``kind`` be drawn for a task that behaves like family ``proxy``? ("" : a task that
    grasps nothing: only the kinds every family may get)."""
    families = KIND_USE[kind].families
    return proxy in families if proxy else set(_ALL) <= set(families)


def draw_episodes(mix: str, n: int, first_seed: int = EVALUATION_FIRST_SEED,
                  tasks: Mapping[str, str] | None = None) -> list[EpisodeSpec]:
    """The episode list of ``mix``: deterministic in (mix, n, first_seed, tasks). ``tasks``:
    draw from these tasks instead of our families (an external suite's task ids, each with the
    family it behaves like for the anomaly kinds, "" when it grasps nothing)."""
    from frankenbot.sim.tasks import TASK_FAMILIES

    pool = tuple(tasks) if tasks else tuple(TASK_FAMILIES)
    proxy = dict(tasks) if tasks else {f: f for f in TASK_FAMILIES}
    if mix not in MIXES:
        raise ConfigError(f"unknown mix {mix!r}; valid: {', '.join(MIXES)}")
    if n < 1:
        raise ConfigError(f"--episodes must be >= 1, got {n}")
    ratio = MIXES[mix]
    classes = list(ratio)
    weights = np.array([ratio[c] for c in classes], dtype=float)
    weights /= weights.sum()
    by_class = kinds_by_class()
    out = []
    seeds = evaluation_seeds(n, first_seed) if first_seed >= EVALUATION_FIRST_SEED else tuple(
        range(first_seed, first_seed + n))
    for i, seed in enumerate(seeds):
        rng = np.random.default_rng([sum(map(ord, mix)), int(seed)])
        family = str(pool[int(rng.integers(len(pool)))])
        like = proxy[family]
        count = int(rng.choice(ANOMALY_COUNTS))
        injections: list[Injection] = []
        for _ in range(count):
            for _attempt in range(20):  # a class with no kind for this family: draw again
                cls = classes[int(rng.choice(len(classes), p=weights))]
                kinds = [k for k in by_class.get(cls, ()) if _eligible(k, like)
                         and all(j.kind != k for j in injections)]
                if kinds:
                    kind = kinds[int(rng.integers(len(kinds)))]
                    use = KIND_USE[kind]
                    # families that never grasp a block only see the arm-level phases
                    phases = [p for p in use.phases
                              if like in _PICK or p in ARM_PHASES] or list(use.phases)
                    phase = phases[int(rng.integers(len(phases)))]
                    injections.append(Injection(kind, phase, dict(use.params)))
                    break
        out.append(EpisodeSpec(i, int(seed), family, tuple(injections)))
    return out


@dataclass(frozen=True)
class FiredAnomaly:
    kind: str
    phase: str
    catalogue_class: str
    detail: str
    onset: float  # robot (sim) time of the injection; -1 when unknown
    tier: int = -1  # tier of the first recovery commanded after it; -1 none
    latency: float = -1.0  # s from onset to that recovery command; -1 none


@dataclass(frozen=True)
class MixOutcome:
    """One (episode, ablation) result, judged by the oracle."""

    index: int
    seed: int
    family: str
    ablation: str
    instruction: str
    drawn: tuple[str, ...]  # kinds drawn for the episode
    fired: tuple[FiredAnomaly, ...]
    success: bool  # oracle
    status: str  # the executor's exit status
    reason: str
    vlm_calls: int
    replans: int
    tiers: tuple[int, ...]
    wall_time: float
    impossible: bool = False  # an impossible anomaly fired
    handled: bool = False  # impossible: clean stop with a why (or finished anyway)
    handling: tuple[str, ...] = ()  # the brain's anomalies: "kind tier action"

    @property
    def correct(self) -> bool:
        return self.handled if self.impossible else self.success


# ------------------------------------------------------------------------------------ running
@dataclass(frozen=True)
class MixOptions:
    realtime_factor: float = 1.0
    episode_timeout: float = 150.0  # wall seconds before an episode is cancelled
    planner: str = "offline"
    scene_stale_after_s: float = IN_PROCESS_STALE_S  # see eval/stack.py


class MixRunner:
    """One sim stack and planner in this process; ``run(spec, ablation)`` plays one episode."""

    def __init__(self, options: MixOptions = MixOptions(), memory_dir: Path | None = None
                 ) -> None:
        from frankenbot.eval.stack import SimStack
        from frankenbot.planner.planner import Planner

        self.options = options
        self.stack = SimStack(scene="perceived", realtime_factor=options.realtime_factor,
                              stale_timeout=options.scene_stale_after_s)
        client = None
        if options.planner == "vlm":
            from frankenbot.eval.inprocess import _vlm_client

            client = _vlm_client()
        self.planner = Planner(client=client)
        self._memory_dir = memory_dir or Path(tempfile.mkdtemp(prefix="fb-mix-memory-"))
        self._memories: dict[str, Any] = {}

    def _memory(self, ablation: Ablation) -> Any:
        if not ablation.memory:
            return None
        store = self._memories.get(ablation.name)
        if store is None:
            from frankenbot.memory.store import MemoryStore

            path = self._memory_dir / f"{ablation.name}-{os.getpid()}.db"
            store = self._memories[ablation.name] = MemoryStore.open(path)
        return store

    def run(self, spec: EpisodeSpec, ablation: Ablation, *, expert: Any = None,
            tier2_method: str = "rules") -> MixOutcome:
        """Play ``spec`` under ``ablation``; ``expert``/``tier2_method`` replace tier 2's
        default (the rule table), as the executor node's parameters would."""
        from frankenbot.anomaly.escalation import Budgets, Tier2Settings
        from frankenbot.execution.executor import ExecutorParams
        from frankenbot.planner.request import PlanRequest

        t0 = time.monotonic()
        if "/" in spec.family:  # an external suite's task (``draw_episodes(tasks=...)``)
            from frankenbot.eval.libero.bench import scene_for

            scene, names = scene_for(spec.family, spec.seed)
            instance = self.stack.reset(spec.family, spec.seed, scene=scene, names=names)
        else:
            instance = self.stack.reset(spec.family, spec.seed)
        memory = self._memory(ablation)
        params = ExecutorParams(budgets=Budgets(ablation.handler_retries, ablation.tier2_attempts,
                                                ablation.replans),
                                tier2=Tier2Settings(tier2_method),
                                scene_stale_after_s=self.options.scene_stale_after_s)
        experience = None
        if memory is not None:
            from frankenbot.memory.experience import experience_prior

            experience = experience_prior(memory)
        # the executor runs on the robot's clock (sim time here, as a ROS node with
        # use_sim_time would): monitors, timeouts and staleness are judged in robot seconds, so
        # a starved CPU slows the robot and its judge alike, and the sim's injection time is
        # the true onset on the same clock
        executor = self.stack.executor(self.planner, params=params, experience=experience,
                                       expert=expert, clock=self.stack.robot.now)
        world = self.stack.world
        onsets: dict[int, float] = {}
        start = len(world.anomaly_log())

        with self.stack.running():
            planned = self.planner.plan(PlanRequest(
                instruction=instance.instruction, scene=self.stack.scene(),
                planner=self.options.planner))
            if not planned.ok:
                return self._outcome(spec, ablation, instance.instruction, False, "error",
                                     f"planner: {planned.message}", planned.vlm_calls, 0, (),
                                     t0, [], onsets, ())
            text = planned.program_text
            if not ablation.program_monitors:
                text = _without_monitors(text)
            for inj in spec.injections:
                try:
                    world.inject(inj.kind, inj.phase, dict(inj.params))
                except SimError:  # a "now" effect that cannot apply here: logged as skipped
                    pass
            watchdog = threading.Timer(self.options.episode_timeout, executor.cancel,
                                       args=("episode timeout",))
            watchdog.daemon = True
            watchdog.start()
            try:
                outcome = executor.run(text, task_id=f"{spec.family}-{spec.seed}",
                                       instruction=instance.instruction)
            finally:
                watchdog.cancel()
            self.stack.robot.stop()
        verdict = world.evaluate()
        log = world.anomaly_log()
        fired = [(i, r) for i, r in enumerate(log) if i >= start and r.event == "fired"]
        onsets.update({i: r.time for i, r in fired})
        if memory is not None:
            from frankenbot.execution.episode import episode_anomalies
            from frankenbot.memory.records import EpisodeRecord

            seen_anomalies = episode_anomalies(outcome.anomalies)

            # the brain's own verdict, never the oracle's: memory must not learn ground truth
            memory.record_episode(EpisodeRecord(
                instruction=instance.instruction, program=outcome.final_program,
                success=outcome.success, outcome=outcome.status.value,
                vlm_calls=planned.vlm_calls + outcome.vlm_calls,
                repair_calls=planned.repair_calls, execution_time=outcome.duration,
                anomalies=seen_anomalies))
        return self._outcome(spec, ablation, instance.instruction, bool(verdict.success),
                             outcome.status.value, outcome.reason,
                             planned.vlm_calls + outcome.vlm_calls, outcome.replans,
                             outcome.anomalies, t0, fired, onsets, outcome.anomalies)

    def _outcome(self, spec: EpisodeSpec, ablation: Ablation, instruction: str, success: bool,
                 status: str, reason: str, vlm: int, replans: int, records: Sequence[Any],
                 t0: float, fired: Sequence[tuple[int, Any]], onsets: Mapping[int, float],
                 anomalies: Sequence[Any]) -> MixOutcome:
        out: list[FiredAnomaly] = []
        ordered = sorted(records, key=lambda r: r.detected_at)
        for n, (i, rec) in enumerate(fired):
            onset = onsets.get(i, -1.0)
            nxt = onsets.get(fired[n + 1][0], float("inf")) if n + 1 < len(fired) else (
                float("inf"))
            tier, latency = -1, -1.0
            if onset >= 0:
                for r in ordered:
                    if r.recovery_commanded_at > 0 and onset - 0.05 <= r.detected_at < nxt:
                        tier, latency = int(r.tier), r.recovery_commanded_at - onset
                        break
            out.append(FiredAnomaly(rec.kind, rec.phase, catalogue_class(rec.kind), rec.detail,
                                    onset, tier, latency))
        impossible = any(f.catalogue_class == "impossible" for f in out)
        handled = False
        if impossible:
            whys = [w for f in out if f.catalogue_class == "impossible"
                    for w in IMPOSSIBLE_WHY.get(f.kind, ())]
            text = reason.lower()
            handled = success or (status != "success" and any(w in text for w in whys))
        return MixOutcome(spec.index, spec.seed, spec.family, ablation.name, instruction,
                          tuple(i.kind for i in spec.injections), tuple(out), success, status,
                          reason, vlm, replans, tuple(int(a.tier) for a in anomalies),
                          time.monotonic() - t0, impossible, handled,
                          tuple(f"{a.kind.value} t{int(a.tier)} {a.action}" for a in anomalies))

    def close(self) -> None:
        for store in self._memories.values():
            store.close()
        self.stack.close()


def _without_monitors(text: str) -> str:
    """The program with its monitors removed (the "built-in monitors only" ablation)."""
    from frankenbot.program import parse_program
    from frankenbot.program.printer import print_program

    program = parse_program(text).program
    return print_program(replace(program, monitors=()))


def _worker(args: tuple[list[EpisodeSpec], list[str], MixOptions, str]) -> list[dict]:
    specs, ablations, options, log_path = args
    runner = MixRunner(options)
    results = []
    try:
        for spec in specs:
            for name in ablations:
                o = runner.run(spec, ABLATIONS[name])
                results.append(_to_json(o))
                if log_path:
                    with open(log_path, "a") as f:
                        f.write(_line(o) + "\n")
    finally:
        runner.close()
    return results


def _line(o: MixOutcome) -> str:
    mark = "ok  " if o.correct else "FAIL"
    fired = ",".join(f"{f.kind}@{f.phase}" for f in o.fired) or "-"
    return (f"  {mark} #{o.index:3d} {o.ablation:20s} {o.family:15s} seed {o.seed:5d} "
            f"{o.wall_time:5.1f} s  fired {fired}  tiers {list(o.tiers)}"
            + ("" if o.correct else f"  [{o.status}: {o.reason[:140]}] {list(o.handling)}"))


def _to_json(o: MixOutcome) -> dict:
    return asdict(o)


def _from_json(d: Mapping[str, Any]) -> MixOutcome:
    fired = tuple(FiredAnomaly(**f) for f in d["fired"])
    return MixOutcome(**{**d, "fired": fired, "drawn": tuple(d["drawn"]),
                         "tiers": tuple(d["tiers"]), "handling": tuple(d["handling"])})


def run_mix(specs: Sequence[EpisodeSpec], ablations: Sequence[str] = ("full",), *,
            workers: int = 1, options: MixOptions = MixOptions(),
            log: Callable[[str], None] = print, ray_address: str = "") -> list[MixOutcome]:
    """Every (episode, ablation) in ``workers`` processes, or as tasks on a Ray cluster when
    ``ray_address`` is given (see ``_run_on_ray``); outcomes in episode order."""
    unknown = [a for a in ablations if a not in ABLATIONS]
    if unknown:
        raise ConfigError(f"unknown ablation(s) {', '.join(unknown)}; valid: "
                          f"{', '.join(ABLATIONS)}")
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {workers}")
    if ray_address:
        return _sorted(_run_on_ray(specs, ablations, options, ray_address, workers, log),
                       ablations)
    workers = min(workers, len(specs))
    log_file = tempfile.NamedTemporaryFile(prefix="fb-mix-", suffix=".log", delete=False)
    log_file.close()
    parts = [list(specs[w::workers]) for w in range(workers)]
    jobs = [(p, list(ablations), options, log_file.name) for p in parts]
    done = threading.Event()

    def follow() -> None:  # stream the workers' per-episode lines
        pos = 0
        while True:
            with open(log_file.name) as f:
                f.seek(pos)
                chunk = f.read()
                pos = f.tell()
            for line in chunk.splitlines():
                log(line)
            if done.is_set():
                return
            time.sleep(0.5)

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    try:
        if workers == 1:
            results = [_worker(jobs[0])]
        else:
            ctx = multiprocessing.get_context("spawn")  # GL contexts do not survive a fork
            with ctx.Pool(workers) as pool:
                results = pool.map(_worker, jobs)
    finally:
        done.set()
        follower.join(timeout=5)
        os.unlink(log_file.name)
    return _sorted([_from_json(d) for part in results for d in part], ablations)


def _sorted(outcomes: list[MixOutcome], ablations: Sequence[str]) -> list[MixOutcome]:
    order = {a: i for i, a in enumerate(ablations)}
    return sorted(outcomes, key=lambda o: (o.index, order[o.ablation]))


# environment a Ray worker needs to render and to stay offline (a cluster's workers do not
# inherit the driver's shell)
RAY_ENV = ("MUJOCO_GL", "PYOPENGL_PLATFORM", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
           "FRANKENBOT_ROOT")


def _run_on_ray(specs: Sequence[EpisodeSpec], ablations: Sequence[str], options: MixOptions,
                address: str, workers: int, log: Callable[[str], None]) -> list[MixOutcome]:
    """One Ray task per episode (all its ablations, so the pairing stays on one worker).

    ``address``: ``local`` starts a Ray instance on this machine with ``workers`` CPUs (stopped
    at the end); anything else is handed to ``ray.init`` (``auto`` joins the cluster this
    machine belongs to, ``ray://HOST:10001`` a remote one). Every node of a cluster needs this
    FrankenBot checkout installed: episodes import it; only the episode specs travel. A task
    asks for one CPU, so Ray runs as many episodes at once as the cluster has CPUs.
    """
    try:
        import ray
    except ImportError as e:
        raise ConfigError("--ray needs the ray package (pip install ray; it is in "
                          "requirements/base.txt)") from e
    env = {k: os.environ[k] for k in RAY_ENV if k in os.environ}
    try:
        if address == "local":
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": env})
        else:
            ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": env})
    except Exception as e:  # ConnectionError, RuntimeError, ValueError: Ray's own words
        raise ConfigError(f"could not connect to Ray at {address!r}: {e}") from e
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_worker)
        pending = {task.remote(([spec], list(ablations), options, "")): spec for spec in specs}
        log(f"  ray: {len(pending)} episodes on {ray.cluster_resources().get('CPU', 0):g} CPUs")
        results: list[dict] = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                pending.pop(ref)
                part = ray.get(ref)
                results.extend(part)
                for d in part:
                    log(_line(_from_json(d)))
        return [_from_json(d) for d in results]
    finally:
        ray.shutdown()


# ------------------------------------------------------------------------------------ reports
def _rate(k: int, n: int) -> dict[str, float | int]:
    ci = wilson_interval(k, n)
    return {"n": n, "successes": k, "rate": round(k / n, 4) if n else 0.0,
            "wilson_low": round(ci.low, 4), "wilson_high": round(ci.high, 4)}


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else -1.0


def summarise(outcomes: Iterable[MixOutcome]) -> dict[str, Any]:
    """The report of one ablation's outcomes (the ``--json`` object)."""
    eps = list(outcomes)
    possible = [o for o in eps if not o.impossible]
    k = sum(o.success for o in possible)
    ci = wilson_interval(k, len(possible))
    per_class: dict[str, list[bool]] = {}
    per_kind: dict[str, list[bool]] = {}
    per_tier: dict[str, int] = {}
    latency: dict[str, list[float]] = {}
    for o in eps:
        classes = {f.catalogue_class for f in o.fired} or {"none"}
        for c in classes:
            per_class.setdefault(c, []).append(o.correct)
        for f in o.fired:
            per_kind.setdefault(f.kind, []).append(o.correct)
            if f.latency >= 0:
                latency.setdefault(str(f.tier), []).append(f.latency)
        for t in o.tiers:
            per_tier[str(t)] = per_tier.get(str(t), 0) + 1
    impossible = [o for o in eps if o.impossible]
    handled = sum(o.handled for o in impossible)
    drawn = sum(len(o.drawn) for o in eps)
    fired = sum(len(o.fired) for o in eps)
    return {
        "episodes": len(eps), "possible_episodes": len(possible),
        "success_rate": round(k / len(possible), 4) if possible else 0.0,
        "wilson_low": round(ci.low, 4), "wilson_high": round(ci.high, 4),
        "correct_rate_all": round(sum(o.correct for o in eps) / len(eps), 4) if eps else 0.0,
        "vlm_calls_per_task": round(statistics.fmean(o.vlm_calls for o in eps), 4)
        if eps else 0.0,
        "replans_per_task": round(statistics.fmean(o.replans for o in eps), 4) if eps else 0.0,
        "per_class": {c: _rate(sum(v), len(v)) for c, v in sorted(per_class.items())},
        "per_kind": {c: _rate(sum(v), len(v)) for c, v in sorted(per_kind.items())},
        "per_tier": dict(sorted(per_tier.items())),
        "impossible_episodes": len(impossible),
        "impossible_handled_rate": round(handled / len(impossible), 4) if impossible else None,
        "anomalies_drawn": drawn, "anomalies_fired": fired,
        "latency_onset_to_recovery_s": {
            t: {"n": len(v), "median": round(statistics.median(v), 3),
                "p95": round(_pct(v, 95), 3)} for t, v in sorted(latency.items())},
        "mean_wall_time_s": round(statistics.fmean(o.wall_time for o in eps), 2) if eps else 0.0,
        "failures": [f"#{o.index} {o.family}/{o.seed} {','.join(o.drawn) or '-'}: {o.status}: "
                     f"{o.reason[:160]}" for o in eps if not o.correct],
    }


def ablation_table(outcomes: Sequence[MixOutcome], ablations: Sequence[str]) -> dict[str, Any]:
    """Each ablation against ``full``, paired per episode: success (the ``correct`` verdict,
    so impossible episodes count by their handling), delta with a Wilson-style interval on the
    paired difference (Newcombe's method 10 is overkill here: a normal interval on the paired
    difference), and the exact McNemar p-value."""
    by: dict[str, dict[int, bool]] = {}
    for o in outcomes:
        by.setdefault(o.ablation, {})[o.index] = o.correct
    base = by.get("full", {})
    rows = {}
    for name in ablations:
        cur = by.get(name, {})
        idx = sorted(set(base) & set(cur))
        a = [base[i] for i in idx]
        b = [cur[i] for i in idx]
        n = len(idx)
        res = mcnemar_exact(a, b)
        delta = (sum(b) - sum(a)) / n if n else 0.0
        # variance of a paired difference of proportions (discordant pairs)
        var = ((res.only_a + res.only_b) / n - delta ** 2) / n if n else 0.0
        half = 1.959963984540054 * max(var, 0.0) ** 0.5
        ci = wilson_interval(sum(b), n)
        rows[name] = {"n": n, "success_rate": round(sum(b) / n, 4) if n else 0.0,
                      "wilson_low": round(ci.low, 4), "wilson_high": round(ci.high, 4),
                      "delta_vs_full": round(delta, 4),
                      "delta_ci": [round(delta - half, 4), round(delta + half, 4)],
                      "only_full": res.only_a, "only_ablation": res.only_b,
                      "mcnemar_p": round(res.p_value, 6)}
    return rows


def markdown_ablations(rows: Mapping[str, Mapping[str, Any]], title: str) -> str:
    lines = [f"### {title}", "",
             "| configuration | n | correct | Wilson 95% | delta vs full [95% CI] | "
             "full only / ablation only | McNemar exact p |", "|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['n']} | {r['success_rate']:.1%} | [{r['wilson_low']:.1%}, "
            f"{r['wilson_high']:.1%}] | {r['delta_vs_full']:+.1%} [{r['delta_ci'][0]:+.1%}, "
            f"{r['delta_ci'][1]:+.1%}] | {r['only_full']} / {r['only_ablation']} | "
            f"{r['mcnemar_p']:.4g} |")
    return "\n".join(lines) + "\n"


def write_report(out_dir: Path, name: str, payload: Mapping[str, Any]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=str))
    return path
