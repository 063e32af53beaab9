"""`frankenbot report` regenerates the measured table from result files, with their conditions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frankenbot.errors import ConfigError
from frankenbot.eval import readme_report
from frankenbot.eval.provenance import provenance, write_result
from frankenbot.eval.tables import EpisodeOutcome, write_results


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(f"# x\n\nbefore\n{readme_report.BEGIN}\nold\n"
                                        f"{readme_report.END}\nafter\n")
    (tmp_path / "docs" / "BENCHMARK.md").write_text(
        f"intro\n{readme_report.BEGIN}\n{readme_report.END}\nnotes\n")
    return tmp_path


def test_rows_come_from_the_files_with_date_commit_and_conditions(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    results = tmp_path / "results"
    write_result(results, "bench-program", {
        "parse_validate_ms": 1.234, "parse_validate_wall_ms": 1.5, "node_overhead_us": 6.0,
        "predicate_us_median": 1.2, "predicate_us_max": 6.9}, provenance(component="program"))
    eps = [EpisodeOutcome("stack", 10000 + i, "stack a on b", i != 2, True, 0, 3.0)
           for i in range(5)]
    write_results(results, "suite-offline", eps, provenance(
        planner="offline", seeds=[10000, 10004], families=["stack"], scene="perceived",
        sensor_noise="realistic") | {"title": "Task suite"})
    changed = readme_report.regenerate(results, repo)
    readme = (repo / "README.md").read_text()
    assert set(changed) == {repo / "README.md", repo / "docs" / "BENCHMARK.md"}
    assert "old" not in readme and readme.startswith("# x\n\nbefore\n") and "after" in readme
    assert "1.23 ms CPU" in readme
    assert "4/5 (80.0%, Wilson 95%" in readme and "noise realistic" in readme
    assert "seeds 10000-10004" in readme or "10000-10004" in readme
    assert "not measured (no `bench-anomaly.json`)" in readme  # never a stale number
    bench = (repo / "docs" / "BENCHMARK.md").read_text()
    assert "| stack | 5 | 4 | 80% |" in bench and "seed 10002" in bench
    assert readme_report.regenerate(results, repo) == []  # idempotent


def test_a_part_merged_in_later_gives_its_own_date_and_commit(tmp_path: Path) -> None:
    """The new world's perception eval is merged into bench-perception.json after the rest:
    its row names the run it came from, not the file's older date."""
    repo = _repo(tmp_path)
    results = tmp_path / "results"
    world = {"category_recall_min": 0.98, "category_precision_min": 0.99,
             "category_accuracy_min": 0.975, "unknown_mislabelled": 0,
             "held_out": {"objects": 10}, "rematch": {"objects": 20},
             "fixture_state_accuracy": 1.0, "phantom_fixtures_reported": 0,
             "phantom_fixtures_tried": 5, "frames": 4, "first_seed": 10900}
    meta = provenance(component="perception") | {"new_world": {
        "date": "2030-01-02 03:04 UTC", "commit": "abc1234"}}
    write_result(results, "bench-perception", {"new_world": world}, meta)
    readme_report.regenerate(results, repo)
    row = next(line for line in (repo / "README.md").read_text().splitlines()
               if line.startswith("| perception of the new world"))
    assert "98.0% / 99.0% / 97.5% / 0" in row
    assert "2030-01-02 03:04 UTC, abc1234 (this part" in row


def test_check_reports_a_stale_readme(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import argparse

    repo = _repo(tmp_path)
    results = tmp_path / "results"
    write_result(results, "bench-program", {"parse_validate_ms": 9.0}, provenance())
    args = argparse.Namespace(episode_dir=None, results=results, check=True)
    readme_report.package_root = lambda: repo / "pkg"  # type: ignore[assignment]
    try:
        assert readme_report.main(args) == 1
        assert "out of date" in capsys.readouterr().out
        readme_report.regenerate(results, repo)
        assert readme_report.main(args) == 0
    finally:
        from frankenbot.resources import package_root

        readme_report.package_root = package_root  # type: ignore[assignment]


def test_an_unreadable_row_says_so_and_a_readme_without_markers_is_refused(tmp_path: Path
                                                                           ) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "bench-motion.json").write_text(json.dumps({"meta": {}, "results": {}}))
    assert "not readable (KeyError" in readme_report.measured_table(results)
    with pytest.raises(ConfigError, match="markers"):
        readme_report.replace_between("no markers here", "x", "README.md")


def test_provenance_names_commit_machine_and_conditions() -> None:
    meta = provenance(scene="perceived", seeds=[10000])
    assert meta["conditions"] == {"scene": "perceived", "seeds": [10000]}
    assert meta["machine"]["cpus"] >= 1 and meta["date"].endswith("UTC")
    assert meta["commit"] == "unknown" or len(meta["commit"].split("+")[0]) >= 7


def test_the_readme_numbers_are_the_committed_results() -> None:
    """README.md and docs/BENCHMARK.md are what `frankenbot report` makes of docs/results/."""
    import argparse

    args = argparse.Namespace(episode_dir=None, results=None, check=True)
    assert readme_report.main(args) == 0, "run `frankenbot report` and commit the result"
