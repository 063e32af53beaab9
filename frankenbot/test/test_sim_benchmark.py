"""The simulator benchmark's measurements run and return sane numbers (speeds are not asserted:
they are reported by ``frankenbot bench --component sim``)."""

from __future__ import annotations

import pytest

from frankenbot.eval.sim_bench import frame_time, node_deadlines, physics_speed


def test_physics_speed_measures_the_full_scene():
    r = physics_speed(0.5)
    assert r["sim_s"] == pytest.approx(0.5, abs=0.01)
    assert r["realtime_factor"] > 0 and r["contacts"] >= 30  # every object is resting somewhere


def test_frame_time_reports_each_frame():
    r = frame_time(3, 64, 48)
    assert r["frames"] == 3 and 0 < r["mean_ms"] <= r["max_ms"]


@pytest.mark.slow
@pytest.mark.ros
def test_node_deadline_measurement_sees_joint_states():
    r = node_deadlines(2.0)
    assert r["ticks"] > 100 and 0.0 <= r["missed_share"] <= 1.0
    assert r["rate_hz_sim"] == pytest.approx(125.0, rel=0.05)
