"""Run one program on the robot: interpreter + primitives + monitor loop + three-tier escalator.

``ProgramExecutor.run`` parses and validates the program again (never trusting the caller),
then runs the interpreter on the calling (control) thread while the monitor loop watches on its
own thread. A firing is recorded as an AnomalyEvent and delivered to the interpreter, which
preempts the running primitive and either runs the program's handler (tier 1) or calls the
``TieredEscalator`` (coded recovery, local expert, replan). The first primitive that starts after
a decision is the recovery command; its time is the event's recovery time. ``cancel`` and the
e-stop stop the arm and end the run with CANCELLED / ESTOP.

Pure logic: no rclpy. The ROS node and the benchmarks use this class unchanged.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from frankenbot import settings
from frankenbot.anomaly.escalation import Budgets, EscalationPolicy, Replanner, Tier2Settings
from frankenbot.anomaly.local_expert import LocalExpert
from frankenbot.anomaly.monitor_loop import Firing, LoopStats, MonitorLoop
from frankenbot.anomaly.monitors import class_of, default_monitors
from frankenbot.anomaly.records import AnomalyLog, AnomalyRecord
from frankenbot.common import AnomalyKind, ExitStatus, Tier
from frankenbot.execution.escalator import TieredEscalator
from frankenbot.execution.snapshot_source import STALE_AFTER_S, SnapshotSource
from frankenbot.execution.tracked_primitives import TrackedPrimitives
from frankenbot.program.catalog import Catalog, default_catalog
from frankenbot.program.check import check_text
from frankenbot.program.diagnostics import render_diagnostics
from frankenbot.program.escalation import MonitorEvent
from frankenbot.program.predicates import MonitorProbe
from frankenbot.program.trace import TraceEntry
from frankenbot.program.tree import Program
from frankenbot.settings import section, setting
from frankenbot.state import RobotSnapshot, Scene


@dataclass(frozen=True)
class ExecutorParams:
    """Settings of the executor (the ``frankenbot_executor`` node's parameters, same names)."""

    monitor_rate_hz: float = setting(200.0, "rate of the monitor thread", unit="Hz", low=1.0,
                                     high=2000.0)
    debounce_ticks: int = setting(2, "consecutive ticks a monitor condition must hold before "
                                  "it fires", low=1)
    budgets: Budgets = section(Budgets, "")
    tier2: Tier2Settings = section(Tier2Settings, "")
    step_budget: int = setting(500, "global bound on executed tree nodes per program", low=1,
                               live=True)
    scene_stale_after_s: float = setting(STALE_AFTER_S, "the scene counts as stale when its "
                                         "stamp has not "
                                         "moved this long (robot clock)", unit="s", low=0.05)
    monitor_thresholds: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        settings.validate(self, "executor")


@dataclass(frozen=True)
class ExecutionOutcome:
    status: ExitStatus
    reason: str
    final_program: str
    replans: int
    vlm_calls: int
    steps: int
    duration: float
    anomalies: tuple[AnomalyRecord, ...] = ()
    trace: tuple[TraceEntry, ...] = ()

    @property
    def success(self) -> bool:
        return self.status == ExitStatus.SUCCESS


class Runner(Protocol):
    """The interpreter as the executor uses it (``frankenbot.program.interpreter``)."""

    @property
    def active_path(self) -> str: ...

    def run(self) -> Any: ...

    def deliver(self, event: MonitorEvent) -> None: ...

    def cancel(self, reason: str) -> None: ...

    def monitors_active(self, now: float) -> Sequence[Any]: ...


RunnerFactory = Callable[..., Runner]


def _default_runner_factory(program: Program, catalog: Catalog, executor: Any,
                            **kw: Any) -> Runner:
    from frankenbot.program.interpreter import Interpreter

    return Interpreter(program, catalog, executor, **kw)


class ProgramExecutor:
    """One executor per robot; ``run`` executes one program at a time on the calling thread."""

    def __init__(self, primitives: Any, robot_snapshot: Callable[[], RobotSnapshot],
                 scene: Callable[[], Scene], *, catalog: Catalog | None = None,
                 params: ExecutorParams = ExecutorParams(), expert: LocalExpert | None = None,
                 replanner_for: Callable[[str, str, str], Replanner | None] | None = None,
                 stop_arm: Callable[[], None] | None = None,
                 experience: Callable[..., Mapping[str, float]] | None = None,
                 runner_factory: RunnerFactory | None = None,
                 on_trace: Callable[[TraceEntry], None] | None = None,
                 on_event: Callable[[AnomalyRecord], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._primitives = primitives
        self.catalog = catalog or default_catalog()
        self.params = params
        self.expert = expert
        self._replanner_for = replanner_for
        self._stop_arm = stop_arm
        self._experience = experience
        self._runner_factory = runner_factory or _default_runner_factory
        self._on_trace = on_trace
        self._on_event = on_event
        self._clock = clock
        # the primitives' own beliefs (which drawer is open) are facts the predicates read
        # before geometry: a perceived handle can be off by centimetres, the belief is not
        beliefs = getattr(primitives, "facts", None)
        # the fixture map (each part's travel and cavity) for open/closed/on_state/in
        fixture_map = getattr(primitives, "fixture_map", None)
        # where the primitives let go of objects the camera has not seen since
        scene_beliefs = getattr(primitives, "believed_scene", None)
        self.snapshot = SnapshotSource(robot_snapshot, scene,
                                       stale_after_s=params.scene_stale_after_s, clock=clock,
                                       beliefs=beliefs if callable(beliefs) else None,
                                       fixture_map=fixture_map if callable(fixture_map)
                                       else None,
                                       scene_beliefs=scene_beliefs if callable(scene_beliefs)
                                       else None)
        self._run_lock = threading.Lock()  # one program at a time
        self._state_lock = threading.Lock()  # guards the fields of the current run below
        self._runner: Runner | None = None
        self._loop: MonitorLoop | None = None
        self._log: AnomalyLog | None = None
        self._escalator: TieredEscalator | None = None
        self._awaiting: list[str] = []  # record ids waiting for their recovery command
        self._end_status: ExitStatus | None = None
        self._end_reason = ""
        self._trace: list[TraceEntry] = []
        self.last_loop_stats: LoopStats | None = None
        self._probe_cache: dict[int, MonitorProbe] = {}  # monitor loop thread only
        self._program_fired_at = -1.0  # monitor loop thread only

    # ---- control from other threads ---------------------------------------------------------
    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the running program (from any thread): the arm stops, status CANCELLED."""
        self._finish(ExitStatus.CANCELLED, reason)

    def abort(self, reason: str) -> None:
        """End the running program as failed (from any thread): the arm stops, status FAILURE.
        For what makes every further motion futile, such as the robot's driver stopping it:
        no tier can recover from that, so none is asked."""
        self._finish(ExitStatus.FAILURE, reason)

    @property
    def running(self) -> bool:
        with self._state_lock:
            return self._runner is not None

    @property
    def active_path(self) -> str:
        with self._state_lock:
            runner = self._runner
        return getattr(runner, "active_path", "") if runner is not None else ""

    def _finish(self, status: ExitStatus, reason: str) -> None:
        with self._state_lock:
            runner = self._runner
            if self._end_status is None:
                self._end_status, self._end_reason = status, reason
        if self._stop_arm is not None:
            self._stop_arm()
        if runner is not None:
            runner.cancel(reason)

    # ---- the run ----------------------------------------------------------------------------
    def run(self, program_text: str, *, task_id: str = "", instruction: str = "",
            object_ids: Sequence[str] | None = None) -> ExecutionOutcome:
        if not self._run_lock.acquire(blocking=False):
            return ExecutionOutcome(ExitStatus.ERROR, "the executor is already running a program",
                                    program_text, 0, 0, 0, 0.0)
        try:
            return self._run(program_text, task_id, instruction, object_ids)
        finally:
            self._run_lock.release()

    def _run(self, text: str, task_id: str, instruction: str,
             object_ids: Sequence[str] | None) -> ExecutionOutcome:
        t0 = self._clock()
        checked = check_text(text, self.catalog, object_ids)
        if not checked.ok or checked.program is None:
            msg = render_diagnostics(list(checked.diagnostics), compact=True)
            return ExecutionOutcome(ExitStatus.ERROR, f"invalid program: {msg}", text, 0, 0, 0,
                                    self._clock() - t0)
        program = checked.program
        log = AnomalyLog(on_change=self._on_event)
        replanner = None
        if self._replanner_for is not None:
            replanner = self._replanner_for(task_id, instruction, text)
        p = self.params
        policy = EscalationPolicy(
            budgets=p.budgets, expert=self.expert, tier2=p.tier2, replanner=replanner,
            experience=self._experience, clock=self._clock)
        escalator = TieredEscalator(policy, log, snapshot=self.snapshot, catalog=self.catalog,
                                    task=instruction or program.description,
                                    object_ids=lambda: self.snapshot().scene.ids(),
                                    on_decided=self._decided, clock=self._clock)
        tracked = TrackedPrimitives(self._primitives, self.snapshot,
                                    active_path=lambda: self.active_path, clock=self._clock)
        tracked.add_start_listener(self._primitive_started)
        trace: list[TraceEntry] = []

        def on_trace(entry: TraceEntry) -> None:
            trace.append(entry)
            if self._on_trace is not None:
                self._on_trace(entry)

        runner = self._runner_factory(program, self.catalog, tracked, snapshot=self.snapshot,
                                      escalator=escalator, clock=self._clock,
                                      step_budget=p.step_budget, on_trace=on_trace,
                                      max_handler_runs=p.budgets.handler_retries)
        loop = MonitorLoop(snapshot=self.snapshot, context=tracked.context,
                           deliver=self._deliver,
                           builtins=default_monitors(p.monitor_thresholds),
                           program_monitors=self._program_probes,
                           rate_hz=p.monitor_rate_hz, debounce_ticks=p.debounce_ticks,
                           clock=self._clock)
        with self._state_lock:
            self._runner, self._loop, self._log, self._escalator = runner, loop, log, escalator
            self._awaiting = []
            self._end_status, self._end_reason = None, ""
        result: Any = None
        error = ""
        loop.start()
        try:
            result = runner.run()
        except Exception as e:  # an interpreter bug must not leave the arm moving
            error = f"internal error: {e!r}"
            if self._stop_arm is not None:
                self._stop_arm()
        finally:
            loop.stop()
            self.last_loop_stats = loop.stats()
            with self._state_lock:
                self._runner = self._loop = None
                end_status, end_reason = self._end_status, self._end_reason
        status, reason, steps = self._status_of(result, error, end_status, end_reason)
        if status in (ExitStatus.ESTOP, ExitStatus.CANCELLED, ExitStatus.ERROR) \
                and self._stop_arm is not None:
            self._stop_arm()  # whoever noticed first, the arm ends held still
        if status == ExitStatus.ESTOP and not any(r.kind == AnomalyKind.ESTOP
                                                  for r in log.records()):
            now = self._clock()  # a primitive saw the e-stop before the monitor loop did
            rec = log.open(AnomalyKind.ESTOP, class_of(AnomalyKind.ESTOP), "primitive",
                           self._last_path(trace), reason, now, now)
            log.update(rec.event_id, action="stop arm")
        records = log.settle(status == ExitStatus.SUCCESS)
        final = escalator.last_program_text or text
        return ExecutionOutcome(status, reason, final, policy.replans, policy.vlm_calls, steps,
                                self._clock() - t0, records, tuple(trace))

    @staticmethod
    def _status_of(result: Any, error: str, end_status: ExitStatus | None,
                   end_reason: str) -> tuple[ExitStatus, str, int]:
        steps = int(getattr(result, "steps", 0) or 0)
        if error:
            return ExitStatus.ERROR, error, steps
        if end_status is not None:  # cancel / e-stop win over what the interpreter saw
            return end_status, end_reason, steps
        status = getattr(result, "status", ExitStatus.ERROR)
        return ExitStatus(status), str(getattr(result, "reason", "")), steps

    # ---- monitor loop thread ----------------------------------------------------------------
    def _program_probes(self, now: float) -> Sequence[MonitorProbe]:
        """The interpreter's monitors in scope, compiled once each into fast probes."""
        with self._state_lock:
            runner = self._runner
        if runner is None:
            return ()
        probes = []
        for m in runner.monitors_active(now):
            probe = self._probe_cache.get(id(m))
            if probe is None or probe.monitor is not m:
                probe = self._probe_cache[id(m)] = MonitorProbe.of(m)
            probes.append(probe)
        return probes

    def _deliver(self, firing: Firing) -> None:
        det = firing.detection
        with self._state_lock:
            runner, log, escalator = self._runner, self._log, self._escalator
        if runner is None or log is None or escalator is None:
            return
        if det.kind != AnomalyKind.ESTOP:
            with self._state_lock:
                pending = bool(self._awaiting)
            if pending:
                # one anomaly at a time: another one's recovery has not started yet (e.g. the
                # built-in grasp-lost monitor and the program's drop monitor seeing one drop);
                # the loop re-arms every monitor when that recovery starts, so a condition
                # that persists fires again then
                return
        if not det.builtin:
            self._program_fired_at = firing.detected_at
        elif firing.detected_at == self._program_fired_at and det.kind != AnomalyKind.ESTOP:
            return  # the same tick's program monitor covers it: its handler is tier 1
        node = self.active_path
        rec = log.open(det.kind, det.anomaly_class, det.monitor, node, det.detail,
                       firing.onset, firing.detected_at)
        if det.kind == AnomalyKind.ESTOP:
            log.update(rec.event_id, tier=Tier.NONE, action="stop arm")
            self._finish(ExitStatus.ESTOP, "e-stop engaged")
            return
        if det.kind == AnomalyKind.GRASP_LOST:
            # the fingers are empty: drop the belief so predicates and the regrasp see the truth
            forget = getattr(self._primitives, "forget_held", None)
            if callable(forget):
                forget()
        name = det.monitor
        escalator.expect(name, rec, det.objects)
        if not det.builtin:
            prog_mon = self._program_monitor(name)
            if prog_mon is not None and prog_mon.handler:
                log.update(rec.event_id, tier=Tier.CODED, action=f"handler {name}",
                           decided_at=firing.detected_at)
        with self._state_lock:
            self._awaiting.append(rec.event_id)
        runner.deliver(MonitorEvent(name, det.kind, det.detail, firing.detected_at,
                                    det.builtin))

    def _program_monitor(self, name: str) -> Any:
        with self._state_lock:
            runner = self._runner
        program = getattr(runner, "program", None)
        return program.monitor(name) if program is not None else None

    # ---- control thread ---------------------------------------------------------------------
    def _decided(self, rec: AnomalyRecord, aborted: bool) -> None:
        with self._state_lock:
            if aborted and rec.event_id in self._awaiting:
                self._awaiting.remove(rec.event_id)
            elif not aborted and rec.event_id not in self._awaiting:
                self._awaiting.append(rec.event_id)

    def _primitive_started(self, name: str, args: Mapping[str, Any], path: str,
                           now: float) -> None:
        with self._state_lock:
            waiting, self._awaiting = self._awaiting, []
            log, loop = self._log, self._loop
        if log is None:
            return
        for event_id in waiting:
            rec = log.get(event_id)
            if rec.decided_at > 0.0 or rec.tier != Tier.NONE:
                log.update(event_id, recovery_commanded_at=now)
            else:  # not decided yet (delivered while this primitive was starting): keep waiting
                with self._state_lock:
                    self._awaiting.append(event_id)
        if waiting and loop is not None:
            loop.rearm()  # a condition that persists into the recovery must fire again

    @staticmethod
    def _last_path(trace: Sequence[TraceEntry]) -> str:
        for e in reversed(trace):
            if e.path != "main":
                return e.path
        return ""
