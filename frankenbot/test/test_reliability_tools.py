"""The reliability tooling itself, without ROS: the DDS liveliness profile's environment, the
soak's process sampling (psutil and /proc agree) and its growth arithmetic."""

from __future__ import annotations

import os
import threading

import pytest

from frankenbot.bringup.processes import LIVELINESS_PROFILE, dds_environment
from frankenbot.eval.soak import ProcSample, SoakReport, TaskRow, _sample_proc_fs, sample_process


def test_node_processes_get_the_short_lease_profile_unless_one_is_chosen() -> None:
    env = dds_environment({"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"})
    path = env["FASTRTPS_DEFAULT_PROFILES_FILE"]
    assert path.endswith(LIVELINESS_PROFILE) and os.path.isfile(path)
    text = open(path).read()
    assert "<leaseDuration><sec>3</sec></leaseDuration>" in text
    assert dds_environment({}) == env  # Fast DDS is the default RMW
    assert dds_environment({"FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}
    assert dds_environment({"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}
    assert dds_environment({"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) == {}


def test_process_sampling_sees_threads_and_descriptors_of_this_process() -> None:
    stop = threading.Event()
    before = sample_process(os.getpid())
    threads = [threading.Thread(target=stop.wait) for _ in range(3)]
    for t in threads:
        t.start()
    files = [open(os.devnull) for _ in range(5)]
    try:
        after = sample_process(os.getpid())
        proc_fs = _sample_proc_fs(os.getpid())
    finally:
        stop.set()
        for f in files:
            f.close()
        for t in threads:
            t.join()
    assert after.threads >= before.threads + 3 and after.fds >= before.fds + 5
    assert before.rss_mb > 10.0
    assert proc_fs.threads == after.threads and abs(proc_fs.fds - after.fds) <= 2
    assert proc_fs.rss_mb == pytest.approx(after.rss_mb, rel=0.2)


def _report(rss: list[float], warmup: int = 2) -> SoakReport:
    r = SoakReport(len(rss), warmup)
    r.rows = [TaskRow(i, "pick_up", i, "success", i % 2 == 0, False, 10.0 + i)
              for i in range(len(rss))]
    r.samples = {"planner": [ProcSample(x, 10 + i, 20) for i, x in enumerate(rss)],
                 "memory": [ProcSample(100.0, 5, 30) for _ in rss]}
    return r


def test_soak_growth_is_measured_from_the_sample_after_the_warm_up() -> None:
    s = _report([50.0, 100.0, 102.0, 101.0, 104.0]).summary()
    assert s["tasks"] == 5 and s["succeeded"] == 3 and s["hung"] == 0
    assert s["max_rss_growth_pct"] == pytest.approx(4.0)  # (104 - 100) / 100
    assert s["max_threads"] == 14 and s["max_fds"] == 30
    planner = s["nodes"]["planner"]  # type: ignore[index]
    assert planner["rss_mb_at_warmup"] == 100.0 and planner["threads_last"] == 14


def test_a_soak_no_longer_than_its_warm_up_reports_no_growth() -> None:
    assert _report([50.0, 60.0]).summary()["max_rss_growth_pct"] is None


def test_the_trend_tells_a_steady_leak_from_a_swing_and_a_saved_report_reads_back() -> None:
    """A node whose RSS swings +-8% around a level has no trend; one that grows by 0.1 MB a
    task has. A report written by ``soak --out`` is summarised again from its samples."""
    import json
    from dataclasses import asdict

    from frankenbot.eval.soak import TREND_WINDOW, report_from_json

    n = 2 + 3 * TREND_WINDOW
    swing = _report([50.0] + [100.0 + (8.0 if i % 7 == 3 else 0.0) for i in range(n)])
    s = swing.summary()
    assert s["max_rss_growth_pct"] == pytest.approx(8.0)
    assert s["max_rss_trend_growth_pct"] == pytest.approx(0.0)
    leak = _report([50.0] + [100.0 + 0.1 * i for i in range(n)]).summary()
    assert leak["max_rss_trend_growth_pct"] > 3.0
    assert _report([50.0, 100.0, 101.0]).summary()["max_rss_trend_growth_pct"] is None
    written = json.loads(json.dumps({
        "summary": swing.summary(), "rows": [asdict(r) for r in swing.rows],
        "samples": {k: [asdict(x) for x in v] for k, v in swing.samples.items()}}))
    assert report_from_json(written).summary() == swing.summary()
