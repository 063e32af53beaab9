"""Camera calibration against the simulator: frames from a SimWorld with a sensor model, the
estimate from ``perception.calibration``, and (scoring only) its error against the sim's true
camera pose."""

from __future__ import annotations

from typing import Any

from frankenbot import resources
from frankenbot.eval.perception_eval import camera_of_world, pose_error
from frankenbot.fixture_map import FixtureMap
from frankenbot.perception.calibration import CalibrationResult, calibrate_camera


def calibrate_in_sim(*, noise: str = "realistic", sensor_seed: int = 0, frames: int = 6,
                     task: str = "stack", seed: int = 0
                     ) -> tuple[CalibrationResult, dict[str, Any]]:
    """Calibrate the camera of a sim installation (``sensor_seed`` draws its pose error).

    Returns the result and a report with the error before and after against the true pose.
    """
    from frankenbot.sim.sensor import SensorModel, sensor_params
    from frankenbot.sim.world import SimWorld

    with SimWorld(seed=seed, task=task, sensor=SensorModel(sensor_params(noise),
                                                           sensor_seed)) as world:
        nominal = camera_of_world(world)
        fixtures = FixtureMap.from_data(world.fixture_map_data())
        shots = []
        for _ in range(frames):
            shots.append(world.render_rgbd())
            world.advance(0.1)
        result = calibrate_camera(shots, nominal, fixtures)
        true = world.true_camera_pose()
    before = pose_error(nominal.matrix, true)
    after = pose_error(result.camera.matrix, true)
    report = {"noise": noise, "sensor_seed": sensor_seed, "frames": frames,
              "error_before_mm": 1000 * before[0], "error_before_deg": before[1],
              "error_after_mm": 1000 * after[0], "error_after_deg": after[1],
              "rmse_mm": 1000 * result.rmse_m, "inliers": result.inliers}
    return result, report


def board_frames_in_sim(*, noise: str = "realistic", sensor_seed: int = 0, frames: int = 3,
                        board_file: str | None = None) -> tuple[Any, list[Any], Any, Any]:
    """(board spec, colour frames of the board scene, nominal camera model, true pose).

    The installation's camera (``sensor_seed``'s pose error) renders the calibration scene
    (sim/marker_board.py); the nominal model is what config/camera.yaml says."""
    from frankenbot.perception.camera import CameraModel, Intrinsics
    from frankenbot.perception.marker_board import load_board
    from frankenbot.sim.marker_board import BoardScene
    from frankenbot.sim.sensor import SensorModel, sensor_params

    spec = load_board(board_file or resources.config_dir() / "calibration_board.yaml")
    with BoardScene(spec, SensorModel(sensor_params(noise), sensor_seed)) as scene:
        images = [scene.render() for _ in range(frames)]
        i = scene.info
        nominal = CameraModel.from_matrix(
            Intrinsics(i.fx, i.fy, i.cx, i.cy, i.width, i.height), scene.nominal_camera)
        true = scene.true_camera
    return spec, images, nominal, true
