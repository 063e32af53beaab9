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
