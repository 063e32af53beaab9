"""The memory database: identity, migrations, durability under SIGKILL, clear errors."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from frankenbot.errors import MemoryStoreError
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import EpisodeAnomaly, EpisodeRecord
from frankenbot.memory.schema import APPLICATION_ID, SCHEMA_VERSION
from frankenbot.memory.store import MemoryStore

LEXICAL = MemoryConfig(use_embeddings=False, load_seeds=False)
PROGRAM = """task "put the red block in the green bowl" {
  main {
    pick(obj=red_block)
    place_in(obj=red_block, container=green_bowl)
    exit success
  }
}
"""


def episode(i: int = 0, success: bool = True) -> EpisodeRecord:
    return EpisodeRecord(f"put the red block in the green bowl #{i}", PROGRAM, success,
                         "success" if success else "failure", task_id=f"t{i}", vlm_calls=1)


def test_new_database_is_marked_and_versioned(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "memory.sqlite3"
    with MemoryStore.open(path, LEXICAL):
        pass
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("SELECT value FROM frankenbot_meta WHERE key = 'schema_version'"
                        ).fetchone()[0] == str(SCHEMA_VERSION)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_episode_round_trips_with_anomalies(memory_url: str) -> None:
    rec = EpisodeRecord(
        "put the red block in the green bowl", PROGRAM, True, "success", task_id="abc",
        anomalies=(EpisodeAnomaly("grasp_lost", 1, "retry main/0", "recovered",
                                 node_path="main/0/pick", latency=0.01),),
        vlm_calls=1, repair_calls=1, planning_time=0.5, execution_time=12.0,
        trace_json='[{"node": "main/0"}]')
    with MemoryStore.open(memory_url, LEXICAL) as store:
        result = store.record_episode(rec)
        (stored,) = store.episodes()
    assert stored.episode_id == result.episode_id
    assert stored.record == rec


def test_reopen_keeps_episodes_and_skills(memory_url: str) -> None:
    path = memory_url
    with MemoryStore.open(path, LEXICAL) as store:
        for i in range(3):
            store.record_episode(episode(i))
        store.add_skill_text(
            'skill fetch(obj: object, bowl: object) "x" {\n  detect(obj=obj)\n'
            '  pick(obj=obj)\n  place_in(obj=obj, container=bowl)\n}\n', "imported")
    with MemoryStore.open(path, LEXICAL) as store:
        assert store.episode_count() == 3
        assert store.get_skill("fetch") is not None


def test_empty_instruction_is_refused_and_nothing_stored(memory_url: str) -> None:
    with MemoryStore.open(memory_url, LEXICAL) as store:
        with pytest.raises(MemoryStoreError, match="instruction"):
            store.record_episode(EpisodeRecord("  ", PROGRAM, True))
        assert store.episode_count() == 0


def test_unparsable_program_is_still_recorded_with_a_note(memory_url: str) -> None:
    with MemoryStore.open(memory_url, LEXICAL) as store:
        result = store.record_episode(EpisodeRecord("do it", "task {{{", False, "error"))
        assert store.episode_count() == 1
    assert "not parsed" in result.message


def test_not_sqlite_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    content = b"these are my notes, not a database\n" * 100
    path.write_bytes(content)
    with pytest.raises(MemoryStoreError, match="not a FrankenBot memory database"):
        MemoryStore.open(path, LEXICAL)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.sqlite3"]


def test_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
    conn.execute("INSERT INTO accounts (owner) VALUES ('alice')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(MemoryStoreError, match="another application"):
        MemoryStore.open(path, LEXICAL)
    assert path.read_bytes() == before


def test_corrupt_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemoryStore.open(path, LEXICAL) as store:
        for i in range(40):
            store.record_episode(episode(i))
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * 4096
    data[4096 + 100:4096 * 3] = b"\xff" * (4096 * 2 - 100)  # scribble over b-tree pages
    path.write_bytes(bytes(data))
    with pytest.raises(MemoryStoreError, match="corrupt"):
        MemoryStore.open(path, LEXICAL)
    assert path.read_bytes() == bytes(data)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemoryStore.open(path, LEXICAL):
        pass
    conn = sqlite3.connect(path)
    conn.execute("UPDATE frankenbot_meta SET value = ? WHERE key = 'schema_version'",
                 (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(MemoryStoreError, match="newer"):
        MemoryStore.open(path, LEXICAL)


def test_a_file_from_before_the_meta_table_is_migrated_once(tmp_path: Path) -> None:
    """Version 2 files kept the version in SQLite's user_version: migration 3 moves it into
    frankenbot_meta (the one mechanism of both engines) and keeps every episode."""
    from frankenbot.memory.schema import MIGRATIONS
    from frankenbot.memory.sql import sqlite_dialect

    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path)
    for script in MIGRATIONS[:2]:
        for statement in sqlite_dialect().ddl(script).split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 2")
    conn.execute("INSERT INTO episodes (instruction, program, success, created)"
                 " VALUES ('pick up the red block', 'task \"t\" { main { exit success } }',"
                 " 1, 0)")
    conn.commit()
    conn.close()
    with MemoryStore.open(path, LEXICAL) as store:
        assert store.episode_count() == 1
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM frankenbot_meta WHERE key = 'schema_version'"
                        ).fetchone()[0] == str(SCHEMA_VERSION) == "3"
    conn.close()


def test_full_database_gives_clear_error_and_keeps_earlier_episodes(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path / "m.db", LEXICAL) as store:
        store.record_episode(episode(0))
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages}")  # nothing more fits
        big = EpisodeRecord("x" * 200_000, PROGRAM, True)
        with pytest.raises(MemoryStoreError, match="full"):
            store.record_episode(big)
        assert store.episode_count() == 1


def test_closed_store_says_so(memory_url: str) -> None:
    store = MemoryStore.open(memory_url, LEXICAL)
    store.close()
    store.close()  # twice is fine
    with pytest.raises(MemoryStoreError, match="closed"):
        store.episode_count()


WRITER = textwrap.dedent("""
    import sys
    from frankenbot.memory.config import MemoryConfig
    from frankenbot.memory.records import EpisodeRecord
    from frankenbot.memory.store import MemoryStore
    program = sys.stdin.read()
    store = MemoryStore.open(sys.argv[1], MemoryConfig(use_embeddings=False, load_seeds=False))
    i = 0
    while True:
        r = store.record_episode(EpisodeRecord(f"episode {i}", program, i % 3 != 0,
                                               trace_json="[" + ",".join(["1"] * 500) + "]"))
        print(r.episode_id, flush=True)  # printed only after the commit returned
        i += 1
""")


@pytest.mark.parametrize("kill_after", [3, 25])
def test_sigkill_mid_write_loses_no_committed_episode(tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "m.db"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(PROGRAM)
    proc.stdin.close()
    committed: list[int] = []
    deadline = time.monotonic() + 60
    while len(committed) < kill_after and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        committed.append(int(line))
    proc.send_signal(signal.SIGKILL)  # while it is in the middle of further writes
    proc.wait(timeout=10)
    committed += [int(x) for x in proc.stdout.read().split()]
    assert len(committed) >= kill_after, "writer did not get going"
    with MemoryStore.open(path, LEXICAL) as store:
        ids = {e.episode_id for e in store.episodes(limit=10_000)}
        integrity = store.conn.execute("PRAGMA integrity_check").fetchone()[0]
    assert set(committed) <= ids
    assert integrity == "ok"


def test_concurrent_threads_record_and_read_without_errors(memory_url: str) -> None:
    import threading

    errors: list[BaseException] = []
    with MemoryStore.open(memory_url, LEXICAL) as store:
        def writer(k: int) -> None:
            try:
                for i in range(10):
                    store.record_episode(episode(100 * k + i))
                    store.get_context("put the red block in the green bowl")
            except BaseException as e:  # collected and asserted below
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
        assert store.episode_count() == 40


def test_two_connections_on_one_file_see_each_others_commits(memory_url: str) -> None:
    path = memory_url
    with MemoryStore.open(path, LEXICAL) as a, MemoryStore.open(path, LEXICAL) as b:
        a.record_episode(episode(1))
        b.record_episode(episode(2))
        assert a.episode_count() == b.episode_count() == 2
