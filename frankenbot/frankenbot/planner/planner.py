"""The planner: one VLM call per task, at most one repair round, or the offline planner.

    prompt -> call -> parse + validate -> (errors) one repair call with the compact diagnostics
           -> parse + validate -> (still errors) the task fails with a clear message

Nothing here moves the robot: a ``PlanOutcome`` with ``ok=False`` carries no program, so callers
have nothing to execute. A model answer that only refuses (``main { exit failure "why" }``) is a
refusal, not a program to run. Counting rules: ``vlm_calls`` = answers the model gave (first
call + repair); HTTP retries are in ``transport_retries``, and a call that got no answer at all
(a dead or restarting server, timeouts) or that the endpoint refused counts nothing.

Offline replanning (``planner/recovery.py``) re-plans the original instruction from the current
scene, clears an occupied target first, and refuses with the reason when the task has become
impossible; it costs 0 VLM calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from frankenbot import settings
from frankenbot.errors import PlannerError
from frankenbot.planner import language
from frankenbot.planner.frames import ObjectNotSeen
from frankenbot.planner.offline import plan_offline
from frankenbot.planner.prompt import DEFAULT_BUDGET_CHARS, PromptBuilder, repair_message
from frankenbot.planner.recovery import plan_recovery
from frankenbot.planner.request import FailureContext, PlannerKind, PlanOutcome, PlanRequest
from frankenbot.planner.vlm_client import VlmClient, VlmConfig, VlmError, VlmReply
from frankenbot.program.catalog import Catalog, default_catalog
from frankenbot.settings import section, setting

MAX_INSTRUCTION_CHARS = 2000


@dataclass(frozen=True)
class PlannerConfig:
    """How plans are made. ``max_repairs`` is 1 by design (0 only for ablations)."""

    planner_mode: str = setting("auto", "auto (VLM when an endpoint is configured, else "
                                "offline) | offline | vlm", choices=("auto", "offline", "vlm"))
    max_repairs: int = setting(1, "repair calls after an invalid first answer (1 by design; 0 "
                               "only for ablations)", low=0, high=1)
    prompt_budget_chars: int = setting(DEFAULT_BUDGET_CHARS, "prompt text budget; exemplars are "
                                       "trimmed first", unit="characters", low=1000)
    prompt_skill_bodies: bool = setting(False, "list skill bodies in the prompt, not only "
                                        "signatures and descriptions")
    vlm: VlmConfig = section(VlmConfig)

    def __post_init__(self) -> None:
        settings.validate(self, "planner")


def make_client(config: PlannerConfig) -> VlmClient | None:
    """A VLM client when an endpoint is configured (key or base URL), else None (offline)."""
    if not config.vlm.is_configured():
        return None
    return VlmClient(config.vlm, grammar=language.program_grammar("llguidance"),
                     guided_grammar=language.program_grammar("lark"),
                     gbnf=language.program_grammar("gbnf"), ebnf=language.program_grammar("ebnf"))


@dataclass
class _Tally:
    calls: int = 0
    repairs: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0

    def add(self, reply: VlmReply) -> None:
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        self.retries += reply.transport_retries


class Planner:
    """Turns a PlanRequest into a validated program (see module docstring)."""

    def __init__(self, config: PlannerConfig | None = None, client: VlmClient | None = None,
                 catalog: Catalog | None = None) -> None:
        self.config = config or PlannerConfig()
        self.client = client
        self.catalog = catalog or default_catalog()

    def kind_for(self, request: PlanRequest) -> PlannerKind:
        choice = request.planner or self.config.planner_mode
        if choice == "auto":
            return PlannerKind.VLM if self.client is not None else PlannerKind.OFFLINE
        try:
            return PlannerKind(choice)
        except ValueError as e:
            raise PlannerError(f"planner must be '', auto, offline or vlm, got {choice!r}") from e

    def plan(self, request: PlanRequest) -> PlanOutcome:
        return self._run(request, None)

    def replan(self, request: PlanRequest, failure: FailureContext) -> PlanOutcome:
        """Tier 3: a new program from the current scene given what failed."""
        return self._run(request, failure)

    # ------------------------------------------------------------------------------------------

    def _run(self, request: PlanRequest, failure: FailureContext | None) -> PlanOutcome:
        start = time.monotonic()
        try:
            kind = self.kind_for(request)
        except PlannerError as e:
            return PlanOutcome(False, "", None, str(e), latency=time.monotonic() - start)
        problem = _instruction_problem(request.instruction)
        if problem:
            return PlanOutcome(False, "", None, problem, planner=kind.value,
                               latency=time.monotonic() - start)
        if kind == PlannerKind.OFFLINE:
            outcome = self._offline(request, failure)
        elif self.client is None:
            outcome = PlanOutcome(False, "", None, "the VLM planner was asked for but no VLM "
                                  "endpoint is configured (set OPENAI_API_KEY or a base URL)",
                                  planner=PlannerKind.VLM.value)
        else:
            outcome = self._vlm(request, failure, self.client)
        if outcome.ok and outcome.program is not None:
            outcome = self._self_contained(outcome, request)
        return replace(outcome, latency=time.monotonic() - start)

    def _self_contained(self, outcome: PlanOutcome, request: PlanRequest) -> PlanOutcome:
        """The program with the definitions of the library skills it calls, so the executor
        (which knows only the primitives) can validate and run it with nothing else: memory's
        library is the planner's context, not the executor's."""
        from frankenbot.program.parser import parse_skills
        from frankenbot.program.printer import print_program
        from frankenbot.program.tree import Main, Program

        program = outcome.program
        local = {s.name for s in program.skills}
        library = {sig.name: sig.body for sig in request.skills if sig.body}
        defs: dict[str, Any] = {}
        todo = [c.name for c in program.calls()]
        while todo:
            name = todo.pop()
            if name in local or name in defs or name not in library:
                continue
            for d in parse_skills(library[name]):
                if d.name == name:
                    defs[name] = d
                    todo += [c.name for c in Program("", Main(), (), (d,)).calls()]
        if not defs:
            return outcome
        whole = replace(program, skills=program.skills + tuple(defs.values()))
        text = print_program(whole)
        checked = language.check(text, self.catalog, request.scene.ids())
        if not checked.valid:
            return replace(outcome, ok=False, program_text="", program=None,
                           message="a library skill the program calls does not validate on its "
                           f"own: {checked.diagnostics}", diagnostics=checked.diagnostics)
        return replace(outcome, program_text=text, program=checked.program)

    def _catalog(self, request: PlanRequest) -> Catalog:
        return self.catalog.with_skills(request.skills)

    def _offline(self, request: PlanRequest, failure: FailureContext | None) -> PlanOutcome:
        kind = PlannerKind.OFFLINE.value
        note = ""
        try:
            if failure is None:
                text = plan_offline(request.instruction, request.scene)
            else:  # tier 3: from the current scene and what failed (planner/recovery.py)
                text, what = plan_recovery(request.instruction, request.scene, failure)
                note = f" (offline recovery: {what})"
        except PlannerError as e:
            return PlanOutcome(False, "", None, str(e), planner=kind,
                               not_seen=isinstance(e, ObjectNotSeen))
        catalog = self._catalog(request)
        checked = language.check(text, catalog, request.scene.ids())
        if not checked.valid:
            return PlanOutcome(False, "", None, "the offline planner wrote an invalid program "
                               f"(a bug): {checked.diagnostics}", planner=kind,
                               diagnostics=checked.diagnostics)
        compacted = self._with_skills(checked.program, request, catalog)
        if compacted is not None:
            text, checked = compacted
            note += " using library skills"
        return PlanOutcome(True, text, checked.program, "planned offline" + note,
                           first_call_valid=True, planner=kind)

    @staticmethod
    def _with_skills(program: Any, request: PlanRequest, catalog: Catalog) -> Any:
        """The offline program with spelled-out skill bodies replaced by calls of the skills
        memory offered (what a VLM reading the skill list would write); None when none fit.
        The result is checked again like any planner output."""
        from frankenbot.memory.compaction import compact
        from frankenbot.program.parser import parse_skills
        from frankenbot.program.printer import print_program

        skills = [d for sig in request.skills if sig.body for d in parse_skills(sig.body)]
        if not skills:
            return None
        shorter = compact(program, skills, catalog)
        if shorter == program:
            return None
        text = print_program(shorter)
        checked = language.check(text, catalog, request.scene.ids())
        return (text, checked) if checked.valid else None

    def _vlm(self, request: PlanRequest, failure: FailureContext | None,
             client: VlmClient) -> PlanOutcome:
        builder = PromptBuilder(self.catalog, self.config.prompt_budget_chars,
                                skill_bodies=self.config.prompt_skill_bodies)
        prompt = builder.build(request, failure)
        messages: list[dict[str, Any]] = prompt.messages(client.config.image_detail)
        catalog = self._catalog(request)
        ids = request.scene.ids()
        # the constraint for this request: only this scene's ids, the catalog's primitives and
        # predicates and the request's skills (the generic grammar when it cannot be narrowed)
        grammars = language.RequestGrammars.for_scene(catalog, request.scene)
        tally = _Tally()
        first_valid = False
        diagnostics = ""
        for attempt in range(1 + self.config.max_repairs):
            try:
                reply = client.complete(messages, grammars)
            except VlmError as e:  # no answer (transport) or a refusal: not a planning call
                return self._outcome(False, "", None, str(e), tally, first_valid, prompt,
                                     diagnostics)
            tally.calls += 1
            if attempt:
                tally.repairs += 1
            tally.add(reply)
            checked = language.check(reply.text, catalog, ids)
            if checked.valid:
                assert checked.program is not None
                first_valid = attempt == 0
                reason = language.refusal_reason(checked.program)
                if reason is not None:
                    return self._outcome(False, "", None, f"the model refused: {reason}", tally,
                                         first_valid, prompt, "")
                text = language.print_text(checked.program)
                msg = "planned" if attempt == 0 else "planned after one repair"
                return self._outcome(True, text, checked.program, msg, tally, first_valid,
                                     prompt, diagnostics)
            diagnostics = checked.diagnostics or "no program found in the answer"
            if reply.finish_reason == "length":
                diagnostics += ("\nThe answer was cut off at the output token limit: write a "
                                "shorter program (use loops and skills).")
            messages = messages + repair_message(reply.text, diagnostics)
        return self._outcome(
            False, "", None,
            f"no valid program after {tally.calls} call(s) ({tally.repairs} repair); nothing "
            f"will move. Last problems: {diagnostics}", tally, first_valid, prompt, diagnostics)

    @staticmethod
    def _outcome(ok: bool, text: str, program: Any, message: str, tally: _Tally,
                 first_valid: bool, prompt: Any, diagnostics: str) -> PlanOutcome:
        return PlanOutcome(ok, text, program, message, vlm_calls=tally.calls,
                           repair_calls=tally.repairs, first_call_valid=first_valid,
                           tokens_in=tally.tokens_in, tokens_out=tally.tokens_out,
                           planner=PlannerKind.VLM.value, transport_retries=tally.retries,
                           diagnostics=diagnostics, prompt_chars=prompt.chars,
                           trimmed=prompt.trimmed)


def _instruction_problem(instruction: object) -> str:
    if not isinstance(instruction, str) or not instruction.strip():
        return "empty instruction: say what the robot should do"
    if len(instruction) > MAX_INSTRUCTION_CHARS:
        return (f"instruction too long ({len(instruction)} characters, at most "
                f"{MAX_INSTRUCTION_CHARS})")
    bad = sorted({c for c in instruction if not c.isprintable() and c not in "\t\n"})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad[:5])
        return f"instruction has control characters ({shown}); send plain text"
    return ""
