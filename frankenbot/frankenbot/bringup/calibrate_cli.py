"""``frankenbot calibrate camera``: estimate the camera extrinsics, write config/camera.yaml.

Three ways, each on the robot (frames from the RealSense topics) or ``--sim`` (a simulated
installation, with the error against the sim's true camera):

* default, the fixture fit: the camera must see the table and the drawer cabinet of
  scene_fixtures.yaml; starts from the pose in the current camera.yaml (the sim's cell);
* ``--board``: the pose from a printed ChArUco board lying at a measured pose
  (config/calibration_board.yaml, perception/marker_board.py): any cell;
* ``--check``: touches nothing (no file written, nothing moves): the configured camera
  (``--camera``) against the board, and the residual in pixels, millimetres and degrees. Exit 1
  when the residual is above ``--max-pixels``.

The YAML holds translation [x, y, z] and quaternion [x, y, z, w] of the colour optical frame in
base_link (one pose key), the intrinsics and the table's colour. ``frankenbot calibrate board
--out board.png`` writes the board to print.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from frankenbot.errors import FrankenbotError

COLOR_TOPIC = "/camera/camera/color/image_raw"
DEPTH_TOPIC = "/camera/camera/aligned_depth_to_color/image_raw"
INFO_TOPIC = "/camera/camera/color/camera_info"
MAX_CHECK_PIXELS = 2.0  # px RMS: about 5 mm on the table at 1.2 m; more -> recalibrate


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("calibrate", help="calibrate sensors (camera extrinsics)",
                              description="Calibration tools.")
    sub = p.add_subparsers(dest="calibrate_command", metavar="SUBCOMMAND")
    cam = sub.add_parser("camera", help="camera pose from the table plane and a box fixture",
                         description="Estimate T_base_optical from depth frames of the table "
                                     "and the drawer cabinet (point-to-plane ICP from the "
                                     "current pose) and write camera.yaml.")
    cam.add_argument("--sim", action="store_true", help="calibrate a simulated camera")
    cam.add_argument("--noise", choices=("none", "realistic", "harsh"), default="realistic",
                     help="--sim: sensor model (default realistic)")
    cam.add_argument("--sensor-seed", type=int, default=0,
                     help="--sim: the installation (its camera-pose error)")
    cam.add_argument("--frames", type=int, default=6, help="frames pooled (default 6)")
    cam.add_argument("--initial", default="camera.yaml",
                     help="robot: starting pose (package config/ or a path)")
    cam.add_argument("--fixtures", default="scene_fixtures.yaml")
    cam.add_argument("--out", type=Path, default=None,
                     help="where to write (default: print only for --sim, "
                          "config/camera.yaml of the source tree on the robot)")
    cam.add_argument("--timeout", type=float, default=20.0, help="robot: seconds for frames")
    cam.add_argument("--json", action="store_true")
    cam.add_argument("--board", action="store_true",
                     help="fit the pose from the printed ChArUco board (any cell) instead of "
                          "the table and drawer cabinet")
    cam.add_argument("--check", action="store_true",
                     help="touch nothing: report how far the configured camera (--camera) is "
                          "off the board (pixels, mm, deg); exit 1 above --max-pixels")
    cam.add_argument("--camera", default="camera.yaml",
                     help="--check: the camera file to check (package config/ or a path)")
    cam.add_argument("--board-config", default="calibration_board.yaml",
                     help="the board and its pose on the table (package config/ or a path)")
    cam.add_argument("--max-pixels", type=float, default=MAX_CHECK_PIXELS,
                     help=f"--check: largest acceptable RMS residual (default "
                          f"{MAX_CHECK_PIXELS:g} px)")
    cam.set_defaults(func=run_camera)
    board = sub.add_parser("board", help="write the ChArUco board of calibration_board.yaml "
                                         "as an image to print",
                           description="Print it at 100 %% (no fit to page) and measure one "
                                       "square: the board's square_m must be what you printed.")
    board.add_argument("--out", type=Path, required=True, help="PNG file to write")
    board.add_argument("--dpi", type=int, default=300)
    board.add_argument("--board-config", default="calibration_board.yaml")
    board.set_defaults(func=run_board)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def _write(data: dict[str, Any], out: Path) -> None:
    import yaml

    out.parent.mkdir(parents=True, exist_ok=True)
    text = ("# Written by `frankenbot calibrate camera`. Metres, base_link frame; quaternion\n"
            "# [x, y, z, w] of the colour optical frame.\n")
    out.write_text(text + yaml.safe_dump({"camera": data}, sort_keys=False))


def run_board(args: argparse.Namespace) -> int:
    """The board to print, with a white margin, at ``--dpi`` (pixel size = square_m / dpi)."""
    import imageio.v3 as iio

    from frankenbot import resources
    from frankenbot.perception.marker_board import load_board

    if not 72 <= args.dpi <= 1200:
        raise FrankenbotError(f"--dpi must be within 72 .. 1200, got {args.dpi}")
    spec = load_board(resources.config_path(args.board_config))
    px_per_m = args.dpi / 0.0254
    sx, sy = spec.size_m
    margin = int(round(0.015 * px_per_m))
    size = (int(round(sx * px_per_m)) + 2 * margin, int(round(sy * px_per_m)) + 2 * margin)
    image = spec.board().generateImage(size, marginSize=margin, borderBits=1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(args.out, image)
    print(f"wrote {args.out}: {spec.squares_x} x {spec.squares_y} squares of "
          f"{1000 * spec.square_m:g} mm ({1000 * sx:.0f} x {1000 * sy:.0f} mm + 15 mm margin) "
          f"at {args.dpi} dpi; print at 100 % and measure a square")
    return 0


def run_camera(args: argparse.Namespace) -> int:
    from frankenbot.perception.calibration import camera_yaml

    if args.frames < 1:
        raise FrankenbotError(f"--frames must be >= 1, got {args.frames}")
    if args.check and args.board:
        raise FrankenbotError("--check and --board exclude each other (--check writes nothing)")
    if args.check:
        return _check_camera(args)
    if args.board:
        result, report = _board_fit(args)
    elif args.sim:
        from frankenbot.eval.sim_calibration import calibrate_in_sim

        result, report = calibrate_in_sim(noise=args.noise, sensor_seed=args.sensor_seed,
                                          frames=args.frames)
    else:
        result, report = _calibrate_robot(args)
    data = camera_yaml(result.camera, table_rgb=result.table_rgb)
    out = args.out
    if out is None and not args.sim:
        from frankenbot import resources

        out = resources.config_path(args.initial)
    if out is not None:
        _write(data, out)
        report["written"] = str(out)
    report["camera"] = data
    report["change_mm"] = 1000 * result.translation_change_m
    report["change_deg"] = result.rotation_change_deg
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        fit = (f"from the board, {result.inliers} corners (residual before "
               f"{report['residual_px_before']:.2f} px)" if args.board else
               f"fit RMS {1000 * result.rmse_m:.2f} mm over {result.inliers} points")
        print(f"camera calibrated from {args.frames} frames: moved {report['change_mm']:.2f} mm"
              f" / {report['change_deg']:.3f} deg from the starting pose; {fit}")
        if "error_after_mm" in report:
            print(f"  vs the sim's true camera: before {report['error_before_mm']:.2f} mm / "
                  f"{report['error_before_deg']:.3f} deg, after {report['error_after_mm']:.2f}"
                  f" mm / {report['error_after_deg']:.3f} deg")
        print(f"  translation {data['translation']}  quaternion {data['quaternion']}")
        if out is not None:
            print(f"  wrote {out}")
    return 0


def _calibrate_robot(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """Frames from the RealSense topics over ROS (written against rclpy; untested here)."""
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    from frankenbot import resources
    from frankenbot.errors import PerceptionError
    from frankenbot.fixture_map import FixtureMap
    from frankenbot.nodes.scene_msgs import depth_from_image_msg, rgb_from_image_msg
    from frankenbot.perception.calibration import calibrate_camera
    from frankenbot.perception.camera import load_camera

    initial = load_camera(resources.config_path(args.initial))
    fixtures = FixtureMap.load(resources.config_path(args.fixtures))
    rclpy.init()
    node = Node("frankenbot_calibrate")
    latest: dict[str, Any] = {}
    shots: list[tuple[Any, Any]] = []

    def on_colour(msg: Image) -> None:
        latest["rgb"] = rgb_from_image_msg(msg)

    def on_depth(msg: Image) -> None:
        if "rgb" in latest:
            shots.append((latest.pop("rgb"), depth_from_image_msg(msg)))

    node.create_subscription(Image, COLOR_TOPIC, on_colour, qos_profile_sensor_data)
    node.create_subscription(Image, DEPTH_TOPIC, on_depth, qos_profile_sensor_data)
    deadline = time.monotonic() + args.timeout
    try:
        while len(shots) < args.frames and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.shutdown()
    if len(shots) < args.frames:
        raise PerceptionError(f"only {len(shots)} of {args.frames} RGB-D frames on "
                              f"{COLOR_TOPIC} / {DEPTH_TOPIC} within {args.timeout} s")
    result = calibrate_camera(shots, initial, fixtures)
    return result, {"frames": len(shots)}


def _board_images(args: argparse.Namespace) -> tuple[Any, list[Any], Any, dict[str, Any]]:
    """(board, colour frames, camera model with the intrinsics to use, report) from the sim or
    the robot's colour topic; the camera model's pose is ``--camera``'s."""
    from frankenbot import resources
    from frankenbot.perception.camera import CameraModel, load_camera
    from frankenbot.perception.marker_board import load_board

    configured = load_camera(resources.config_path(args.camera))
    if args.sim:
        from frankenbot.eval.perception_eval import pose_error
        from frankenbot.eval.sim_calibration import board_frames_in_sim

        spec, images, nominal, true = board_frames_in_sim(
            noise=args.noise, sensor_seed=args.sensor_seed, frames=args.frames,
            board_file=str(resources.config_path(args.board_config)))
        error = pose_error(configured.matrix, true)
        report = {"noise": args.noise, "sensor_seed": args.sensor_seed,
                  "configured_vs_true_mm": 1000 * error[0], "configured_vs_true_deg": error[1],
                  "_true": true}
        camera = CameraModel.from_matrix(nominal.intrinsics, configured.matrix)
        return spec, images, camera, report
    spec = load_board(resources.config_path(args.board_config))
    images, intrinsics = _robot_colour_frames(args)
    return spec, images, CameraModel.from_matrix(intrinsics, configured.matrix), {}


def _check_camera(args: argparse.Namespace) -> int:
    from frankenbot.eval.perception_eval import pose_error
    from frankenbot.perception.marker_board import check

    spec, images, camera, report = _board_images(args)
    result = check(images, camera, spec)
    report.update(result.as_dict())
    true = report.pop("_true", None)
    if true is not None:
        implied = pose_error(result.implied, true)
        report["board_vs_true_mm"], report["board_vs_true_deg"] = 1000 * implied[0], implied[1]
    ok = result.pixel_rms <= args.max_pixels
    report["ok"] = ok
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"camera check ({args.camera} against the board, {result.corners} corners in "
              f"{result.frames} frames, board {result.board_distance_m:.2f} m away): residual "
              f"{result.pixel_rms:.2f} px RMS (max {result.pixel_max:.2f}); the board puts the "
              f"camera {result.translation_mm:.1f} mm / {result.rotation_deg:.2f} deg from the "
              f"configured pose")
        if "configured_vs_true_mm" in report:
            print(f"  sim: configured vs the true camera {report['configured_vs_true_mm']:.1f} "
                  f"mm / {report['configured_vs_true_deg']:.2f} deg; the board's estimate vs "
                  f"true {report['board_vs_true_mm']:.1f} mm / "
                  f"{report['board_vs_true_deg']:.2f} deg")
        print("  ok" if ok else f"  above {args.max_pixels:g} px: recalibrate (`frankenbot "
                                "calibrate camera --board`) or re-measure the board's pose")
    return 0 if ok else 1


def _board_fit(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """A CalibrationResult whose camera is the pose the board implies."""
    import numpy as np

    from frankenbot.eval.perception_eval import pose_error
    from frankenbot.perception.calibration import CalibrationResult
    from frankenbot.perception.camera import CameraModel
    from frankenbot.perception.marker_board import check

    spec, images, camera, report = _board_images(args)
    result = check(images, camera, spec)
    fitted = CameraModel.from_matrix(camera.intrinsics, result.implied)
    correction = result.implied @ np.linalg.inv(camera.matrix)
    true = report.pop("_true", None)
    if true is not None:
        before, after = pose_error(camera.matrix, true), pose_error(result.implied, true)
        report.update({"error_before_mm": 1000 * before[0], "error_before_deg": before[1],
                       "error_after_mm": 1000 * after[0], "error_after_deg": after[1]})
    report.update({"frames": len(images), "corners": result.corners,
                   "residual_px_before": result.pixel_rms})
    return CalibrationResult(fitted, correction, rmse_m=0.0, inliers=result.corners,
                             face_points=(0, 0)), report


def _robot_colour_frames(args: argparse.Namespace) -> tuple[list[Any], Any]:
    """Colour frames and the camera_info intrinsics from the RealSense topics (rclpy; written
    against the topics the sim node also serves, untested with a real camera)."""
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import CameraInfo, Image

    from frankenbot.errors import PerceptionError
    from frankenbot.nodes.scene_msgs import rgb_from_image_msg
    from frankenbot.perception.camera import Intrinsics

    rclpy.init()
    node = Node("frankenbot_calibrate_check")
    images: list[Any] = []
    info: dict[str, Any] = {}

    def on_colour(msg: Image) -> None:
        images.append(rgb_from_image_msg(msg))

    def on_info(msg: CameraInfo) -> None:
        info["k"] = Intrinsics.from_k(msg.k, msg.width, msg.height)

    node.create_subscription(Image, COLOR_TOPIC, on_colour, qos_profile_sensor_data)
    node.create_subscription(CameraInfo, INFO_TOPIC, on_info, qos_profile_sensor_data)
    deadline = time.monotonic() + args.timeout
    try:
        while (len(images) < args.frames or "k" not in info) and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.shutdown()
    if len(images) < args.frames or "k" not in info:
        raise PerceptionError(f"only {len(images)} of {args.frames} colour frames on "
                              f"{COLOR_TOPIC} (camera_info: {'yes' if info else 'no'}) within "
                              f"{args.timeout} s")
    return images[-args.frames:], info["k"]
