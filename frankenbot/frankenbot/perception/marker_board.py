"""A printed ChArUco board on the table: an independent check of the camera pose, and a fit.

Why: the fixture fit (``perception.calibration``) needs the sim's table and drawer cabinet; a
real cell without that cabinet would get a wrong camera pose and nothing would say so. A
ChArUco board (OpenCV's aruco module: ArUco markers in the white squares of a chessboard) laid
flat on the table at a measured pose gives, from one colour image, the board's pose in the
camera with sub-pixel corners. With the board's pose in base_link known, that is:

* a check: the configured camera pose (camera.yaml, or TF) predicts where every chessboard
  corner appears; the residual (pixels, and the camera pose the board implies against the
  configured one, in mm and degrees) says whether the calibration still holds. Nothing is
  written, nothing moves;
* a fit: ``T_base_optical = T_base_board @ inv(T_optical_board)`` over several frames.

The board and its pose live in ``config/calibration_board.yaml``. Board frame: origin at the
chessboard's outer corner that is the top-left of the printed image, x to the right along the
image, y down the image, z into the table (x cross y), as OpenCV defines the board's object
points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from frankenbot.errors import ConfigError, PerceptionError
from frankenbot.perception.camera import CameraModel

MIN_CORNERS = 6  # chessboard corners needed for a pose (a plane needs >= 4 for solvePnP)


@dataclass(frozen=True)
class BoardSpec:
    """A ChArUco board and where it lies: ``pose`` is T_base_board (4x4)."""

    dictionary: str
    squares_x: int
    squares_y: int
    square_m: float
    marker_m: float
    pose: np.ndarray

    @property
    def size_m(self) -> tuple[float, float]:
        return self.squares_x * self.square_m, self.squares_y * self.square_m

    def board(self) -> Any:
        """The OpenCV CharucoBoard."""
        cv2 = _cv2()
        code = getattr(cv2.aruco, self.dictionary, None)
        if not self.dictionary.startswith("DICT_") or code is None:
            raise ConfigError(f"unknown ArUco dictionary {self.dictionary!r} (e.g. DICT_4X4_50)")
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_m,
                                      self.marker_m, cv2.aruco.getPredefinedDictionary(code))

    def corners_in_board(self) -> np.ndarray:
        """(N, 3) the inner chessboard corners in the board frame, by corner id."""
        return np.asarray(self.board().getChessboardCorners(), dtype=float).reshape(-1, 3)

    def corners_in_base(self) -> np.ndarray:
        """(N, 3) the inner chessboard corners in base_link, by corner id."""
        pts = self.corners_in_board()
        return (self.pose[:3, :3] @ pts.T).T + self.pose[:3, 3]


def board_pose(origin: Sequence[float], yaw_deg: float) -> np.ndarray:
    """T_base_board of a board lying face up on the table: its x axis at ``yaw_deg`` from base
    x, y turned clockwise from x as seen from above, z into the table."""
    yaw = math.radians(float(yaw_deg))
    x = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    y = np.array([math.sin(yaw), -math.cos(yaw), 0.0])
    t = np.eye(4)
    t[:3, 0], t[:3, 1], t[:3, 2] = x, y, np.cross(x, y)
    t[:3, 3] = [float(v) for v in origin]
    return t


def board_from_mapping(data: Mapping[str, Any]) -> BoardSpec:
    """The ``board:`` section of calibration_board.yaml (ConfigError on anything missing)."""
    b = data.get("board") if isinstance(data, Mapping) else None
    if not isinstance(b, Mapping):
        raise ConfigError("calibration board file needs a 'board:' mapping")
    try:
        squares = [int(v) for v in b["squares"]]
        square, marker = float(b["square_m"]), float(b["marker_m"])
        origin = [float(v) for v in b["origin"]]
        yaw = float(b.get("yaw_deg", 0.0))
        dictionary = str(b.get("dictionary", "DICT_4X4_50"))
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"calibration board needs squares [x, y], square_m, marker_m and "
                          f"origin [x, y, z] (yaw_deg, dictionary optional): {e!r}") from e
    if len(squares) != 2 or min(squares) < 3 or len(origin) != 3:
        raise ConfigError(f"calibration board: squares needs 2 counts >= 3 and origin 3 "
                          f"numbers, got {squares} and {origin}")
    if not (0 < marker < square < 1.0):
        raise ConfigError(f"calibration board: need 0 < marker_m < square_m < 1 m, got "
                          f"{marker} and {square}")
    return BoardSpec(dictionary, squares[0], squares[1], square, marker,
                     board_pose(origin, yaw))


def load_board(path: str | Path) -> BoardSpec:
    import yaml

    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read calibration board {file}: {e}") from e
    return board_from_mapping(data)


@dataclass(frozen=True)
class Detection:
    """Chessboard corners found in one image: ids and pixel positions (N, 2)."""

    ids: np.ndarray
    pixels: np.ndarray


def detect(rgb: np.ndarray, spec: BoardSpec) -> Detection:
    """ChArUco corners in an RGB image (empty when the board is not seen)."""
    cv2 = _cv2()
    gray = cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.uint8), cv2.COLOR_RGB2GRAY)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(spec.board()).detectBoard(gray)
    if ids is None or corners is None or len(ids) == 0:
        return Detection(np.zeros(0, int), np.zeros((0, 2)))
    return Detection(np.asarray(ids, int).reshape(-1),
                     np.asarray(corners, float).reshape(-1, 2))


def _k(camera: CameraModel) -> np.ndarray:
    i = camera.intrinsics
    return np.array([[i.fx, 0.0, i.cx], [0.0, i.fy, i.cy], [0.0, 0.0, 1.0]])


def project(camera: CameraModel, points_base: np.ndarray) -> np.ndarray:
    """Pixels of base-frame points through the camera's pose and pinhole intrinsics."""
    t = np.linalg.inv(camera.matrix)
    cam = (t[:3, :3] @ np.asarray(points_base, float).T).T + t[:3, 3]
    i = camera.intrinsics
    return np.stack([i.fx * cam[:, 0] / cam[:, 2] + i.cx,
                     i.fy * cam[:, 1] / cam[:, 2] + i.cy], axis=1)


def board_in_camera(detections: Sequence[Detection], camera: CameraModel,
                    spec: BoardSpec) -> np.ndarray:
    """T_optical_board from the corners of every frame together (solvePnP, iterative)."""
    cv2 = _cv2()
    ids = np.concatenate([d.ids for d in detections]) if detections else np.zeros(0, int)
    if len(ids) < MIN_CORNERS:
        raise PerceptionError(f"the calibration board is not in view: {len(ids)} chessboard "
                              f"corners found (need {MIN_CORNERS}); is it on the table, lit, "
                              f"and is calibration_board.yaml the board you printed?")
    obj = spec.corners_in_board()[ids]
    img = np.concatenate([d.pixels for d in detections])
    ok, rvec, tvec = cv2.solvePnP(obj, img, _k(camera), None, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        raise PerceptionError("solvePnP found no board pose")
    out = np.eye(4)
    out[:3, :3] = cv2.Rodrigues(rvec)[0]
    out[:3, 3] = np.asarray(tvec, float).reshape(3)
    return out


def camera_from_board(detections: Sequence[Detection], camera: CameraModel,
                      spec: BoardSpec) -> np.ndarray:
    """T_base_optical implied by the board (intrinsics from ``camera``)."""
    return spec.pose @ np.linalg.inv(board_in_camera(detections, camera, spec))


@dataclass(frozen=True)
class BoardCheck:
    """How well a camera pose agrees with the board (``check``)."""

    corners: int  # chessboard corners used, over all frames
    frames: int
    pixel_rms: float  # detected vs predicted by the configured camera, px
    pixel_max: float
    translation_mm: float  # camera origin: configured vs implied by the board
    rotation_deg: float
    board_distance_m: float
    implied: np.ndarray  # T_base_optical the board implies

    def as_dict(self) -> dict[str, Any]:
        return {"corners": self.corners, "frames": self.frames,
                "pixel_rms": self.pixel_rms, "pixel_max": self.pixel_max,
                "translation_mm": self.translation_mm, "rotation_deg": self.rotation_deg,
                "board_distance_m": self.board_distance_m}


def pose_difference(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(metres, degrees) between two poses' origins and orientations."""
    rot = a[:3, :3].T @ b[:3, :3]
    angle = math.degrees(math.acos(float(np.clip((np.trace(rot) - 1) / 2, -1.0, 1.0))))
    return float(np.linalg.norm(a[:3, 3] - b[:3, 3])), angle


def check(images: Sequence[np.ndarray], camera: CameraModel, spec: BoardSpec) -> BoardCheck:
    """The configured ``camera`` against the board seen in ``images``: touches nothing."""
    detections = [detect(img, spec) for img in images]
    implied = camera_from_board(detections, camera, spec)
    truth = spec.corners_in_base()
    errors = np.concatenate([np.linalg.norm(project(camera, truth[d.ids]) - d.pixels, axis=1)
                             for d in detections if len(d.ids)])
    metres, degrees = pose_difference(camera.matrix, implied)
    return BoardCheck(
        corners=int(errors.size), frames=len(images),
        pixel_rms=float(np.sqrt(np.mean(errors ** 2))), pixel_max=float(np.max(errors)),
        translation_mm=1000.0 * metres, rotation_deg=degrees,
        board_distance_m=float(np.linalg.norm(spec.pose[:3, 3] - camera.matrix[:3, 3])),
        implied=implied)


def _cv2() -> Any:
    try:
        import cv2
    except ImportError as e:
        raise ConfigError("the marker board needs OpenCV (opencv-python-headless, "
                          "requirements/base.txt)") from e
    if not hasattr(cv2, "aruco"):
        raise ConfigError("this OpenCV build has no aruco module (need >= 4.7)")
    return cv2
