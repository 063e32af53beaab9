"""Judge benchmark programs by running them in the MuJoCo sim and asking the sim's oracle.

For ``memory.benchmark.run(executor=SimExecutor())``: each call resets the world to the task
(family, seed), starts the physics thread and perception (rendered frames -> perceived scene, no
ground truth for the brain), runs the given program with the interpreter and the real primitives
(motion through the JTC backend and the safety envelope), then returns the oracle's verdict.

What this deliberately leaves out: the executor's monitor thread and escalation tiers. Memory's
benchmark compares programs written with and without skills in the nominal case, so the only
differences between arms are the programs themselves; anomaly handling is measured by the
executor's own benchmark and by the task suite. The benchmark counts the oracle's verdict;
memory is told only the program's own exit status.
"""

from __future__ import annotations

import time

from frankenbot.common import ExitStatus
from frankenbot.program.catalog import Catalog
from frankenbot.program.tree import Program


class SimExecutor:
    """``(family, seed, program, catalog) -> (oracle ok, program ok, detail, trace JSON)``."""

    def __init__(self, *, realtime_factor: float = 3.0, camera_rate: float = 10.0,
                 perception_rate: float = 10.0) -> None:
        from frankenbot.eval.stack import SimStack

        self.stack = SimStack(scene="perceived", realtime_factor=realtime_factor,
                              camera_rate=camera_rate, perception_rate=perception_rate)
        self.world, self.robot = self.stack.world, self.stack.robot
        self.wall_time = 0.0

    def __call__(self, family: str, seed: int, program: Program,
                 catalog: Catalog) -> tuple[bool, bool, str, str]:
        from frankenbot.program.interpreter import Interpreter
        from frankenbot.program.trace import trace_to_json

        t0 = time.monotonic()
        self.stack.reset(family, seed)
        try:
            with self.stack.running():
                result = Interpreter(program, catalog, self.stack.primitives,
                                     snapshot=self.stack.snapshot, clock=self.robot.now).run()
                self.robot.stop()
                verdict = self.world.evaluate()
        finally:
            self.wall_time += time.monotonic() - t0
        detail = f"program {result.status.value}: {result.reason}; oracle: {verdict.text}"
        program_ok = result.status == ExitStatus.SUCCESS
        return (bool(verdict.success), program_ok, detail.replace("\n", " "),
                trace_to_json(result.trace))

    def close(self) -> None:
        self.stack.close()
