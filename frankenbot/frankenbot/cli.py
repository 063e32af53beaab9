"""The ``frankenbot`` command.

Each area contributes its own subcommands through a ``register(subparsers)`` function in a module
listed in ``COMMAND_MODULES``; this file only assembles them, so areas never edit each other's
code. Every error derived from FrankenbotError (and argument errors) ends in a clear message and a
non-zero exit code, never a Python traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, Sequence

from frankenbot import __version__
from frankenbot.errors import FrankenbotError

# module path -> it defines register(subparsers) adding one or more subcommands, each of which sets
# `func` (args -> exit code) with parser.set_defaults(func=...).
COMMAND_MODULES: tuple[str, ...] = (
    "frankenbot.program.cli",  # check
    "frankenbot.sim.cli",  # sim (selftest, ...)
    "frankenbot.eval.perception_cli",  # perception (eval)
    "frankenbot.bringup.plan_cli",  # plan
    "frankenbot.memory.cli",  # skills
    "frankenbot.eval.cli",  # bench
    "frankenbot.eval.readme_report",  # report
    "frankenbot.bringup.cli",  # up, submit, status, demo
    "frankenbot.bringup.calibrate_cli",  # calibrate camera
    "frankenbot.bringup.objects_cli",  # objects enroll, list
    "frankenbot.bringup.soak",  # soak
    "frankenbot.bringup.llm_cli",  # llm serve
)

# `frankenbot bench --component NAME` benchmarks that live above eval (they start node processes
# with bring-up's launcher): wired in here, the one place that may see every layer.
BENCH_COMPONENTS: dict[str, str] = {
    "reliability": "frankenbot.bringup.faults",
    "scene-rate": "frankenbot.bringup.scene_rate",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="frankenbot",
        description="FrankenBot: tell a UR5e what to do in plain language (ROS 2 robot brain).",
    )
    parser.add_argument("--version", action="version", version=f"frankenbot {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from frankenbot.eval import cli as bench_cli

    bench_cli.COMPONENTS.update(BENCH_COMPONENTS)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:  # that area has no commands yet
                continue
            raise
        register: Callable[[argparse._SubParsersAction], None] = module.register
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    try:
        return int(func(args) or 0)
    except FrankenbotError as e:
        print(f"frankenbot {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"frankenbot {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
