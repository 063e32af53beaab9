"""Safety review of a validated program: simulate its geometric effects on the perceived scene,
then approve it, edit it, or refuse it with a reason (and optionally ask a VLM to argue safety).

The validator checks syntax, catalog and envelope; it cannot see that carrying a block from here
to there passes a tower at gripper height, that a release happens 30 cm above a bowl, or that
the target lies in a zone people marked off. This pass walks main's calls in source order (both
branches of an ``if``, loops once, the program's skills inlined where they are called) over a
copy of the perceived scene and checks:

* swept volume of each carry: the held object's footprint along the straight line from where it
  was picked to where it is placed, at the height the primitives carry it (their approach
  height above the pick), against every other object's footprint and top. Edit: carry high
  (``lift`` after the pick, ``move_above`` the container or support at that height before the
  place);
  refuse when that would exceed ``max_carry_height``;
* drop height: ``open_gripper`` while holding releases from the height of the last
  ``move_above`` (or the lift after the pick). Above ``max_drop``: edit into a ``place_in`` /
  ``place_on`` of what it hovers over, else refuse;
* zones from config (``config/review.yaml``): no target in a forbidden or fragile zone (an
  edit picks a free spot outside for ``place_at`` and ``place_near``; otherwise refuse), and no
  carry across a zone lower than its ``clearance`` (edit: carry high);
* stack stability: a stack taller than ``max_stack_height`` or on a base narrower than the
  object is refused; pushes along a path through other objects are refused.

Modes (``review: auto|always|never``, the planner node's parameter; default auto): auto
reviews programs that carry, stack or push within ``near_distance`` of other objects (or
anywhere when zones are configured); always reviews every program; never skips. With a VLM
client, ``second_opinion`` asks it to argue the safety side (one counted VLM call); the
arbitration rule: the geometric pass's refusal stands; a VLM objection refuses only when it
names an object or zone of the scene (a grounded, checkable hazard), else it is recorded and
the geometric verdict stands.

Pure: no robot, no sim; the same inputs give the same verdict.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from frankenbot import resources, settings, shapes, spatial
from frankenbot.errors import ConfigError
from frankenbot.primitives.config import PrimitiveConfig
from frankenbot.program.printer import print_program
from frankenbot.program.tree import (
    Arg,
    Call,
    Ident,
    Program,
    SkillInliner,
    Stmt,
    Transformer,
    iter_calls,
)
from frankenbot.settings import setting
from frankenbot.state import Scene, SceneObject

REVIEW_MODES = ("auto", "always", "never")
DEFAULT_REVIEW_MODE = "auto"  # the planner node's ``review`` parameter, the benchmarks' brain
_PRIMITIVES = PrimitiveConfig()  # the heights the primitives carry, grasp and release at
APPROACH_HEIGHT = _PRIMITIVES.approach_height
GRASP_DEPTH = _PRIMITIVES.grasp_depth
PLACE_CLEARANCE = _PRIMITIVES.place_clearance
CONTAINER_FLOOR = _PRIMITIVES.container_floor
CARRY_SHAPES_FLAT = ("plate", "zone")
PALM_RADIUS = 0.055  # m: the gripper body (2F-85 palm half length) sweeps at least this wide


@dataclass(frozen=True)
class Zone:
    """A rectangle on the table (base x/y, m). forbidden: nothing goes there and nothing is
    carried across it lower than ``clearance``; fragile: the same, with its own clearance."""

    name: str
    kind: str  # forbidden | fragile
    x: tuple[float, float]
    y: tuple[float, float]
    clearance: float = 0.15  # m the carried object's bottom keeps above the zone

    def __post_init__(self) -> None:
        if self.kind not in ("forbidden", "fragile"):
            raise ConfigError(f"zone {self.name!r}: kind must be forbidden or fragile, "
                              f"got {self.kind!r}")
        if not (self.x[0] < self.x[1] and self.y[0] < self.y[1]):
            raise ConfigError(f"zone {self.name!r}: x and y must be [low, high] ranges")

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return (self.x[0] - margin <= x <= self.x[1] + margin
                and self.y[0] - margin <= y <= self.y[1] + margin)

    def crosses(self, a: tuple[float, float], b: tuple[float, float], margin: float) -> bool:
        """The segment a-b passes within ``margin`` of the rectangle (sampled every 1 cm)."""
        n = max(2, int(math.hypot(b[0] - a[0], b[1] - a[1]) / 0.01))
        return any(self.contains(a[0] + (b[0] - a[0]) * i / n, a[1] + (b[1] - a[1]) * i / n,
                                 margin) for i in range(n + 1))


@dataclass(frozen=True)
class ReviewConfig:
    """Thresholds and zones of the review (``config/review.yaml``). Whether and when to review
    (the mode) is the caller's: the planner node's ``review`` parameter, ``frankenbot plan
    --review``, the benchmarks' ``BrainOptions.review``."""

    max_drop: float = setting(0.05, "free fall allowed when the gripper opens while holding",
                              unit="m", low=0.0)
    clearance: float = setting(0.03, "gap a carried object keeps from anything it passes",
                               unit="m", low=0.0)
    near_distance: float = setting(0.15, "auto mode reviews carries passing this close to other "
                                   "objects", unit="m", low=0.0)
    max_carry_height: float = setting(0.45, "TCP height above the table a 'carry high' edit may "
                                      "ask for (the lift's range)", unit="m", low=0.0)
    max_stack_height: float = setting(0.13, "top of a stack (three 4 cm blocks: 0.12)",
                                      unit="m", low=0.0)
    zones: tuple[Zone, ...] = ()

    def __post_init__(self) -> None:
        settings.validate(self, "review")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "ReviewConfig":
        """The ``review:`` section of review.yaml: the settings plus the zones (a list)."""
        data = data.get("review", data) if isinstance(data, Mapping) else {}
        if not isinstance(data, Mapping):
            raise ConfigError("the review section must be a mapping")
        if "mode" in data:
            raise ConfigError("review mode is not a review.yaml setting: set the planner node's "
                              "`review` parameter (or `frankenbot plan --review MODE`)")
        zones = []
        for z in data.get("zones", []) or []:
            try:
                zones.append(Zone(str(z["name"]), str(z["kind"]),
                                  (float(z["x"][0]), float(z["x"][1])),
                                  (float(z["y"][0]), float(z["y"][1])),
                                  float(z.get("clearance", 0.15))))
            except (KeyError, TypeError, IndexError, ValueError) as e:
                raise ConfigError(f"review zone {z!r}: needs name, kind, x [lo, hi], "
                                  f"y [lo, hi] ({e})") from e
        values = {k: v for k, v in data.items() if k != "zones"}
        return settings.build(cls, values, where="review", zones=tuple(zones))


def load_review_config(path: str | Path | None = None) -> ReviewConfig:
    """``config/review.yaml`` (or ``path``); defaults when the shipped file is absent."""
    p = Path(path) if path is not None else resources.config_dir() / "review.yaml"
    if not p.is_file():
        if path is not None:
            raise ConfigError(f"review config not found: {p}")
        return ReviewConfig()
    data = yaml.safe_load(p.read_text()) or {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"review config {p} must be a mapping")
    return ReviewConfig.from_mapping(data)


@dataclass(frozen=True)
class Finding:
    code: str  # carry_sweep | drop_height | zone_target | zone_carry | stack | push_path | note
    message: str
    action: str  # edit | refuse | note


@dataclass(frozen=True)
class ReviewVerdict:
    decision: str  # approve | edit | refuse | skipped
    program_text: str  # the program to run (edited when decision is edit)
    findings: tuple[Finding, ...] = ()
    reviewed: bool = True
    second_opinion: str = ""  # the VLM's argument, when asked
    vlm_calls: int = 0

    @property
    def approved(self) -> bool:
        return self.decision in ("approve", "edit", "skipped")

    def explain(self) -> str:
        lines = [f"review: {self.decision}"]
        lines += [f"  [{f.action}] {f.code}: {f.message}" for f in self.findings]
        if self.second_opinion:
            lines.append(f"  second opinion: {self.second_opinion}")
        return "\n".join(lines)


# ------------------------------------------------------------------------ simulation
@dataclass
class _Sim:
    objects: dict[str, SceneObject]
    held: str | None = None
    carry_from: tuple[float, float] | None = None
    carry_tcp: float = 0.0  # TCP height while carrying (before any lift)
    grasp_offset: float = 0.0
    hover: tuple[float, float, float, str] | None = None  # TCP x, y, z and over what
    pick_call: Call | None = None
    findings: list[Finding] = field(default_factory=list)
    # edits: id(call) -> statements that replace it
    edits: dict[int, tuple[Stmt, ...]] = field(default_factory=dict)
    near_others: bool = False  # auto mode's trigger

    def add(self, code: str, message: str, action: str) -> None:
        self.findings.append(Finding(code, message, action))


def _arg(call: Call, name: str) -> Any:
    for a in call.args:
        if a.name == name:
            return a.value.name if isinstance(a.value, Ident) else a.value
    return None


def _num(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".")


def _call(name: str, **args: Any) -> Call:
    return Call(name, tuple(Arg(k, Ident(v) if isinstance(v, str) else float(v))
                            for k, v in args.items()))


class SafetyReview:
    """The geometric pass plus the optional second opinion and arbitration."""

    def __init__(self, config: ReviewConfig | None = None,
                 second_opinion: Callable[[str], tuple[str, int]] | None = None) -> None:
        self.config = config or ReviewConfig()
        self.second_opinion = second_opinion  # prompt -> (answer text, VLM calls)

    def review(self, program: Program, scene: Scene, mode: str = DEFAULT_REVIEW_MODE
               ) -> ReviewVerdict:
        if mode not in REVIEW_MODES:
            raise ConfigError(f"review mode must be one of {', '.join(REVIEW_MODES)}")
        text = print_program(program)
        if mode == "never":
            return ReviewVerdict("skipped", text, reviewed=False)
        # what skill calls will do counts as much as what main spells out
        expanded = SkillInliner({sk.name: sk for sk in program.skills}).program(program)
        sim = _Sim({o.object_id: o for o in scene.objects})
        for call in iter_calls(expanded.main.body):
            self._step(sim, call)
        if mode == "auto" and not (sim.near_others or sim.findings or self.config.zones):
            return ReviewVerdict("skipped", text, (Finding(
                "note", "auto: nothing is carried, stacked or pushed near other objects",
                "note"),), reviewed=False)
        refusals = [f for f in sim.findings if f.action == "refuse"]
        if refusals:
            decision, out = "refuse", text
        elif sim.edits:
            decision, out = "edit", print_program(_Edits(sim.edits).program(expanded))
        else:
            decision, out = "approve", text
        verdict = ReviewVerdict(decision, out, tuple(sim.findings))
        if self.second_opinion is not None and decision != "refuse":
            verdict = self._arbitrate(verdict, scene)
        return verdict

    # ------------------------------------------------------------------ one call
    def _step(self, sim: _Sim, call: Call) -> None:
        name = call.name
        if name == "pick":
            obj = sim.objects.get(str(_arg(call, "obj")))
            if obj is None:
                return
            sim.held = obj.object_id
            sim.carry_from = (obj.position[0], obj.position[1])
            h = obj.size[2]
            sim.grasp_offset = h - min(GRASP_DEPTH, h / 2)
            sim.carry_tcp = obj.top_z + APPROACH_HEIGHT
            sim.hover = (obj.position[0], obj.position[1], sim.carry_tcp, "its pick spot")
            sim.pick_call = call
        elif name == "lift":
            h = _arg(call, "height")
            if sim.hover is not None and isinstance(h, (int, float)):
                sim.hover = (sim.hover[0], sim.hover[1], max(sim.hover[2], float(h)),
                             sim.hover[3])
                sim.carry_tcp = max(sim.carry_tcp, float(h))
        elif name == "move_above":
            o = sim.objects.get(str(_arg(call, "obj")))
            h = _arg(call, "height")
            if o is not None:
                h = float(h) if isinstance(h, (int, float)) else 0.10
                sim.hover = (o.position[0], o.position[1], o.top_z + h, o.object_id)
        elif name == "open_gripper":
            self._drop(sim, call)
        elif name == "push_to" or name.startswith("push_") and name[5:] in spatial.DIRECTIONS:
            self._push(sim, call)
        elif sim.held is not None and name.startswith("place"):
            self._place(sim, call)
        elif name in ("place_at_pixel", "push_to_pixel", "move_above_pixel"):
            sim.add("note", f"{name}: the pixel is resolved at run time; the primitive itself "
                    "refuses pixels off the table, on objects or out of reach", "note")

    def _target(self, sim: _Sim, call: Call, held: SceneObject
                ) -> tuple[float, float, float, str] | None:
        """(x, y, support z, what) where ``call`` puts the held object, as the primitive
        would choose it."""
        name = call.name
        others = [o for o in sim.objects.values() if o.object_id != held.object_id]
        if name in ("place_in", "place_on"):
            t = sim.objects.get(str(_arg(call, "container" if name == "place_in" else "target")))
            if t is None:
                return None
            if name == "place_in" and t.shape == "drawer":
                # into the drawer's box where it stands pulled out (its front faces its local
                # -x), at least half its depth: the place needs it open
                out = max(float(t.opening or 0.0), 0.5 * t.size[0])
                return (t.position[0] - math.cos(t.yaw) * out,
                        t.position[1] - math.sin(t.yaw) * out,
                        t.position[2] - t.size[2] / 2 + CONTAINER_FLOOR, t.object_id)
            if name == "place_in" and t.shape not in CARRY_SHAPES_FLAT:
                return (t.position[0], t.position[1],
                        t.position[2] - t.size[2] / 2 + CONTAINER_FLOOR, t.object_id)
            return t.position[0], t.position[1], t.top_z, t.object_id
        if name == "place_at":
            x, y = _arg(call, "x"), _arg(call, "y")
            if isinstance(x, (int, float)) and isinstance(y, (int, float)):
                return float(x), float(y), 0.0, f"({_num(x)}, {_num(y)})"
            return None
        try:
            if name in ("place_left_of", "place_right_of", "place_behind",
                        "place_in_front_of", "place_near"):
                ref = sim.objects.get(str(_arg(call, "ref")))
                if ref is None:
                    return None
                if name == "place_near":
                    spot = spatial.free_spot_near(ref, held.size, others)
                else:
                    gap = _arg(call, "gap")
                    spot = spatial.spot_beside(name[len("place_"):], ref, held.size, others,
                                               gap=float(gap) if gap else spatial.DEFAULT_GAP,
                                               rolls=held.shape in shapes.ROLLING)
                return spot.x, spot.y, 0.0, spot.detail
            if name == "place_between":
                a, b = sim.objects.get(str(_arg(call, "a"))), sim.objects.get(str(_arg(call, "b")))
                if a is None or b is None:
                    return None
                spot = spatial.spot_between(a, b, held.size, others)
                return spot.x, spot.y, 0.0, spot.detail
        except spatial.NoFreeSpot:
            return None  # the primitive will refuse at run time, nothing moves
        return None

    def _place(self, sim: _Sim, call: Call) -> None:
        cfg = self.config
        held = sim.objects[sim.held] if sim.held in sim.objects else None
        target = self._target(sim, call, held) if held is not None else None
        if held is None or target is None or sim.carry_from is None:
            return
        x, y, support, what = target
        # zones at the target
        for z in cfg.zones:
            if z.contains(x, y, spatial.footprint_radius(held.size)):
                fix = self._spot_outside(sim, call, held, (x, y))
                if fix is not None:
                    sim.edits[id(call)] = (fix,)
                    sim.add("zone_target", f"{call.name} would put {held.object_id} at "
                            f"{what} inside the {z.kind} zone {z.name}; moved to "
                            f"({_num(_arg(fix, 'x'))}, {_num(_arg(fix, 'y'))}) m", "edit")
                    x, y = float(_arg(fix, "x")), float(_arg(fix, "y"))
                else:
                    sim.add("zone_target", f"{call.name} puts {held.object_id} at {what}, "
                            f"inside the {z.kind} zone {z.name}", "refuse")
                    return
        if call.name == "place_on":
            self._stack(sim, held, str(_arg(call, "target")))
        # the carry's swept volume
        end_tcp = max(support + PLACE_CLEARANCE + sim.grasp_offset, support) + APPROACH_HEIGHT
        carry_tcp = min(sim.carry_tcp, end_tcp) if sim.carry_tcp > 0 else end_tcp
        exclude = {str(_arg(call, k)) for k in ("container", "target")}
        into = sim.objects.get(str(_arg(call, "container")))
        if into is not None and into.shape == "drawer":
            # the furniture around the drawer: the place comes down in front of it, into the
            # pulled-out box (the primitive's own approach), not over it
            closed = (into.position[0], into.position[1])
            exclude |= {o.object_id for o in sim.objects.values()
                        if o.is_fixture and spatial.footprint_gap(o, closed, closed) == 0.0}
        need = self._sweep(sim, held, (x, y), carry_tcp, exclude=exclude)
        if need is not None:
            if need > cfg.max_carry_height:
                sim.add("carry_sweep", f"carrying {held.object_id} would need the gripper "
                        f"{need:.2f} m up (limit {cfg.max_carry_height:.2f}) to clear the way",
                        "refuse")
            elif sim.pick_call is not None:
                lift = _call("lift", height=round(need, 3))
                sim.edits[id(sim.pick_call)] = (sim.pick_call, lift)
                over = self._hover_target(sim, call, need)
                if over is not None:
                    sim.edits[id(call)] = (over, *sim.edits.get(id(call), (call,)))
                sim.add("carry_sweep", f"carry {held.object_id} high: lift to {need:.2f} m "
                        f"after the pick", "edit")
        # the object now rests at the target
        sim.objects[held.object_id] = replace(
            held, position=(x, y, support + held.size[2] / 2))
        sim.held, sim.carry_from, sim.hover, sim.pick_call = None, None, None, None

    def _hover_target(self, sim: _Sim, call: Call, tcp: float) -> Call | None:
        # only what the object goes into or onto: beside a reference (left of the carton,
        # between two mugs) the place's own pre-place pose rises over what stands near its
        # spot, and hovering over the reference took the held mug through a 15 cm carton
        for key in ("container", "target"):
            o = sim.objects.get(str(_arg(call, key)))
            if o is not None and o.shape == "drawer":
                # its box is partly inside the furniture: over its centre is over the housing
                # (a carry there at the sweep's height runs into it); the place comes down in
                # front of the furniture on its own approach, from the lift's height
                return None
            if o is not None:
                return _call("move_above", obj=o.object_id,
                             height=round(min(max(tcp - o.top_z, 0.02), 0.40), 3))
        return None

    def _sweep(self, sim: _Sim, held: SceneObject, end: tuple[float, float], tcp: float,
               exclude: set[str]) -> float | None:
        """The TCP height a carry needs (None: the default carry clears everything)."""
        cfg = self.config
        start = sim.carry_from
        assert start is not None
        r = max(spatial.footprint_radius(held.size), PALM_RADIUS)
        bottom = tcp - sim.grasp_offset
        need = 0.0
        for o in spatial.obstacles(sim.objects.values(), exclude={held.object_id, *exclude}):
            gap = spatial.footprint_gap(o, start, end)
            if gap < r + cfg.near_distance:
                sim.near_others = True
            if gap < r + cfg.clearance and o.top_z + cfg.clearance > bottom:
                need = max(need, o.top_z + cfg.clearance + sim.grasp_offset)
        for z in cfg.zones:
            if z.crosses(start, end, spatial.footprint_radius(held.size)) and (
                    bottom < z.clearance):
                sim.near_others = True
                need = max(need, z.clearance + sim.grasp_offset)
                sim.add("zone_carry", f"the carry of {held.object_id} crosses the {z.kind} "
                        f"zone {z.name} lower than {z.clearance:.2f} m", "note")
        return need + 0.02 if need > 0.0 else None

    def _spot_outside(self, sim: _Sim, call: Call, held: SceneObject,
                      at: tuple[float, float]) -> Call | None:
        """For place_at / place_near: a free spot near the intended one outside every zone."""
        if call.name not in ("place_at", "place_near"):
            return None
        r = spatial.footprint_radius(held.size)
        others = spatial.obstacles(sim.objects.values(), exclude={held.object_id})
        region = spatial.Region()
        for dist in (0.06, 0.09, 0.12, 0.15, 0.2, 0.25):
            for k in range(16):
                a = 2 * math.pi * k / 16
                x, y = at[0] + dist * math.cos(a), at[1] + dist * math.sin(a)
                if any(z.contains(x, y, r) for z in self.config.zones):
                    continue
                if spatial.is_free(x, y, r, others, region):
                    return _call("place_at", obj=held.object_id, x=round(x, 3), y=round(y, 3))
        return None

    def _stack(self, sim: _Sim, held: SceneObject, base_id: str) -> None:
        base = sim.objects.get(base_id)
        if base is None:
            return
        if base.is_fixture:  # a piece of furniture's top is a surface to stand things on,
            sim.near_others = True  # not a stack (the carry up to it is still judged)
            return
        top = base.top_z + held.size[2]
        if top > self.config.max_stack_height:
            sim.add("stack", f"stacking {held.object_id} on {base_id} makes a stack "
                    f"{top:.2f} m tall (limit {self.config.max_stack_height:.2f} m)", "refuse")
        elif min(base.size[0], base.size[1]) < 0.7 * min(held.size[0], held.size[1]):
            sim.add("stack", f"{base_id} is too narrow to carry {held.object_id}", "refuse")
        sim.near_others = True

    def _drop(self, sim: _Sim, call: Call) -> None:
        if sim.held is None or sim.hover is None:
            return
        held = sim.objects.get(sim.held)
        if held is None:
            return
        x, y, tcp, over = sim.hover
        bottom = tcp - sim.grasp_offset
        under = [o for o in spatial.obstacles(sim.objects.values(), exclude={held.object_id})
                 if abs(o.local_xy(x, y)[0]) <= o.size[0] / 2
                 and abs(o.local_xy(x, y)[1]) <= o.size[1] / 2]
        support = max((o.position[2] - o.size[2] / 2 + CONTAINER_FLOOR
                       if o.shape in ("bowl", "bin") else o.top_z for o in under), default=0.0)
        drop = bottom - support
        sim.near_others = True
        if drop <= self.config.max_drop:
            return
        target = sim.objects.get(over) if over in sim.objects else None
        if target is not None and target.shape in ("bowl", "bin", "plate"):
            fix = _call("place_in", obj=held.object_id, container=target.object_id)
        elif target is not None and target.shape == "block":
            fix = _call("place_on", obj=held.object_id, target=target.object_id)
        else:
            sim.add("drop_height", f"open_gripper drops {held.object_id} {drop:.2f} m onto "
                    f"{over} (limit {self.config.max_drop:.2f} m)", "refuse")
            return
        sim.edits[id(call)] = (fix,)
        sim.add("drop_height", f"open_gripper would drop {held.object_id} {drop:.2f} m into "
                f"{over}; placing it instead ({fix.name})", "edit")
        sim.objects[held.object_id] = replace(held, position=(x, y, support + held.size[2] / 2))
        sim.held, sim.hover = None, None

    def _push(self, sim: _Sim, call: Call) -> None:
        """A push into the zone (``push_to``) or to a side of a reference (``push_<side>``, to
        the spot the primitive would choose): the path must not shove anything else."""
        obj = sim.objects.get(str(_arg(call, "obj")))
        target = sim.objects.get(str(_arg(call, "target" if call.name == "push_to" else "ref")))
        if obj is None or target is None:
            return
        start, end = (obj.position[0], obj.position[1]), (target.position[0], target.position[1])
        legs = [end]
        if call.name != "push_to":  # the spot and the route the primitive will choose
            others = [o for o in sim.objects.values() if o.object_id != obj.object_id]
            try:
                spot = spatial.spot_beside(call.name[len("push_"):], target, obj.size, others)
                legs = spatial.push_route(obj, (spot.x, spot.y), sim.objects.values())
            except spatial.NoFreeSpot:
                return  # the primitive refuses it at run time, and nothing moves
            end = legs[-1]
        r = spatial.footprint_radius(obj.size, obj.shape)
        for o in spatial.obstacles(sim.objects.values(),
                                   exclude={obj.object_id, target.object_id}):
            gap = min(spatial.footprint_gap(o, a, b)
                      for a, b in zip([start, *legs[:-1]], legs, strict=True))
            if gap < r + self.config.near_distance:
                sim.near_others = True
            if gap < r + 0.005:
                sim.add("push_path", f"pushing {obj.object_id} to {target.object_id} would "
                        f"shove {o.object_id} on the way", "refuse")
        sim.objects[obj.object_id] = replace(obj, position=(end[0], end[1], obj.position[2]))

    # ------------------------------------------------------------------ second opinion
    def _arbitrate(self, verdict: ReviewVerdict, scene: Scene) -> ReviewVerdict:
        assert self.second_opinion is not None
        prompt = second_opinion_prompt(verdict, scene, self.config)
        answer, calls = self.second_opinion(prompt)
        decision, reason = parse_second_opinion(answer)
        names = set(scene.ids()) | {z.name for z in self.config.zones}
        grounded = any(re.search(rf"\b{re.escape(n)}\b", reason) for n in names)
        note = f"{decision}: {reason}" if reason else decision
        if decision == "refuse" and grounded:
            return replace(verdict, decision="refuse", second_opinion=note, vlm_calls=calls,
                           findings=(*verdict.findings, Finding(
                               "second_opinion", f"the safety reviewer objects: {reason}",
                               "refuse")))
        if decision == "refuse":
            note += " (not grounded in a named object or zone: recorded, not decisive)"
        return replace(verdict, second_opinion=note, vlm_calls=calls)


def second_opinion_prompt(verdict: ReviewVerdict, scene: Scene, config: ReviewConfig) -> str:
    """The safety-side prompt: the program, the scene and what the geometric pass found."""
    rows = [f"{o.object_id}: at ({o.position[0]:.2f}, {o.position[1]:.2f}) m, top "
            f"{o.top_z:.2f} m, {o.shape}" for o in scene.objects]
    zones = [f"{z.name} ({z.kind}): x {z.x}, y {z.y}" for z in config.zones] or ["none"]
    found = [f"- {f.code}: {f.message} [{f.action}]" for f in verdict.findings] or ["- nothing"]
    return ("You are the safety reviewer of a robot arm program. Argue the safety side: what "
            "could this program knock over, drop, or put where it must not go? Answer with "
            'JSON only: {"verdict": "approve" or "refuse", "reason": "<one sentence naming the '
            'object or zone at risk>"}.\n\nScene (base frame):\n' + "\n".join(rows)
            + "\nZones:\n" + "\n".join(zones) + "\nGeometric review found:\n" + "\n".join(found)
            + "\n\nProgram:\n" + verdict.program_text)


def parse_second_opinion(answer: str) -> tuple[str, str]:
    """(approve | refuse, reason) from the VLM's JSON answer; anything unreadable approves
    with a note (the geometric pass already decided; a garbled reply cannot refuse)."""
    m = re.search(r"\{.*\}", answer, re.S)
    try:
        data = json.loads(m.group(0)) if m else {}
    except json.JSONDecodeError:
        data = {}
    verdict = str(data.get("verdict", "")).strip().lower()
    if verdict not in ("approve", "refuse"):
        return "approve", "unreadable second opinion"
    return verdict, str(data.get("reason", "")).strip()


class _Edits(Transformer):
    """The review's edits: each edited call (by identity) replaced by its statements."""

    def __init__(self, edits: Mapping[int, tuple[Stmt, ...]]) -> None:
        self.edits = edits

    def expand(self, s: Stmt) -> tuple[Stmt, ...]:
        return self.edits[id(s)] if id(s) in self.edits else (self.stmt(s),)


def review_text(text: str, scene: Scene, config: ReviewConfig | None = None,
                mode: str = DEFAULT_REVIEW_MODE,
                second_opinion: Callable[[str], tuple[str, int]] | None = None
                ) -> ReviewVerdict:
    """Parse ``text`` (a validated program) and review it."""
    from frankenbot.program import parse_program

    program = parse_program(text).program
    return SafetyReview(config, second_opinion).review(program, scene, mode)


def apply_review(outcome: Any, scene: Scene, review: SafetyReview,
                 mode: str = DEFAULT_REVIEW_MODE) -> tuple[Any, ReviewVerdict]:
    """A validated ``PlanOutcome`` through the review: refused -> not ok (nothing will move),
    edited -> the edited program (parsed again), else unchanged. Second-opinion calls are
    added to the outcome's VLM calls."""
    from frankenbot.program import parse_program

    if not outcome.ok:
        return outcome, ReviewVerdict("skipped", outcome.program_text, reviewed=False)
    verdict = review.review(outcome.program, scene, mode)
    calls = outcome.vlm_calls + verdict.vlm_calls
    if verdict.decision == "refuse":
        reasons = "; ".join(f.message for f in verdict.findings if f.action == "refuse")
        return replace(outcome, ok=False, vlm_calls=calls,
                       message=f"safety review refused the program: {reasons}"), verdict
    if verdict.decision == "edit":
        program = parse_program(verdict.program_text).program
        return replace(outcome, program_text=verdict.program_text, program=program,
                       vlm_calls=calls), verdict
    return replace(outcome, vlm_calls=calls), verdict


def review_port(mode: str, config: ReviewConfig | None = None,
                second_opinion: Callable[[str], tuple[str, int]] | None = None
                ) -> Callable[[Any, Scene], tuple[Any, ReviewVerdict]] | None:
    """The episode runner's review step for ``mode`` (None for never: nothing is reviewed);
    ``config`` None reads ``config/review.yaml``."""
    if mode not in REVIEW_MODES:
        raise ConfigError(f"review mode must be one of {', '.join(REVIEW_MODES)}, got {mode!r}")
    if mode == "never":
        return None
    review = SafetyReview(config or load_review_config(), second_opinion)

    def port(outcome: Any, scene: Scene) -> tuple[Any, ReviewVerdict]:
        return apply_review(outcome, scene, review, mode)

    return port


def vlm_second_opinion(client: Any) -> Callable[[str], tuple[str, int]]:
    """The second-opinion port over a ``VlmClient`` in text mode (one call per review)."""

    def ask(prompt: str) -> tuple[str, int]:
        reply = client.complete([{"role": "user", "content": prompt}])
        return reply.text, 1

    return ask
