"""The world's fixtures at run time: where each stands, what each part's state is, and the logic
that ties controls to lights (a button toggles the lamp, the switch sets it, the knob lights the
burner).

``FixtureRig`` works on one MjModel/MjData pair under the world's lock. ``place`` puts a scene's
fixtures on the table (the rest under the floor); ``pin`` holds them there after every physics
step (their root is a free body: a render process that gets only ``qpos`` draws them where they
stand); ``poll`` runs the logic a few times a second's worth of steps; ``states`` is what the
oracle reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

import mujoco
import numpy as np

from frankenbot.errors import SimError
from frankenbot.sim import fixtures as fx
from frankenbot.sim.tasks import FixturePlacement

BUTTON_PRESSED = 0.6  # share of the button's travel that counts as a press
SWITCH_DETENT = 0.01  # N m pushing the rocker to the side it leans to (bistable)
_LIT_KINDS = ("light", "burner")
SLEEP_NEVER = int(mujoco.mjtSleepPolicy.mjSLEEP_NEVER)  # on the table: moves as always
SLEEP_ALLOWED = int(mujoco.mjtSleepPolicy.mjSLEEP_ALLOWED)  # parked: MuJoCo may let it sleep


@dataclass(frozen=True)
class PartJoint:
    """Where one part's joint lives in qpos/qvel, and its range."""

    part_id: str
    fixture: str
    kind: str
    qadr: int
    dof: int
    jnt: int
    spec: fx.PartSpec | None


def _quat_yaw(yaw: float) -> np.ndarray:
    return np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])


class FixtureRig:
    """The fixtures of one model (see the module docstring)."""

    def __init__(self, model: mujoco.MjModel, parked: Iterable[tuple[float, float, float]]
                 ) -> None:
        self.model = model
        self._parked = {inst.fid: np.array([*p, 1.0, 0.0, 0.0, 0.0])
                        for inst, p in zip(fx.INSTANCES, parked, strict=True)}
        self._pin_qadr = {inst.fid: int(model.joint(f"{inst.fid}_pin").qposadr[0])
                          for inst in fx.INSTANCES}
        self._pin_dof = {inst.fid: int(model.joint(f"{inst.fid}_pin").dofadr[0])
                         for inst in fx.INSTANCES}
        self.parts: dict[str, PartJoint] = {}
        for inst in fx.INSTANCES:
            specs: tuple[fx.PartSpec | None, ...] = inst.spec.parts or (None,)
            for part in specs:
                if part is None:  # the one-drawer unit is its own part
                    j = model.joint("drawer_slide")
                    pid, kind = "drawer", "drawer"
                else:
                    j = model.joint(inst.joint(part))
                    pid, kind = inst.part_id(part.suffix), part.kind
                self.parts[pid] = PartJoint(pid, inst.fid, kind, int(j.qposadr[0]),
                                            int(j.dofadr[0]), int(j.id), part)
        self._ranges = {pid: model.jnt_range[p.jnt].copy() for pid, p in self.parts.items()}
        self.present: dict[str, FixturePlacement] = {}
        self._lit: dict[str, bool] = {}
        self._toggled: dict[str, bool] = {}  # light id -> toggled by its button an odd time
        self._button_down: dict[str, bool] = {}
        self._pose_vec = np.zeros(0)
        self._pin_q = np.zeros(0, dtype=int)
        self._pin_v = np.zeros(0, dtype=int)

    # ------------------------------------------------------------------ placing
    def place(self, data: mujoco.MjData, placements: Iterable[FixturePlacement],
              states: Mapping[str, float]) -> None:
        """Put ``placements`` on the table, park every other fixture, set initial states."""
        self.present = {}
        for p in placements:
            if p.fid not in fx.INSTANCE_BY_ID:
                raise SimError(f"unknown fixture {p.fid!r}; known: "
                               f"{', '.join(fx.INSTANCE_BY_ID)}")
            self.present[p.fid] = p
        q_idx: list[int] = []
        v_idx: list[int] = []
        vals: list[float] = []
        for inst in fx.INSTANCES:
            p = self.present.get(inst.fid)
            pose = (np.array([p.x, p.y, 0.0, *_quat_yaw(p.yaw)]) if p is not None
                    else self._parked[inst.fid])
            a, v = self._pin_qadr[inst.fid], self._pin_dof[inst.fid]
            q_idx += range(a, a + 7)
            v_idx += range(v, v + 6)
            vals += pose.tolist()
        for inst in fx.INSTANCES:  # parked fixtures sleep (see SimWorld), present ones never
            tree = int(self.model.body_treeid[self.model.body(inst.fid).id])
            here = inst.fid in self.present
            self.model.tree_sleep_policy[tree] = int(
                SLEEP_NEVER if here else SLEEP_ALLOWED)
            if here:
                data.tree_asleep[tree] = -1
        self._pin_q = np.array(q_idx)
        self._pin_v = np.array(v_idx)
        self._pose_vec = np.array(vals)
        for pid, part in self.parts.items():
            self.model.jnt_range[part.jnt] = self._ranges[pid]
            if part.kind not in _LIT_KINDS:
                rest = -part.spec.travel if part.kind == "switch" and part.spec else 0.0
                data.qpos[part.qadr] = float(states.get(pid, rest))
                data.qvel[part.dof] = 0.0
        self._lit = {pid: bool(states.get(pid, 0.0) >= 0.5) for pid, part in self.parts.items()
                     if part.kind in _LIT_KINDS}
        self._toggled = {pid: False for pid in self._lit}
        self._button_down = {pid: False for pid, p in self.parts.items() if p.kind == "button"}
        self.pin(data)
        self.poll(data)

    def pin(self, data: mujoco.MjData) -> None:
        """Hold every fixture at its pose (after each physics step)."""
        data.qpos[self._pin_q] = self._pose_vec
        data.qvel[self._pin_v] = 0.0

    # ------------------------------------------------------------------ logic
    def poll(self, data: mujoco.MjData) -> None:
        """Controls -> lights: a press of a button toggles what it controls, a switch sets it
        (the lamp is lit when the switch is on XOR the button was pressed an odd number of
        times), a knob turned past ``KNOB_ON`` lights its burner. The glowing geoms follow."""
        switch_on: dict[str, bool] = {}
        for pid, part in self.parts.items():
            if part.fixture not in self.present or part.spec is None:
                continue
            q = float(data.qpos[part.qadr])
            if part.kind == "button":
                down = q >= BUTTON_PRESSED * part.spec.travel
                if down and not self._button_down[pid]:
                    for c in part.spec.controls:
                        lid = fx.INSTANCE_BY_ID[part.fixture].part_id(c)
                        self._toggled[lid] = not self._toggled.get(lid, False)
                self._button_down[pid] = down
            elif part.kind == "switch":
                data.qfrc_applied[part.dof] = SWITCH_DETENT * (1.0 if q >= 0.0 else -1.0)
                for c in part.spec.controls:
                    switch_on[fx.INSTANCE_BY_ID[part.fixture].part_id(c)] = q > 0.0
            elif part.kind == "knob":
                for c in part.spec.controls:
                    switch_on[fx.INSTANCE_BY_ID[part.fixture].part_id(c)] = q >= fx.KNOB_ON
        for lid in self._lit:
            if self.parts[lid].fixture not in self.present:
                continue
            if lid in switch_on:
                self._lit[lid] = switch_on[lid] != self._toggled.get(lid, False)
            elif self._toggled.get(lid):
                self._lit[lid] = not self._lit[lid]
                self._toggled[lid] = False
            part = self.parts[lid]
            data.qpos[part.qadr] = 0.0 if self._lit[lid] else -fx.LIT_DROP
            data.qvel[part.dof] = 0.0

    # ------------------------------------------------------------------ reading
    def states(self, data: mujoco.MjData) -> dict[str, float]:
        """Every present part's state (see ``tasks.OracleView.fixtures``)."""
        out = {}
        for pid, part in self.parts.items():
            if part.fixture not in self.present:
                continue
            if part.kind in _LIT_KINDS:
                out[pid] = 1.0 if self._lit.get(pid) else 0.0
            else:
                out[pid] = float(data.qpos[part.qadr])
        return out

    def is_lit(self, part_id: str) -> bool:
        return bool(self._lit.get(part_id))

    def set_state(self, data: mujoco.MjData, part_id: str, value: float) -> None:
        """Move a part to ``value`` (an anomaly or a test): a lit part switches directly."""
        part = self.parts.get(part_id)
        if part is None:
            raise SimError(f"no fixture part {part_id!r}; known: {', '.join(self.parts)}")
        if part.kind in _LIT_KINDS:
            self._lit[part_id] = value >= 0.5
            self._toggled[part_id] = False
            data.qpos[part.qadr] = 0.0 if self._lit[part_id] else -fx.LIT_DROP
        else:
            data.qpos[part.qadr] = float(value)
        data.qvel[part.dof] = 0.0

    def stick(self, part_id: str, value: float) -> None:
        """Freeze a part's joint where it is (a stuck drawer); ``release`` frees it."""
        part = self.parts[part_id]
        self.model.jnt_range[part.jnt] = (value, value + 1e-4)

    def release(self, part_id: str) -> None:
        part = self.parts[part_id]
        self.model.jnt_range[part.jnt] = self._ranges[part_id]

    def placement(self, fid: str) -> FixturePlacement | None:
        return self.present.get(fid)
