"""A throw-away PostgreSQL server for tests and benchmarks: initdb in a temporary folder.

``TemporaryPostgres`` runs Debian's server binaries (package ``postgresql``, in the Makefile's
APT_PACKAGES) on a free port of 127.0.0.1 with trust authentication for one superuser, and removes
everything on ``stop``. PostgreSQL refuses to run as root, so as root the server runs as the
``postgres`` system user (created by the Debian package; ``nobody`` otherwise) through
``runuser``, in a folder that user owns. This is a harness, not a way to run a fleet memory: see
docs/MEMORY.md for a real server.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from frankenbot.errors import FrankenbotError

SUPERUSER = "frankenbot"


class PostgresUnavailable(FrankenbotError, RuntimeError):
    """The server binaries are not installed (tests skip with this message)."""


def find_bindir() -> Path:
    """Directory of initdb/pg_ctl: on PATH, else Debian's newest /usr/lib/postgresql/N/bin."""
    on_path = shutil.which("initdb")
    if on_path and Path(on_path).resolve().with_name("pg_ctl").exists():
        return Path(on_path).resolve().parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    if not found:
        raise PostgresUnavailable(
            "PostgreSQL server binaries not found (initdb); install Debian's 'postgresql'"
            " package (make setup does)")
    return Path(found[-1]).parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> str | None:
    """The unprivileged user to run the server as (None: ourselves, we are not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise PostgresUnavailable("running as root and no unprivileged user (postgres, nobody)"
                              " to run PostgreSQL as")


@dataclass
class TemporaryPostgres:
    """One server in a temporary folder; ``start()``, ``url(db)``, ``create_database``, ``stop()``.

    ``durable`` False turns fsync off (tests: speed; nothing survives a crash anyway); the
    benchmark keeps it on so the numbers are those of a real server.
    """

    durable: bool = False
    port: int = 0
    root: Path | None = None
    bindir: Path = field(default_factory=find_bindir)
    _user: str | None = None

    @property
    def data(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    def _cmd(self, *args: str) -> list[str]:
        return (["runuser", "-u", self._user, "--"] if self._user else []) + list(args)

    def start(self, timeout_s: float = 60.0) -> "TemporaryPostgres":
        self._user = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="frankenbot-pg-"))
        if self._user:
            info = pwd.getpwnam(self._user)
            os.chown(self.root, info.pw_uid, info.pw_gid)
        init = subprocess.run(
            self._cmd(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust",
                      "-U", SUPERUSER, "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"),
            capture_output=True, text=True, timeout=timeout_s)
        if init.returncode != 0:
            self._remove()
            raise RuntimeError(f"initdb failed ({init.returncode}): {init.stderr.strip()}")
        options = [f"-c listen_addresses=127.0.0.1 -k {self.root} -c max_connections=60",
                   "-c shared_buffers=32MB"]
        if not self.durable:
            options.append("-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        last = ""
        for _attempt in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            started = subprocess.run(
                self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l",
                          str(self.root / "server.log"), "-w", "-t", str(int(timeout_s)),
                          "-o", " ".join([f"-p {self.port}", *options]), "start"),
                capture_output=True, text=True, timeout=timeout_s + 10)
            if started.returncode == 0:
                return self
            last = started.stderr.strip() + " " + self.log_tail()
            time.sleep(0.2)
        self._remove()
        raise RuntimeError(f"PostgreSQL did not start: {last}")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        """Create an empty database (a fresh memory) and return its URL."""
        import psycopg

        if not name.replace("_", "").isalnum():
            raise ValueError(f"database name must be alphanumeric/underscore, got {name!r}")
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def log_tail(self, n: int = 20) -> str:
        if self.root is None:
            return ""
        try:
            return "\n".join((self.root / "server.log").read_text().splitlines()[-n:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its folder; safe to call twice."""
        if self.root is None:
            return
        if (self.data / "postmaster.pid").exists():
            subprocess.run(self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m",
                                     "fast", "-w", "stop"), capture_output=True, timeout=60)
        self._remove()

    def _remove(self) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> "TemporaryPostgres":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
