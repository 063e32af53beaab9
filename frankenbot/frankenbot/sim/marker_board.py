"""A calibration scene: the sim's tabletop with a printed ChArUco board lying on the table.

Self-contained on purpose: it takes the compiled tabletop's MJCF (``model.build_model``), adds
the board as a thin textured box (plus its white paper margin) where
``config/calibration_board.yaml`` says it lies, and renders it from the sim's camera, the true
one of an installation (the sensor model's pose error) with the sensor's colour noise. The arm
stands at HOME and every object waits under the floor, as after a reset. Used by
``frankenbot calibrate camera --check --sim`` / ``--board --sim`` (eval/sim_calibration.py).
"""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

from frankenbot.perception.marker_board import BoardSpec
from frankenbot.sim import model as model_mod
from frankenbot.sim.camera import CameraRenderer, camera_info_for, mujoco_camera_quat
from frankenbot.sim.sensor import SensorModel

PIXELS_PER_SQUARE = 120  # texture resolution: well above what the camera resolves
MARGIN_M = 0.015  # white paper around the chessboard
THICKNESS_M = 0.001


def board_texture(spec: BoardSpec) -> np.ndarray:
    """The printed board as an RGB image (rows top to bottom as printed)."""
    w = spec.squares_x * PIXELS_PER_SQUARE
    h = spec.squares_y * PIXELS_PER_SQUARE
    gray = spec.board().generateImage((w, h), marginSize=0, borderBits=1)
    return np.repeat(np.asarray(gray, np.uint8)[:, :, None], 3, axis=2)


def scene_xml(spec: BoardSpec, texture_file: Path) -> str:
    """The tabletop MJCF with the board added (a texture, a material, two thin boxes)."""
    root = ET.fromstring(model_mod.build_model().xml)
    asset = root.find("asset")
    if asset is None:
        asset = ET.SubElement(root, "asset")
    ET.SubElement(asset, "texture", name="calibration_board", type="2d",
                  file=str(texture_file))
    ET.SubElement(asset, "material", name="calibration_board", texture="calibration_board",
                  texrepeat="1 1", texuniform="false", specular="0", shininess="0",
                  reflectance="0")
    world = root.find("worldbody")
    assert world is not None
    sx, sy = spec.size_m
    pose = spec.pose
    centre = pose[:3, :3] @ np.array([sx / 2, sy / 2, 0.0]) + pose[:3, 3]
    # the box's frame: x along the board's x, y along the board's -y (so the box faces up and
    # the texture's rows run along the board's y, top row at the origin)
    x_axis, y_axis = pose[:3, 0], -pose[:3, 1]
    axes = " ".join(f"{v:.9f}" for v in (*x_axis, *y_axis))
    top = float(centre[2]) - THICKNESS_M / 2
    ET.SubElement(world, "geom", name="calibration_paper", type="box", contype="0",
                  conaffinity="0", rgba="0.97 0.97 0.97 1", xyaxes=axes,
                  size=f"{sx / 2 + MARGIN_M} {sy / 2 + MARGIN_M} {THICKNESS_M / 2}",
                  pos=f"{centre[0]} {centre[1]} {top - 0.0002}")
    ET.SubElement(world, "geom", name="calibration_board", type="box", contype="0",
                  conaffinity="0", material="calibration_board", xyaxes=axes,
                  size=f"{sx / 2} {sy / 2} {THICKNESS_M / 2}",
                  pos=f"{centre[0]} {centre[1]} {top}")
    return ET.tostring(root, encoding="unicode")


class BoardScene:
    """Renders the board from the sim camera of an installation (``sensor``'s pose error)."""

    def __init__(self, spec: BoardSpec, sensor: SensorModel | None = None, *,
                 width: int = model_mod.CAMERA_WIDTH,
                 height: int = model_mod.CAMERA_HEIGHT) -> None:
        import imageio.v3 as iio

        from frankenbot.sim.kinematics import HOME

        self.spec = spec
        self.sensor = sensor or SensorModel()
        with tempfile.TemporaryDirectory(prefix="frankenbot_board_") as tmp:
            png = Path(tmp) / "board.png"
            iio.imwrite(png, board_texture(spec))
            self.model = mujoco.MjModel.from_xml_string(scene_xml(spec, png))
        self.data = mujoco.MjData(self.model)
        for i, name in enumerate(model_mod.JOINT_NAMES):
            self.data.qpos[int(self.model.joint(name).qposadr[0])] = HOME[i]
        mujoco.mj_forward(self.model, self.data)
        cid = self.model.camera(model_mod.CAMERA_NAME).id
        nominal = np.eye(4)
        nominal[:3, :3] = self.data.cam_xmat[cid].reshape(3, 3) @ np.diag([1, -1, -1])
        nominal[:3, 3] = self.data.cam_xpos[cid]
        self.nominal_camera = nominal
        self.true_camera = self.sensor.true_camera_pose(nominal)
        self.model.cam_pos[cid] = self.true_camera[:3, 3]
        self.model.cam_quat[cid] = mujoco_camera_quat(self.true_camera)
        mujoco.mj_forward(self.model, self.data)
        self.info = camera_info_for(self.model, width, height)
        self._renderer = CameraRenderer(self.model, width, height)
        self._stamp = 0.0

    def render(self) -> np.ndarray:
        """One colour frame as the sensor delivers it (noise applied)."""
        rgb, depth = self._renderer.render(self.data)
        self._stamp += 0.1
        rgb, _ = self.sensor.apply(rgb, depth, self._stamp, self.info.fx)
        return rgb

    def close(self) -> None:
        self._renderer.close()

    def __enter__(self) -> "BoardScene":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
