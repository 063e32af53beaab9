"""Tunable numbers of the perception pipeline, with defaults that suit a tabletop UR5e cell.

One settings schema (``frankenbot.settings``): the perception node declares every field as a ROS
parameter with its type, unit and range, the CLI and tests build the same pipeline from plain
values, and unknown keys or values out of range are errors rather than silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from frankenbot import settings
from frankenbot.errors import ConfigError
from frankenbot.settings import section, setting

DEFAULT_QUERIES = ("block", "bowl", "plate", "bin")  # the open-vocabulary detector's queries


@dataclass(frozen=True)
class PerceptionConfig:
    """Pipeline settings (metres, seconds)."""

    workspace_min: tuple[float, float, float] = setting(
        (-0.2, -0.75, -0.10), "workspace box corner [x, y, z] in base_link: points outside are "
        "ignored (robot base, floor, walls)", unit="m")
    workspace_max: tuple[float, float, float] = setting(
        (1.0, 0.75, 0.60), "workspace box corner [x, y, z] in base_link", unit="m")
    table_height: float = setting(0.0, "table top z in base_link (the RANSAC fit's fallback and "
                                  "search centre)", unit="m")
    table_search: float = setting(0.08, "a fitted table plane further than this from "
                                  "table_height is not the table", unit="m", low=0.0)
    ransac_samples: int = setting(4000, "workspace points sampled for the table fit", low=100)
    ransac_distance: float = setting(0.004, "inlier distance of the table fit", unit="m",
                                     low=0.0005)
    ransac_iterations: int = setting(150, "RANSAC iterations of the table fit", low=1)
    min_height: float = setting(0.004, "points lower than this above the table are table (raise "
                                "for noisy depth)", unit="m", low=0.0005, live=True)
    max_height: float = setting(0.30, "points higher than this above the table are ignored "
                                "(over a fixture's top: this high over that top)", unit="m",
                                low=0.01, live=True)
    stride: int = setting(2, "pixel stride of the point cloud (1 = every pixel, 2 = a quarter)",
                          low=1, high=16)
    grid_cell: float = setting(0.004, "top-down grid cell of the connected components",
                               unit="m", low=0.001)
    grid_closing: int = setting(1, "closing radius of the components", unit="cells", low=0)
    height_gap: float = setting(0.02, "an empty height band this wide splits a component",
                                unit="m", low=0.0)
    min_points: int = setting(
        25, "points a cluster needs at min_points_range from the camera, scaled by "
        "(min_points_range / range)^2 (a block at the back of the table shows a third of the "
        "pixels of one in front)", low=1, live=True)
    min_points_range: float = setting(1.0, "range at which a cluster needs min_points",
                                      unit="m", low=0.1)
    min_points_floor: int = setting(10, "never fewer points than this per cluster", low=1,
                                    live=True)
    flying_filter: int = setting(1, "1: drop depth pixels between a near and a far neighbour "
                                 "(a real D435's flying pixels)", low=0, high=1)
    table_rgb: tuple[float, float, float] = setting(
        (0.0, 0.0, 0.0), "the table's colour (median RGB, 0-255) when calibrated: each frame is "
        "scaled so the table matches it (exposure and white-balance drift); zeros: camera.yaml's "
        "table_rgb from calibration, or off", low=0.0, high=255.0)
    noise_adaptive: int = setting(1, "1: estimate the table's depth noise each frame and scale "
                                  "the thresholds below with it", low=0, high=1)
    noise_point_sigmas: float = setting(2.5, "a point is foreground above this many noise "
                                        "sigmas", low=0.0)
    noise_cluster_sigmas: float = setting(3.0, "a cluster's median height must clear this many "
                                          "noise sigmas", low=0.0)
    min_extent: float = setting(0.012, "smaller clusters are noise", unit="m", low=0.0)
    container_min_diameter: float = setting(0.09, "narrower components are never split as a "
                                            "round container holding something", unit="m",
                                            low=0.0)
    container_max_diameter: float = setting(0.30, "widest round container", unit="m", low=0.0)
    outline_tolerance: float = setting(0.004, "outline samples this close to the fitted circle "
                                       "lie on it", unit="m", low=0.0)
    outline_min_share: float = setting(0.6, "share of outline samples on the circle for a round "
                                       "outline", low=0.0, high=1.0)
    outline_max_gap: float = setting(110.0, "largest arc of the circle without outline samples",
                                     unit="deg", low=0.0, high=360.0)
    container_wall: float = setting(0.017, "rim and wall inwards from the outline (sim bowl "
                                    "13 mm)", unit="m", low=0.0)
    container_min_depth: float = setting(0.02, "rim above floor, else a plate or a solid: no "
                                         "split", unit="m", low=0.0)
    container_raise: float = setting(0.012, "above the floor: something stands in the "
                                     "container", unit="m", low=0.0)
    match_distance: float = setting(0.25, "beyond this a detection is a new object (tracker)",
                                    unit="m", low=0.0)
    memory_s: float = setting(8.0, "unseen tracks are remembered this long (occlusion, in the "
                              "gripper)", unit="s", low=0.0)
    see_through: float = setting(0.03, "an unseen track is dropped when the depth there is this "
                                 "much farther", unit="m", low=0.0)
    rim_inset: float = setting(0.006, "rim samples this far inwards from a container's outer "
                               "edge (on the wall)", unit="m", low=0.0)
    rim_samples: int = setting(24, "points along an unseen container's rim", low=3)
    rim_gone_share: float = setting(0.7, "share of rim samples that see past the rim for an "
                                    "unseen container to be gone", low=0.0, high=1.0)
    rim_gone_frames: int = setting(3, "consecutive frames the rim must be seen through", low=1)
    stale_timeout: float = setting(1.0, "the scene is stale when no frame was processed for "
                                   "this long", unit="s", low=0.01, live=True)
    keep_unknown: int = setting(0, "without an object catalogue (the first waves' size rules)"
                                ", 1: also report clusters whose shape is unknown (obstacles); "
                                "with one, unknown objects are always reported", low=0, high=1)
    base_keepout_radius: float = setting(0.15, "around base_link's z axis: the robot's own base",
                                         unit="m", low=0.0)
    robot_radius: float = setting(0.09, "self filter: achromatic clusters this close to the arm "
                                  "are the arm", unit="m", low=0.0)

    def __post_init__(self) -> None:
        settings.validate(self, "perception")
        if self.max_height <= self.min_height:
            raise ConfigError(f"perception max_height ({self.max_height}) must be above "
                              f"min_height ({self.min_height})")
        if any(lo >= hi for lo, hi in zip(self.workspace_min, self.workspace_max, strict=True)):
            raise ConfigError(f"perception workspace_min {self.workspace_min} must be below "
                              f"workspace_max {self.workspace_max}")


@dataclass(frozen=True)
class PerceptionNodeSettings:
    """The ``frankenbot_perception`` node: intake and publishing, plus every pipeline setting
    (``PerceptionConfig``, same names)."""

    rate: float = setting(10.0, "frames are processed as they arrive, at most this many a second "
                          "(by camera stamp); also the rate of the stale check", unit="Hz",
                          low=0.1, high=100.0)
    max_latency: float = setting(0.5, "frames older than this since their arrival are skipped "
                                 "instead of processed", unit="s", low=0.0, live=True)
    sync_tolerance: float = setting(0.05, "largest colour/depth stamp difference of a frame "
                                    "pair", unit="s", low=0.0, live=True)
    camera_config: str = setting(
        "", "camera.yaml: translation + quaternion of the colour optical frame in base_link (a "
        "bare name is looked up in the package's config/); empty: the pose from TF base_frame "
        "<- camera frame (needs tf2_ros)")
    fixtures_path: str = setting("", "the cell's fixture map, scene_fixtures.yaml (a bare "
                                 "name: the package's config/); empty: none")
    fixture_map_topic: str = setting("", "std_msgs/String topic (latched) with the scene's "
                                     "fixture map as JSON (the sim's frankenbot_sim/fixture_map"
                                     "; it replaces fixtures_path per scene); empty: "
                                     "fixtures_path only")
    catalogue_path: str = setting("objects.yaml", "the object catalogue (a bare name: the "
                                  "package's config/; `frankenbot objects enroll` writes it); "
                                  "empty: the size rules of block, bowl, plate and bin")
    detector_backend: str = setting("geometric", "geometric (colour + depth clusters) or owlv2 "
                                    "(open-vocabulary, transformers)",
                                    choices=("geometric", "owlv2"))
    detector_queries: str = setting(",".join(DEFAULT_QUERIES), "comma-separated text queries "
                                    "of the open-vocabulary backend")
    detector_model: str = setting("", "local directory of the OWLv2 checkpoint (owlv2 backend; "
                                  "never downloaded at run time)")
    detector_threshold: float = setting(0.2, "OWLv2 box score threshold", low=0.0, high=1.0)
    base_frame: str = setting("base_link", "frame of the published scene")
    publish_annotated: bool = setting(True, "publish the set-of-mark image", live=True)
    annotated_rate: float = setting(2.0, "the set-of-mark image is drawn at most this often "
                                    "(drawing costs CPU)", unit="Hz", low=0.01, live=True)
    reset_topic: str = setting("", "std_msgs/Header topic that announces a new scene (the sim's "
                               "~/scene_reset); empty: none")
    pipeline: PerceptionConfig = section(PerceptionConfig, "")

    def __post_init__(self) -> None:
        settings.validate(self, "frankenbot_perception")
