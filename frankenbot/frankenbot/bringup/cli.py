"""`frankenbot up | submit | status | demo | doctor`: run and use FrankenBot without launch."""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    up = sub.add_parser("up", help="start every node as a separate process (like ros2 launch)",
                        description="Start FrankenBot's nodes as separate processes. With --sim "
                        "the MuJoCo sim node stands in for the UR5e driver and the camera.")
    up.add_argument("--sim", action="store_true", help="also start the MuJoCo sim node")
    up.add_argument("--driver-twin", action="store_true",
                    help="with --sim: the sim also serves the real UR driver's, Robotiq's and "
                    "controller manager's interfaces, and the executor runs with "
                    "config/real_ur5e.yaml (action mode, ParallelGripperCommand)")
    up.add_argument("--setup", choices=("sim", "real_ur5e", "gazebo"), default=None,
                    help="parameter file to use (default: sim with --sim, else real_ur5e)")
    up.add_argument("--task", default="put_in_bowl", help="sim task family at start")
    up.add_argument("--seed", type=int, default=0, help="sim scene seed")
    up.add_argument("--planner", choices=("auto", "offline", "vlm"), default="auto")
    up.add_argument("--review", choices=("auto", "always", "never"), default=None,
                    help="safety review of every plan (the planner's review parameter; "
                    "default: the setup file's, auto)")
    up.add_argument("--review-config", default=None, metavar="FILE",
                    help="review thresholds and zones (default: config/review.yaml)")
    up.add_argument("--noise", choices=("none", "realistic", "harsh"), default="realistic",
                    help="sim camera sensor model (default realistic: the sim looks like the "
                         "robot; docs/CAMERA.md)")
    up.add_argument("--log-dir", type=Path, default=None, help="where node logs go")
    up.add_argument("--record", nargs="?", type=Path, const=Path("artifacts") / "recordings",
                    default=None, metavar="DIR",
                    help="write one MCAP file (ROS 2 encoding) per task to DIR "
                    "(default artifacts/recordings)")
    _add_foxglove(up)
    up.add_argument("--no-restart", action="store_true",
                    help="stop watching when a node exits instead of restarting it (with "
                    "backoff: 1, 2, 4 ... 30 s)")
    up.add_argument("--namespace", default="", help="run every node, topic, service and action"
                    " under this ROS namespace (e.g. arm1), so several brains share one graph")
    up.add_argument("--memory-url", default="", help="memory database URL, e.g. postgresql://"
                    "frankenbot@db-host:5432/fleet to share one memory between brains")
    up.add_argument("--robot-id", default="", help="this robot's name in a shared memory"
                    " (default: the namespace)")
    up.set_defaults(func=_up)

    submit = sub.add_parser("submit", help="submit a task to a running FrankenBot",
                            description="Send an instruction to /frankenbot/submit_task and follow "
                            "it; --action uses the /frankenbot/run_task action instead.")
    submit.add_argument("instruction")
    submit.add_argument("--dry-run", action="store_true", help="plan only; nothing moves")
    submit.add_argument("--planner", choices=("", "offline", "vlm"), default="")
    submit.add_argument("--action", action="store_true", help="use the run_task action")
    submit.add_argument("--no-follow", action="store_true", help="return after planning")
    submit.add_argument("--timeout", type=float, default=600.0, help="seconds to wait")
    submit.add_argument("--namespace", default="", help="the brain's namespace (frankenbot up"
                        " --namespace)")
    submit.set_defaults(func=_submit)

    status = sub.add_parser("status", help="which FrankenBot nodes and services are up")
    status.add_argument("--timeout", type=float, default=3.0, help="discovery time in seconds")
    status.add_argument("--namespace", default="", help="only this brain's namespace"
                        " (default: every FrankenBot on the graph)")
    status.set_defaults(func=_status)

    from frankenbot.sim.driver_twin import CONTROL_KINDS, Fault

    fault = sub.add_parser("fault", help="inject a fault of the real driver stack into the "
                           "sim's driver twin (frankenbot up --sim --driver-twin)")
    fault.add_argument("kind", choices=[f.value for f in Fault] + list(CONTROL_KINDS))
    fault.add_argument("--phase", choices=("now", "motion"), default="now",
                       help="now, or once a trajectory has run --after seconds")
    fault.add_argument("--after", type=float, default=0.3, help="seconds into the trajectory")
    fault.add_argument("--fraction", type=float, default=1.0,
                       help="speed_slider: the slider's fraction, 0..1")
    fault.add_argument("--namespace", default="", help="the brain's namespace")
    fault.set_defaults(func=_fault)

    demo = sub.add_parser("demo", help="sim + all nodes, one task end to end, with artifacts",
                          description="Start the sim and every node as separate processes, "
                          "submit one instruction, show live progress and the oracle's verdict, "
                          "and write artifacts (frames, GIF, program, trace).")
    demo.add_argument("--instruction", default="put the red block in the green bowl")
    demo.add_argument("--seed", type=int, default=1)
    demo.add_argument("--out", type=Path, default=Path("artifacts") / "demo")
    demo.add_argument("--timeout", type=float, default=600.0)
    demo.add_argument("--noise", choices=("none", "realistic", "harsh"), default="realistic",
                      help="sim camera sensor model (default realistic)")
    record = demo.add_mutually_exclusive_group()
    record.add_argument("--record", dest="record", action="store_true", default=True,
                        help="write episode.mcap (ROS 2 encoding) into the run folder (default)")
    record.add_argument("--no-record", dest="record", action="store_false",
                        help="no MCAP recording")
    _add_foxglove(demo)
    demo.set_defaults(func=_demo)

    from frankenbot.bringup import doctor

    doctor.register(sub)


def _add_foxglove(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--foxglove", nargs="?", const="", default=None, metavar="PORT",
                        help="serve a Foxglove live view on ws://localhost:PORT (default "
                        "8765); layout: frankenbot/config/foxglove_layout.json")


def _up(args: argparse.Namespace) -> int:
    from frankenbot.bringup.config_check import require_valid
    from frankenbot.bringup.processes import (
        NODE_EXECUTABLES,
        NodeGroup,
        config_file,
        driver_twin_setup,
        terminate_on_sigterm,
        up_parameters,
    )
    from frankenbot.errors import ConfigError

    terminate_on_sigterm()
    if args.driver_twin and not args.sim:
        raise ConfigError("--driver-twin needs --sim (the twin is served by the sim node)")
    setup = args.setup or ("sim" if args.sim else "real_ur5e")
    executables = [e for e in NODE_EXECUTABLES if args.sim or e != "sim"]
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="frankenbot-up-"))
    params = up_parameters(task=args.task, seed=args.seed, noise=args.noise,
                           planner=args.planner, memory_url=args.memory_url,
                           robot_id=args.robot_id, review=args.review,
                           review_config=args.review_config)
    require_valid(config_file(setup), params)  # every bad key or value, before any process
    params_files = None
    if args.driver_twin:
        params_files, params = driver_twin_setup(params)
    with contextlib.ExitStack() as stack:
        _observe(stack, foxglove=args.foxglove, record_dir=args.record)
        group = stack.enter_context(NodeGroup(setup=setup, log_dir=log_dir, parameters=params,
                                              namespace=args.namespace,
                                              params_files=params_files))
        group.start(executables)
        where = f" under {group.namespace}" if group.namespace else ""
        print(f"frankenbot up: started {', '.join(executables)}{where} (setup {setup}); "
              f"logs in {log_dir}; Ctrl-C stops all", flush=True)
        return group.supervise(restart=not args.no_restart,
                               log=lambda line: print(line, flush=True))


def _observe(stack: contextlib.ExitStack, *, foxglove: str | None, record_dir: Path | None
             ) -> None:
    """The live view and per-task recordings of ``up``, torn down by ``stack``."""
    if foxglove is None and record_dir is None:
        return
    from frankenbot.bringup.ros_client import BrainClient
    from frankenbot.bringup.tap import PerTaskRecordingSink, TopicTap, topics_for

    sinks: list = []
    if foxglove is not None:
        from frankenbot.bringup.live_view import LiveView, parse_port

        view = LiveView(parse_port(foxglove))
        stack.callback(view.close)
        sinks.append(view)
        print(f"frankenbot up: Foxglove live view on {view.url} (open it in Foxglove: "
              f"Open connection -> Foxglove WebSocket; layout "
              f"frankenbot/config/foxglove_layout.json)", flush=True)
    if record_dir is not None:
        recorder = PerTaskRecordingSink(
            record_dir, on_closed=lambda p: print(f"frankenbot up: recorded {p}", flush=True))
        stack.callback(recorder.close)
        sinks.append(recorder)
        print(f"frankenbot up: recording each task to {record_dir}/", flush=True)
    client = stack.enter_context(BrainClient("frankenbot_view"))
    tap = TopicTap(client.node, sinks, topics_for(live_view=foxglove is not None))
    stack.callback(tap.close)


def _submit(args: argparse.Namespace) -> int:
    from frankenbot.bringup.progress import EventView, ProgressPrinter
    from frankenbot.bringup.ros_client import BrainClient

    printer = ProgressPrinter()

    def events_of(msgs) -> list[EventView]:
        return [EventView.of(e) for e in msgs]

    with BrainClient(namespace=args.namespace) as client:
        if args.action:
            all_events: list = []

            def on_feedback(fb) -> None:
                all_events.extend(fb.events)
                printer.update(phase=fb.phase, active_path=fb.active_path,
                               active_node=fb.active_node, active_line=fb.active_line,
                               vlm_calls=fb.vlm_calls, events=events_of(all_events))

            result = client.run_task(args.instruction, planner=args.planner,
                                     timeout=args.timeout, on_feedback=on_feedback)
            print(f"{'SUCCESS' if result.success else 'FAILED'} ({result.outcome}): "
                  f"{result.summary}; VLM calls {result.vlm_calls}, {result.duration:.1f} s")
            return 0 if result.success else 1
        response = client.submit(args.instruction, planner=args.planner, dry_run=args.dry_run)
        if not response.accepted:
            print(f"not accepted: {response.message}")
            return 1
        print(f"task {response.task_id} accepted ({response.planner} planner, "
              f"{response.vlm_calls} VLM calls)")
        if args.dry_run or args.no_follow:
            print(response.program)
            return 0

        def on_update(progress) -> None:
            status, tree = progress.status, progress.tree
            printer.update(phase=status.phase if status else "",
                           active_path=tree.active_path if tree else "",
                           active_node=tree.active_node if tree else "",
                           active_line=tree.active_line if tree else 0,
                           vlm_calls=status.vlm_calls if status else None,
                           events=events_of(progress.events))

        final = client.follow(response.task_id, timeout=args.timeout, on_update=on_update).status
        print(f"{'SUCCESS' if final.success else 'FAILED'} ({final.outcome}): {final.summary}")
        return 0 if final.success else 1


def _fault(args: argparse.Namespace) -> int:
    import json

    from frankenbot.bringup.ros_client import BrainClient

    params = {"after_s": args.after, "fraction": args.fraction}
    with BrainClient(namespace=args.namespace) as client:
        response = client.sim_fault(args.kind, args.phase, json.dumps(params), timeout=10.0)
    print(f"frankenbot fault: {response.message}")
    return 0


def _status(args: argparse.Namespace) -> int:
    import time

    from frankenbot.bringup.ros_client import BrainClient

    with BrainClient(namespace=args.namespace) as client:
        time.sleep(args.timeout)  # let discovery run
        nodes = client.frankenbot_nodes(all_namespaces=not client.namespace)
        prefix = f"{client.namespace}/frankenbot"
        services = sorted(n for n, _ in client.node.get_service_names_and_types()
                          if n.startswith(prefix) or (not client.namespace
                                                       and "/frankenbot" in n))
    print(f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}"
          + (f"  namespace {client.namespace}" if client.namespace else ""))
    print("nodes:    " + (", ".join(nodes) if nodes else "none found"))
    for s in services:
        if not s.endswith(("parameters", "_parameter_types", "parameter_events")):
            print(f"service:  {s}")
    return 0 if nodes else 1


def _demo(args: argparse.Namespace) -> int:
    from frankenbot.bringup.demo import run_demo
    from frankenbot.bringup.processes import terminate_on_sigterm

    terminate_on_sigterm()
    return run_demo(instruction=args.instruction, seed=args.seed, out_dir=args.out,
                    timeout=args.timeout, record=args.record,
                    foxglove_port=None if args.foxglove is None else _port(args.foxglove),
                    noise=args.noise)


def _port(value: str) -> int:
    from frankenbot.bringup.live_view import parse_port

    return parse_port(value)

