"""Interpreter: node-by-node execution, bounds, skills, preemption with every handler outcome,
escalation decisions, cancel and e-stop. A fake executor stands in for the robot."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from frankenbot.common import AnomalyKind, ExitStatus, FailureCode, NodeStatus
from frankenbot.ports import CancelToken, PrimitiveResult
from frankenbot.program import (
    Arg,
    Call,
    Ident,
    catalog_with,
    default_catalog,
    parse_program,
    parse_skills,
)
from frankenbot.program.escalation import (
    Abort,
    EscalationContext,
    GotoLabel,
    InsertCall,
    MonitorEvent,
    ReplaceProgram,
    RetryNode,
    SkipNode,
)
from frankenbot.program.interpreter import Interpreter
from frankenbot.program.trace import trace_from_json, trace_to_json
from frankenbot.state import RobotSnapshot, Scene, SceneObject, WorldSnapshot


class World:
    """Mutable brain state the fake primitives change and predicates read."""

    def __init__(self) -> None:
        self.held: str | None = None
        self.objects = {
            "red_block": SceneObject("red_block", "red block", "block", "red",
                                     (0.5, 0.0, 0.02), (0.04, 0.04, 0.04)),
            "green_bowl": SceneObject("green_bowl", "green bowl", "bowl", "green",
                                      (0.5, 0.2, 0.03), (0.16, 0.16, 0.06)),
        }

    def snapshot(self) -> WorldSnapshot:
        width = 0.04 if self.held else 0.085
        return WorldSnapshot(RobotSnapshot(gripper_width=width, held_object=self.held),
                             Scene.of(self.objects.values()))


class FakeExecutor:
    """Runs primitives against World; ``script[name]`` is a list of results to return in turn
    (default success); names in ``block`` wait for the CancelToken (return PREEMPTED)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.calls: list[tuple[str, dict]] = []
        self.script: dict[str, list[PrimitiveResult]] = {}
        self.block: dict[str, int] = {}  # name -> how many more times to block
        self.on_start: dict[str, object] = {}  # name -> callable run in a thread on start

    def execute(self, name, args, cancel: CancelToken) -> PrimitiveResult:
        self.calls.append((name, dict(args)))
        hook = self.on_start.pop(name, None)
        if hook is not None:
            threading.Thread(target=hook, daemon=True).start()
        if self.block.get(name, 0) > 0:
            self.block[name] -= 1
            if cancel.wait(5.0):
                return PrimitiveResult.failure(FailureCode.PREEMPTED, cancel.reason)
            return PrimitiveResult.failure(FailureCode.TIMEOUT, "never preempted")
        if cancel.cancelled:
            return PrimitiveResult.failure(FailureCode.PREEMPTED, cancel.reason)
        queued = self.script.get(name)
        if queued:
            result = queued.pop(0)
            if not result.ok:
                return result
        if name == "pick":
            self.world.held = str(args["obj"])
        elif name in ("place_in", "place_on"):
            obj = self.world.objects[str(args["obj"])]
            target = self.world.objects[str(args.get("container", args.get("target")))]
            self.world.objects[obj.object_id] = replace(
                obj, position=(target.position[0], target.position[1], 0.025))
            self.world.held = None
        return PrimitiveResult.success()

    def names(self) -> list[str]:
        return [n for n, _a in self.calls]


class FakeEscalator:
    def __init__(self, *decisions) -> None:
        self.decisions = list(decisions)
        self.contexts: list[EscalationContext] = []

    def escalate(self, ctx: EscalationContext):
        self.contexts.append(ctx)
        return self.decisions.pop(0) if self.decisions else Abort("no more decisions")


def make(text: str, escalator=None, catalog=None, **kw):
    world = World()
    ex = FakeExecutor(world)
    program = parse_program(text).program
    interp = Interpreter(program, catalog or default_catalog(), ex, snapshot=world.snapshot,
                         escalator=escalator, **kw)
    return interp, ex, world


def task(body: str, extra: str = "") -> str:
    return f'task "t" {{ main {{ {body} }} {extra} }}'


def deliver_later(interp: Interpreter, event: MonitorEvent, delay: float = 0.02):
    def go() -> None:
        threading.Event().wait(delay)
        interp.deliver(event)
    return go


def test_sequence_runs_in_order_and_traces_enter_and_leave_with_paths():
    seen = []
    interp, ex, world = make(task("pick(obj=red_block) place_in(obj=red_block, "
                                  "container=green_bowl) home()"), on_trace=seen.append)
    result = interp.run()
    assert result.status == ExitStatus.SUCCESS
    assert ex.names() == ["pick", "place_in", "home"]
    assert ex.calls[1][1] == {"obj": "red_block", "container": "green_bowl"}
    leaves = [(e.path, e.status) for e in result.trace if e.event == "leave"]
    assert leaves[:3] == [("main/0", NodeStatus.SUCCESS), ("main/1", NodeStatus.SUCCESS),
                          ("main/2", NodeStatus.SUCCESS)]
    assert seen == list(result.trace)
    assert result.trace[0].node == "pick(obj=red_block)" and result.trace[0].line == 1
    assert trace_from_json(trace_to_json(result.trace)) == result.trace


def test_if_else_follows_the_predicate_on_the_current_snapshot():
    text = task("pick(obj=red_block) if holding(red_block) { home() } else { open_gripper() } "
                "place_in(obj=red_block, container=green_bowl) "
                "if in(red_block, green_bowl) { exit success \"done\" } exit failure \"missed\"")
    interp, ex, _w = make(text)
    result = interp.run()
    assert ex.names() == ["pick", "home", "place_in"]
    assert (result.status, result.reason) == (ExitStatus.SUCCESS, "done")


def test_repeat_runs_n_times_and_while_stops_at_its_bound():
    interp, ex, _w = make(task("repeat 3 { wait(seconds=0.1) } "
                               "while not holding(green_bowl) max 2 { home() }"))
    assert interp.run().status == ExitStatus.SUCCESS
    assert ex.names() == ["wait"] * 3 + ["home"] * 2
    assert ex.calls[0][1] == {"seconds": 0.1}


def test_while_ends_when_condition_turns_false():
    interp, ex, _w = make(task("while not holding(red_block) max 5 { pick(obj=red_block) }"))
    assert interp.run().status == ExitStatus.SUCCESS
    assert ex.names() == ["pick"]


def test_backward_goto_loops_within_budget_then_falls_through():
    interp, ex, _w = make(task('start: home() goto start max 2 exit failure "gave up"'))
    result = interp.run()
    assert (result.status, result.reason) == (ExitStatus.FAILURE, "gave up")
    assert ex.names() == ["home"] * 3
    jumps = [e.status for e in result.trace if e.event == "jump"]
    assert jumps == [NodeStatus.SUCCESS, NodeStatus.SUCCESS, NodeStatus.SKIPPED]


def test_forward_goto_skips_and_exit_failure_reports_reason():
    interp, ex, _w = make(task('goto end home() end: exit failure "no bowl"'))
    result = interp.run()
    assert ex.names() == []
    assert (result.status, result.reason) == (ExitStatus.FAILURE, "no bowl")


def test_global_step_budget_ends_runaway_programs():
    interp, ex, _w = make(task("start: home() goto start"), step_budget=50)
    result = interp.run()
    assert result.status == ExitStatus.BUDGET_EXCEEDED and result.steps == 51


def test_local_and_library_skills_run_their_bodies_with_bound_parameters():
    lib = parse_skills('skill stash(obj: object, bowl: object) "pick then place" '
                       '{ pick(obj=obj) if holding(obj) { place_in(obj=obj, container=bowl) } }')
    cat = catalog_with(default_catalog(), lib)
    text = task("twice(s=0.5) stash(obj=red_block, bowl=green_bowl)",
                "skill twice(s: number) { repeat 2 { wait(seconds=s) } }")
    interp, ex, world = make(text, catalog=cat)
    result = interp.run()
    assert result.status == ExitStatus.SUCCESS
    assert ex.calls == [("wait", {"seconds": 0.5}), ("wait", {"seconds": 0.5}),
                        ("pick", {"obj": "red_block"}),
                        ("place_in", {"obj": "red_block", "container": "green_bowl"})]
    paths = [e.path for e in result.trace if e.event == "leave"]
    assert "main/1/stash/1/then/0" in paths and "main/0/twice/0/body/0" in paths


def test_preemption_with_resume_reruns_the_interrupted_call_after_the_handler():
    text = task("pick(obj=red_block) place_in(obj=red_block, container=green_bowl)",
                "monitor dropped when not holding(red_block) during place_in "
                "{ pick(obj=red_block) then resume }")
    interp, ex, world = make(text)
    ex.block["place_in"] = 1
    ex.on_start["place_in"] = deliver_later(
        interp, MonitorEvent("dropped", AnomalyKind.PROGRAM_MONITOR, "grasp lost", 0.0))
    result = interp.run()
    assert result.status == ExitStatus.SUCCESS
    assert ex.names() == ["pick", "place_in", "pick", "place_in"]
    events = [(e.event, e.path) for e in result.trace]
    assert ("preempt", "main/1") in events and ("handler", "monitor:dropped") in events
    assert ("leave", "monitor:dropped/0") in events


def test_preemption_with_retry_jumps_to_the_label_then_escalates_when_budget_is_spent():
    text = task("start: detect(obj=green_bowl) place_in(obj=red_block, container=green_bowl)",
                "monitor moved when not visible(green_bowl) { home() then retry start max 1 }")
    esc = FakeEscalator(SkipNode())
    interp, ex, _w = make(text, escalator=esc)
    ex.block["place_in"] = 2
    ev = MonitorEvent("moved", AnomalyKind.PROGRAM_MONITOR, "bowl gone", 0.0)
    ex.on_start["place_in"] = deliver_later(interp, ev)

    def second_start():  # after the first handler, the bowl "moves" again
        ex.on_start["place_in"] = deliver_later(interp, ev)
    ex.on_start["home"] = second_start
    result = interp.run()
    assert result.status == ExitStatus.SUCCESS
    assert ex.names() == ["detect", "place_in", "home", "detect", "place_in", "home"]
    (ctx,) = esc.contexts
    assert ctx.handler_ran and ctx.node_path == "main/2" and ctx.event.name == "moved"
    assert ctx.call == Call("place_in", (Arg("obj", Ident("red_block")),
                                         Arg("container", Ident("green_bowl"))))
    assert ctx.budgets_used["retry:moved"] == 1


def test_preemption_with_goto_continues_from_the_label():
    text = task("place_in(obj=red_block, container=green_bowl) exit failure \"not reached\" "
                "recover: home()",
                "monitor m when gripper_open during place_in { open_gripper() then goto recover }")
    interp, ex, _w = make(text)
    ex.block["place_in"] = 1
    ex.on_start["place_in"] = deliver_later(
        interp, MonitorEvent("m", AnomalyKind.PROGRAM_MONITOR, "", 0.0))
    result = interp.run()
    assert result.status == ExitStatus.SUCCESS
    assert ex.names() == ["place_in", "open_gripper", "home"]


def test_then_escalate_hands_over_after_the_handler_and_applies_the_decision():
    text = task("start: pick(obj=red_block) home()",
                "monitor m when gripper_open during pick { open_gripper() then escalate }")
    esc = FakeEscalator(RetryNode())
    interp, ex, _w = make(text, escalator=esc)
    ex.block["pick"] = 1
    ex.on_start["pick"] = deliver_later(
        interp, MonitorEvent("m", AnomalyKind.PROGRAM_MONITOR, "", 0.0))
    result = interp.run()
    assert result.status == ExitStatus.SUCCESS
    assert ex.names() == ["pick", "open_gripper", "pick", "home"]
    assert esc.contexts[0].handler_ran and esc.contexts[0].labels == ("start",)


def test_then_escalate_without_an_escalator_ends_escalated():
    text = task("pick(obj=red_block)", "monitor m when gripper_open { then escalate }")
    interp, ex, _w = make(text)
    ex.block["pick"] = 1
    ex.on_start["pick"] = deliver_later(
        interp, MonitorEvent("m", AnomalyKind.PROGRAM_MONITOR, "", 0.0))
    assert interp.run().status == ExitStatus.ESCALATED


@pytest.mark.parametrize("decision, expected_calls, status", [
    (RetryNode(), ["home", "pick", "pick", "open_gripper"], ExitStatus.SUCCESS),
    (SkipNode(), ["home", "pick", "open_gripper"], ExitStatus.SUCCESS),
    (GotoLabel("start"), ["home", "pick", "home", "pick", "open_gripper"], ExitStatus.SUCCESS),
    (InsertCall(Call("detect", (Arg("obj", Ident("red_block")),))),
     ["home", "pick", "detect", "pick", "open_gripper"], ExitStatus.SUCCESS),
    (Abort("give up"), ["home", "pick"], ExitStatus.ESCALATED),
])
def test_builtin_event_without_handler_goes_to_the_escalator(decision, expected_calls, status):
    esc = FakeEscalator(decision)
    interp, ex, _w = make(task("start: home() pick(obj=red_block) open_gripper()"),
                          escalator=esc)
    ex.block["pick"] = 1
    ex.on_start["pick"] = deliver_later(
        interp, MonitorEvent("grasp_lost", AnomalyKind.GRASP_LOST, "slipped", 1.5, builtin=True))
    result = interp.run()
    assert ex.names() == expected_calls
    assert result.status == status
    ctx = esc.contexts[0]
    assert ctx.event.kind == AnomalyKind.GRASP_LOST and not ctx.handler_ran
    assert ctx.node_path == "main/2"
    assert [e.event for e in ctx.trace_tail[-2:]] == ["preempt", "escalate"]


def test_replace_program_swaps_in_the_new_main():
    new = parse_program(task("detect(obj=red_block) exit success \"replanned\"")).program
    esc = FakeEscalator(ReplaceProgram(new))
    interp, ex, _w = make(task("pick(obj=red_block) home()"), escalator=esc)
    ex.script["pick"] = [PrimitiveResult.failure(FailureCode.GRASP_FAILED, "empty")]
    result = interp.run()
    assert (result.status, result.reason, result.replaced) == (ExitStatus.SUCCESS, "replanned", 1)
    assert ex.names() == ["pick", "detect"] and result.program == new


def test_failed_primitive_without_escalator_fails_the_run():
    interp, ex, _w = make(task("pick(obj=red_block) home()"))
    ex.script["pick"] = [PrimitiveResult.failure(FailureCode.UNREACHABLE, "too far")]
    result = interp.run()
    assert result.status == ExitStatus.FAILURE and "unreachable" in result.reason
    assert ex.names() == ["pick"]


def test_failed_primitive_is_escalated_with_its_failure_kind():
    esc = FakeEscalator(RetryNode())
    interp, ex, _w = make(task("pick(obj=red_block)"), escalator=esc)
    ex.script["pick"] = [PrimitiveResult.failure(FailureCode.GRASP_FAILED, "closed on air")]
    assert interp.run().status == ExitStatus.SUCCESS
    ctx = esc.contexts[0]
    assert ctx.event.kind == AnomalyKind.GRASP_FAILED and ctx.failure.detail == "closed on air"
    assert ex.names() == ["pick", "pick"]


def test_escalation_budget_bounds_endless_retries():
    esc = FakeEscalator(*[RetryNode()] * 100)
    interp, ex, _w = make(task("pick(obj=red_block)"), escalator=esc, max_escalations=4)
    ex.script["pick"] = [PrimitiveResult.failure(FailureCode.GRASP_FAILED, "x")] * 100
    result = interp.run()
    assert result.status == ExitStatus.ESCALATED and len(esc.contexts) == 4


def test_handler_runs_per_monitor_are_bounded_then_escalated():
    text = task("start: pick(obj=red_block) goto start max 10",
                "monitor m when gripper_open during pick { home() then resume }")
    interp, ex, _w = make(text, max_handler_runs=2)
    ex.block["pick"] = 3

    def chain():  # the condition keeps holding: every pick is interrupted
        threading.Event().wait(0.02)
        interp.deliver(MonitorEvent("m", AnomalyKind.PROGRAM_MONITOR, "", 0.0))
        ex.on_start["pick"] = chain
    ex.on_start["pick"] = chain
    result = interp.run()
    assert result.status == ExitStatus.ESCALATED
    assert ex.names().count("home") == 2


def test_estop_event_ends_the_run_at_once():
    interp, ex, _w = make(task("pick(obj=red_block) home()"))
    ex.block["pick"] = 1
    ex.on_start["pick"] = deliver_later(
        interp, MonitorEvent("estop", AnomalyKind.ESTOP, "button", 0.0, builtin=True))
    result = interp.run()
    assert result.status == ExitStatus.ESTOP and ex.names() == ["pick"]


def test_cancel_from_another_thread_ends_the_run_cancelled():
    interp, ex, _w = make(task("pick(obj=red_block) home()"))
    ex.block["pick"] = 1
    ex.on_start["pick"] = lambda: (threading.Event().wait(0.02), interp.cancel("operator"))
    result = interp.run()
    assert (result.status, result.reason) == (ExitStatus.CANCELLED, "operator")
    assert ex.names() == ["pick"]


def test_event_between_nodes_runs_the_handler_before_the_next_node():
    text = task("home() open_gripper()", "monitor m when gripper_open { detect(obj=red_block) }")
    interp, ex, _w = make(text)
    original = ex.execute  # deliver right after home() returns, when no primitive runs

    def execute(name, args, cancel):
        r = original(name, args, cancel)
        if name == "home":
            interp.deliver(MonitorEvent("m", AnomalyKind.PROGRAM_MONITOR, "", 0.0))
        return r
    ex.execute = execute
    assert interp.run().status == ExitStatus.SUCCESS
    assert ex.names() == ["home", "detect", "open_gripper"]


def test_monitors_active_follows_during_scope_and_is_empty_in_handlers():
    text = task("pick(obj=red_block) home()",
                "monitor a when gripper_open during pick { then resume }\n"
                "monitor b when gripper_open { then resume }")
    interp, ex, _w = make(text)
    seen: dict[str, list[str]] = {}
    original = ex.execute

    def execute(name, args, cancel):
        seen[name] = [m.name for m in interp.monitors_active(0.0)]
        return original(name, args, cancel)
    ex.execute = execute
    assert interp.monitors_active(0.0) == []  # not started
    interp.run()
    assert seen == {"pick": ["a", "b"], "home": ["b"]}
    assert interp.monitors_active(0.0) == []  # finished


def test_an_interpreter_runs_once_and_rejects_non_programs():
    interp, _ex, _w = make(task("home()"))
    interp.run()
    with pytest.raises(RuntimeError):
        interp.run()
    with pytest.raises(TypeError):
        Interpreter("task", default_catalog(), FakeExecutor(World()),
                    snapshot=World().snapshot)


class _Camera:
    """A streaming scene over World: a thread takes a frame every ``period`` s; the scene is
    the newest frame (up to a period old), stamped when it was taken."""

    def __init__(self, world: World, period: float = 0.05) -> None:
        self.world, self.period = world, period
        self._frame = (0.0, dict(world.objects))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        k = 0
        while not self._stop.wait(self.period):
            k += 1
            self._frame = (k * self.period, dict(self.world.objects))

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def snapshot(self) -> WorldSnapshot:
        stamp, objects = self._frame
        width = 0.04 if self.world.held else 0.085
        return WorldSnapshot(RobotSnapshot(gripper_width=width, held_object=self.world.held),
                             Scene.of(objects.values(), stamp=stamp))


class _SlowExecutor(FakeExecutor):
    """Each primitive takes ``seconds``; its effect shows in the world at its end."""

    def __init__(self, world: World, seconds: float) -> None:
        super().__init__(world)
        self.seconds = seconds

    def execute(self, name, args, cancel: CancelToken) -> PrimitiveResult:
        threading.Event().wait(self.seconds)
        return super().execute(name, args, cancel)


@pytest.mark.parametrize("streaming", [True, False])
def test_a_condition_after_a_primitive_judges_a_newer_frame(streaming):
    """``place_in`` then ``if not in(x, bowl)``: the newest frame when the place returned was
    taken before it and still shows the block on the table; the check waits for the next
    frame of a streaming scene instead of judging the place failed. A scene whose stamp never
    moves is judged at once, as it is."""
    text = task("pick(obj=red_block) place_in(obj=red_block, container=green_bowl) "
                "if not in(red_block, green_bowl) { exit failure \"not in\" } exit success")
    world = World()
    ex = _SlowExecutor(world, 0.12)
    camera = _Camera(world, period=0.05)
    snapshot = camera.snapshot if streaming else world.snapshot
    interp = Interpreter(parse_program(text).program, default_catalog(), ex, snapshot=snapshot)
    try:
        result = interp.run()
    finally:
        camera.close()
    assert (result.status, result.reason) == (ExitStatus.SUCCESS, "exit success")
