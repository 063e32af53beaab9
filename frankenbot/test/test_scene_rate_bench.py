"""The scene-rate benchmark's statistics (issue 16), on made-up arrivals: no ROS needed."""

from __future__ import annotations

from frankenbot.eval.scene_rate_bench import ClockOffset, Recording, SceneArrival, summarise


def test_clock_offset_is_the_smallest_delay_in_its_window():
    c = ClockOffset(window_s=1.0)
    c.add(10.00, 5.00)  # arrived 5.00 after its stamp
    c.add(10.50, 5.49)  # 5.01
    assert abs(c.offset() - 5.00) < 1e-9
    c.add(11.20, 6.19)  # the first sample left the window
    assert abs(c.offset() - 5.01) < 1e-9


def test_rates_latencies_and_gaps_of_a_window():
    rec = Recording(t0=0.0, t1=10.0)
    rec.frames = [(0.1 * k + 0.05, 100.0 + 0.1 * k) for k in range(100)]  # 10 Hz camera
    scenes = []
    for k in range(100):
        if 40 <= k < 47:  # 0.8 s without a scene
            continue
        stamp = 100.0 + 0.1 * k
        scenes.append(SceneArrival(arrival=0.1 * k + 0.15, stamp=stamp, stale=False,
                                   node_latency=0.06, n_objects=5, frame_wall=0.1 * k + 0.05,
                                   info_arrival=0.1 * k + 0.07))
    scenes.append(SceneArrival(9.99, 110.0, True, 0.0, 5, None, None))  # stale: not counted
    rec.scenes = scenes
    s = summarise(rec)
    assert s["camera_hz"] == 10.0 and s["scenes"] == 93 and s["scene_hz"] == 9.3
    assert s["stamp_to_scene"]["median_ms"] == 100.0
    assert s["info_to_scene"]["median_ms"] == 80.0
    assert s["node_latency"]["median_ms"] == 60.0
    assert abs(s["max_gap_s"] - 0.8) < 1e-6 and s["gaps_over_0_5_s"] == 1
    assert s["stale_messages"] == 1 and not s["meets_targets"]  # the gap
