"""``frankenbot calibrate camera``: estimate the camera extrinsics, write config/camera.yaml.

On the robot it takes frames from the RealSense topics (the camera must see the table and the
drawer cabinet of scene_fixtures.yaml) and starts from the pose in the current camera.yaml;
``--sim`` calibrates a simulated installation instead and also prints the error against the
sim's true camera. The YAML holds translation [x, y, z] and quaternion [x, y, z, w] of the
colour optical frame in base_link (one pose key), the intrinsics and the table's colour.
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
    cam.set_defaults(func=run_camera)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def _write(data: dict[str, Any], out: Path) -> None:
    import yaml

    out.parent.mkdir(parents=True, exist_ok=True)
    text = ("# Written by `frankenbot calibrate camera`. Metres, base_link frame; quaternion\n"
            "# [x, y, z, w] of the colour optical frame.\n")
    out.write_text(text + yaml.safe_dump({"camera": data}, sort_keys=False))


def run_camera(args: argparse.Namespace) -> int:
    from frankenbot.perception.calibration import camera_yaml

    if args.frames < 1:
        raise FrankenbotError(f"--frames must be >= 1, got {args.frames}")
    if args.sim:
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
        print(f"camera calibrated from {args.frames} frames: moved {report['change_mm']:.2f} mm"
              f" / {report['change_deg']:.3f} deg from the starting pose; fit RMS "
              f"{1000 * result.rmse_m:.2f} mm over {result.inliers} points")
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
    from frankenbot.nodes.scene_msgs import depth_from_image_msg, rgb_from_image_msg
    from frankenbot.perception.calibration import calibrate_camera
    from frankenbot.perception.camera import load_camera
    from frankenbot.perception.fixtures import load_fixture_geometry

    initial = load_camera(resources.config_path(args.initial))
    fixtures = load_fixture_geometry(resources.config_path(args.fixtures))
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
