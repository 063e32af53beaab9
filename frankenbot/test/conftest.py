"""Shared pytest fixtures.

ROS isolation: every pytest session gets its own ROS_DOMAIN_ID (derived from the process id) and
discovery limited to localhost, so concurrent test runs on one machine never see each other's nodes.
Child processes started by tests inherit the environment.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ["ROS_DOMAIN_ID"] = str(10 + os.getpid() % 90)
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # frankenbot/ (the ament_python package)
REPO_ROOT = PACKAGE_ROOT.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_collection_modifyitems(config, items) -> None:
    """One retry for tests at the mercy of the shared machine's scheduler.

    Tests marked `ros` (DDS discovery and message delivery between processes) or `wall_clock`
    (a safety latency measured in wall seconds) can miss a deadline when the machine is loaded;
    a real defect fails both tries. Tests that already carry their own `flaky` marker keep it.
    """
    for item in items:
        if item.get_closest_marker("flaky") is not None:
            continue
        if item.get_closest_marker("ros") or item.get_closest_marker("wall_clock"):
            item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=1))


@pytest.fixture(scope="session")
def package_root() -> Path:
    return PACKAGE_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def python_exe() -> str:
    return sys.executable


@pytest.fixture
def ros_context():
    """An initialised rclpy Context, shut down after the test (rclpy.create_node(..., context=))."""
    rclpy = pytest.importorskip("rclpy")
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        if context.ok():
            rclpy.shutdown(context=context)


@pytest.fixture
def spawn_process():
    """Start child processes (e.g. a node: [sys.executable, '-m', 'frankenbot.nodes.sim_node']).

    Each gets the test's environment (same ROS_DOMAIN_ID), its output goes to a log file that is
    printed if the test fails, and all are terminated (then killed) at teardown.
    """
    import signal
    import subprocess
    import tempfile

    procs: list[tuple[subprocess.Popen, Path]] = []

    def spawn(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        log = Path(tempfile.mkstemp(prefix="fb-proc-", suffix=".log")[1])
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT,
                                env=full_env, start_new_session=True)
        procs.append((proc, log))
        return proc

    yield spawn
    for proc, log in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGINT)
                proc.wait(timeout=5)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=5)
        text = log.read_text(errors="replace")
        if text.strip():
            sys.stderr.write(f"\n--- output of {' '.join(proc.args)} ---\n{text[-4000:]}\n")
        log.unlink(missing_ok=True)


def spin_until(node, predicate, timeout: float = 10.0, executor=None) -> bool:
    """Spin ``node`` (or ``executor``) until ``predicate()`` is true or ``timeout`` s pass."""
    import time

    import rclpy

    own_executor = executor is None
    if own_executor:
        executor = rclpy.executors.SingleThreadedExecutor(context=node.context)
        executor.add_node(node)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            executor.spin_once(timeout_sec=0.05)
        return bool(predicate())
    finally:
        if own_executor:
            executor.remove_node(node)
            executor.shutdown(timeout_sec=1.0)


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for this session (initdb in a temporary folder, a free port).

    Skips with the reason when Debian's server binaries are absent; CI installs them
    (``postgresql`` is in the Makefile's APT_PACKAGES).
    """
    from frankenbot.eval.pg_server import PostgresUnavailable, TemporaryPostgres

    try:
        server = TemporaryPostgres()
    except PostgresUnavailable as e:
        pytest.skip(str(e))
    server.start()
    try:
        yield server
    finally:
        server.stop()


_DB_COUNTER = iter(range(1, 1_000_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def memory_url(request, tmp_path: Path) -> str:
    """A fresh, empty memory database on each backend: an SQLite file or a new PG database."""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path / 'memory.sqlite3'}"
    server = request.getfixturevalue("postgres_server")
    return server.create_database(f"memory_{os.getpid()}_{next(_DB_COUNTER)}")
