"""Start FrankenBot's nodes as separate processes (for machines without `ros2 launch`).

``NodeGroup`` is what ``frankenbot up`` and ``frankenbot demo`` use: every node runs in its own
process exactly as ``ros2 run frankenbot <exe>`` would start it, with the setup's parameter file,
its output in a log file, and clean shutdown (SIGINT, then SIGKILL) on exit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable, Mapping

from frankenbot import resources
from frankenbot.errors import ConfigError, FrankenbotError

NODE_EXECUTABLES = ("sim", "perception", "memory", "planner", "executor")
SETUPS = ("sim", "real_ur5e", "gazebo")
SHUTDOWN_GRACE_S = 5.0
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h)


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the parent process dies, however it dies.

    Nodes run in their own sessions (so a Ctrl-C reaches them only through ``stop``); without
    this, a parent killed by SIGKILL or a timeout would leave them running.
    """
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:  # not Linux/glibc: best effort only
        pass


def terminate_on_sigterm() -> None:
    """Turn SIGTERM into KeyboardInterrupt so ``with NodeGroup(...)`` stops its nodes."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)




def config_file(setup: str) -> Path:
    if setup not in SETUPS:
        raise ConfigError(f"unknown setup {setup!r}; expected one of {', '.join(SETUPS)}")
    path = resources.config_dir() / f"{setup}.yaml"
    if not path.is_file():
        raise ConfigError(f"parameter file {path} is missing")
    return path


def _param_arg(name: str, value: object) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    return f"{name}:={text}"


@dataclass
class NodeProcess:
    executable: str
    process: subprocess.Popen
    log_path: Path
    log_file: IO[str]

    @property
    def node_name(self) -> str:
        return f"frankenbot_{self.executable}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class NodeGroup:
    """A set of node processes started together and stopped together (a context manager)."""

    def __init__(self, *, setup: str = "sim", log_dir: Path,
                 parameters: Mapping[str, Mapping[str, object]] | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self._params_file = config_file(setup)
        self._use_sim_time = setup in ("sim", "gazebo")
        self._parameters = parameters or {}
        self._env = dict(os.environ, **(env or {}))
        self._log_dir = Path(log_dir)
        self._log_dir.mkdir(parents=True, exist_ok=True)
        self.processes: list[NodeProcess] = []

    def command(self, executable: str) -> list[str]:
        if executable not in NODE_EXECUTABLES:
            raise ConfigError(f"unknown node {executable!r}; expected one of "
                              f"{', '.join(NODE_EXECUTABLES)}")
        code = f"import sys; from frankenbot.nodes.{executable}_node import main; sys.exit(main())"
        cmd = [sys.executable, "-c", code, "--ros-args", "-r",
               f"__node:=frankenbot_{executable}", "--params-file", str(self._params_file)]
        if self._use_sim_time and executable != "sim":
            cmd += ["-p", "use_sim_time:=true"]
        for name, value in self._parameters.get(executable, {}).items():
            cmd += ["-p", _param_arg(name, value)]
        return cmd

    def start(self, executables: Iterable[str]) -> None:
        for exe in executables:
            log_path = self._log_dir / f"{exe}.log"
            log_file = log_path.open("w")
            proc = subprocess.Popen(self.command(exe), stdout=log_file, stderr=subprocess.STDOUT,
                                    env=self._env, start_new_session=True,
                                    preexec_fn=_die_with_parent)
            self.processes.append(NodeProcess(exe, proc, log_path, log_file))

    def check_alive(self) -> None:
        """Raise with the dead node's last log lines when any node has exited."""
        for p in self.processes:
            if not p.alive():
                raise FrankenbotError(
                    f"node {p.node_name} exited with code {p.process.returncode}; "
                    f"last lines of {p.log_path}:\n{p.tail()}")

    def wait(self) -> int:
        """Block until any node exits (or Ctrl-C); returns the first non-zero exit code."""
        try:
            while all(p.alive() for p in self.processes):
                time.sleep(0.2)
        except KeyboardInterrupt:
            return 0
        return next((p.process.returncode or 0 for p in self.processes if not p.alive()), 0)

    def stop(self) -> None:
        for p in self.processes:
            if p.alive():
                try:
                    os.killpg(p.process.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + SHUTDOWN_GRACE_S
        for p in self.processes:
            try:
                p.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.process.wait(timeout=5)
            p.log_file.close()
        self.processes = []

    def __enter__(self) -> "NodeGroup":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
