"""Fleet memory: backends by URL, several robots writing one database, per-robot skill checks.

PostgreSQL tests run against a real server started by the ``postgres_server`` fixture.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from frankenbot.errors import ConfigError, MemoryStoreError
from frankenbot.memory.backend import parse_db_url, redact
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.records import EpisodeRecord, SkillOrigin
from frankenbot.memory.store import MemoryStore
from frankenbot.program.catalog import Catalog, default_catalog


def fleet_config(robot: str, fixtures: str = "drawer,zone", **kw: object) -> MemoryConfig:
    return MemoryConfig(use_embeddings=False, load_seeds=False, robot_id=robot,  # type: ignore[arg-type]
                        fixtures=fixtures, min_support=2, **kw)


def drawer_task(obj: str) -> str:
    return (f'task "put the {obj} in the drawer" {{\n  main {{\n'
            "    open_drawer(drawer=drawer)\n"
            f"    pick(obj={obj})\n    place_in(obj={obj}, container=drawer)\n"
            "    close_drawer(drawer=drawer)\n    home()\n    exit success\n  }\n}\n")


def drawer_episode(obj: str) -> EpisodeRecord:
    return EpisodeRecord(f"put the {obj} in the drawer", drawer_task(obj), True, "success")


# ------------------------------------------------------------------------------------ URLs

@pytest.mark.parametrize("url, expected", [
    ("sqlite:///tmp/m.sqlite3", ("sqlite", "/tmp/m.sqlite3")),
    ("sqlite:////tmp/m.sqlite3", ("sqlite", "/tmp/m.sqlite3")),
    ("sqlite:rel/m.sqlite3", ("sqlite", "rel/m.sqlite3")),
    ("/tmp/plain.sqlite3", ("sqlite", "/tmp/plain.sqlite3")),
    ("postgresql://fb@db:5432/memory", ("postgresql", "postgresql://fb@db:5432/memory")),
    ("postgres://fb@db/memory", ("postgresql", "postgres://fb@db/memory")),
])
def test_db_urls_name_the_backend(url: str, expected: tuple[str, str]) -> None:
    assert parse_db_url(url) == expected


@pytest.mark.parametrize("url, match", [
    ("mysql://x@y/z", "unknown scheme"), ("postgresql://fb@db:5432", "names no database"),
    ("sqlite://", "names no file"), ("  ", "empty")])
def test_bad_db_urls_are_refused_clearly(url: str, match: str) -> None:
    with pytest.raises(MemoryStoreError, match=match):
        parse_db_url(url)


def test_passwords_never_reach_messages() -> None:
    assert redact("postgresql://fb:s3cret@db:5432/m") == "postgresql://fb:***@db:5432/m"


def test_db_url_and_db_path_together_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="both set"):
        MemoryConfig(db_path="/tmp/a.sqlite3", db_url="postgresql://x@y/z")
    assert MemoryConfig(db_path="/tmp/a.sqlite3").resolved_db_url == "sqlite:///tmp/a.sqlite3"


def test_unreachable_postgres_is_a_clear_error() -> None:
    from frankenbot.eval.pg_server import free_port

    url = f"postgresql://fb@127.0.0.1:{free_port()}/memory"
    with pytest.raises(MemoryStoreError, match="cannot connect"):
        MemoryStore.open(url, fleet_config("a"))


def test_foreign_postgres_database_is_refused_and_left_untouched(postgres_server) -> None:
    import psycopg

    url = postgres_server.create_database("foreign_app")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE accounts (id SERIAL PRIMARY KEY, owner TEXT)")
        conn.execute("INSERT INTO accounts (owner) VALUES ('alice')")
    with pytest.raises(MemoryStoreError, match="another application"):
        MemoryStore.open(url, fleet_config("a"))
    with psycopg.connect(url, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
        assert tables == ["accounts"]


# ------------------------------------------------------------------------ robots and skills

def test_skill_remembers_robot_and_fixtures_and_reaches_the_other_robot(memory_url: str) -> None:
    with MemoryStore.open(memory_url, fleet_config("arm1")) as a, \
            MemoryStore.open(memory_url, fleet_config("arm2")) as b:
        assert b.get_context("put the cube in the drawer").skills == ()
        promoted: tuple[str, ...] = ()
        for obj in ("red_block", "blue_block", "green_block"):
            promoted += a.record_episode(drawer_episode(obj)).promoted
        assert promoted, "arm1's episodes promoted no skill"
        skill = b.get_skill(promoted[0])
        assert skill is not None and skill.origin == SkillOrigin.PROMOTED
        assert skill.robot_id == "arm1"
        assert skill.fixtures == ("drawer",)
        offered = {s.name for s in b.get_context("put the cube in the drawer").skills}
        assert set(promoted) <= offered
        (episode,) = a.episodes(limit=1)
        assert episode.record.robot_id == "arm1"


def test_skill_is_not_offered_to_a_robot_without_its_fixture(memory_url: str) -> None:
    with MemoryStore.open(memory_url, fleet_config("arm1")) as a, \
            MemoryStore.open(memory_url, fleet_config("arm3", fixtures="zone")) as c:
        for obj in ("red_block", "blue_block"):
            a.record_episode(drawer_episode(obj))
        (name,) = [s.name for s in a.list_skills()][:1]
        assert name in {s.name for s in a.offered_skills()}
        assert name not in {s.name for s in c.offered_skills()}
        assert "drawer" in c.unfit_skills()[name]


def test_skill_is_not_offered_to_a_robot_whose_catalog_lacks_a_callee(memory_url: str) -> None:
    full = default_catalog()
    no_drawer = Catalog({k: v for k, v in full.entries.items()
                         if k not in ("open_drawer", "close_drawer", "drawer_open")})
    with MemoryStore.open(memory_url, fleet_config("arm1")) as a, \
            MemoryStore.open(memory_url, fleet_config("arm4"), base_catalog=no_drawer) as d:
        for obj in ("red_block", "blue_block"):
            a.record_episode(drawer_episode(obj))
        promoted = [s.name for s in a.list_skills()]
        assert promoted
        unfit = d.unfit_skills()
        assert set(promoted) <= set(unfit)
        assert "catalog" in unfit[promoted[0]]
        assert d.get_context("put the cube in the drawer").skills == ()


def test_promotion_is_idempotent_across_robots(memory_url: str) -> None:
    with MemoryStore.open(memory_url, fleet_config("arm1")) as a, \
            MemoryStore.open(memory_url, fleet_config("arm2")) as b:
        first = a.record_episode(drawer_episode("red_block")).promoted
        first += b.record_episode(drawer_episode("blue_block")).promoted
        assert first
        again = ()
        for obj in ("green_block", "yellow_block"):
            again += a.record_episode(drawer_episode(obj)).promoted
            again += b.record_episode(drawer_episode(obj)).promoted
        assert again == ()
        assert len({s.body for s in a.list_skills()}) == len(a.list_skills())


# ------------------------------------------------------------------- two writer processes

WRITER = textwrap.dedent("""
    import sys
    from frankenbot.memory.config import MemoryConfig
    from frankenbot.memory.records import EpisodeRecord
    from frankenbot.memory.store import MemoryStore
    url, robot, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    config = MemoryConfig(use_embeddings=False, load_seeds=False, robot_id=robot,
                          fixtures="drawer", min_support=3)
    objects = ["red_block", "blue_block", "green_block", "yellow_block"]
    with MemoryStore.open(url, config) as store:
        sys.stdout.write("ready\\n"); sys.stdout.flush()
        sys.stdin.readline()  # both writers start together
        for i in range(n):
            obj = objects[i % len(objects)]
            program = (f'task "t" {{\\n  main {{\\n    open_drawer(drawer=drawer)\\n'
                       f'    pick(obj={obj})\\n    place_in(obj={obj}, container=drawer)\\n'
                       f'    close_drawer(drawer=drawer)\\n    exit success\\n  }}\\n}}\\n')
            r = store.record_episode(EpisodeRecord(f"{robot} episode {i}", program, True,
                                                   "success", task_id=f"{robot}-{i}"))
            print(r.episode_id, ",".join(r.promoted), flush=True)
""")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_writer_processes_lose_nothing_duplicate_nothing(memory_url: str) -> None:
    n = 200
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, memory_url, robot, str(n)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for robot in ("arm1", "arm2")]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outputs = [p.communicate(timeout=540)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    ids: list[int] = []
    promoted: list[str] = []
    for out in outputs:
        lines = out.split("\n")[:-1]
        assert len(lines) == n
        for line in lines:
            episode_id, names = line.split(" ", 1) if " " in line else (line, "")
            ids.append(int(episode_id))
            promoted += [x for x in names.split(",") if x]
    assert len(set(ids)) == 2 * n, "an episode id was handed out twice"
    with MemoryStore.open(memory_url, fleet_config("reader")) as store:
        episodes = store.episodes(limit=10 * n)
        assert store.episode_count() == 2 * n
        assert {e.episode_id for e in episodes} == set(ids)
        names = sorted(e.record.instruction for e in episodes)
        assert names == sorted(f"{r} episode {i}" for r in ("arm1", "arm2") for i in range(n))
        skills = store.list_skills()
        assert skills, "nothing was promoted"
        assert sorted(promoted) == sorted(s.name for s in skills), "a skill promoted twice"
        assert len({s.body for s in skills}) == len(skills)
        assert {s.robot_id for s in skills} <= {"arm1", "arm2"}
        # Every pattern counted once per episode: the counts add up to the episodes.
        top = max(store.patterns(), key=lambda p: p.seen)
        assert top.seen == 2 * n


def test_sqlite_path_still_works_without_a_url(tmp_path: Path) -> None:
    config = MemoryConfig(db_path=str(tmp_path / "x.sqlite3"), use_embeddings=False,
                          load_seeds=False)
    with MemoryStore.open(config=config) as store:
        store.record_episode(drawer_episode("red_block"))
        assert store.dialect == "sqlite" and store.path == tmp_path / "x.sqlite3"


def test_programs_carrying_library_definitions_count_as_library_calls(memory_url: str) -> None:
    """The planner attaches the library skills a program calls (for the executor): memory
    still counts those calls as the library skill's uses and mines them."""
    with MemoryStore.open(memory_url, fleet_config("arm1")) as store:
        (fetch,) = store.add_skill_text(
            'skill fetch(obj: object, box: object) "x" {\n  pick(obj=obj)\n'
            '  place_in(obj=obj, container=box)\n}\n', "imported")
        promoted: tuple[str, ...] = ()
        for obj in ("red_block", "blue_block"):
            program = (f'task "t" {{\n  main {{\n    fetch(obj={obj}, box=drawer)\n'
                       f'    close_drawer(drawer=drawer)\n    exit success\n  }}\n}}\n'
                       f'{fetch.body}')
            promoted += store.record_episode(
                EpisodeRecord(f"put the {obj} away", program, True, "success")).promoted
        stored = store.get_skill("fetch")
        assert stored is not None and stored.uses == 2 and stored.successes == 2
        assert promoted, "calls of a carried library skill were not mined"


def test_each_backend_gets_its_statements_from_a_lexer_not_a_text_replace() -> None:
    from frankenbot.memory.sql import postgres_dialect, split_parameters, sqlite_dialect

    sql = ("SELECT name FROM skills WHERE name = ? AND description LIKE '%?%'"
           " -- which one?\n AND body = 'it''s ?' AND origin = ?")
    assert len(split_parameters(sql)) == 3  # two parameters; the ? in literals/comments stay
    pg = postgres_dialect().statement(sql)
    assert pg.count("%s") == 2 and "'%%?%%'" in pg and "'it''s ?'" in pg
    assert sqlite_dialect().statement(sql) == sql
    assert postgres_dialect().ddl("id {serial_pk}, v {blob}") == "id BIGSERIAL PRIMARY KEY, v BYTEA"
