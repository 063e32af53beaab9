"""`frankenbot soak`: many tasks in a row over ROS, watching every node for leaks and hangs.

Every node runs as a process (``NodeGroup``, as ``frankenbot up --sim`` starts them); the sim
is reset to a new scene before each task, the families rotate through every sim task family,
each task runs through the ``run_task`` action with a timeout, and the sim oracle judges it.
After every task each node is sampled (``frankenbot.eval.soak``: RSS, threads, descriptors of
the process and its children). A node that died is restarted (and counted) so one crash does
not fail every later task.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from frankenbot.eval.seeds import EVALUATION_FIRST_SEED
from frankenbot.eval.soak import WARMUP_TASKS, SoakReport, TaskRow, sample_process


def run_soak(n_tasks: int, *, first_seed: int = EVALUATION_FIRST_SEED,
             families: tuple[str, ...] = (), warmup: int = WARMUP_TASKS,
             task_timeout: float = 300.0, log_dir: Path | None = None,
             progress: Callable[[str], None] = print) -> SoakReport:
    """Run ``n_tasks`` tasks over ROS and sample every node after each (see the module doc)."""
    from frankenbot.bringup.faults import NodeFaults
    from frankenbot.sim.tasks import TASK_FAMILIES

    fams = families or TASK_FAMILIES
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="frankenbot-soak-"))
    report = SoakReport(n_tasks, warmup)
    t0 = time.monotonic()
    with NodeFaults(log_dir) as faults:
        progress(f"soak: {n_tasks} tasks over ROS, families {', '.join(fams)}, seeds from "
                 f"{first_seed}; logs in {log_dir}")
        try:
            _soak_loop(faults, report, n_tasks, fams, first_seed, task_timeout, progress)
        except KeyboardInterrupt:  # Ctrl-C / SIGTERM: report the tasks done so far
            report.interrupted = True
            progress(f"soak interrupted after {len(report.rows)} tasks")
    report.wall_s = time.monotonic() - t0
    return report


def _soak_loop(faults: Any, report: SoakReport, n_tasks: int, fams: tuple[str, ...],
               first_seed: int, task_timeout: float, progress: Callable[[str], None]) -> None:
    for i in range(n_tasks):
        family, seed = fams[i % len(fams)], first_seed + i
        t_task = time.monotonic()
        try:
            instruction = faults.prepare(family, seed)
            run = faults.start_task(instruction, timeout=task_timeout)
            ended = run.done.wait(task_timeout + 30.0)
            outcome = (run.result.outcome if run.result is not None
                       else ("hung" if not ended else "client error"))
            success = bool(faults.client.sim_evaluate().success) if ended else False
        except Exception as e:  # a sim reset or scene wait that failed: counted, go on
            ended, outcome, success = True, f"harness error: {str(e)[:60]}", False
        row = TaskRow(i, family, seed, outcome, success, not ended,
                      time.monotonic() - t_task)
        report.rows.append(row)
        for p in faults.group.processes:
            report.samples.setdefault(p.executable, []).append(
                sample_process(p.process.pid))
            report.restarts[p.executable] = p.restarts
        dead = [p.executable for p in faults.group.processes if not p.alive()]
        line = (f"  {i + 1:4d}/{n_tasks} {family:<15} seed {seed:<6} "
                f"{'ok ' if success else 'FAIL'} {outcome:<16} {row.seconds:6.1f} s  rss "
                + " ".join(f"{n[:4]}={s[-1].rss_mb:.0f}" for n, s in report.samples.items()))
        progress(line)
        for node in dead:  # a crashed node would make every later task fail: restart it
            progress(f"  node {node} died; restarting it (counted in restarts)")
            faults.restart(node)
            report.restarts[node] = faults.group.get(node).restarts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("soak", help="many tasks in a row over ROS; leaks, hangs, threads, fds",
                       description="Start every node as a process, run N tasks (sim reset "
                       "between tasks, all task families in turn) and sample each node's "
                       "RSS, threads and open descriptors after every task.")
    p.add_argument("--tasks", type=int, default=200, help="number of tasks (default 200)")
    p.add_argument("--first-seed", type=int, default=EVALUATION_FIRST_SEED,
                   help="scene seed of the first task (one seed per task)")
    p.add_argument("--families", nargs="*", default=[], metavar="FAMILY",
                   help="task families to rotate through (default: all)")
    p.add_argument("--warmup", type=int, default=WARMUP_TASKS,
                   help="tasks before the growth baseline is taken")
    p.add_argument("--task-timeout", type=float, default=300.0, help="seconds per task")
    p.add_argument("--log-dir", type=Path, default=None, help="node logs and the memory file")
    p.add_argument("--out", type=Path, default=None, help="also write the full report (JSON)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--summarise", type=Path, metavar="FILE", default=None,
                   help="run nothing: summarise a report written by --out again (from its "
                        "rows and samples, with this version's statistics) and rewrite it")
    p.set_defaults(func=_soak)


def _soak(args: argparse.Namespace) -> int:
    from frankenbot.bringup.processes import terminate_on_sigterm
    from frankenbot.errors import ConfigError
    from frankenbot.sim.tasks import TASK_FAMILIES

    if args.summarise is not None:
        return _summarise(args.summarise)
    if args.tasks < 1:
        raise ConfigError("--tasks must be at least 1")
    unknown = [f for f in args.families if f not in TASK_FAMILIES]
    if unknown:
        raise ConfigError(f"unknown task families {unknown}; known: {', '.join(TASK_FAMILIES)}")
    terminate_on_sigterm()
    report = run_soak(args.tasks, first_seed=args.first_seed, families=tuple(args.families),
                      warmup=args.warmup, task_timeout=args.task_timeout, log_dir=args.log_dir,
                      progress=(lambda _line: None) if args.json else
                      (lambda line: print(line, flush=True)))
    summary = report.summary()
    if args.out is not None:
        from frankenbot.eval.provenance import provenance

        meta = provenance(tasks=args.tasks, first_seed=args.first_seed,
                          families=list(args.families) or list(TASK_FAMILIES),
                          warmup=report.warmup, task_timeout_s=args.task_timeout,
                          stack="sim + five nodes as processes over DDS, config/sim.yaml",
                          sensor_noise=_sim_parameter("sensor_noise", "none"),
                          planner="offline",  # NodeFaults starts the planner offline
                          judge="sim oracle")
        _write_report(args.out, {"meta": meta, "summary": summary,
                                 "rows": [asdict(r) for r in report.rows],
                                 "samples": {n: [asdict(x) for x in s] for n, s in
                                             report.samples.items()}})
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"soak: {summary['tasks']} tasks, {summary['succeeded']} succeeded (oracle), "
              f"{summary['hung']} hung; max RSS growth after {report.warmup} tasks "
              f"{summary['max_rss_growth_pct']}%; max threads {summary['max_threads']}, "
              f"max fds {summary['max_fds']}")
        for node, g in summary["nodes"].items():
            print(f"  {node:<11} {g}")
    return 0 if summary["hung"] == 0 else 1


def _summarise(path: Path) -> int:
    from frankenbot.errors import ConfigError
    from frankenbot.eval.soak import report_from_json

    try:
        data = json.loads(path.read_text())
        report = report_from_json(data)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{path} is not a soak report written by --out: {e}") from e
    data["summary"] = report.summary()
    _write_report(path, data)
    print(json.dumps(data["summary"], indent=2))
    return 0


def _write_report(path: Path, data: dict) -> None:
    """The report file, never half-written (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def _sim_parameter(name: str, default: str) -> str:
    """A parameter of the sim node as the soak's params file sets it."""
    import yaml

    from frankenbot.bringup.processes import config_file

    data = yaml.safe_load(config_file("sim").read_text()) or {}
    params = data.get("/**/frankenbot_sim", {}).get("ros__parameters", {})
    return str(params.get(name, default))
