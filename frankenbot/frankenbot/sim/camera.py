"""Headless RGB-D rendering of the fixed D435-like camera (EGL, no anti-aliasing, no shadows).

One render pass fills the colour and depth buffers; both are read back together so the depth is
aligned to the colour image by construction (same camera, same pixels). Depth is the distance
along the optical axis in millimetres (uint16, 0 = no return), like the RealSense aligned depth.
An OpenGL context is bound to the thread that made it, so a ``CameraRenderer`` must be used from
one thread; ``SimWorld`` keeps one per rendering thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from frankenbot.errors import SimError
from frankenbot.sim import model as model_mod
from frankenbot.transforms import QuatWXYZ, quat_from_matrix

MAX_DEPTH_M = 10.0  # beyond this the "sensor" returns nothing


@dataclass(frozen=True)
class CameraInfo:
    """Pinhole intrinsics (no distortion) of the simulated colour camera."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    frame_id: str = "camera_color_optical_frame"
    distortion_model: str = "plumb_bob"

    @property
    def k(self) -> tuple[float, ...]:
        return (self.fx, 0.0, self.cx, 0.0, self.fy, self.cy, 0.0, 0.0, 1.0)


def camera_info_for(model: mujoco.MjModel, width: int, height: int) -> CameraInfo:
    cam = model.camera(model_mod.CAMERA_NAME)
    fovy = math.radians(float(cam.fovy[0]))
    f = (height / 2) / math.tan(fovy / 2)
    return CameraInfo(width, height, f, f, (width - 1) / 2, (height - 1) / 2)


@dataclass(frozen=True)
class RenderSettings:
    """What the sensor model changes in the scene itself: the true camera pose and the lights.

    Sent to a render process as a flat float64 vector after qpos (``vector``/``apply``), so the
    in-thread renderer and the child draw the same thing.
    """

    cam_pos: tuple[float, float, float]
    cam_quat: tuple[float, float, float, float]  # MuJoCo (w, x, y, z) of the MuJoCo camera
    light_dir: tuple[float, ...]  # n_lights * 3
    light_diffuse: tuple[float, ...]  # n_lights * 3
    headlight: tuple[float, ...]  # ambient rgb + diffuse rgb

    def vector(self) -> np.ndarray:
        return np.array([*self.cam_pos, *self.cam_quat, *self.light_dir, *self.light_diffuse,
                         *self.headlight], dtype=np.float64)

    @staticmethod
    def size(model: mujoco.MjModel) -> int:
        return 7 + 6 * model.nlight + 6

    @classmethod
    def of_model(cls, model: mujoco.MjModel) -> "RenderSettings":
        cid = model.camera(model_mod.CAMERA_NAME).id
        hl = model.vis.headlight
        return cls(tuple(map(float, model.cam_pos[cid])), tuple(map(float, model.cam_quat[cid])),
                   tuple(map(float, model.light_dir.reshape(-1))),
                   tuple(map(float, model.light_diffuse.reshape(-1))),
                   (*map(float, hl.ambient), *map(float, hl.diffuse)))

    @staticmethod
    def apply(model: mujoco.MjModel, vec: np.ndarray) -> None:
        """Write a ``vector()`` into ``model`` (camera and lights only; physics is untouched)."""
        n = model.nlight
        cid = model.camera(model_mod.CAMERA_NAME).id
        model.cam_pos[cid] = vec[0:3]
        model.cam_quat[cid] = vec[3:7]
        model.light_dir[:] = vec[7:7 + 3 * n].reshape(n, 3)
        model.light_diffuse[:] = vec[7 + 3 * n:7 + 6 * n].reshape(n, 3)
        model.vis.headlight.ambient[:] = vec[7 + 6 * n:10 + 6 * n]
        model.vis.headlight.diffuse[:] = vec[10 + 6 * n:13 + 6 * n]


def place_static_camera_and_lights(model: mujoco.MjModel, data: mujoco.MjData) -> None:
    """``mj_camlight`` for the cameras and lights fixed to the world body, written directly.

    With MuJoCo's island sleeping enabled (SimWorld lets parked objects sleep), ``mj_camlight``
    leaves static cameras and lights where they were, so a camera moved by the sensor model
    (``RenderSettings.apply`` writes ``cam_pos``/``cam_quat``) would not move in the render."""
    mujoco.mj_camlight(model, data)
    for i in np.nonzero(model.cam_bodyid == 0)[0]:
        data.cam_xpos[i] = model.cam_pos[i]
        mujoco.mju_quat2Mat(data.cam_xmat[i], model.cam_quat[i])
    for i in np.nonzero(model.light_bodyid == 0)[0]:
        data.light_xpos[i] = model.light_pos[i]
        data.light_xdir[i] = model.light_dir[i]


def mujoco_camera_quat(T_base_optical: np.ndarray) -> QuatWXYZ:
    """(w, x, y, z) of the MuJoCo camera (x right, y up, looking along -z) for an optical pose."""
    R = np.asarray(T_base_optical, dtype=float)[:3, :3] @ np.diag([1.0, -1.0, -1.0])
    return quat_from_matrix(R)


class CameraRenderer:
    """Offscreen renderer of one camera; ``render(data)`` -> (rgb HxWx3 uint8, depth HxW uint16)."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int) -> None:
        self._ctx = None
        self._con = None
        if width < 16 or height < 16 or width > model.vis.global_.offwidth or (
                height > model.vis.global_.offheight):
            raise SimError(f"camera size {width}x{height} outside 16x16 .. "
                           f"{model.vis.global_.offwidth}x{model.vis.global_.offheight}")
        self.width, self.height = width, height
        self._model = model
        self._ctx = mujoco.GLContext(width, height)
        self._ctx.make_current()
        self._scene = mujoco.MjvScene(model, maxgeom=2000)
        self._con = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._con)
        self._opt = mujoco.MjvOption()
        self._scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
        self._scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        self._cam = mujoco.MjvCamera()
        self._cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._cam.fixedcamid = model.camera(model_mod.CAMERA_NAME).id
        self._viewport = mujoco.MjrRect(0, 0, width, height)
        self._rgb = np.zeros((height, width, 3), np.uint8)
        self._depth = np.zeros((height, width), np.float32)
        extent = model.stat.extent
        self._near = model.vis.map.znear * extent
        self._far = model.vis.map.zfar * extent

    def render(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        self._ctx.make_current()
        mujoco.mjv_updateScene(self._model, data, self._opt, None, self._cam,
                               mujoco.mjtCatBit.mjCAT_ALL, self._scene)
        mujoco.mjr_render(self._viewport, self._scene, self._con)
        mujoco.mjr_readPixels(self._rgb, self._depth, self._viewport, self._con)
        rgb = np.flipud(self._rgb).copy()
        zbuf = np.flipud(self._depth).astype(np.float64)
        near, far = self._near, self._far
        metres = near / (1.0 - zbuf * (1.0 - near / far))
        metres[(zbuf >= 1.0) | (metres > MAX_DEPTH_M)] = 0.0
        depth = np.round(metres * 1000.0).astype(np.uint16)
        return rgb, depth

    def close(self) -> None:
        if self._con is not None:
            self._con.free()
            self._con = None
        if self._ctx is not None:
            self._ctx.free()
            self._ctx = None

    def __enter__(self) -> "CameraRenderer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
