"""The labelled tier-2 evaluation set: anomaly situations built from the sim's tasks.

Each situation pairs a sim task instance (family + seed -> instruction and object ids, from
``frankenbot.sim.tasks``) and one of the sim's injectable anomalies (at the phase it is injected)
with what the brain observes at the failing node, and the repair a careful engineer judged
correct for it. The correct answers were written per injection from what the injection does to
the world (a block placed on the stacking target stays there, so waiting does not help; a stuck
drawer frees itself, so waiting does), NOT derived from ``repair_rules``; where the rule table
disagrees, the rule baseline scores that situation wrong.

``python -m frankenbot.eval.situations OUT.json`` regenerates the fixture file.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from frankenbot.anomaly.candidates import Call, Situation
from frankenbot.anomaly.monitors import class_of
from frankenbot.common import AnomalyClass, AnomalyKind
from frankenbot.errors import ConfigError


@dataclass(frozen=True)
class LabelledSituation:
    sid: str
    situation: Situation
    correct: tuple[str, ...]  # acceptable candidate keys
    source: Mapping[str, object]


def situation_to_json(s: Situation) -> dict[str, object]:
    return {
        "kind": s.kind.value, "anomaly_class": s.anomaly_class.value, "detail": s.detail,
        "task": s.task, "node_path": s.node_path,
        "failed_call": None if s.failed_call is None else
        {"name": s.failed_call.name, "args": dict(s.failed_call.args)},
        "labels": list(s.labels), "held_object": s.held_object, "visible": list(s.visible),
        "objects": list(s.objects), "tried": list(s.tried),
    }


def situation_from_json(d: Mapping[str, object]) -> Situation:
    try:
        fc = d.get("failed_call")
        call = None
        if isinstance(fc, Mapping):
            call = Call(str(fc["name"]), dict(fc.get("args", {})))
        return Situation(
            kind=AnomalyKind(d["kind"]), anomaly_class=AnomalyClass(d["anomaly_class"]),
            detail=str(d.get("detail", "")), task=str(d.get("task", "")), failed_call=call,
            node_path=str(d.get("node_path", "")),
            labels=tuple(d.get("labels", ())),  # type: ignore[arg-type]
            held_object=d.get("held_object") or None,  # type: ignore[arg-type]
            visible=tuple(d.get("visible", ())),  # type: ignore[arg-type]
            objects=tuple(d.get("objects", ())),  # type: ignore[arg-type]
            tried=tuple(d.get("tried", ())),  # type: ignore[arg-type]
        )
    except (KeyError, ValueError, TypeError) as e:
        raise ConfigError(f"bad situation record {dict(d)!r}: {e}") from e


def load_situations(path: str | Path) -> list[LabelledSituation]:
    """Read a situation set written by ``main``; errors name the bad record."""
    data = json.loads(Path(path).read_text())
    out = []
    for rec in data["situations"]:
        correct = tuple(rec["correct"])
        if not correct:
            raise ConfigError(f"situation {rec.get('id')!r} has no correct repair")
        out.append(LabelledSituation(str(rec["id"]), situation_from_json(rec["situation"]),
                                     correct, dict(rec.get("source", {}))))
    return out


# ----------------------------------------------------------------------- building the set


def _scene(family: str, seed: int) -> tuple[str, Mapping[str, object], tuple[str, ...]] | None:
    from frankenbot.errors import SimError
    from frankenbot.sim.tasks import sample_task

    try:
        sc = sample_task(family, seed)
    except SimError:
        return None
    return sc.task.instruction, dict(sc.task.params), tuple(p.name for p in sc.placements)


def _sit(kind: AnomalyKind, detail: str, task: str, call: Call, node: str, visible: Sequence[str],
         *, labels: Sequence[str] = ("start",), held: str | None = None,
         objects: Sequence[str] = (), tried: Sequence[str] = ()) -> Situation:
    return Situation(kind, class_of(kind), detail, task, call, node, tuple(labels), held,
                     tuple(visible), tuple(objects), tuple(tried))


def _cases(family: str, seed: int) -> Iterator[tuple[str, str, Situation, tuple[str, ...]]]:
    """(injection, phase, situation, correct keys) for one sim task instance."""
    got = _scene(family, seed)
    if got is None:
        return
    text, p, names = got
    if family in ("put_in_bowl", "put_on_plate", "stack"):
        obj, tgt = str(p["object"]), str(p["target"])
        if family == "stack":
            place = Call("place_on", {"obj": obj, "target": tgt})
        else:
            place = Call("place_in", {"obj": obj, "container": tgt})
        pick = Call("pick", {"obj": obj})
        rest = [n for n in names if n not in (obj, tgt)]
        other = rest[0] if rest else "blue_block"
        pk = f"insert:pick(obj={obj})"
        yield ("drop_in_transport", "transport",
               _sit(AnomalyKind.GRASP_LOST, f"fingers closed on nothing while holding {obj}",
                    text, place, "main/2", names), (pk,))
        yield ("drop_in_transport", "transport",
               _sit(AnomalyKind.GRASP_LOST, f"{obj} fell again while carrying it", text, place,
                    "main/2", names, tried=(pk,)), (f"insert:detect(obj={obj})", "goto:start"))
        yield ("nudge_before_grasp", "grasp",
               _sit(AnomalyKind.GRASP_FAILED, f"gripper closed on nothing picking {obj}", text,
                    pick, "main/1", names), (f"insert:detect(obj={obj})",))
        yield ("displace_before_pick", "approach",
               _sit(AnomalyKind.OBJECT_MOVED, f"{obj} moved 0.072 m during pick", text, pick,
                    "main/1", names, objects=(obj,)), (f"insert:detect(obj={obj})",))
        yield ("abort_trajectory", "transport",
               _sit(AnomalyKind.MOTION_ABORTED, "controller aborted the trajectory", text, place,
                    "main/2", names, held=obj), (f"retry:{place.text()}",))
        yield ("remove_object", "approach",
               _sit(AnomalyKind.OBJECT_MISSING, f"{obj} is no longer visible during pick", text,
                    pick, "main/1", [n for n in names if n != obj]), ("replan", "abort"))
        if family == "stack" or tgt.endswith("plate"):
            yield ("occupy_target", "transport",
                   _sit(AnomalyKind.TARGET_OCCUPIED, f"{other} sits on {tgt}", text, place,
                        "main/2", names, held=obj, objects=(tgt, other)), ("replan",))
        if family == "put_in_bowl":
            yield ("move_container_away", "transport",
                   _sit(AnomalyKind.MOTION_REJECTED, f"{tgt} out of reach: no IK solution", text,
                        place, "main/2", names, held=obj), ("replan",))
            yield ("move_container_away", "transport",
                   _sit(AnomalyKind.OBJECT_MOVED, f"{tgt} moved 0.350 m during place_in", text,
                        place, "main/2", names, held=obj, objects=(tgt,),
                        tried=(f"insert:detect(obj={tgt})",)), ("replan",))
        yield ("camera_freeze", "approach",
               _sit(AnomalyKind.SCENE_STALE, "scene stale (no camera frame for 3 s)", text, pick,
                    "main/1", names), ("insert:wait(seconds=1)",))
        yield ("camera_freeze", "approach",
               _sit(AnomalyKind.SCENE_STALE, "scene still stale after waiting", text, pick,
                    "main/1", names, tried=("insert:wait(seconds=1)",)), ("abort",))
    elif family == "tower":
        order = [str(x) for x in p["order"]]
        base, mid, top = order
        place = Call("place_on", {"obj": top, "target": mid})
        yield ("topple_stack", "transport",
               _sit(AnomalyKind.PLACE_FAILED, f"{top} did not end up on {mid}: the tower fell",
                    text, place, "main/5", names, objects=(mid,)), ("goto:start",))
        yield ("topple_stack", "transport",
               _sit(AnomalyKind.PLACE_FAILED, f"{mid} fell off {base}", text, place, "main/5",
                    names, labels=(), objects=(mid,)), ("replan",))
        yield ("occupy_target", "transport",
               _sit(AnomalyKind.TARGET_OCCUPIED, f"a block sits on {mid}", text, place, "main/5",
                    names, held=top, objects=(mid,)), ("replan",))
        yield ("abort_trajectory", "transport",
               _sit(AnomalyKind.MOTION_ABORTED, "controller aborted the trajectory", text, place,
                    "main/5", names, held=top), (f"retry:{place.text()}",))
    elif family in ("open_drawer", "put_in_drawer"):
        drawer = "drawer"
        opener = Call("open_drawer", {"drawer": drawer})
        for kind, detail in ((AnomalyKind.FIXTURE_STUCK, "drawer did not move"),
                             (AnomalyKind.STALL, "arm commanded to move but still for 2.1 s"),
                             (AnomalyKind.MOTION_ABORTED, "pull aborted: force limit")):
            yield ("drawer_stuck", "pull",
                   _sit(kind, detail, text, opener, "main/0", names, labels=()),
                   ("insert:wait(seconds=1)",))
        yield ("drawer_stuck", "pull",
               _sit(AnomalyKind.FIXTURE_STUCK, "drawer still stuck after waiting", text, opener,
                    "main/0", names, labels=(), tried=("insert:wait(seconds=1)",)),
               (f"retry:{opener.text()}",))
    elif family == "push_to_zone":
        obj = str(p.get("object", "red_block"))
        push = Call("push_to", {"obj": obj, "target": str(p.get("target", "zone"))})
        yield ("displace_before_pick", "approach",
               _sit(AnomalyKind.OBJECT_MOVED, f"{obj} moved 0.051 m during push_to", text, push,
                    "main/0", names, labels=(), objects=(obj,)), (f"insert:detect(obj={obj})",))
        yield ("remove_object", "approach",
               _sit(AnomalyKind.OBJECT_MISSING, f"{obj} is no longer visible", text, push,
                    "main/0", [n for n in names if n != obj], labels=()), ("replan", "abort"))


FAMILIES = ("put_in_bowl", "put_on_plate", "stack", "tower", "open_drawer", "push_to_zone")


def build_set(per_family: int = 2, max_seed: int = 20) -> list[dict[str, object]]:
    """Situations from the first ``per_family`` seeds whose scene the sim can sample."""
    out: list[dict[str, object]] = []
    for family in FAMILIES:
        used = 0
        for seed in range(1, max_seed + 1):
            if used >= per_family:
                break
            cases = list(_cases(family, seed))
            used += bool(cases)
            for i, (inj, phase, s, correct) in enumerate(cases):
                out.append({
                    "id": f"{family}-{seed}-{i}",
                    "source": {"family": family, "seed": seed, "injection": inj, "phase": phase},
                    "situation": situation_to_json(s), "correct": list(correct)})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m frankenbot.eval.situations OUT.json", file=sys.stderr)
        return 2
    recs = build_set()
    Path(args[0]).write_text(json.dumps({"version": 1, "situations": recs}, indent=1) + "\n")
    print(f"wrote {len(recs)} situations to {args[0]}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
