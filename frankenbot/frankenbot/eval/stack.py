"""The robot side of the brain over the MuJoCo sim, in one process (no DDS).

``SimStack`` owns one ``SimWorld``, the ``SimRobot`` adapter (JTC backend behind the safety
envelope) and the primitives, rebuilt per episode so that beliefs (held object, drawer states)
never leak from one task's world into the next. ``running()`` starts the physics thread (a
``SimRunner``) for one episode and, with a perceived scene, the perception thread.

The scene the brain sees is one of:

* ``"perceived"`` (default): rendered RGB-D frames through the real perception pipeline
  (``SimSceneSource``); the brain never reads ground truth. The task-suite brain and memory's
  program judge use this.
* ``"ground_truth"``: the simulator's own poses (``pose_feed_scene``), frozen while the camera is.
  Measurement scaffolding only: the executor's harness uses it to isolate anomaly handling from
  perception, whose own latency and accuracy perception's benchmark reports.

Everything below the simulator is imported lazily so ``frankenbot.sim`` stays importable without
the brain's packages.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Callable, Iterator, Mapping

from frankenbot import resources
from frankenbot.errors import SimError
from frankenbot.eval.ground_truth import pose_feed_scene, world_fixture_map
from frankenbot.fixture_map import FixtureMap
from frankenbot.state import Scene

SCENE_WAIT_S = 30.0  # wall seconds for the first perceived frame after a reset
# Processed frames before an episode starts: a robot has looked at its table for a moment
# before it is asked (over ROS the planner plans from the latest of many frames); one frame
# alone let a block seen in too few samples in it be left out of the first plan.
FIRST_FRAMES = 3
SCENE_MODES = ("perceived", "ground_truth")
CALIBRATION_FRAMES = 6  # frames pooled to calibrate the camera of a noisy sim


def _names_by_look(names: Mapping[str, str]) -> dict[tuple[str, str], str]:
    from frankenbot.sim import layout

    out = {}
    for name, words in names.items():
        spec = layout.OBJECT_BY_NAME.get(name)
        if spec is None:
            raise SimError(f"cannot name {name!r}: not in the catalogue")
        out[(spec.colour, spec.shape)] = words
    return out


def named(scene: Scene, names: Mapping[tuple[str, str], str]) -> Scene:
    """``scene`` with the objects of a taught look (colour and category, as perceived) labelled
    by the name a user gave them ("alphabet soup" for the red can), as a robot that was shown
    the things of its kitchen would report them; ids, shapes and colours stay perception's."""
    if not names:
        return scene
    objs = tuple(replace(o, label=names[(o.colour, o.shape)])
                 if not o.is_fixture and (o.colour, o.shape) in names else o
                 for o in scene.objects)
    return replace(scene, objects=objs)


# s without a processed frame before the in-process benchmarks' scene counts as stale (perception
# and the executor, both on the sim's clock), above the robot's 1 s: in one process perception
# shares the GIL with the physics, render and monitor threads on a 2-core machine and lags by
# over a second under load, which a deployment (perception in its own process) does not; a dead
# camera is still caught after this long. The suite and the mixes record it in their conditions.
IN_PROCESS_STALE_S = 3.0


class SimStack:
    """World + robot adapter + per-episode primitives + the scene the brain sees."""

    def __init__(self, *, scene: str = "perceived", realtime_factor: float = 2.0,
                 camera_rate: float = 10.0, perception_rate: float = 10.0,
                 noise: str = "none", sensor_seed: int = 0,
                 stale_timeout: float | None = None) -> None:
        from frankenbot.sim.robot_adapter import SimRobot
        from frankenbot.sim.sensor import SensorModel, sensor_params
        from frankenbot.sim.world import SimWorld

        if scene not in SCENE_MODES:
            raise SimError(f"scene must be one of {', '.join(SCENE_MODES)}, got {scene!r}")
        self.perceived = scene == "perceived"
        self.realtime_factor = realtime_factor
        self.camera_rate = camera_rate
        self.perception_rate = perception_rate
        self.fixtures = resources.fixtures_path()
        self.noise = noise
        self.world = SimWorld(sensor=SensorModel(sensor_params(noise), sensor_seed))
        # the scene's fixture map, renewed on every reset (what a cell's scene_fixtures.yaml
        # says on a robot): the primitives read it through a provider
        self.fixture_map: FixtureMap = world_fixture_map(self.world)
        self._pipeline: Any = None
        self.pixels: Any = None  # DepthPixelResolver over rendered frames (perceived scene)
        self._pose_feed: Callable[[], Scene] | None = None
        if self.perceived:
            from frankenbot.eval.perception_eval import camera_of_world
            from frankenbot.perception.config import PerceptionConfig
            from frankenbot.perception.pipeline import PerceptionPipeline, default_catalogue
            from frankenbot.perception.pixels import DepthPixelResolver

            fixtures = self._fixture_map()
            camera, config = camera_of_world(self.world), PerceptionConfig()
            if self.world.sensor.active:
                camera, config = self._calibrated(camera, fixtures)
            # ``stale_timeout``: sim seconds without a processed frame before the perceived
            # scene is stale (None: perception's default)
            if stale_timeout is not None:
                config = replace(config, stale_timeout=stale_timeout)
            self._pipeline = PerceptionPipeline(camera, fixtures, config,
                                                catalogue=default_catalogue())
            # pixel targets back-project the same depth perception sees, with its camera model
            self.pixels = DepthPixelResolver(camera)
        else:
            self._pose_feed = pose_feed_scene(self.world)
        self._source: Any = None  # the perception thread of the running episode
        self.names: dict[tuple[str, str], str] = {}  # (colour, shape) -> taught name
        self.robot = SimRobot(self.world, scene_source=self.scene, physics_thread=True)
        self.primitives = self._build_primitives()

    def _fixture_map(self) -> Any:
        """The world's fixture map (``frankenbot.fixture_map``) of the current scene."""
        from frankenbot.fixture_map import FixtureMap

        return FixtureMap.from_data(self.world.fixture_map_data())

    def _calibrated(self, nominal: Any, fixtures: Any) -> tuple[Any, Any]:
        """Calibrate the camera once, as the real-robot quick start does before any task: the
        sensor model's camera-pose error would otherwise cost centimetres at the table."""
        from dataclasses import replace

        from frankenbot.perception.calibration import calibrate_camera
        from frankenbot.perception.config import PerceptionConfig

        shots = []
        for _ in range(CALIBRATION_FRAMES):
            shots.append(self.world.render_rgbd())
            self.world.advance(0.1)
        result = calibrate_camera(shots, nominal, fixtures)
        config = PerceptionConfig()
        if result.table_rgb is not None:
            config = replace(config, table_rgb=result.table_rgb)
        return result.camera, config

    def _build_primitives(self) -> Any:
        from frankenbot.primitives.factory import build_primitives

        return build_primitives(self.robot, fixture_map=lambda: self.fixture_map,
                                pixels=self.pixels)

    # ------------------------------------------------------------------ what the brain sees
    def scene(self) -> Scene:
        """The current scene (stale before the first perceived frame of an episode), its
        objects labelled with the names taught for this episode (``reset(names=...)``)."""
        if self._pose_feed is not None:
            return named(self._pose_feed(), self.names)
        source = self._source
        return named(source.scene(), self.names) if source is not None else Scene(stale=True)

    def snapshot(self) -> Any:
        """Robot state, scene, primitive facts and the sim clock: what the interpreter reads."""
        from frankenbot.state import WorldSnapshot

        return WorldSnapshot(self.primitives.snapshot(), self.scene(), self.primitives.facts(),
                             self.robot.now(), self.fixture_map)

    # ------------------------------------------------------------------ episodes
    def reset(self, family: str, seed: int, *, scene: Any = None,
              names: Mapping[str, str] | None = None) -> Any:
        """Release the e-stop, build the task's world, fresh primitives, forget perceived tracks;
        returns the sim's ``TaskInstance``. ``scene``: a ``sim.scene_spec.SceneSpec`` to build
        instead of the family's; ``names``: catalogue object -> the name a user taught the
        robot for it (``named``), for this episode."""
        self.robot.set_estop(False)
        instance = (self.world.reset_scene(scene) if scene is not None
                    else self.world.reset(family, seed))
        self.names = _names_by_look(names or {})
        self.fixture_map = world_fixture_map(self.world)
        self.primitives = self._build_primitives()
        if self._pipeline is not None:
            # the scene's fixtures (a cabinet here, a stove there): perception gets the map
            # the cell is configured with, as the perception node gets the sim's ~/fixture_map
            self._pipeline.set_fixture_map(self._fixture_map())
            self._pipeline.reset()
        if self.pixels is not None:
            self.pixels.reset()
        return instance

    @contextmanager
    def running(self, *, on_joint_state: Callable[[Any], None] | None = None,
                on_frame: Callable[[Any], None] | None = None) -> Iterator[None]:
        """Physics (and perception) threads for one episode; the arm is stopped on the way out,
        also when the body raises. With a perceived scene, waits for the first frame first.
        ``on_joint_state`` / ``on_frame`` see every joint sample / rendered frame (recordings)."""
        from frankenbot.sim.runner import SimRunner

        runner = SimRunner(self.world, realtime_factor=self.realtime_factor,
                           camera_rate=self.camera_rate, render=self.perceived)
        if on_joint_state is not None:
            runner.on_joint_state(on_joint_state)
        if on_frame is not None:
            runner.on_frame(on_frame)
        if not self.perceived:
            with runner:
                try:
                    yield
                finally:
                    self.robot.stop()
            return
        from frankenbot.eval.sim_scene_source import SimSceneSource

        source = SimSceneSource(runner, self._pipeline, rate_hz=self.perception_rate)
        pixels = self.pixels

        def feed_depth(frame: Any) -> None:
            js = runner.latest_joint_state()
            pixels.feed(frame.depth, frame.stamp, js.positions if js is not None else None)

        runner.on_frame(feed_depth)
        with runner, source:
            self._source = source
            try:
                scene = source.wait_for_scene(timeout=SCENE_WAIT_S)
                for _ in range(FIRST_FRAMES - 1):  # the tracker fuses a few frames first
                    scene = source.wait_for_scene(timeout=SCENE_WAIT_S, after=scene.stamp + 1e-6)
                yield
            finally:
                self.robot.stop()
                self._source = None

    def executor(self, planner: Any, **kwargs: Any) -> Any:
        """A ``ProgramExecutor`` over this episode's primitives and scene whose tier-3 replans go
        to ``planner``; ``kwargs`` are the executor's own options (params, expert, ...)."""
        from frankenbot.execution.executor import ProgramExecutor
        from frankenbot.execution.replanner import PlannerReplanner

        def replanner_for(task_id: str, instruction: str, text: str) -> Any:
            return PlannerReplanner(planner, instruction=instruction, program_text=text,
                                    scene=self.scene)

        return ProgramExecutor(self.primitives, self.primitives.snapshot, self.scene,
                               stop_arm=self.robot.stop, replanner_for=replanner_for, **kwargs)

    def close(self) -> None:
        self.world.close()

    def __enter__(self) -> "SimStack":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
