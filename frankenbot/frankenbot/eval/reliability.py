"""Reliability: inject faults into FrankenBot and count what survives them (issue 21).

Three kinds of fault, each one function that returns ``FaultResult`` rows:

* memory crash safety, no ROS: a writer process records episodes (and promotes skills) through
  ``MemoryStore`` and is SIGKILLed at random moments; every episode whose ``record_episode``
  returned before the kill must be in the reopened store, which must pass ``integrity_check``.
  A full disk (SQLite's own SQLITE_FULL path through ``max_page_count``, and a real tiny tmpfs
  when run as root) and a read-only database must refuse the write with a clear error and
  leave the file intact.
* bad messages (``TopicFuzzer``): random field values for every topic the brain subscribes to.

The faults that need node processes (SIGKILL of each node mid-task, the memory node killed
during writes, the fuzzer publishing while a task runs) live in ``frankenbot.bringup.faults``:
starting processes is bring-up's job, and the layers keep eval below bring-up. Its
``run_benchmark`` (``frankenbot bench --component reliability``) hands them to
``run_benchmark`` here, which prints faults injected, survived and data lost. Success of a task
is always the sim oracle's verdict.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable


@dataclass
class FaultResult:
    """One injected fault and what became of it."""

    fault: str  # e.g. "sigkill perception", "memory writer sigkill", "disk full"
    survived: bool
    data_lost: int = 0  # committed episodes missing afterwards
    seconds: float = 0.0  # time from the fault to the end of its effect (task end, reopen)
    detail: str = ""

    def line(self) -> str:
        mark = "ok  " if self.survived else "FAIL"
        return (f"  {mark} {self.fault:<32} lost {self.data_lost}  {self.seconds:6.2f} s  "
                f"{self.detail}")


# ------------------------------------------------------------------------- memory: SIGKILL

WRITER_CODE = "from frankenbot.eval.reliability import writer_main; writer_main()"


def writer_program(i: int) -> str:
    """A valid program whose statement pattern repeats every second episode (so skills get
    promoted while the writer is being killed): the literal height makes a new pattern per
    pair of episodes, the object id is generalised away."""
    obj = ("red_block", "blue_block", "green_block", "yellow_block")[i % 4]
    height = 0.05 + 0.0005 * ((i // 2) % 400)
    return ('task "w" {\n  main {\n'
            f"    move_above(obj={obj}, height={height:.4f})\n"
            f"    pick(obj={obj})\n"
            f"    place_in(obj={obj}, container=green_bowl)\n"
            "    home()\n    exit success\n  }\n}\n")


def writer_config() -> Any:
    from frankenbot.memory.config import MemoryConfig

    return MemoryConfig(use_embeddings=False, load_seeds=False, min_support=2)


def writer_main(argv: list[str] | None = None) -> None:
    """``python -c WRITER_CODE DB FIRST COUNT``: record episodes FIRST.. and print
    ``committed <task_id>`` after each ``record_episode`` returned (flushed at once)."""
    from frankenbot.memory.records import EpisodeRecord
    from frankenbot.memory.store import MemoryStore

    args = sys.argv[1:] if argv is None else argv
    db, first, count = Path(args[0]), int(args[1]), int(args[2])
    with MemoryStore.open(db, writer_config()) as store:
        for i in range(first, first + count):
            task_id = f"w-{i}"
            store.record_episode(EpisodeRecord(
                instruction=f"put block {i} in the green bowl", program=writer_program(i),
                success=True, outcome="success", task_id=task_id,
                trace_json="[]", execution_time=1.0))
            sys.stdout.write(f"committed {task_id}\n")
            sys.stdout.flush()


def stored_task_ids(db: Path) -> tuple[set[str], tuple[str, ...], int]:
    """(task ids in the store, integrity problems, promoted skills) after reopening ``db``."""
    from frankenbot.memory.store import MemoryStore

    with MemoryStore.open(db, writer_config()) as store:
        problems = store.integrity_check()
        ids = {r[0] for r in store._query("SELECT task_id FROM episodes")}
        promoted = sum(1 for s in store.list_skills() if s.origin == "promoted")
    return ids, problems, promoted


def memory_kill_trials(db: Path, kills: int = 20, seed: int = 0,
                       max_delay_s: float = 1.5) -> list[FaultResult]:
    """SIGKILL a writer process ``kills`` times at random moments during its writes."""
    rng = random.Random(seed)
    committed: set[str] = set()
    results: list[FaultResult] = []
    next_i = 0
    for k in range(kills):
        proc = subprocess.Popen([sys.executable, "-c", WRITER_CODE, str(db), str(next_i),
                                 "100000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None
        lines: list[str] = []
        first = threading.Event()

        def read(out: Any = proc.stdout, sink: list[str] = lines,
                 started: threading.Event = first) -> None:
            for line in out:
                sink.append(line.strip())
                started.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        if not first.wait(60.0):
            proc.kill()
            err = proc.stderr.read() if proc.stderr else ""
            results.append(FaultResult(f"memory writer sigkill {k + 1}", False,
                                       detail=f"writer never committed: {err[-300:]}"))
            continue
        time.sleep(rng.uniform(0.0, max_delay_s))  # lands inside a write most of the time
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join(5.0)
        t0 = time.monotonic()
        got = {ln.split()[1] for ln in lines if ln.startswith("committed ")}
        committed |= got
        next_i += len(got) + 1  # the one in flight may or may not have committed
        try:
            ids, problems, promoted = stored_task_ids(db)
        except Exception as e:  # the store does not even open: everything is lost
            results.append(FaultResult(f"memory writer sigkill {k + 1}", False,
                                       len(committed), detail=f"reopen failed: {e}"))
            continue
        lost = committed - ids
        results.append(FaultResult(
            f"memory writer sigkill {k + 1}", not lost and not problems, len(lost),
            time.monotonic() - t0,
            f"{len(got)} commits this run, {len(committed)} in all, {promoted} promoted"
            + (f"; integrity: {problems[:2]}" if problems else "")))
        if proc.stderr:
            proc.stderr.close()
    return results


# --------------------------------------------------------------------- memory: disk trouble

def _write(db: Path, n: int) -> None:
    from frankenbot.memory.records import EpisodeRecord
    from frankenbot.memory.store import MemoryStore

    with MemoryStore.open(db, writer_config()) as store:
        for i in range(n):
            store.record_episode(EpisodeRecord(
                instruction=f"put block {i} in the green bowl", program=writer_program(i),
                success=True, outcome="success", task_id=f"w-{i}"))


def _big_episode(i: int) -> Any:
    from frankenbot.memory.records import EpisodeRecord

    return EpisodeRecord(instruction=f"put block {i} in the green bowl",
                         program=writer_program(i), success=True, outcome="success",
                         task_id=f"big-{i}", trace_json="[" + ", ".join(["{}"] * 20000) + "]")


def disk_full_trial(tmp: Path) -> FaultResult:
    """SQLITE_FULL through SQLite's own path: the page limit set to the file's current size."""
    from frankenbot.errors import MemoryStoreError
    from frankenbot.memory.store import MemoryStore

    db = tmp / "full.sqlite3"
    _write(db, 3)
    t0 = time.monotonic()
    with MemoryStore.open(db, writer_config()) as store:
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages}")
        try:
            store.record_episode(_big_episode(0))
            return FaultResult("disk full (max_page_count)", False,
                               detail="the write succeeded on a full database")
        except MemoryStoreError as e:
            message = str(e)
        still_reads = store.episode_count()
    ids, problems, _ = stored_task_ids(db)
    ok = "full" in message and not problems and ids == {"w-0", "w-1", "w-2"} and \
        still_reads == 3
    return FaultResult("disk full (max_page_count)", ok, 3 - len(ids & {"w-0", "w-1", "w-2"}),
                       time.monotonic() - t0, f"error: {message[:90]}")


def _mount_tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                       capture_output=True)
    return r.returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True)


def tmpfs_full_trial(tmp: Path) -> FaultResult | None:
    """A real full file system (a 600 KiB tmpfs; root only, else None): ENOSPC inside SQLite."""
    from frankenbot.errors import MemoryStoreError
    from frankenbot.memory.store import MemoryStore

    mnt = tmp / "tiny"
    if not _mount_tmpfs(mnt, "600k"):
        return None
    try:
        db = mnt / "m.sqlite3"
        _write(db, 3)
        t0 = time.monotonic()
        message = ""
        with MemoryStore.open(db, writer_config()) as store:
            for i in range(200):  # fill it up
                try:
                    store.record_episode(_big_episode(i))
                except MemoryStoreError as e:
                    message = str(e)
                    break
            n = store.episode_count()
        if not message:
            return FaultResult("disk full (tmpfs ENOSPC)", False, detail="never got full")
        ids, problems, _ = stored_task_ids(db)
        lost = {"w-0", "w-1", "w-2"} - ids
        ok = not problems and not lost and len(ids) == n
        return FaultResult("disk full (tmpfs ENOSPC)", ok, len(lost), time.monotonic() - t0,
                           f"{n} episodes fit; error: {message[:80]}")
    finally:
        _umount(mnt)


def read_only_trial(tmp: Path) -> FaultResult:
    """A database on a read-only file system (root: tmpfs remounted ro) or a read-only file."""
    import hashlib

    from frankenbot.errors import MemoryStoreError
    from frankenbot.memory.store import MemoryStore

    mnt = tmp / "ro"
    mounted = _mount_tmpfs(mnt, "4m")
    mnt.mkdir(parents=True, exist_ok=True)
    try:
        db = mnt / "m.sqlite3"
        _write(db, 3)
        if mounted:
            subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        else:
            db.chmod(0o444)
            mnt.chmod(0o555)
        before = hashlib.sha256(db.read_bytes()).hexdigest()
        t0 = time.monotonic()
        with MemoryStore.open(db, writer_config()) as store:
            context = store.get_context("put block 1 in the green bowl")
            try:
                store.record_episode(_big_episode(0))
                refused = ""
            except MemoryStoreError as e:
                refused = str(e)
            problems = store.integrity_check()
            n = store.episode_count()
        same = hashlib.sha256(db.read_bytes()).hexdigest() == before
        ok = bool(refused) and "read-only" in refused and same and not problems and n == 3
        how = "read-only tmpfs" if mounted else "read-only file"
        return FaultResult(f"read-only database ({how})", ok, 3 - n, time.monotonic() - t0,
                           f"{len(context.exemplars)} exemplars served; error: {refused[:70]}")
    finally:
        if mounted:
            _umount(mnt)
        else:
            mnt.chmod(0o755)


# ------------------------------------------------- bad messages: random field values

def _rand_float(rng: random.Random) -> float:
    return rng.choice([float("nan"), float("inf"), -float("inf"), 0.0, -1.0, 1e308,
                       rng.uniform(-10, 10), rng.uniform(-1e6, 1e6)])


def _rand_text(rng: random.Random) -> str:
    return rng.choice(["", "shoulder_pan_joint", "rgb8", "16UC1", "\x00\x07\x1b[2J",
                       "x" * rng.randint(1, 3000), "32FC1", "bgr8", "mono16", "ünïcode"])


class TopicFuzzer:
    """Publishes messages with random field values on every topic the brain subscribes to.

    Topics: joint states, the three camera topics, speed scaling, the scene, the annotated
    image, the clock, the trajectory and gripper command topics (the sim's inputs). Not
    fuzzed: the e-stop and reset topics (commands whose every value is valid and acts).
    Bounded by ``duration_s`` and ``max_messages``.
    """

    def __init__(self, client: Any, seed: int = 0) -> None:
        from rclpy.qos import qos_profile_sensor_data
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import CameraInfo, Image, JointState
        from std_msgs.msg import Float64, Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from frankenbot import robotiq
        from frankenbot_interfaces.msg import SceneObjects

        self.rng = random.Random(seed)
        node = client.node
        self.sent: dict[str, int] = {}
        self._pubs: list[tuple[str, Any, Callable[[], Any]]] = [
            ("/joint_states", node.create_publisher(JointState, "/joint_states", 10),
             self._joint_state),
            ("/camera/camera/color/image_raw", node.create_publisher(
                Image, "/camera/camera/color/image_raw", qos_profile_sensor_data), self._image),
            ("/camera/camera/aligned_depth_to_color/image_raw", node.create_publisher(
                Image, "/camera/camera/aligned_depth_to_color/image_raw",
                qos_profile_sensor_data), self._image),
            ("/camera/camera/color/camera_info", node.create_publisher(
                CameraInfo, "/camera/camera/color/camera_info", qos_profile_sensor_data),
             self._camera_info),
            ("/speed_scaling_state_broadcaster/speed_scaling", node.create_publisher(
                Float64, "/speed_scaling_state_broadcaster/speed_scaling", 10),
             lambda: Float64(data=_rand_float(self.rng))),
            ("/frankenbot/scene", node.create_publisher(SceneObjects, "/frankenbot/scene", 10),
             self._scene),
            ("/frankenbot/annotated_image", node.create_publisher(
                Image, "/frankenbot/annotated_image", 2), self._image),
            ("/clock", node.create_publisher(Clock, "/clock", 10), self._clock),
            ("/scaled_joint_trajectory_controller/joint_trajectory", node.create_publisher(
                JointTrajectory, "/scaled_joint_trajectory_controller/joint_trajectory", 10),
             self._trajectory),
            (robotiq.COMMAND_TOPIC, node.create_publisher(
                Float64MultiArray, robotiq.COMMAND_TOPIC, 10),
             lambda: Float64MultiArray(data=[_rand_float(self.rng)
                                             for _ in range(self.rng.randint(0, 3))])),
        ]

    def topics(self) -> list[str]:
        return [t for t, _, _ in self._pubs]

    def run(self, duration_s: float, max_messages: int, rate_hz: float = 50.0,
            stop: threading.Event | None = None) -> int:
        n = 0
        t_end = time.monotonic() + duration_s
        while n < max_messages and time.monotonic() < t_end and not (stop and stop.is_set()):
            topic, pub, make = self.rng.choice(self._pubs)
            pub.publish(make())
            self.sent[topic] = self.sent.get(topic, 0) + 1
            n += 1
            time.sleep(1.0 / rate_hz)
        return n

    # -- random messages (every field drawn independently)
    def _joint_state(self) -> Any:
        from sensor_msgs.msg import JointState

        from frankenbot.motion.kinematics import JOINT_NAMES

        r = self.rng
        names = list(JOINT_NAMES) if r.random() < 0.6 else [_rand_text(r)[:30]
                                                            for _ in range(r.randint(0, 8))]
        if r.random() < 0.3:
            names = names[: r.randint(0, len(names))]
        msg = JointState(name=names)
        msg.position = [_rand_float(r) for _ in range(r.choice([len(names), 3, 0, 9]))]
        msg.velocity = [_rand_float(r) for _ in range(r.choice([len(names), 0, 2]))]
        return msg

    def _image(self) -> Any:
        from sensor_msgs.msg import Image

        r = self.rng
        h, w = r.choice([(0, 0), (1, 1), (480, 640), (2, 3), (10, 10)])
        msg = Image(height=h, width=w, encoding=_rand_text(r)[:10], is_bigendian=r.randint(0, 1),
                    step=r.choice([0, w, w * 2, w * 3, 7]))
        msg.data = bytes(r.getrandbits(8) for _ in range(r.choice([0, 5, 300])))
        msg.header.stamp.sec = r.randint(0, 2**31 - 1)
        return msg

    def _camera_info(self) -> Any:
        from sensor_msgs.msg import CameraInfo

        r = self.rng
        msg = CameraInfo(height=r.randint(0, 1000), width=r.randint(0, 1000))
        msg.k = [_rand_float(r) for _ in range(9)]
        return msg

    def _scene(self) -> Any:
        from frankenbot_interfaces.msg import SceneObject, SceneObjects

        r = self.rng
        msg = SceneObjects(stale=bool(r.getrandbits(1)), latency=_rand_float(r))
        for _ in range(r.choice([0, 1, 3, 300])):
            o = SceneObject(id=r.choice(["red_block", "", "green_bowl", _rand_text(r)[:20]]),
                            label=_rand_text(r)[:20], shape=_rand_text(r)[:10],
                            colour=_rand_text(r)[:10], confidence=_rand_float(r))
            o.pose.position.x, o.pose.position.y = _rand_float(r), _rand_float(r)
            o.pose.position.z = _rand_float(r)
            o.pose.orientation.w = _rand_float(r)
            o.size.x, o.size.y, o.size.z = (_rand_float(r) for _ in range(3))
            msg.objects.append(o)
        msg.header.stamp.sec = r.randint(0, 2**31 - 1)
        return msg

    def _clock(self) -> Any:
        from rosgraph_msgs.msg import Clock

        msg = Clock()
        msg.clock.sec = self.rng.choice([0, 1, 5, 2**31 - 1])
        return msg

    def _trajectory(self) -> Any:
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        r = self.rng
        msg = JointTrajectory(joint_names=[_rand_text(r)[:20] for _ in range(r.randint(0, 7))])
        for _ in range(r.randint(0, 3)):
            p = JointTrajectoryPoint(positions=[_rand_float(r) for _ in range(r.randint(0, 7))])
            p.time_from_start.sec = r.randint(0, 5)
            msg.points.append(p)
        return msg


# ------------------------------------------------------------------------------ benchmark

def run_benchmark(quick: bool = False,
                  ros_trials: Callable[[Path], list[FaultResult]] | None = None
                  ) -> dict[str, object]:
    """Print every fault injected, and the totals: injected, survived, data lost.

    Always 20 writer kills and the disk faults (no ROS); ``ros_trials`` (from
    ``frankenbot.bringup.faults``) adds the faults over DDS, given a scratch folder.
    """
    rows: list[FaultResult] = []
    tmp = Path(tempfile.mkdtemp(prefix="frankenbot-reliability-"))
    try:
        print("memory crash safety: writer SIGKILLed 20 times during episode writes and "
              "skill promotions (WAL, synchronous=FULL)", flush=True)
        rows += memory_kill_trials(tmp / "kills.sqlite3", kills=20, seed=0)
        rows.append(disk_full_trial(tmp))
        full = tmpfs_full_trial(tmp)
        if full is not None:
            rows.append(full)
        rows.append(read_only_trial(tmp))
        if ros_trials is not None and not quick:
            rows += ros_trials(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for r in rows:
        print(r.line())
    summary = {"faults_injected": len(rows), "survived": sum(r.survived for r in rows),
               "data_lost": sum(r.data_lost for r in rows),
               "faults": [r.__dict__ for r in rows]}
    print(f"reliability: {summary['faults_injected']} faults injected, {summary['survived']} "
          f"survived, {summary['data_lost']} committed episodes lost")
    return summary
