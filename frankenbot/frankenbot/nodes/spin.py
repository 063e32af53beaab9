"""How every FrankenBot node spins: rclpy's MultiThreadedExecutor, turned on public API only.

rclpy's MultiThreadedExecutor hands a ready callback to its thread pool and immediately waits
again; the entity is still "ready" until a pool thread takes it, so the spinning thread loops
holding the GIL and the pool thread only gets to run at the interpreter's switch interval
(5 ms). Measured here with the rclpy 7.1.6 wheels: 2+ threads received 5-40 of 250 joint-state
messages a second (a single thread all of them), which starved every node of /joint_states and
/frankenbot/scene. Yielding the GIL once per turn of the spin loop removes the convoy (all 250
arrive at ~0.2 of a core): ``spin_once`` here does that in the loop, where an earlier subclass
overrode a private executor method. rclpy's EventsExecutor was measured against it (README,
design notes) and is kept as a measurement switch only (``FRANKENBOT_SPIN``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Sequence

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from frankenbot.errors import FrankenbotError

SIGNAL_POLL_S = 0.2  # s: longest the spinning thread waits in C before Python signal handling


SPIN_ENV = "FRANKENBOT_SPIN"  # measurement switch: yielding (default) | events
SPIN_KINDS = ("yielding", "events")


def make_executor(num_threads: int, context: Any = None, *,
                  callbacks_block: bool = True) -> Executor:
    """The executor a FrankenBot node spins: rclpy's MultiThreadedExecutor, turned by
    ``spin_once`` (which yields the GIL after each turn).

    ``FRANKENBOT_SPIN=events`` gives nodes whose callbacks never block (``callbacks_block=False``:
    sim, perception, memory) rclpy.experimental.EventsExecutor instead, to repeat the scene-rate
    comparison of the README's design notes; it is single-threaded and has no guard conditions
    in rclpy 7.1.6, so the planner and executor nodes (callbacks that wait) keep the other."""
    kind = os.environ.get(SPIN_ENV, "yielding") or "yielding"
    if kind not in SPIN_KINDS:
        raise FrankenbotError(f"{SPIN_ENV}={kind!r}: expected one of {', '.join(SPIN_KINDS)}")
    if kind == "events" and not callbacks_block:
        from rclpy.experimental import EventsExecutor

        return EventsExecutor(context=context)
    return MultiThreadedExecutor(num_threads=num_threads, context=context)


def spin_once(executor: Executor, timeout_sec: float) -> None:
    """One turn of the spin loop, then a yield of the GIL.

    MultiThreadedExecutor hands a ready callback to its pool and waits again at once; until a pool
    thread takes the entity it is still ready, so the spinning thread loops holding the GIL and
    the pool thread only runs at the interpreter's switch interval (5 ms). Yielding once per
    turn, here in the loop (public API only), removes the convoy."""
    executor.spin_once(timeout_sec=timeout_sec)
    time.sleep(0)


class Spinner:
    """Spins an executor on a daemon thread (``spin_until``) until ``stop()``: for clients and
    tests that run their own node beside other work."""

    def __init__(self, executor: Executor, name: str = "spin",
                 on_error: Callable[[Exception], None] | None = None) -> None:
        self.executor = executor
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=spin_until, args=(executor, self._stop.is_set), kwargs={"on_error": on_error},
            name=name, daemon=True)

    def start(self) -> "Spinner":
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._thread.join(timeout)


def spin_until(executor: Executor, stop: Callable[[], bool], *,
               on_error: Callable[[Exception], None] | None = None) -> None:
    """Spin (on this thread) until ``stop()`` or the context shuts down; a callback's exception
    goes to ``on_error`` (then spinning goes on) or is raised."""
    while executor.context.ok() and not stop():
        try:
            spin_once(executor, SIGNAL_POLL_S)
        except ExternalShutdownException:
            return
        except Exception as e:
            if on_error is None:
                raise
            on_error(e)


def report_callback_error(node: Node, error: Exception) -> None:
    """One callback raised: log it (with its origin, at most every 2 s) and keep the node up.

    Messages are validated where they are received; this is the last line behind that, so a
    malformed message nobody foresaw costs one callback, never the node (and with it the arm's
    stop path). The traceback goes to the log so the bug can still be found.
    """
    import traceback

    where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    origin = f" at {where.filename}:{where.lineno}" if where is not None else ""
    node.get_logger().error(
        f"callback failed{origin}: {type(error).__name__}: {error}; the node keeps running\n"
        + "".join(traceback.format_exception(error))[-2000:], throttle_duration_sec=2.0)


def wait_future(future: Any, timeout: float) -> bool:
    """Block this thread (a worker, never the spinning one) until ``future`` is done or
    ``timeout`` s passed; the executor's other threads complete it meanwhile."""
    if future.done():
        return True
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    return done.wait(timeout) or future.done()


def call_and_wait(client: Any, request: Any, timeout: float) -> Any | None:
    """Call a service from a thread the executor does not need (a node's control thread, never
    a callback that must return) and wait up to ``timeout`` s; the response, or None when none
    came (the request is then cancelled). The caller checks availability first."""
    future = client.call_async(request)
    if not wait_future(future, timeout) or future.result() is None:
        future.cancel()
        return None
    return future.result()


def run_node(make_node: Callable[[], Node], *, num_threads: int,
             args: Sequence[str] | None = None, callbacks_block: bool = True) -> int:
    """``main`` of every FrankenBot node: init, spin, and a clean, ordered shutdown.

    rclpy's own signal handler would invalidate the context on Ctrl-C before the node could act
    (the executor then could not publish its stop command). Here SIGINT and SIGTERM raise
    KeyboardInterrupt in the spinning thread instead, the node is destroyed while the context
    still works (nodes stop the arm, close files there), and only then is rclpy shut down.
    Returns the process exit code: 0, or 1 after a FrankenbotError (printed, no traceback).
    """
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    node: Node | None = None
    executor: Executor | None = None
    code = 0
    try:
        node = make_node()
        executor = make_executor(num_threads, callbacks_block=callbacks_block)
        executor.add_node(node)
        while executor.context.ok():  # wake up regularly so the signal handler can run
            try:
                spin_once(executor, SIGNAL_POLL_S)
            except (KeyboardInterrupt, ExternalShutdownException):
                raise
            except Exception as e:  # a callback's bug or an unforeseen message: log, go on
                report_callback_error(node, e)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except FrankenbotError as e:
        name = node.get_name() if node is not None else "frankenbot node"
        print(f"{name}: error: {e}", file=sys.stderr)
        code = 1
    finally:
        if node is not None:
            try:
                node.destroy_node()
            except Exception as e:  # report, then still shut rclpy down
                print(f"{node.get_name()}: error while shutting down: {e}", file=sys.stderr)
        if executor is not None:
            executor.shutdown(timeout_sec=2.0)
        rclpy.try_shutdown()
    return code
