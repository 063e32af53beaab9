"""``frankenbot objects enroll NAME`` and ``frankenbot objects list``: the object catalogue.

Enrolling registers an object under category ``NAME`` from camera views: the object alone on
the table, moved and turned between views; each view is perceived and its shape signature
kept (``perception/catalogue.py``). On the robot the views come from the RealSense topics
(the person moves the object when told); ``--sim --object X`` puts sim object X on the table
and turns it itself. The prototype goes into the catalogue file perception reads (the
package's ``config/objects.yaml`` by default); restart perception (or the stack) to use it.
``--sim --all`` enrols every sim object under its own category (how the shipped catalogue was
made).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from frankenbot.errors import FrankenbotError

COLOR_TOPIC = "/camera/camera/color/image_raw"
DEPTH_TOPIC = "/camera/camera/aligned_depth_to_color/image_raw"
INFO_TOPIC = "/camera/camera/color/camera_info"
APPLE_COLOURS = ("red", "green", "yellow")
LEMON_COLOURS = ("yellow", "green")
# spheres are told apart by size and colour: the catalogue's ball is blue (a yellow ball and
# a lemon seen end on measure alike)
BALL_COLOURS = ("blue", "purple", "pink", "white", "black", "gray", "cyan")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("objects", help="the object catalogue (enroll, list)",
                              description="The catalogue of known objects perception "
                                          "recognises.")
    sub = p.add_subparsers(dest="objects_command", metavar="SUBCOMMAND")
    en = sub.add_parser("enroll", help="register an object category from camera views",
                        description="Register an object under category NAME from camera "
                                    "views of it alone on the table (moved and turned between "
                                    "views) into the object catalogue.")
    en.add_argument("name", nargs="?", default="", help="category (e.g. mug, thermos)")
    en.add_argument("--sim", action="store_true", help="views from the sim camera")
    en.add_argument("--object", default="", help="--sim: the sim object to show (e.g. "
                                                 "purple_bottle)")
    en.add_argument("--all", action="store_true",
                    help="--sim: enrol every sim object under its own category")
    en.add_argument("--as", dest="instance", default="",
                    help="the prototype's own name (default: --object, or colour_NAME)")
    en.add_argument("--views", type=int, default=24, help="views (default 24)")
    en.add_argument("--noise", choices=("none", "realistic", "harsh"), default="realistic",
                    help="--sim: camera model (default realistic)")
    en.add_argument("--seed", type=int, default=0, help="--sim: where the views are taken")
    en.add_argument("--catalogue", type=Path, default=None,
                    help="catalogue file (default: the package's config/objects.yaml)")
    en.add_argument("--camera-config", default="camera.yaml", help="robot: camera pose")
    en.add_argument("--fixtures", default="scene_fixtures.yaml", help="robot: fixture map")
    en.add_argument("--interval", type=float, default=3.0,
                    help="robot: seconds to move the object between views")
    en.add_argument("--json", action="store_true")
    en.set_defaults(func=run_enroll)
    ls = sub.add_parser("list", help="the categories and enrolled objects",
                        description="List the object catalogue.")
    ls.add_argument("--catalogue", type=Path, default=None)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=run_list)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def _catalogue_path(arg: Path | None) -> Path:
    from frankenbot import resources

    return arg if arg is not None else resources.config_dir() / "objects.yaml"


def _load(path: Path) -> Any:
    from frankenbot.perception.catalogue import ObjectCatalogue

    return ObjectCatalogue.load(path) if path.is_file() else ObjectCatalogue(path=path)


def run_enroll(args: argparse.Namespace) -> int:
    from frankenbot.perception.catalogue import check_name

    if args.views < 3:
        raise FrankenbotError(f"--views must be at least 3, got {args.views}")
    path = _catalogue_path(args.catalogue)
    catalogue = _load(path)
    log = (lambda line: None) if args.json else (lambda line: print(line, flush=True))
    if args.all:
        if not args.sim:
            raise FrankenbotError("--all enrols the sim's objects: add --sim")
        catalogue, protos = _enrol_all_sim(catalogue, args, log)
    else:
        if not args.name:
            raise FrankenbotError("name the category to enrol (e.g. `frankenbot objects "
                                  "enroll mug --sim --object red_mug`)")
        check_name(args.name)
        if args.sim:
            if not args.object:
                raise FrankenbotError("--sim needs --object (the sim object to show)")
            from frankenbot.eval.sim_enrolment import enrol_in_sim

            protos = list(enrol_in_sim(args.name, args.instance or args.object,
                                       views=args.views, noise=args.noise, seed=args.seed,
                                       log=log))
        else:
            protos = list(_enrol_robot(args, log))
        catalogue = catalogue.with_object(protos)
    catalogue.save(path)
    report = {"catalogue": str(path),
              "enrolled": [{"category": p.category, "name": p.name, "colour": p.colour,
                            "views": p.views, "mean": p.mean.as_dict()} for p in protos]}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for p in protos:
            m = p.mean
            print(f"enrolled {p.name} as {p.category} ({p.colour}, {p.views} views): "
                  f"{1000 * m.length:.0f} x {1000 * m.width:.0f} x {1000 * m.height:.0f} mm, "
                  f"fill {m.fill:.2f}, top {m.top_share:.2f}, hollow {m.mid_drop:.2f}, "
                  f"ends {m.end_ratio:.2f}")
        print(f"wrote {path} (restart perception to use it)")
    return 0


def _enrol_all_sim(catalogue: Any, args: argparse.Namespace, log: Any) -> tuple[Any, list]:
    from dataclasses import replace

    import numpy as np

    from frankenbot.eval.sim_enrolment import enrol_in_sim
    from frankenbot.sim import objects
    from frankenbot.sim.world import SimWorld

    protos = []
    cameras: dict = {}
    noise: list[float] = []
    with SimWorld() as world:
        for spec in objects.OBJECTS:
            log(f"enrolling {spec.name} as {spec.shape} ...")
            found = enrol_in_sim(spec.shape, spec.name, views=args.views, noise=args.noise,
                                 seed=args.seed, world=world, cameras=cameras, sigmas=noise)
            if found[0].colour != spec.colour:
                log(f"  {spec.name} was seen {found[0].colour}; enrolled as {spec.colour}")
            found = tuple(replace(p, colour=spec.colour) for p in found)
            catalogue = catalogue.with_object(found)
            protos += found
    # fruit is known by its colour too (a blue sphere is not an apple)
    colours = dict(catalogue.colours)
    colours.setdefault("apple", APPLE_COLOURS)
    colours.setdefault("lemon", LEMON_COLOURS)
    colours.setdefault("ball", BALL_COLOURS)
    level = float(np.median(noise)) if noise else catalogue.noise
    return replace(catalogue, colours=colours, noise=level), protos


def _enrol_robot(args: argparse.Namespace, log: Any) -> tuple[Any, ...]:
    """Views from the RealSense topics over ROS (written against rclpy; the sim node speaks
    the same topics)."""
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import CameraInfo, Image

    from frankenbot import resources
    from frankenbot.errors import PerceptionError
    from frankenbot.fixture_map import FixtureMap
    from frankenbot.nodes.scene_msgs import (
        depth_from_image_msg,
        intrinsics_from_camera_info,
        rgb_from_image_msg,
        time_from_msg,
    )
    from frankenbot.perception.camera import load_camera
    from frankenbot.perception.catalogue import ObjectCatalogue, enrol_views
    from frankenbot.perception.pipeline import PerceptionPipeline

    pose = load_camera(resources.config_path(args.camera_config))
    fmap = FixtureMap.load(resources.config_path(args.fixtures)) if args.fixtures else (
        FixtureMap())
    rclpy.init()
    node = Node("frankenbot_enroll")
    latest: dict[str, Any] = {}

    def on_colour(msg: Image) -> None:
        latest["rgb"] = msg

    def on_depth(msg: Image) -> None:
        latest["depth"] = msg

    def on_info(msg: CameraInfo) -> None:
        latest["info"] = msg

    node.create_subscription(Image, COLOR_TOPIC, on_colour, qos_profile_sensor_data)
    node.create_subscription(Image, DEPTH_TOPIC, on_depth, qos_profile_sensor_data)
    node.create_subscription(CameraInfo, INFO_TOPIC, on_info, qos_profile_sensor_data)
    sigs, colours = [], []
    pipeline = None
    try:
        for k in range(args.views):
            log(f"view {k + 1}/{args.views}: move or turn the object now "
                f"({args.interval:.0f} s)")
            deadline = time.monotonic() + args.interval
            while time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.05)
            latest.pop("depth", None)
            deadline = time.monotonic() + 5.0
            while "depth" not in latest and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.05)
            if not all(k in latest for k in ("rgb", "depth", "info")):
                raise PerceptionError(f"no camera frames on {COLOR_TOPIC} / {DEPTH_TOPIC} "
                                      f"with {INFO_TOPIC}")
            info = latest["info"]
            if pipeline is None:
                camera = pose.with_intrinsics(intrinsics_from_camera_info(info))
                pipeline = PerceptionPipeline(camera, fmap, catalogue=ObjectCatalogue())
            pipeline.reset()
            result = pipeline.process_frame(rgb_from_image_msg(latest["rgb"]),
                                            depth_from_image_msg(latest["depth"]),
                                            time_from_msg(latest["depth"].header.stamp))
            dets = [d for d in result.detections if d.signature is not None]
            if not dets:
                log("  nothing seen on the table in this view")
                continue
            d = max(dets, key=lambda d: d.n_points)
            sigs.append(d.signature)
            colours.append(d.colour)
    finally:
        node.destroy_node()
        rclpy.shutdown()
    colour = Counter(colours).most_common(1)[0][0] if colours else ""
    name = args.instance or (f"{colour}_{args.name}" if colour else args.name)
    return enrol_views(args.name, name, colour, sigs, source=f"camera, {len(sigs)} views")


def run_list(args: argparse.Namespace) -> int:
    path = _catalogue_path(args.catalogue)
    catalogue = _load(path)
    by_cat: dict[str, list] = {}
    for p in catalogue.prototypes:
        by_cat.setdefault(p.category, []).append(p)
    if args.json:
        print(json.dumps({"catalogue": str(path), "categories": {
            c: {"colours": list(catalogue.colours.get(c, ())),
                "objects": [{"name": p.name, "colour": p.colour, "views": p.views,
                             "mean": p.mean.as_dict()} for p in ps]}
            for c, ps in by_cat.items()}}, indent=2))
        return 0
    print(f"{path}: {len(by_cat)} categories, {len(catalogue.prototypes)} enrolled objects")
    for c, ps in by_cat.items():
        only = catalogue.colours.get(c)
        names = ", ".join(f"{p.name} ({1000 * p.mean.length:.0f}x{1000 * p.mean.width:.0f}x"
                          f"{1000 * p.mean.height:.0f} mm)" for p in ps)
        print(f"  {c:<10} {names}" + (f"  [colours: {', '.join(only)}]" if only else ""))
    return 0
