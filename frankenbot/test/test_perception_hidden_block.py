"""A block the camera sees only in part (behind a bin's wall, ~17 samples of its top under the
realistic camera) is still a block: never a bowl, never dropped."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frankenbot.perception.signature import measure_signature


def test_a_sparse_top_seen_in_one_or_two_middle_cells_is_solid_not_looked_into():
    # 16 samples ~7 mm apart on a 40 mm top (a far, half-hidden block): two of them fall in
    # the middle window. They are at the top, so the middle is seen and not dropped.
    u, v = np.meshgrid(np.linspace(-0.017, 0.017, 4), np.linspace(-0.012, 0.012, 4))
    xy = np.column_stack([u.ravel(), v.ravel()])
    xy = xy[np.hypot(xy[:, 0], xy[:, 1]) > 0.012]  # the middle thinly sampled
    xy = np.vstack([xy, [(0.0, -0.002), (0.004, -0.006)]])
    heights = np.full(len(xy), 0.04)
    points = np.column_stack([xy, heights])
    sig = measure_signature(points, heights, np.zeros(2), 0.0, 0.035, 0.026, 0.04, 0.0,
                            0.8 * 0.035 * 0.026)
    assert sig.mid_drop < 0.2
    # nothing at all in the middle, the walls all round at the top: a container seen into
    ring = xy[np.hypot(xy[:, 0], xy[:, 1]) > 0.012]
    hollow = measure_signature(np.column_stack([ring, np.full(len(ring), 0.04)]),
                               np.full(len(ring), 0.04), np.zeros(2), 0.0, 0.035, 0.026,
                               0.04, 0.0, 0.8 * 0.035 * 0.026)
    assert hollow.mid_drop == 1.0


@pytest.fixture(scope="module")
def stack():
    # the eval's stack: the realistic camera, calibrated as before every task suite
    from frankenbot.eval.stack import SimStack

    st = SimStack(noise="realistic")
    yield st
    st.close()


# clear_table 10003: the purple block stands behind the gray bin's far wall (its first frame
# read as a purple bowl, the planner left it on the table); the others are scenes of the task
# suite whose blocks the realistic camera must all report too
@pytest.mark.parametrize("family,seed", [("clear_table", 10003), ("clear_table", 10001),
                                         ("put_in_drawer", 10003)])
def test_every_block_is_reported_as_a_block_with_the_realistic_camera(stack, family, seed):
    stack.reset(family, seed)
    world, pipeline = stack.world, stack._pipeline
    truth = {n: s for n, s in world.object_states().items() if s.position[2] > -0.2}
    for k in range(8):
        if k:
            world.advance(0.1)
        stamp, qpos = world.render_state()
        rgb, depth = world.sense(*world.render_qpos(qpos), stamp)
        scene = pipeline.process(rgb, depth, stamp, world.arm_joints_of(qpos))
        objects = [o for o in scene.objects if not o.is_fixture]
        for name, state in truth.items():
            near = [o for o in objects if o.colour == state.colour
                    and math.dist(o.position[:2], state.position[:2]) < 0.04]
            # never anything else; a frame or two may miss a block too sparsely sampled
            assert {o.shape for o in near} <= {state.shape}, f"frame {k}: {name} is {near}"
            assert near or k < 2, f"frame {k}: {name} not reported: {objects}"
