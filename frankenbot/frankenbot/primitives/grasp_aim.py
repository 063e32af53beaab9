"""Where a pick takes an object: a top-down grasp of a block from its pose (its 90-degree
symmetry and the gripper's 180 give the least wrist turn), of anything else from grasp
synthesis on its points (``grasps.py``), the first candidate the arm reaches. Nothing moves
here; ``Primitives`` runs the motions.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from frankenbot.common import FailureCode
from frankenbot.motion.kinematics import (
    UnreachableError,
    symmetric_yaws,
    top_down_pose,
    wrap_angle,
)
from frankenbot.ports import PrimitiveResult
from frankenbot.primitives.grasps import Grasp, NoGrasp, synthesize
from frankenbot.primitives.gripper import StepFailed
from frankenbot.state import SceneObject

if TYPE_CHECKING:
    from frankenbot.primitives.primitives import Primitives

STACKED_BOTTOM_Z = 0.02  # m: an object whose bottom is this high stands on another one
MAX_IK_CHECKS = 60  # grasp candidates tried against the reach, best first
GRASP_COST_SLACK = 0.05  # of candidates this close to the best reachable, least motion wins


class GraspAim:
    """The grasp a pick of an object aims at, on the primitives' robot and arm."""

    def __init__(self, primitives: "Primitives") -> None:
        self.p = primitives

    def aim(self, obj: SceneObject, off_centre: float = 0.0
            ) -> tuple[float, float, float, float, float, float, float]:
        """(x, y, the object's bottom z, grasp TCP z, pre-grasp TCP z, yaw, open width) of a
        top-down grasp of ``obj``: a block's from its pose (its 90-degree symmetry and the
        gripper's 180 give the least wrist turn), anything else's from grasp synthesis, the
        first candidate the arm reaches (``off_centre``: see ``grasps.synthesize``). StepFailed
        (nothing moved) when there is none."""
        cfg = self.p.config
        bottom = obj.position[2] - obj.size[2] / 2
        above_z = obj.top_z + cfg.approach_height
        if obj.shape == "block" and off_centre <= 0.0:
            width = min(obj.size[0], obj.size[1])
            if width + 0.005 > 0.085:
                raise StepFailed(PrimitiveResult.failure(
                    FailureCode.GRASP_FAILED, f"{obj.object_id} is {width * 1000:.0f} mm wide: "
                    "too wide for the gripper"))
            x, y = obj.position[0], obj.position[1]
            # the pads keep the same clearance above whatever the object stands on as above the
            # table: a block lifted off a stack must not squeeze (and drag) the block below it
            grasp_z = max(obj.top_z - min(cfg.grasp_depth, obj.size[2] / 2), cfg.min_tcp_z)
            if bottom > STACKED_BOTTOM_Z:
                grasp_z = max(grasp_z, bottom + cfg.min_tcp_z)
            yaw = self.p._best_yaw(x, y, above_z, symmetric_yaws(obj.yaw, cfg.block_symmetry))
            return x, y, bottom, grasp_z, above_z, yaw, min(0.085, width + cfg.open_margin)
        try:
            grasps = synthesize(obj, self.p.robot.scene().objects, gripper=self.p.gripper,
                                min_tcp_z=cfg.min_tcp_z, table_z=cfg.table_z,
                                off_centre=off_centre)
        except NoGrasp as e:  # a blocked grasp names (object, what is in the way), as a
            # full target names (target, occupier): tier 3 clears the way first
            named = {"objects": (obj.object_id, *e.blockers)} if e.blockers else {}
            raise StepFailed(PrimitiveResult.failure(e.code, e.detail, **named)) from e
        g, yaw = self._reachable(grasps, above_z)
        return g.x, g.y, bottom, g.z, above_z, yaw, g.open_width

    def _reachable(self, grasps: list[Grasp], above_z: float) -> tuple[Grasp, float]:
        """Of grasps ranked by quality, the reachable one (pre-grasp and grasp pose) needing the
        least joint motion among those nearly as good as the best reachable."""
        q = self.p._q()
        best: tuple[float, Grasp, float] | None = None
        first_cost = None
        for g in grasps[:MAX_IK_CHECKS]:
            if first_cost is not None and g.cost > first_cost + GRASP_COST_SLACK:
                break
            for yaw in (g.yaw, wrap_angle(g.yaw + math.pi)):
                try:
                    q_above = self.p.kin.ik(top_down_pose(g.x, g.y, above_z, yaw), q)
                    self.p.kin.ik(top_down_pose(g.x, g.y, g.z, yaw), q_above)
                except UnreachableError:
                    continue
                motion = float(np.sum((q_above - q) ** 2))
                if first_cost is None:
                    first_cost = g.cost
                if best is None or motion < best[0]:
                    best = (motion, g, yaw)
        if best is None:
            g = grasps[0]
            raise StepFailed(PrimitiveResult.failure(
                FailureCode.UNREACHABLE, f"no grasp of the object is within the arm's reach "
                f"(best at ({g.x:.3f}, {g.y:.3f}, {g.z:.3f}) m)"))
        return best[1], best[2]
