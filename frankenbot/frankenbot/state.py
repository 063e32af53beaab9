"""The brain's view of the world: perceived scene objects, robot state, and a consistent snapshot.

These plain, frozen dataclasses are the currency between perception, primitives, monitors,
the planner's prompt and the ROS messages (``frankenbot_interfaces/msg/SceneObject``). Positions
are in metres in the robot's ``base_link`` frame (x forward, y left, z up); yaw in radians about z.

Simulator ground truth never appears here: the sim's oracle has its own types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from frankenbot.shapes import SHAPES  # noqa: F401 - what perception may name (shapes.py)

MAX_POINTS = 256  # of SceneObject.points
# s: a scene stamp this far from the robot's clock was taken on another clock (a camera on wall
# time, a robot on sim time): stamps from the two are then not compared
CLOCKS_APART_S = 30.0

# Colour names perception may assign (closest named colour in HSV).
COLOURS = ("red", "green", "blue", "yellow", "orange", "purple", "white", "black", "gray",
           "pink", "brown", "cyan")


@dataclass(frozen=True)
class SceneObject:
    """One object as perceived.

    ``object_id`` is readable and stable across frames (``red_block``, ``red_block_2``,
    ``green_bowl``, ``drawer``); ``size`` is the axis-aligned extent (x, y, z) in metres in the
    object's own frame (after yaw); ``position`` is the centroid of the object's visible points
    pushed to the object's centre, with z at the object's geometric centre.
    """

    object_id: str
    label: str  # e.g. "red block"
    shape: str  # one of SHAPES
    colour: str  # one of COLOURS or ""
    position: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float = 0.0
    confidence: float = 1.0
    is_fixture: bool = False  # from config (drawer, zone), not from the camera
    last_seen: float = 0.0  # seconds (clock of the scene's source)
    # Remembered but not seen lately: hidden under a block stacked on it, by the gripper or the
    # arm. It keeps its last pose (so on(a, b) still holds); visible() is false for it.
    occluded: bool = False
    # A fixture part's state as the camera measured it: how far a drawer or sliding door is
    # open (m), a hinged door, knob or switch turned (rad); None where it does not apply or
    # was not measured. ``on``: a lamp or burner lit (None: not a light, or not seen).
    opening: float | None = None
    on: bool | None = None
    # A control (button, switch, knob): the ids of the parts it switches (from the fixture map).
    controls: tuple[str, ...] = ()
    # A sample of the object's segmented surface points (base_link, at most MAX_POINTS), what
    # grasp synthesis works from; empty when not measured (fixtures, ground-truth scenes).
    points: tuple[tuple[float, float, float], ...] = field(default=(), compare=False, repr=False)

    @property
    def top_z(self) -> float:
        return self.position[2] + self.size[2] / 2.0

    def local_xy(self, x: float, y: float) -> tuple[float, float]:
        """Base-frame (x, y) in this object's horizontal frame: from its centre, turned by its
        yaw (so ``size[0]`` runs along the first coordinate)."""
        dx, dy = x - self.position[0], y - self.position[1]
        if self.yaw == 0.0:
            return dx, dy
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return c * dx + s * dy, -s * dx + c * dy

    def xy_distance(self, other: "SceneObject") -> float:
        dx = self.position[0] - other.position[0]
        return math.hypot(dx, self.position[1] - other.position[1])


@dataclass(frozen=True)
class Scene:
    """A set of perceived objects at one instant. ``stale`` is set when camera frames stop."""

    objects: tuple[SceneObject, ...] = ()
    stamp: float = 0.0  # seconds
    stale: bool = False
    frame_id: str = "base_link"

    def get(self, object_id: str) -> SceneObject | None:
        for obj in self.objects:
            if obj.object_id == object_id:
                return obj
        return None

    def ids(self) -> tuple[str, ...]:
        return tuple(obj.object_id for obj in self.objects)

    @classmethod
    def of(cls, objects: Iterable[SceneObject], stamp: float = 0.0, stale: bool = False) -> "Scene":
        return cls(objects=tuple(objects), stamp=stamp, stale=stale)


@dataclass(frozen=True)
class RobotSnapshot:
    """Robot state at one instant. Joint order is the UR order (shoulder_pan ... wrist_3)."""

    joint_positions: tuple[float, ...] = (0.0,) * 6  # rad
    joint_velocities: tuple[float, ...] = (0.0,) * 6  # rad/s
    tcp_position: tuple[float, float, float] = (0.0, 0.0, 0.0)  # m, base_link (gripper centre)
    gripper_width: float = 0.085  # m between fingers (0 closed, 0.085 open on the 2F-85)
    gripper_closed_cmd: bool = False  # the last gripper command was "close"
    held_object: str | None = None  # what the brain believes it holds (pick sets, place clears)
    # a place has opened the fingers on held_object and not yet seen it at its new place
    releasing: bool = False
    moving: bool = False
    estop: bool = False
    stamp: float = 0.0
    speed_scaling: float = 1.0  # the pendant slider's fraction: motions take 1/this as long


@dataclass(frozen=True)
class WorldSnapshot:
    """Consistent view for monitors and predicates: one robot state + one scene, same instant.

    ``facts`` carries extra boolean facts the executor tracks (e.g. ``"open:top_drawer"``: how
    the primitives left a drawer). ``fixture_map`` is the cell's ``FixtureMap`` (each part's
    travel, cavity and controls: what ``open``, ``closed``, ``on_state`` and ``in`` need to judge
    a fixture from its measured state); None where there is none.
    """

    robot: RobotSnapshot = field(default_factory=RobotSnapshot)
    scene: Scene = field(default_factory=Scene)
    facts: Mapping[str, bool] = field(default_factory=dict)
    time: float = 0.0  # seconds, monotonic clock of the executor
    fixture_map: Any = None  # frankenbot.fixture_map.FixtureMap (it imports this module)
