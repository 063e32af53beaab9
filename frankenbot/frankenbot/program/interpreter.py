"""The interpreter: runs a program tree node by node on the control thread.

Only whitelisted primitives (through the injected ``PrimitiveExecutor``) and skills (their bodies,
with parameters bound to values; never any Python evaluation) run. Monitors fire on another
thread and reach the interpreter through ``deliver``: the running primitive's CancelToken is
cancelled, the program's handler runs, and its ``then`` (resume / retry L max N / goto L /
escalate) is applied. Anything without a program handler goes to the injected ``Escalator``.
Every loop and jump is bounded (loop bounds, jump and retry budgets, handler runs per monitor,
escalations per run, and a global step budget), so a run always ends.

Control flow uses private exceptions (_Jump, _Exit, _Replace) that unwind to the frame that
owns the target, which keeps the walker small and makes "jump from a handler inside a skill
back to a label of main" fall out naturally.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from frankenbot.common import AnomalyKind, ExitStatus, FailureCode, NodeStatus, kind_for_failure
from frankenbot.ports import CancelToken, PrimitiveExecutor, PrimitiveResult, Value
from frankenbot.program.binding import CallResolver, bind_args, bound_call
from frankenbot.program.catalog import Catalog, Signature, SignatureKind
from frankenbot.program.escalation import (
    Abort,
    Decision,
    EscalationContext,
    Escalator,
    GotoLabel,
    InsertCall,
    MonitorEvent,
    ReplaceProgram,
    RetryNode,
    SkipNode,
)
from frankenbot.program.predicates import compile_condition
from frankenbot.program.printer import print_stmt_head
from frankenbot.program.trace import TraceEntry
from frankenbot.program.tree import (
    MAIN,
    Call,
    Cond,
    Exit,
    Goto,
    If,
    Label,
    Monitor,
    Program,
    Repeat,
    Stmt,
    ThenKind,
    While,
    block_path,
    call_frame_path,
    insert_path,
    monitor_path,
    stmt_path,
)
from frankenbot.program.validator import MAX_LOOP_BOUND
from frankenbot.state import WorldSnapshot

DEFAULT_STEP_BUDGET = 500
DEFAULT_MAX_HANDLER_RUNS = 3  # per monitor per run; then the monitor escalates
DEFAULT_MAX_ESCALATIONS = 10  # per run; then the run ends ESCALATED
FRESH_VIEW_WAIT_S = 0.5  # wall s a condition after a primitive waits for a newer frame
MAX_SKILL_DEPTH = 8
TRACE_TAIL = 20  # entries given to the escalator

_RETRY, _CONTINUE = "retry", "continue"


@dataclass(frozen=True)
class RunResult:
    status: ExitStatus
    reason: str
    trace: tuple[TraceEntry, ...]
    steps: int
    escalations: int = 0
    replaced: int = 0  # how many times ReplaceProgram swapped the program
    program: Program | None = None  # the program that was running at the end


@dataclass
class _Frame:
    """main or one skill call: its body, path prefix, labels and parameter values."""

    body: tuple[Stmt, ...]
    prefix: str
    labels: dict[str, int]
    values: dict[str, Value] = field(default_factory=dict)
    skill: str = ""

    @property
    def bindings(self) -> dict[str, str]:
        return {k: v for k, v in self.values.items() if isinstance(v, str)}


class _Jump(Exception):  # control flow, not an error
    def __init__(self, label: str, frame: _Frame) -> None:
        self.label, self.frame = label, frame


class _Exit(Exception):
    def __init__(self, status: ExitStatus, reason: str) -> None:
        self.status, self.reason = status, reason


class _Replace(Exception):
    def __init__(self, program: Program) -> None:
        self.program = program


class _HandlerFailed(Exception):
    def __init__(self, detail: str) -> None:
        self.detail = detail


def _labels(body: tuple[Stmt, ...]) -> dict[str, int]:
    return {s.name: i for i, s in enumerate(body) if isinstance(s, Label)}


class Interpreter:
    """Runs one program; create a new Interpreter per run.

    Thread model: ``run`` on the control thread; ``deliver``, ``cancel``, ``monitors_active``
    and ``active_path`` may be called from any thread (state they touch is under ``_lock``).
    """

    def __init__(self, program: Program, catalog: Catalog, executor: PrimitiveExecutor, *,
                 snapshot: Callable[[], WorldSnapshot], escalator: Escalator | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 step_budget: int = DEFAULT_STEP_BUDGET,
                 on_trace: Callable[[TraceEntry], None] | None = None,
                 max_handler_runs: int = DEFAULT_MAX_HANDLER_RUNS,
                 max_escalations: int = DEFAULT_MAX_ESCALATIONS) -> None:
        if not isinstance(program, Program):
            raise TypeError(f"program must be a Program, got {type(program).__name__}")
        if step_budget < 1:
            raise ValueError(f"step_budget must be >= 1, got {step_budget!r}")
        self._program = program
        self._catalog = catalog
        self._resolver = CallResolver(program, catalog)
        self._executor = executor
        self._snapshot = snapshot
        self._escalator = escalator
        self._clock = clock
        self._step_budget = step_budget
        self._on_trace = on_trace
        self._max_handler_runs = max_handler_runs
        self._max_escalations = max_escalations
        # control-thread state
        self._trace: list[TraceEntry] = []
        self._steps = 0
        self._budgets: dict[str, int] = {}
        self._escalations = 0
        self._replaced = 0
        self._text_cache: dict[int, str] = {}
        self._cond_cache: dict[tuple[int, tuple[tuple[str, str], ...]], Callable] = {}
        self._main: _Frame | None = None
        self._started = False
        # the scene's stamp when the last primitive returned (a condition waits for a newer
        # frame), and whether the scene is a live stream here (its stamp has moved)
        self._acted_stamp: float | None = None
        self._seen_stamp: float | None = None
        self._live_scene = False
        # shared with other threads
        self._lock = threading.Lock()  # guards the fields below
        self._pending: list[MonitorEvent] = []
        self._token: CancelToken | None = None
        # the calls running now, outermost first: (name, bound argument values), for `during`
        self._call_names: tuple[tuple[str, dict[str, Value]], ...] = ()
        self._handler: str = ""
        self._path = ""
        self._cancel_reason: str | None = None
        self._done = False

    # ------------------------------------------------------------------- thread-safe API
    @property
    def program(self) -> Program:
        return self._program

    @property
    def active_path(self) -> str:
        with self._lock:
            return self._path

    def deliver(self, event: MonitorEvent) -> None:
        """Preempt: queue the event and cancel the running primitive (any thread)."""
        with self._lock:
            if self._done:
                return
            if not event.builtin and self._handler:
                return  # program monitors are off while a handler runs
            if any(e.name == event.name for e in self._pending):
                return  # already queued
            self._pending.append(event)
            token = self._token
            # a handler's own primitive is only stopped by the e-stop; other built-in events
            # wait until the handler is over
            if self._handler and event.kind != AnomalyKind.ESTOP:
                token = None
        if token is not None:
            token.cancel(f"monitor {event.name}: {event.kind.value}")

    def cancel(self, reason: str = "cancelled") -> None:
        """End the run with CANCELLED at the next chance (the running primitive is cancelled)."""
        with self._lock:
            self._cancel_reason = reason or "cancelled"
            token = self._token
        if token is not None:
            token.cancel(reason)

    def monitors_active(self, now: float | None = None) -> list[Monitor]:
        """Program monitors in scope now: those without ``during`` while the run is live, and
        those whose ``during`` matches a running primitive or skill (its name, and the bound
        values of any arguments the scope names, skill parameters substituted). None while a
        handler runs. ``now`` is accepted for the monitor loop's convenience."""
        with self._lock:
            if self._done or not self._started or self._handler:
                return []
            names = self._call_names
        return [m for m in self._program.monitors
                if not m.during or any(sc.matches(n, v) for sc in m.during for n, v in names)]

    # ------------------------------------------------------------------------------ run
    def run(self) -> RunResult:
        if self._started:
            raise RuntimeError("an Interpreter runs once; create a new one")
        with self._lock:
            self._started = True
        status, reason = ExitStatus.SUCCESS, "main finished"
        while True:
            program = self._program
            self._main = _Frame(program.main.body, MAIN, _labels(program.main.body))
            try:
                self._run_frame(self._main)
                status, reason = ExitStatus.SUCCESS, "main finished"
            except _Exit as e:
                status, reason = e.status, e.reason
            except _Replace as r:
                self._replaced += 1
                self._program = r.program
                self._resolver = CallResolver(r.program, self._catalog)
                self._budgets = {}
                self._emit(MAIN, "main", 0, "jump", NodeStatus.RUNNING,
                           "program replaced; running the new main from the start")
                continue
            except _Jump as j:  # only a bug could get here: a jump no frame owns
                status, reason = ExitStatus.ERROR, f"jump to unknown label {j.label!r}"
            except Exception as e:  # reported as an ERROR result, not raised
                status, reason = ExitStatus.ERROR, f"internal error: {type(e).__name__}: {e}"
            break
        with self._lock:
            self._done = True
            self._token = None
            self._call_names = ()
        self._emit(MAIN, "main", 0, "leave",
                   NodeStatus.SUCCESS if status == ExitStatus.SUCCESS else NodeStatus.FAILURE,
                   f"{status.value}: {reason}")
        return RunResult(status, reason, tuple(self._trace), self._steps, self._escalations,
                         self._replaced, self._program)

    # ---------------------------------------------------------------------------- trace
    def _text(self, node: Stmt | str) -> str:
        key = id(node)
        text = self._text_cache.get(key)
        if text is None:
            text = print_stmt_head(node) if not isinstance(node, str) else node
            self._text_cache[key] = text
        return text

    def _emit(self, path: str, node: Stmt | str, line: int, event: str, status: NodeStatus,
              detail: str = "") -> None:
        text = node if isinstance(node, str) else self._text(node)
        entry = TraceEntry(self._clock(), path, text, line, event, status, detail)
        self._trace.append(entry)
        if self._on_trace is not None:
            self._on_trace(entry)

    # ---------------------------------------------------------------------------- walk
    def _run_frame(self, frame: _Frame) -> None:
        pc, body = 0, frame.body
        while pc < len(body):
            try:
                self._exec(body[pc], f"{frame.prefix}/{pc}", frame)
                pc += 1
            except _Jump as j:
                if j.frame is not frame:
                    raise
                pc = frame.labels[j.label]

    def _run_block(self, stmts: tuple[Stmt, ...], prefix: str, frame: _Frame) -> None:
        for i, s in enumerate(stmts):
            self._exec(s, stmt_path(prefix, i), frame)

    def _step(self, path: str) -> None:
        """Between nodes: count the step, honour cancel, take a pending event."""
        self._steps += 1
        with self._lock:
            self._path = path
            cancel = self._cancel_reason
            event = self._pending.pop(0) if self._pending and not self._handler else None
        if cancel is not None:
            raise _Exit(ExitStatus.CANCELLED, cancel)
        if self._steps > self._step_budget:
            raise _Exit(ExitStatus.BUDGET_EXCEEDED,
                        f"step budget of {self._step_budget} nodes used up at {path}")
        if event is not None:
            self._handle_event(event, path, None, interrupted=False)

    def _exec(self, s: Stmt, path: str, frame: _Frame) -> None:
        self._step(path)
        line = s.span.line
        if isinstance(s, Call):
            self._call(s, path, frame)
        elif isinstance(s, If):
            taken = self._cond(s.cond, frame)
            self._emit(path, s, line, "enter", NodeStatus.RUNNING, f"condition {taken}")
            if taken:
                self._run_block(s.then, block_path(path, "then"), frame)
            else:
                self._run_block(s.orelse, block_path(path, "else"), frame)
            self._emit(path, s, line, "leave", NodeStatus.SUCCESS)
        elif isinstance(s, Repeat):
            self._emit(path, s, line, "enter", NodeStatus.RUNNING)
            for _ in range(s.count):
                self._run_block(s.body, block_path(path, "body"), frame)
            self._emit(path, s, line, "leave", NodeStatus.SUCCESS)
        elif isinstance(s, While):
            bound = s.bound if s.bound is not None else MAX_LOOP_BOUND
            self._emit(path, s, line, "enter", NodeStatus.RUNNING)
            n = 0
            while self._cond(s.cond, frame):
                if n >= bound:
                    break
                self._run_block(s.body, block_path(path, "body"), frame)
                n += 1
            self._emit(path, s, line, "leave", NodeStatus.SUCCESS, f"{n} iteration(s)")
        elif isinstance(s, Label):
            self._emit(path, s, line, "enter", NodeStatus.SUCCESS)
        elif isinstance(s, Goto):
            self._goto(s, path, frame)
        elif isinstance(s, Exit):
            self._emit(path, s, line, "enter",
                       NodeStatus.SUCCESS if s.success else NodeStatus.FAILURE, s.reason)
            raise _Exit(ExitStatus.SUCCESS if s.success else ExitStatus.FAILURE,
                        s.reason or ("exit success" if s.success else "exit failure"))
        else:
            raise _Exit(ExitStatus.ERROR, f"unknown statement {type(s).__name__} at {path}")

    def _cond(self, cond: Cond, frame: _Frame) -> bool:
        bindings = tuple(sorted(frame.bindings.items()))
        key = (id(cond), bindings)
        check = self._cond_cache.get(key)
        if check is None:
            check = compile_condition(cond, dict(bindings))
            self._cond_cache[key] = check
        return bool(check(self._after_action_snapshot()))

    def _scene_stamp(self, snap: WorldSnapshot | None = None) -> float:
        """The scene's stamp now (noting whether the scene streams: its stamp has moved)."""
        stamp = float((snap or self._snapshot()).scene.stamp)
        if self._seen_stamp is not None and stamp != self._seen_stamp:
            self._live_scene = True
        self._seen_stamp = stamp
        return stamp

    def _after_action_snapshot(self) -> WorldSnapshot:
        """The snapshot a condition judges: after a primitive, one whose scene comes from a
        frame newer than the one current when the primitive returned. A check right after a
        place (``if not in(x, bowl)``) must not judge the frame that still showed x in the
        gripper: a sort program had judged a good place failed 13 ms after it, picked again
        and lifted the bowl with the block in it. Only for a streaming scene, at most
        FRESH_VIEW_WAIT_S of wall time; a stale scene is judged as it is (the stale monitor
        handles it)."""
        snap = self._snapshot()
        acted, self._acted_stamp = self._acted_stamp, None
        if acted is None:
            return snap
        deadline = time.monotonic() + FRESH_VIEW_WAIT_S
        while not (self._scene_stamp(snap) > acted or not self._live_scene
                   or snap.scene.stale or time.monotonic() >= deadline):
            with self._lock:
                if self._cancel_reason is not None:
                    break
            time.sleep(0.01)
            snap = self._snapshot()
        return snap

    def _goto(self, g: Goto, path: str, frame: _Frame) -> None:
        if g.label not in frame.labels:
            raise _Exit(ExitStatus.ERROR, f"goto to undefined label {g.label!r} at {path}")
        if g.budget is not None:
            key = f"goto:{path}"
            used = self._budgets.get(key, 0)
            if used >= g.budget:  # like a loop bound: fall through to what follows
                self._emit(path, g, g.span.line, "jump", NodeStatus.SKIPPED,
                           f"budget of {g.budget} used up; falling through")
                return
            self._budgets[key] = used + 1
        self._emit(path, g, g.span.line, "jump", NodeStatus.SUCCESS, f"to {g.label}")
        raise _Jump(g.label, frame)

    # ---------------------------------------------------------------------------- calls
    def _call(self, call: Call, path: str, frame: _Frame) -> None:
        sig = self._resolver.signature(call.name)
        line = call.span.line
        if sig is None or sig.kind == SignatureKind.PREDICATE:
            raise _Exit(ExitStatus.ERROR, f"{call.name} is not a primitive or skill ({path})")
        values = bind_args(call, sig, frame.values)
        if isinstance(values, str):
            self._emit(path, call, line, "leave", NodeStatus.FAILURE, values)
            if self._handler:
                raise _HandlerFailed(values)
            raise _Exit(ExitStatus.ERROR, f"bad call at {path}: {values}")
        if sig.kind == SignatureKind.SKILL:
            self._run_skill(call, path, values)
            return
        while True:
            if self._run_primitive(call, path, sig, values) == _CONTINUE:
                return

    def _run_primitive(self, call: Call, path: str, sig: Signature,
                       values: dict[str, Value]) -> str:
        """One attempt; returns _RETRY to run the call again, _CONTINUE to move on."""
        token = CancelToken()
        with self._lock:
            self._token = token
            self._call_names = self._call_names + ((call.name, values),)
            if self._handler:
                preempt = any(e.kind == AnomalyKind.ESTOP for e in self._pending)
            else:
                preempt = bool(self._pending)
            preempt = preempt or self._cancel_reason is not None
        if preempt:
            token.cancel("event pending")
        line = call.span.line
        self._emit(path, call, line, "enter", NodeStatus.RUNNING)
        self._scene_stamp()  # (a streaming scene has moved on by the call's end)
        try:
            result = self._executor.execute(call.name, values, token)
            if not isinstance(result, PrimitiveResult):
                result = PrimitiveResult.failure(FailureCode.ABORTED,
                                                 f"executor returned {type(result).__name__}")
        except Exception as e:  # an executor must not raise; contain it
            result = PrimitiveResult.failure(FailureCode.ABORTED,
                                             f"executor raised {type(e).__name__}: {e}")
        self._acted_stamp = self._scene_stamp()
        with self._lock:
            self._token = None
            self._call_names = self._call_names[:-1]
            cancel = self._cancel_reason
            event = self._pending.pop(0) if self._pending else None
        if cancel is not None:
            self._emit(path, call, line, "leave", NodeStatus.PREEMPTED, cancel)
            raise _Exit(ExitStatus.CANCELLED, cancel)
        if event is not None and event.kind == AnomalyKind.ESTOP:
            self._emit(path, call, line, "preempt", NodeStatus.PREEMPTED, event.detail)
            raise _Exit(ExitStatus.ESTOP, f"e-stop: {event.detail or event.name}")
        if result.code == FailureCode.ESTOP:
            self._emit(path, call, line, "leave", NodeStatus.FAILURE, result.detail)
            raise _Exit(ExitStatus.ESTOP, f"e-stop during {call.name}: {result.detail}")
        if self._handler:  # inside a handler: no nested recovery, report up
            if event is not None:
                with self._lock:
                    self._pending.insert(0, event)  # handled after the handler
            if not result.ok:
                self._emit(path, call, line, "leave", NodeStatus.FAILURE,
                           f"{result.code.value}: {result.detail}")
                raise _HandlerFailed(f"{call.name} failed: {result.code.value} {result.detail}")
            self._emit(path, call, line, "leave", NodeStatus.SUCCESS, result.detail)
            return _CONTINUE
        if event is not None:
            interrupted = not result.ok
            self._emit(path, call, line, "preempt",
                       NodeStatus.PREEMPTED if interrupted else NodeStatus.SUCCESS,
                       f"{event.name}: {event.kind.value}")
            return self._handle_event(event, path, bound_call(call, sig, values),
                                      interrupted=interrupted)
        if result.ok:
            self._emit(path, call, line, "leave", NodeStatus.SUCCESS, result.detail)
            return _CONTINUE
        self._emit(path, call, line, "leave", NodeStatus.FAILURE,
                   f"{result.code.value}: {result.detail}")
        kind = kind_for_failure(result.code)
        ev = MonitorEvent(f"primitive:{call.name}", kind, result.detail or result.code.value,
                          self._clock(), builtin=True)
        return self._escalate(ev, path, bound_call(call, sig, values), failure=result)

    def _run_skill(self, call: Call, path: str, values: dict[str, Value]) -> None:
        skill = self._resolver.skill_def(call.name)
        if skill is None:
            raise _Exit(ExitStatus.ERROR, f"skill {call.name!r} has no body ({path})")
        with self._lock:
            depth = len(self._call_names)
            self._call_names = self._call_names + ((call.name, values),)
        try:
            if depth >= MAX_SKILL_DEPTH:
                raise _Exit(ExitStatus.ERROR, f"skills nested deeper than {MAX_SKILL_DEPTH}")
            self._emit(path, call, call.span.line, "enter", NodeStatus.RUNNING, "skill")
            frame = _Frame(skill.body, call_frame_path(path, skill.name), _labels(skill.body),
                           dict(values), skill.name)
            self._run_frame(frame)
            self._emit(path, call, call.span.line, "leave", NodeStatus.SUCCESS, "skill")
        finally:
            with self._lock:
                self._call_names = self._call_names[:-1]

    # --------------------------------------------------------------------- anomalies
    def _handle_event(self, event: MonitorEvent, path: str, call: Call | None,
                      interrupted: bool) -> str:
        if event.kind == AnomalyKind.ESTOP:
            raise _Exit(ExitStatus.ESTOP, f"e-stop: {event.detail or event.name}")
        monitor = None if event.builtin else self._program.monitor(event.name)
        if monitor is None:
            return self._escalate(event, path, call, interrupted=interrupted)
        key = f"handler:{monitor.name}"
        runs = self._budgets.get(key, 0)
        if runs >= self._max_handler_runs:
            return self._escalate(event, path, call, handler_ran=True, interrupted=interrupted,
                                  note=f"handler of {monitor.name} ran {runs} times")
        self._budgets[key] = runs + 1
        hpath = monitor_path(monitor.name)
        self._emit(hpath, f"monitor {monitor.name}", monitor.span.line, "handler",
                   NodeStatus.RUNNING, f"{event.kind.value}: {event.detail}")
        with self._lock:
            self._handler = monitor.name
            self._pending = [e for e in self._pending if e.builtin]
        failed = ""
        try:
            self._run_block(monitor.handler, hpath, self._main or _Frame((), MAIN, {}))
        except _HandlerFailed as e:
            failed = e.detail
        finally:
            with self._lock:
                self._handler = ""
        if failed:  # escalate outside the handler: the escalator's decision runs as main
            self._emit(hpath, f"monitor {monitor.name}", monitor.span.line, "handler",
                       NodeStatus.FAILURE, failed)
            return self._escalate(event, path, call, handler_ran=True, interrupted=interrupted,
                                  note=f"handler failed: {failed}")
        self._emit(hpath, f"monitor {monitor.name}", monitor.span.line, "handler",
                   NodeStatus.SUCCESS, f"then {monitor.then.kind}")
        then = monitor.then
        if then.kind == ThenKind.RESUME:
            return _RETRY if interrupted else _CONTINUE
        if then.kind == ThenKind.GOTO:
            self._jump_main(then.label, hpath)
        if then.kind == ThenKind.RETRY:
            rkey = f"retry:{monitor.name}"
            used = self._budgets.get(rkey, 0)
            budget = then.budget if then.budget is not None else 1
            if used < budget:
                self._budgets[rkey] = used + 1
                self._jump_main(then.label, hpath)
            return self._escalate(event, path, call, handler_ran=True, interrupted=interrupted,
                                  note=f"retry budget of {monitor.name} used ({budget})")
        return self._escalate(event, path, call, handler_ran=True, interrupted=interrupted)

    def _jump_main(self, label: str, path: str) -> None:
        assert self._main is not None
        if label not in self._main.labels:
            raise _Exit(ExitStatus.ERROR, f"jump to undefined label {label!r} from {path}")
        self._emit(path, f"-> {label}", 0, "jump", NodeStatus.SUCCESS, f"to {label}")
        raise _Jump(label, self._main)

    def _escalate(self, event: MonitorEvent, path: str, call: Call | None, *,
                  failure: PrimitiveResult | None = None, handler_ran: bool = False,
                  interrupted: bool = True, note: str = "") -> str:
        what = f"{event.kind.value} ({event.name})" + (f"; {note}" if note else "")
        if self._escalator is None:
            if failure is not None:
                raise _Exit(ExitStatus.FAILURE,
                            f"{call.name if call else path} failed: {failure.code.value} "
                            f"{failure.detail}".strip())
            raise _Exit(ExitStatus.ESCALATED, f"{what}: no escalator")
        if self._escalations >= self._max_escalations:
            raise _Exit(ExitStatus.ESCALATED,
                        f"{what}: escalation budget of {self._max_escalations} used up")
        self._escalations += 1
        self._emit(path, call if call is not None else path, call.span.line if call else 0,
                   "escalate", NodeStatus.RUNNING, what)
        ctx = EscalationContext(
            self._program, path, call, event, tuple(self._trace[-TRACE_TAIL:]),
            dict(self._budgets, escalations=self._escalations), failure, handler_ran,
            tuple(self._main.labels) if self._main else ())
        try:
            decision: Decision = self._escalator.escalate(ctx)
        except Exception as e:  # a broken escalator ends the run cleanly
            raise _Exit(ExitStatus.ERROR, f"escalator raised {type(e).__name__}: {e}") from e
        self._emit(path, type(decision).__name__, 0, "escalate", NodeStatus.SUCCESS,
                   repr(decision)[:200])
        if isinstance(decision, RetryNode):
            return _RETRY if (call is not None and interrupted) else _CONTINUE
        if isinstance(decision, SkipNode):
            return _CONTINUE
        if isinstance(decision, GotoLabel):
            self._jump_main(decision.label, path)
        if isinstance(decision, InsertCall):
            self._call(decision.call, insert_path(path), self._main or _Frame((), MAIN, {}))
            return _RETRY if (call is not None and interrupted) else _CONTINUE
        if isinstance(decision, Abort):
            raise _Exit(ExitStatus.ESCALATED, decision.reason or what)
        if isinstance(decision, ReplaceProgram):
            if not isinstance(decision.program, Program):
                raise _Exit(ExitStatus.ERROR, "ReplaceProgram without a Program")
            raise _Replace(decision.program)
        raise _Exit(ExitStatus.ERROR, f"unknown decision {decision!r}")
