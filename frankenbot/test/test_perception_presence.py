"""A fixture is left out of the scene only when the camera sees the table where its body should
stand; looking down into a drawer pulled out of a cabinet is not that."""

from __future__ import annotations

import numpy as np

from frankenbot.perception.fixture_state import FixtureObserver
from frankenbot.perception.segmentation import Foreground
from frankenbot.sim import families
from frankenbot.sim.tasks import FixturePlacement


def _cabinet_map():
    x, y, yaw = families.SLOTS["cabinet"]
    return families.fixture_map((FixturePlacement("cabinet", x, y, yaw),))


def _column(fmap, heights: np.ndarray) -> Foreground:
    """Samples over the cabinet's body (a 10 x 10 grid inside it) at ``heights`` above the
    table (the table at z 0 here)."""
    f = fmap.fixture("cabinet")
    u, v = np.meshgrid(np.linspace(-0.08, 0.08, 10), np.linspace(-0.08, 0.08, 10))
    c, s = np.cos(f.yaw), np.sin(f.yaw)
    xs = f.position[0] + c * u.ravel() - s * v.ravel()
    ys = f.position[1] + s * u.ravel() + c * v.ravel()
    h = np.resize(heights, xs.shape)
    pts = np.column_stack([xs, ys, h])
    empty = np.zeros((0, 3))
    return Foreground(empty, np.zeros(0), empty, np.zeros((0, 2)), np.zeros(0, int),
                      all_points=pts, all_heights=h)


def test_a_cabinet_seen_into_is_kept_and_one_replaced_by_the_table_is_left_out():
    fmap = _cabinet_map()
    top = fmap.fixture("cabinet").position[2] + fmap.fixture("cabinet").size[2] / 2
    obs = FixtureObserver(fmap)
    assert obs._presence("cabinet", _column(fmap, np.full(100, top))) is True
    obs.present["cabinet"] = True
    # a quarter of the column at its top, the rest the floor of an open drawer inside it
    into = np.concatenate([np.full(25, top), np.linspace(top - 0.10, top - 0.05, 75)])
    assert obs._presence("cabinet", _column(fmap, into)) is None
    # the table where the body stood: gone (left out after a run of such frames)
    assert obs._presence("cabinet", _column(fmap, np.full(100, 0.002))) is False
