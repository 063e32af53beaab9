"""Renders RGB-D frames in a child process, so OpenGL never holds the physics process's GIL.

Why: MuJoCo's Python bindings hold the GIL inside ``mjr_render`` and ``mjr_readPixels`` (12-25 ms
at 640x480 on CPU). In one process that stalls the physics thread and makes joint states late.
The child (``python -m frankenbot.sim.render_process``) compiles its own model from the same MJCF
and owns its GL context; per frame the parent writes the joint positions (``qpos``, raw float64)
and the camera-and-lights settings of the sensor model (``RenderSettings``) to its stdin; the
child draws, writes colour and depth into shared memory and answers one byte. Only qpos and
those settings matter for drawing: unused objects wait out of view, under the floor.

Given a ``SensorSpec`` the child also applies the sensor model (noise, holes, drift: ~30 ms of
numpy a 640x480 frame) with the frame's stamp, so that work runs beside the physics process on
another core, not in it. The spec is sent when its episode changes; the child's model then
starts from the same seeds as the world's and sees the same frames and stamps in the same
order, so its frames are those ``SimWorld.sense`` would make.

Each request: a header of 3 float64 (length of a JSON spec that follows, or 0; the stamp;
1.0 to apply the sensor model, else 0.0), the spec's bytes if any, then qpos and settings.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
from multiprocessing import resource_tracker, shared_memory
from pathlib import Path

import numpy as np

from frankenbot.errors import SimError
from frankenbot.sim.sensor import SensorSpec

START_TIMEOUT = 60.0  # s for the child to import mujoco, compile the model and make a context
FRAME_TIMEOUT = 10.0
READY, DONE = b"R", b"D"
HEADER = 3  # float64s before each request: spec length, stamp, apply-the-sensor flag


def _read_exact(fd: int, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def _child(xml_path: str, width: int, height: int, rgb_name: str,
           depth_name: str) -> None:  # pragma: no cover - runs in the child process
    import mujoco

    from frankenbot.sim.camera import (
        CameraRenderer,
        RenderSettings,
        place_static_camera_and_lights,
    )
    from frankenbot.sim.sensor import SensorSpec

    rgb_shm = shared_memory.SharedMemory(name=rgb_name)
    depth_shm = shared_memory.SharedMemory(name=depth_name)
    # the parent owns (and unlinks) these segments; do not let this process's tracker do it
    resource_tracker.unregister(rgb_shm._name, "shared_memory")  # type: ignore[attr-defined]
    resource_tracker.unregister(depth_shm._name, "shared_memory")  # type: ignore[attr-defined]
    model = mujoco.MjModel.from_xml_string(Path(xml_path).read_text())
    data = mujoco.MjData(model)
    n_settings = RenderSettings.size(model)
    renderer = CameraRenderer(model, width, height)
    rgb = np.ndarray((height, width, 3), np.uint8, buffer=rgb_shm.buf)
    depth = np.ndarray((height, width), np.uint16, buffer=depth_shm.buf)
    fin, fout = sys.stdin.fileno(), sys.stdout.fileno()
    sensor = None
    fx = 0.0
    os.write(fout, READY)
    try:
        while True:
            n_spec, stamp, sense = np.frombuffer(_read_exact(fin, HEADER * 8), np.float64)
            if n_spec > 0:
                spec = SensorSpec.from_json(_read_exact(fin, int(n_spec)).decode())
                sensor, fx = spec.model(), spec.fx
            msg = np.frombuffer(_read_exact(fin, (model.nq + n_settings) * 8), np.float64)
            data.qpos[:] = msg[:model.nq]
            RenderSettings.apply(model, msg[model.nq:])
            mujoco.mj_kinematics(model, data)
            place_static_camera_and_lights(model, data)
            clean_rgb, clean_depth = renderer.render(data)
            if sense and sensor is not None:
                clean_rgb, clean_depth = sensor.apply(clean_rgb, clean_depth, float(stamp), fx)
            rgb[...], depth[...] = clean_rgb, clean_depth
            os.write(fout, DONE)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        renderer.close()
        del rgb, depth
        rgb_shm.close()
        depth_shm.close()


class RenderProcess:
    """A child process that renders ``(rgb, depth)`` for a given ``qpos``."""

    def __init__(self, xml: str, width: int, height: int) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._spec: SensorSpec | None = None  # the sensor spec the child has
        self._shms: list[shared_memory.SharedMemory] = []
        self.width, self.height = width, height
        fd, path = tempfile.mkstemp(prefix="fb-sim-", suffix=".xml")
        self._xml_path = Path(path)
        with os.fdopen(fd, "w") as f:
            f.write(xml)
        try:
            self._shms = [shared_memory.SharedMemory(create=True, size=height * width * 3),
                          shared_memory.SharedMemory(create=True, size=height * width * 2)]
            self._rgb = np.ndarray((height, width, 3), np.uint8, buffer=self._shms[0].buf)
            self._depth = np.ndarray((height, width), np.uint16, buffer=self._shms[1].buf)
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "frankenbot.sim.render_process", str(self._xml_path),
                 str(width), str(height), self._shms[0].name, self._shms[1].name],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
            self._expect(READY, START_TIMEOUT, "start")
        except BaseException:
            self.close()
            raise

    def _expect(self, token: bytes, timeout: float, what: str) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise SimError(f"render process did not answer ({what}) within {timeout} s")
        got = os.read(fd, 1)
        if got != token:
            raise SimError(f"render process failed ({what}); exit code {self._proc.poll()}")

    def render(self, qpos: np.ndarray, settings: np.ndarray, sensor: SensorSpec | None = None,
               stamp: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Colour and depth (copies) of the scene at ``qpos`` with the camera and lights of
        ``settings`` (``SimWorld.render_settings()``); with ``sensor``
        (``SimWorld.sensor_spec()``) as the sensor delivers it at sim time ``stamp`` (what
        ``SimWorld.sense`` would return), else clean."""
        if self._proc is None or self._proc.stdin is None:
            raise SimError("render process is closed")
        spec = b""
        if sensor is not None and sensor != self._spec:
            spec = sensor.to_json().encode()
            self._spec = sensor
        header = np.array([len(spec), stamp, 1.0 if sensor is not None else 0.0], np.float64)
        msg = np.concatenate([np.asarray(qpos, np.float64).reshape(-1),
                              np.asarray(settings, np.float64).reshape(-1)])
        try:
            self._proc.stdin.write(header.tobytes() + spec + msg.tobytes())
        except BrokenPipeError as e:
            raise SimError("render process exited") from e
        self._expect(DONE, FRAME_TIMEOUT, "frame")
        return self._rgb.copy(), self._depth.copy()

    def close(self) -> None:
        """Stop the child and free shared memory (safe to call twice)."""
        if self._proc is not None:
            if self._proc.stdin is not None:
                try:
                    self._proc.stdin.close()
                except OSError:
                    pass
            try:
                self._proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5.0)
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        if self._shms:
            self._rgb = self._depth = np.zeros(0)  # drop views before closing the buffers
            for shm in self._shms:
                shm.close()
                shm.unlink()
            self._shms = []
        self._xml_path.unlink(missing_ok=True)

    def __enter__(self) -> "RenderProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":  # pragma: no cover
    _child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5])
