"""``frankenbot plan``: print the program the planner would run, without moving anything.

The scene comes from a MuJoCo sim scene seen through the perception pipeline (``--task FAMILY
--seed N``, or a plain seeded table), or from the running system's ``/frankenbot/scene`` topic
(``--ros``). ``--offline`` forces the rule-based planner, ``--vlm`` the VLM (OPENAI_API_KEY /
OPENAI_BASE_URL); by default the VLM is used when an endpoint is configured. ``--vlm-server``
names the endpoint's family (the constraint it takes); ``llamacpp`` defaults to the local server
``frankenbot llm serve`` starts.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from frankenbot.errors import PlannerError
from frankenbot.planner.request import PlanImage, PlanRequest
from frankenbot.planner.vlm_client import LLAMACPP_DEFAULT_URL, SERVER_FAMILIES, vlm_config_for
from frankenbot.state import Scene


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "plan", help="print the program for an instruction (nothing moves)",
        description="Plan an instruction for a sim scene (perceived by the perception "
        "pipeline) or the live scene, print the validated program and the planning costs.")
    p.add_argument("instruction", nargs="?", default="",
                   help="plain-language task; default with --task: the task's own instruction")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--offline", action="store_true", help="use the offline planner")
    who.add_argument("--vlm", action="store_true", help="use the VLM (needs an endpoint)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--task", default="", help="sim task family for the scene (e.g. stack)")
    p.add_argument("--seed", type=int, default=0, help="sim scene seed")
    p.add_argument("--ros", action="store_true",
                   help="use the running system's /frankenbot/scene instead of a sim scene")
    p.add_argument("--no-perception", action="store_true",
                   help="with --task: take the scene from the task sampler (fast, no render)")
    p.add_argument("--explain", action="store_true",
                   help="print the task frames the offline planner understood (or why not)")
    p.add_argument("--model", default="", help="VLM model name (default: the planner's)")
    p.add_argument("--vlm-server", default="auto", choices=SERVER_FAMILIES,
                   help="the endpoint's server family: decides the grammar constraint sent "
                   "(default auto: probe the endpoint)")
    p.add_argument("--base-url", default="", help="OpenAI-compatible base URL (default: "
                   "OPENAI_BASE_URL; with --vlm-server llamacpp: `frankenbot llm serve`'s "
                   f"{LLAMACPP_DEFAULT_URL})")
    p.add_argument("--max-tokens", type=int, default=0,
                   help="output token limit per call (default 4096; 400 for llamacpp)")
    p.add_argument("--review", nargs="?", const="always", default="",
                   choices=("auto", "always", "never"),
                   help="run the safety review on the plan and show its verdict and why "
                        "(default when given: always); with a VLM configured it also asks "
                        "for a second opinion")
    p.add_argument("--review-config", default=None,
                   help="review settings and zones (default: config/review.yaml)")
    p.set_defaults(func=run_plan)




def _ros_scene(timeout: float = 5.0) -> Scene:
    import time

    import rclpy

    from frankenbot.nodes.scene_msgs import scene_from_msg
    from frankenbot_interfaces.msg import SceneObjects

    rclpy.init()
    node = rclpy.create_node("frankenbot_plan_cli")
    got: list[Any] = []
    node.create_subscription(SceneObjects, "frankenbot/scene", got.append, 5)
    try:
        deadline = time.monotonic() + timeout
        while not got and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    if not got:
        raise PlannerError(f"no scene on /frankenbot/scene within {timeout:g} s "
                           "(is `frankenbot up` running?)")
    return scene_from_msg(got[-1])


def _explain(instruction: str, scene: Scene) -> str:
    """What the offline planner's understanding stage made of ``instruction`` in ``scene``."""
    from frankenbot.planner.frames import Refusal
    from frankenbot.planner.understanding import understand

    try:
        u = understand(instruction, scene)
    except Refusal as e:
        lines = [f"# refused ({e.kind}): {e.reason}"]
        if e.suggestion:
            lines.append(f"#   did you mean: {e.suggestion}?")
        if e.candidates:
            lines.append(f"#   candidates: {', '.join(e.candidates)}")
        return "\n".join(lines)
    return "\n".join(f"# {line}" for line in u.explain(scene).splitlines())


def run_plan(args: argparse.Namespace) -> int:
    from frankenbot.planner.planner import Planner, PlannerConfig, make_client

    image: PlanImage | None = None
    table = ""
    if args.ros:
        instruction, scene = "", _ros_scene()
    elif args.task and args.no_perception:
        from frankenbot.eval.taskset import scene_of_task

        instruction, scene = scene_of_task(args.task, args.seed)
    else:
        if args.no_perception:
            raise PlannerError("--no-perception needs --task FAMILY")
        from frankenbot.eval.perception_eval import perceived_sim_scene

        instruction, scene, image, table = perceived_sim_scene(args.task, args.seed)
    instruction = args.instruction or instruction
    if not instruction.strip():
        raise PlannerError("no instruction: give one, or --task FAMILY to use the task's own")
    vlm = vlm_config_for(args.vlm_server, model=args.model, base_url=args.base_url,
                         max_tokens=args.max_tokens)
    mode = "offline" if args.offline else "vlm" if args.vlm else "auto"
    config = PlannerConfig(planner_mode=mode, vlm=vlm)
    client = None if args.offline else make_client(config)
    try:
        planner = Planner(config, client)
        outcome = planner.plan(PlanRequest(instruction, scene, image, object_table=table))
        verdict = None
        if args.review:
            verdict = _review(args, outcome, scene, config if client is not None else None)
            outcome, verdict = verdict
    finally:
        if client is not None:
            client.close()
    if args.explain:
        print(_explain(instruction, scene))
    if args.json:
        print(json.dumps({
            "ok": outcome.ok, "instruction": instruction, "planner": outcome.planner,
            "program": outcome.program_text, "message": outcome.message,
            "vlm_calls": outcome.vlm_calls, "repair_calls": outcome.repair_calls,
            "first_call_valid": outcome.first_call_valid, "tokens_in": outcome.tokens_in,
            "tokens_out": outcome.tokens_out, "latency": round(outcome.latency, 4),
            "transport_retries": outcome.transport_retries,
            "scene": list(scene.ids()),
            "review": None if verdict is None else {
                "decision": verdict.decision, "second_opinion": verdict.second_opinion,
                "findings": [f.__dict__ for f in verdict.findings]}}, indent=2))
    else:
        print(f"# instruction: {instruction}")
        print(f"# scene: {', '.join(scene.ids()) or '(empty)'}")
        if outcome.ok:
            print(outcome.program_text.rstrip())
        if verdict is not None:
            print("\n".join(f"# {line}" for line in verdict.explain().splitlines()))
        print(f"# {outcome.summary()}", file=sys.stdout if outcome.ok else sys.stderr)
    return 0 if outcome.ok else 1


def _review(args: argparse.Namespace, outcome: Any, scene: Scene, vlm_config: Any) -> Any:
    """The safety review of a plan; a configured VLM (text mode) gives the second opinion."""
    from dataclasses import replace

    from frankenbot.planner.review import (
        SafetyReview,
        apply_review,
        load_review_config,
        vlm_second_opinion,
    )
    from frankenbot.planner.vlm_client import VlmClient

    second = None
    if vlm_config is not None:
        second = vlm_second_opinion(VlmClient(replace(vlm_config.vlm, mode="text")))
    review = SafetyReview(load_review_config(args.review_config), second)
    return apply_review(outcome, scene, review, args.review)

