"""One home for rotations (frankenbot/transforms.py): the order is in the type, one sign rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from frankenbot.errors import ConfigError
from frankenbot.transforms import (
    QuatWXYZ,
    QuatXYZW,
    matrix_from_quat,
    quat_from_matrix,
    quat_from_yaw,
    quat_xyzw,
    yaw_of,
)


def _random_rotations(n: int) -> np.ndarray:
    return Rotation.random(n, random_state=0).as_matrix()


def test_matrix_and_quaternion_round_trip_and_agree_with_scipy() -> None:
    for r in _random_rotations(50):
        q = quat_from_matrix(r)
        assert q.w >= 0 and math.isclose(sum(v * v for v in q), 1.0)
        assert np.allclose(matrix_from_quat(q), r, atol=1e-9)
        x, y, z, w = Rotation.from_matrix(r).as_quat()  # scipy: (x, y, z, w)
        sign = 1.0 if w >= 0 else -1.0
        assert np.allclose(q.xyzw(), sign * np.array([x, y, z, w]), atol=1e-9)


def test_the_order_is_in_the_type() -> None:
    q = quat_from_yaw(0.5)
    assert isinstance(q, QuatWXYZ) and q.x == 0.0 and q.y == 0.0
    ros = q.xyzw()
    assert isinstance(ros, QuatXYZW) and tuple(ros) == (q.x, q.y, q.z, q.w)
    assert ros.wxyz() == q and math.isclose(ros.yaw(), 0.5) and math.isclose(q.yaw(), 0.5)
    assert np.allclose(ros.matrix(), q.matrix())


@pytest.mark.parametrize("yaw", [0.0, 0.3, -1.2, math.pi - 1e-6, -math.pi + 1e-6, 3.0])
def test_yaw_round_trips_and_a_half_turn_is_not_flipped(yaw: float) -> None:
    q = quat_from_yaw(yaw)
    assert q.w >= 0
    got = yaw_of(q)
    assert math.isclose(math.cos(got), math.cos(yaw), abs_tol=1e-9)
    assert math.isclose(math.sin(got), math.sin(yaw), abs_tol=1e-9)
    # q and -q are one rotation: both give the same yaw
    assert math.isclose(yaw_of(QuatWXYZ(*(-v for v in q))), got, abs_tol=1e-9)


def test_a_quaternion_without_direction_is_refused() -> None:
    with pytest.raises(ConfigError, match="no direction"):
        quat_xyzw(0.0, 0.0, 0.0, 0.0)
    assert quat_xyzw(0.0, 0.0, 0.0, 2.0) == QuatXYZW(0.0, 0.0, 0.0, 1.0)  # normalised
