"""Tunable numbers of the perception pipeline, with defaults that suit a tabletop UR5e cell.

Kept in one frozen dataclass so the node (ROS parameters), the CLI and tests build the same
pipeline from plain values; unknown keys are an error rather than silently ignored.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from frankenbot.errors import ConfigError


@dataclass(frozen=True)
class PerceptionConfig:
    """Pipeline settings (metres, seconds)."""

    # Workspace box in base_link; points outside are ignored (robot base, floor, walls).
    workspace_min: tuple[float, float, float] = (-0.2, -0.75, -0.10)
    workspace_max: tuple[float, float, float] = (1.0, 0.75, 0.60)
    # Table plane: RANSAC over a sample of workspace points; falls back to table_height when the
    # fit is not horizontal or not within table_search of table_height.
    table_height: float = 0.0
    table_search: float = 0.08
    ransac_samples: int = 4000
    ransac_distance: float = 0.004
    ransac_iterations: int = 150
    # Points between these heights above the table are candidate object points.
    min_height: float = 0.004
    max_height: float = 0.30  # over a fixture's top (a cabinet): over that top
    # Pixel stride when back-projecting (1 = every pixel; 2 = a quarter of the pixels).
    stride: int = 2
    # Top-down grid cell for connected components, and the closing radius in cells.
    grid_cell: float = 0.004
    grid_closing: int = 1
    height_gap: float = 0.02  # an empty height band this wide splits a component
    # A cluster needs min_points samples at min_points_range metres from the camera, scaled
    # by (min_points_range / range)^2 (an object's pixel count falls with the square of its
    # range: a block at the back of the table shows a third of the pixels of one in front),
    # never fewer than min_points_floor.
    min_points: int = 25
    min_points_range: float = 1.0
    min_points_floor: int = 10
    # Depth noise (a real D435): flying pixels at steps dropped, and thresholds that follow
    # the noise measured on the table each frame (sigma = a * range², segmentation.py).
    flying_filter: int = 1  # 1: drop pixels between a near and a far neighbour
    # The table's colour (median RGB, 0-255) when calibrated; each frame's colours are scaled
    # so the table matches it again (exposure / white-balance drift). (0, 0, 0) = off.
    table_rgb: tuple[float, float, float] = (0.0, 0.0, 0.0)
    noise_adaptive: int = 1  # 1: estimate the table's depth noise and use it below
    noise_point_sigmas: float = 2.5  # a point is foreground above this many sigma
    noise_cluster_sigmas: float = 3.0  # a cluster's median height must clear this many sigma
    min_extent: float = 0.012
    # Round containers (bowls) holding or touching a same-coloured object share its component;
    # they are found by a circle fit to the component's outline (segmentation, containers.py).
    container_min_diameter: float = 0.09  # m; narrower components are never split this way
    container_max_diameter: float = 0.30  # m
    outline_tolerance: float = 0.004  # m; outline samples this close to the circle lie on it
    outline_min_share: float = 0.6  # share of outline samples on the circle: it is round
    outline_max_gap: float = 110.0  # degrees of the circle without outline samples, at most
    container_wall: float = 0.017  # m inwards from the outline: rim and wall (sim bowl 13 mm)
    container_min_depth: float = 0.02  # m rim above floor, else a plate/solid: no split
    container_raise: float = 0.012  # m above the floor: something standing in the container
    # Tracker.
    match_distance: float = 0.25  # metres; beyond this a detection is a new object
    memory_s: float = 8.0  # unseen tracks are remembered this long (occlusion, in-gripper)
    see_through: float = 0.03  # unseen track dropped when depth there is this much farther
    # An unseen open container is gone when most of its rim samples see past the rim.
    rim_inset: float = 0.006  # m inwards from the outer edge: on top of the wall (sim bowl 13 mm)
    rim_samples: int = 24  # points along the rim
    rim_gone_share: float = 0.7  # of the rim samples that show the rim or past it
    rim_gone_frames: int = 3  # consecutive frames the rim must be seen through
    stale_timeout_s: float = 1.0  # scene_at(now) is stale when the last frame is older
    # without an object catalogue (the first waves' size rules): 1 also reports clusters whose
    # shape is "unknown"; with one, unknown objects are always reported (recognition.py)
    keep_unknown: int = 0
    base_keepout_radius: float = 0.15  # m around base_link's z axis: the robot's own base
    robot_radius: float = 0.09  # self filter: achromatic clusters this close to the arm are it

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> "PerceptionConfig":
        if not data:
            return cls()
        names = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ConfigError(f"unknown perception setting(s) {unknown}; known: {sorted(names)}")
        values: dict[str, Any] = {}
        for key, raw in data.items():
            default = getattr(cls(), key)
            try:
                if isinstance(default, tuple):
                    values[key] = tuple(float(v) for v in raw)
                    if len(values[key]) != len(default):
                        raise ValueError(f"expected {len(default)} numbers")
                elif isinstance(default, int):
                    values[key] = int(raw)
                else:
                    values[key] = float(raw)
            except (TypeError, ValueError) as e:
                raise ConfigError(f"perception setting {key}={raw!r}: {e}") from e
        cfg = cls(**values)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        if self.stride < 1:
            raise ConfigError(f"stride must be >= 1, got {self.stride}")
        if self.grid_cell <= 0 or self.min_height <= 0 or self.max_height <= self.min_height:
            raise ConfigError("grid_cell, min_height must be > 0 and max_height > min_height")
        if self.stale_timeout_s <= 0 or self.memory_s < 0:
            raise ConfigError("stale_timeout_s must be > 0 and memory_s >= 0")


