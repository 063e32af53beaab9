"""The marker-board camera check and fit (perception/marker_board.py) and
`frankenbot calibrate camera --check / --board` on the sim's rendered board."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from frankenbot.errors import ConfigError, PerceptionError
from frankenbot.perception import marker_board as mb
from frankenbot.perception.camera import CameraModel, Intrinsics, look_at

cv2 = pytest.importorskip("cv2")

BOARD = {"board": {"squares": [6, 4], "square_m": 0.065, "marker_m": 0.048,
                   "origin": [0.425, 0.01, 0.001], "yaw_deg": 0.0}}
INTRINSICS = Intrinsics(465.6, 465.6, 319.5, 239.5, 640, 480)


def _synthetic_view(spec: mb.BoardSpec, camera: CameraModel) -> np.ndarray:
    """The board as ``camera`` sees it: the printed image warped by the exact homography of
    the board plane (OpenCV only, no renderer)."""
    px = 100
    w, h = spec.squares_x * px, spec.squares_y * px
    printed = spec.board().generateImage((w, h), marginSize=0, borderBits=1)
    sx, sy = spec.size_m
    board_pts = np.array([[0, 0, 0], [sx, 0, 0], [sx, sy, 0], [0, sy, 0]], float)
    base = (spec.pose[:3, :3] @ board_pts.T).T + spec.pose[:3, 3]
    # texel corners (-0.5 .. w-0.5) map to the board's edges
    src = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]],
                   np.float32)
    dst = mb.project(camera, base).astype(np.float32)
    homography = cv2.getPerspectiveTransform(src, dst)
    view = cv2.warpPerspective(printed, homography, (640, 480), flags=cv2.INTER_AREA,
                               borderValue=200)
    return np.repeat(view[:, :, None], 3, axis=2)


def _camera(eye=(1.15, -0.62, 0.78)) -> CameraModel:
    return CameraModel.from_matrix(INTRINSICS, look_at(eye, (0.55, -0.1, 0.0)))


def test_board_pose_lies_face_up_with_z_into_the_table():
    t = mb.board_pose([0.4, 0.0, 0.001], 30.0)
    assert np.allclose(t[:3, 2], [0, 0, -1])
    assert np.allclose(t[:3, 0], [math.cos(math.radians(30)), math.sin(math.radians(30)), 0])
    assert np.allclose(t[:3, :3] @ t[:3, :3].T, np.eye(3))


def test_check_finds_the_pose_and_the_residual_of_a_wrong_camera():
    spec = mb.board_from_mapping(BOARD)
    true = _camera()
    image = _synthetic_view(spec, true)
    good = mb.check([image], true, spec)
    # ~0.7 px RMS remain: OpenCV puts the corners of a sharp image +0.5 px off the
    # integer-centred convention in x and y (measured here on the printed image itself)
    assert good.corners >= 12 and good.pixel_rms < 1.0
    assert good.translation_mm < 5.0 and good.rotation_deg < 0.3
    shifted = true.matrix.copy()  # a calibration 8 mm and ~0.6 deg off
    shifted[:3, 3] += [0.008, 0.0, 0.0]
    c, s = math.cos(0.01), math.sin(0.01)
    shifted[:3, :3] = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ shifted[:3, :3]
    bad = mb.check([image], CameraModel.from_matrix(INTRINSICS, shifted), spec)
    assert bad.pixel_rms > 2.0 > good.pixel_rms  # above the check's default threshold
    assert mb.pose_difference(bad.implied, true.matrix)[0] < 0.005  # the board knows better


def test_board_out_of_view_and_bad_board_files_are_clear_errors():
    spec = mb.board_from_mapping(BOARD)
    blank = np.full((480, 640, 3), 128, np.uint8)
    with pytest.raises(PerceptionError, match="not in view"):
        mb.check([blank], _camera(), spec)
    with pytest.raises(ConfigError, match="marker_m"):
        mb.board_from_mapping({"board": {**BOARD["board"], "marker_m": 0.07}})
    with pytest.raises(ConfigError, match="origin"):
        mb.board_from_mapping({"board": {"squares": [6, 4], "square_m": 0.065,
                                         "marker_m": 0.048}})
    with pytest.raises(ConfigError, match="dictionary"):
        mb.board_from_mapping({"board": {**BOARD["board"], "dictionary": "APRILTAG"}}).board()


def _args(**kw) -> argparse.Namespace:
    base = dict(sim=True, noise="realistic", sensor_seed=3, frames=3, initial="camera.yaml",
                fixtures="scene_fixtures.yaml", out=None, timeout=5.0, json=True, board=False,
                check=False, camera="camera.yaml", board_config="calibration_board.yaml",
                max_pixels=2.0)
    base.update(kw)
    return argparse.Namespace(**base)


def test_calibrate_camera_check_on_the_sim_board_touches_nothing_then_the_fit_passes(
        tmp_path, capsys):
    """--check --sim: the rendered board against config/camera.yaml, with an installation
    whose camera is 5 mm / 0.5 deg off: the residual says so (exit 1) and nothing is written.
    --board --sim fits the pose from the board; checked again, it passes."""
    from frankenbot import resources
    from frankenbot.bringup.calibrate_cli import run_camera

    config = resources.config_path("camera.yaml")
    before = config.read_bytes()
    assert run_camera(_args(check=True)) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["pixel_rms"] > 2.0 and report["corners"] >= 30
    assert report["configured_vs_true_mm"] == pytest.approx(5.0, abs=0.1)
    assert report["board_vs_true_mm"] < 3.0 and report["board_vs_true_deg"] < 0.3
    assert config.read_bytes() == before and not list(tmp_path.iterdir())
    fitted = tmp_path / "camera.yaml"
    assert run_camera(_args(board=True, out=fitted)) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["error_after_mm"] < 3.0 < fit["error_before_mm"]
    assert run_camera(_args(check=True, camera=str(fitted))) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["pixel_rms"] < 1.0 and again["ok"]
    assert config.read_bytes() == before


def test_check_and_board_exclude_each_other():
    from frankenbot.bringup.calibrate_cli import run_camera
    from frankenbot.errors import FrankenbotError

    with pytest.raises(FrankenbotError, match="exclude"):
        run_camera(_args(check=True, board=True))
