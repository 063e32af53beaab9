"""Memory crash safety without ROS: writers SIGKILLed mid-write lose no committed episode and
leave a store that passes PRAGMA integrity_check; a full disk or a read-only database refuses
the write with a clear error and corrupts nothing."""

from __future__ import annotations

import pytest

from frankenbot.errors import MemoryStoreError
from frankenbot.eval.reliability import (
    disk_full_trial,
    memory_kill_trials,
    read_only_trial,
    stored_task_ids,
    tmpfs_full_trial,
    writer_config,
    writer_program,
)
from frankenbot.memory.records import EpisodeRecord
from frankenbot.memory.store import MemoryStore


def test_twenty_sigkills_during_writes_and_promotions_lose_no_committed_episode(tmp_path):
    db = tmp_path / "kills.sqlite3"
    results = memory_kill_trials(db, kills=20, seed=3, max_delay_s=0.6)
    assert len(results) == 20
    assert all(r.survived for r in results), [r.line() for r in results if not r.survived]
    assert sum(r.data_lost for r in results) == 0
    ids, problems, promoted = stored_task_ids(db)
    assert problems == ()
    assert len(ids) >= 20  # every run committed at least one episode before its kill
    assert promoted > 0  # promotions happened while the writer was being killed


def test_the_writer_programs_parse_and_promote(tmp_path):
    with MemoryStore.open(tmp_path / "m.db", writer_config()) as store:
        promoted = [store.record_episode(EpisodeRecord("put it in the bowl", writer_program(i),
                                                       True)).promoted for i in range(4)]
        assert store.integrity_check() == ()
    assert promoted[1] and promoted[3]  # a new pattern promoted with every second episode


def test_a_full_database_refuses_the_write_and_keeps_every_episode(tmp_path):
    r = disk_full_trial(tmp_path)
    assert r.survived and r.data_lost == 0, r.line()  # survived: the error said "full"


def test_a_full_file_system_refuses_the_write_and_keeps_every_episode(tmp_path):
    r = tmpfs_full_trial(tmp_path)
    if r is None:
        pytest.skip("needs root to mount a tiny tmpfs")
    assert r.survived and r.data_lost == 0, r.line()


def test_a_read_only_database_serves_context_refuses_writes_and_is_unchanged(tmp_path):
    r = read_only_trial(tmp_path)
    assert r.survived, r.line()  # survived: the error said "read-only", the bytes unchanged
    assert r.data_lost == 0 and "3 exemplars served" in r.detail


def test_integrity_check_finds_a_damaged_page(tmp_path):
    db = tmp_path / "m.db"
    with MemoryStore.open(db, writer_config()) as store:
        for i in range(30):
            store.record_episode(EpisodeRecord(f"put block {i} in the bowl", writer_program(i),
                                               True, trace_json="[" + "{}, " * 200 + "{}]"))
        assert store.integrity_check() == ()
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    page = 4096
    for n in range(1, 6):  # scribble over the b-tree headers of pages 2..6
        data[n * page:n * page + 12] = b"\x55" * 12
    db.write_bytes(bytes(data))
    try:
        with MemoryStore.open(db, writer_config()) as store:
            problems = store.integrity_check()
    except MemoryStoreError as e:  # refused at open by quick_check: never used either
        problems = (str(e),)
    assert problems and any("corrupt" in p or "malformed" in p or "page" in p
                            for p in problems), problems


def test_the_read_only_connection_reads_a_closed_store_without_writing(tmp_path):
    from frankenbot.eval.reliability import _write
    from frankenbot.memory.backend import _connect_read_only  # the SQLite backend owns it

    db = tmp_path / "m.sqlite3"
    _write(db, 2)
    before = sorted(p.name for p in tmp_path.iterdir())
    conn = _connect_read_only(db)
    try:
        assert conn.execute("SELECT count(*) FROM episodes").fetchone()[0] == 2
        with pytest.raises(Exception, match="readonly|read-only"):
            conn.execute("DELETE FROM episodes")
    finally:
        conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no -wal/-shm created
