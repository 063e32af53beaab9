"""Start FrankenBot's nodes as separate processes (for machines without `ros2 launch`).

``NodeGroup`` is what ``frankenbot up`` and ``frankenbot demo`` use: every node runs in its own
process exactly as ``ros2 run frankenbot <exe>`` would start it, with the setup's parameter file,
its output in a log file, and clean shutdown (SIGINT, then SIGKILL) on exit.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterable, Mapping

from frankenbot import resources
from frankenbot.errors import ConfigError, FrankenbotError

NODE_EXECUTABLES = ("sim", "perception", "memory", "planner", "executor")
# With the MuJoCo sim, only these nodes read the ROS clock (sim time: the executor's timing, the
# planner's stamps). Perception works on camera stamps and memory on wall time; following the
# sim's 125 Hz /clock costs an idle rclpy node ~0.12 of a core (measured), a quarter of a core
# for the two on a 2-core machine (issue 16). Gazebo keeps sim time everywhere (TF stamps).
SIM_CLOCK_NODES = ("planner", "executor")
SETUPS = ("sim", "real_ur5e", "gazebo")
SHUTDOWN_GRACE_S = 5.0
RESTART_BACKOFF_S = 1.0  # first restart delay; doubles per crash of the same node
MAX_RESTART_BACKOFF_S = 30.0
STABLE_AFTER_S = 60.0  # a node that ran this long since its restart is back to the first delay
LIVELINESS_PROFILE = "fastdds_liveliness.xml"
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




_NAMESPACE_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def normalise_namespace(namespace: str) -> str:
    """``arm1`` / ``/arm1`` / ``/lab/arm1`` -> an absolute ROS namespace; "" stays "" (the root).

    Every FrankenBot name is relative, so a namespace moves all of one brain's nodes, topics,
    services and actions under it (``/arm1/frankenbot/scene``); no namespace keeps today's.
    """
    parts = [p for p in namespace.strip().strip("/").split("/")]
    if parts == [""]:
        return ""
    bad = [p for p in parts if not _NAMESPACE_PART.fullmatch(p)]
    if bad:
        raise ConfigError(f"namespace {namespace!r} is not a ROS namespace: each part must be"
                          f" letters, digits and underscores, not starting with a digit"
                          f" (bad: {bad})")
    return "/" + "/".join(parts)


def config_file(setup: str) -> Path:
    if setup not in SETUPS:
        raise ConfigError(f"unknown setup {setup!r}; expected one of {', '.join(SETUPS)}")
    path = resources.config_dir() / f"{setup}.yaml"
    if not path.is_file():
        raise ConfigError(f"parameter file {path} is missing")
    return path


def dds_environment(env: Mapping[str, str]) -> dict[str, str]:
    """Environment additions for node processes: the short-lease Fast DDS profile.

    Only with Fast DDS (the default RMW) and only when the user has not chosen a profile file;
    see config/fastdds_liveliness.xml for why (a killed node is noticed in ~3 s, not 20 s).
    """
    rmw = env.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    if not rmw.startswith("rmw_fastrtps") or env.get("FASTRTPS_DEFAULT_PROFILES_FILE") \
            or env.get("FASTDDS_DEFAULT_PROFILES_FILE"):
        return {}
    profile = resources.config_dir() / LIVELINESS_PROFILE
    return {"FASTRTPS_DEFAULT_PROFILES_FILE": str(profile)} if profile.is_file() else {}


def up_parameters(*, task: str = "put_in_bowl", seed: int = 0, noise: str = "realistic",
                  planner: str = "auto", memory_url: str = "", robot_id: str = "",
                  db_path: str = "", review: str | None = None,
                  review_config: str | None = None) -> dict[str, dict[str, object]]:
    """The per-node parameters ``frankenbot up`` passes over the setup's parameter file (also
    used by benchmarks that must run the stack exactly as ``up --sim`` does)."""
    memory: dict[str, object] = {}
    if memory_url:
        memory["db_url"] = memory_url
    if robot_id:
        memory["robot_id"] = robot_id
    if db_path:
        memory["db_path"] = db_path
    planner_params: dict[str, object] = {"planner_mode": planner}
    if review is not None:
        planner_params["review"] = review
    if review_config is not None:
        planner_params["review_config"] = str(Path(review_config).expanduser().resolve())
    return {"sim": {"task": task, "seed": seed, "sensor_noise": noise},
            "planner": planner_params, "memory": memory}


# The executor's settings that describe the machine and the sim's world rather than the robot:
# with the driver twin they come from sim.yaml, everything else from real_ur5e.yaml.
TWIN_SIM_KEYS = ("reset_topic", "scene_stale_after_s")


def driver_twin_setup(parameters: Mapping[str, Mapping[str, object]] | None = None
                      ) -> tuple[dict[str, Path], dict[str, dict[str, object]]]:
    """(per-node parameter files, parameters) for ``up --sim --driver-twin``: the sim node
    serves the real stack's interfaces (``driver_twin``) and the executor runs with
    real_ur5e.yaml (action mode, ParallelGripperCommand, the namespaced gripper, the program
    state), but follows the sim's resets and its scene staleness (``TWIN_SIM_KEYS``)."""
    import yaml

    sim = yaml.safe_load(config_file("sim").read_text()) or {}
    executor = (sim.get("/**/frankenbot_executor") or {}).get("ros__parameters") or {}
    out = {name: dict(values) for name, values in (parameters or {}).items()}
    out.setdefault("sim", {})["driver_twin"] = True
    out["executor"] = {**{k: executor[k] for k in TWIN_SIM_KEYS if k in executor},
                       **out.get("executor", {})}
    return {"executor": config_file("real_ur5e")}, out


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
    started: float = 0.0  # time.monotonic() at start
    restarts: int = 0

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
                 env: Mapping[str, str] | None = None, namespace: str = "",
                 params_files: Mapping[str, Path] | None = None) -> None:
        self._params_file = config_file(setup)
        self._params_files = dict(params_files or {})  # executable -> its own parameter file
        self.namespace = normalise_namespace(namespace)
        self._use_sim_time = setup in ("sim", "gazebo")
        self._setup = setup
        self._parameters = parameters or {}
        self._env = dict(os.environ, **(env or {}))
        self._env.update(dds_environment(self._env))
        self._log_dir = Path(log_dir)
        self._log_dir.mkdir(parents=True, exist_ok=True)
        self.processes: list[NodeProcess] = []
        self._stopping = False  # set by stop(): a supervisor must not restart anything now

    def command(self, executable: str) -> list[str]:
        if executable not in NODE_EXECUTABLES:
            raise ConfigError(f"unknown node {executable!r}; expected one of "
                              f"{', '.join(NODE_EXECUTABLES)}")
        code = f"import sys; from frankenbot.nodes.{executable}_node import main; sys.exit(main())"
        params_file = self._params_files.get(executable, self._params_file)
        cmd = [sys.executable, "-c", code, "--ros-args", "-r",
               f"__node:=frankenbot_{executable}", "--params-file", str(params_file)]
        if self.namespace:
            cmd += ["-r", f"__ns:={self.namespace}"]
        if self._use_sim_time and executable != "sim" and (
                self._setup != "sim" or executable in SIM_CLOCK_NODES):
            cmd += ["-p", "use_sim_time:=true"]
            if self.namespace:  # each namespaced sim publishes its own <ns>/clock
                cmd += ["-r", "/clock:=clock"]
        for name, value in self._parameters.get(executable, {}).items():
            cmd += ["-p", _param_arg(name, value)]
        return cmd

    def start(self, executables: Iterable[str]) -> None:
        for exe in executables:
            self.processes.append(self._spawn(exe, self._log_dir / f"{exe}.log", "w"))

    def _spawn(self, exe: str, log_path: Path, mode: str) -> NodeProcess:
        log_file = log_path.open(mode)
        proc = subprocess.Popen(self.command(exe), stdout=log_file, stderr=subprocess.STDOUT,
                                env=self._env, start_new_session=True,
                                preexec_fn=_die_with_parent)
        return NodeProcess(exe, proc, log_path, log_file, started=time.monotonic())

    def get(self, executable: str) -> NodeProcess:
        for p in self.processes:
            if p.executable == executable:
                return p
        raise ConfigError(f"node {executable!r} was not started in this group")

    def kill(self, executable: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to one node's process group (fault injection; see frankenbot.eval)."""
        p = self.get(executable)
        if p.alive():
            try:
                os.killpg(p.process.pid, sig)
            except ProcessLookupError:
                pass
            p.process.wait(timeout=10)

    def restart(self, executable: str) -> NodeProcess:
        """Start a node again (after it exited, or kill it first); its log is appended to."""
        old = self.get(executable)
        if old.alive():
            self.kill(executable, signal.SIGKILL)
        old.log_file.close()
        new = self._spawn(executable, old.log_path, "a")
        new.restarts = old.restarts + 1
        self.processes[self.processes.index(old)] = new
        return new

    def supervise(self, *, restart: bool = True, backoff_s: float = RESTART_BACKOFF_S,
                  max_backoff_s: float = MAX_RESTART_BACKOFF_S, stable_s: float = STABLE_AFTER_S,
                  log: Callable[[str], None] = print, poll_s: float = 0.2,
                  stop_after_s: float | None = None) -> int:
        """Watch the nodes until Ctrl-C; restart a node that exits, unless ``restart`` is off.

        A node that keeps crashing is restarted after 1, 2, 4 ... (at most ``max_backoff_s``)
        seconds, so a node that dies at start-up does not spin the machine; one that ran
        ``stable_s`` since its restart starts over at the first delay. Without ``restart`` the
        first exit ends the watch and its exit code is returned (what ``wait`` did).
        Each crash and each restart is one log line naming the node, its exit code and its log.
        """
        delays: dict[str, float] = {}
        due: dict[str, float] = {}  # executable -> monotonic time of its restart
        t_end = None if stop_after_s is None else time.monotonic() + stop_after_s
        try:
            while (t_end is None or time.monotonic() < t_end) and not self._stopping:
                now = time.monotonic()
                for p in list(self.processes):
                    exe = p.executable
                    if p.alive():
                        if now - p.started >= stable_s:
                            delays.pop(exe, None)
                        continue
                    if exe not in due:
                        code = p.process.returncode
                        if not restart:
                            log(f"frankenbot up: {p.node_name} exited ({code}); not restarting "
                                f"(--no-restart); last lines of {p.log_path}:\n{p.tail(10)}")
                            return code or 0
                        delay = delays.get(exe, backoff_s)
                        delays[exe] = min(delay * 2.0, max_backoff_s)
                        due[exe] = now + delay
                        log(f"frankenbot up: {p.node_name} exited ({code}); restarting in "
                            f"{delay:g} s (restart {p.restarts + 1}; log {p.log_path})")
                    elif now >= due[exe]:
                        del due[exe]
                        new = self.restart(exe)
                        log(f"frankenbot up: {new.node_name} restarted (pid {new.process.pid})")
                time.sleep(poll_s)
        except KeyboardInterrupt:
            return 0
        return 0

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
        self._stopping = True
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
