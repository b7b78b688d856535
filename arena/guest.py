"""One thread for the arena's I/O: trio runs as a guest of an asyncio loop, which grpc.aio drives.

Why: with grpcio's synchronous calls every reply is handled by one of grpcio's Python threads, which takes the GIL
and wakes the trio thread; on these machines that hand-off, not the referee, bounded a fast bot's games (the
numbers are in docs/explanation/performance-calls.md, "One thread for I/O"). grpc.aio polls in C++ and hands replies to
the asyncio loop without a Python thread; with trio as the loop's guest (:func:`trio.lowlevel.start_guest_run`) the
referee, trio, the calls and their replies share one thread. trio stays the concurrency model of the arena's own
code: nurseries, cancel scopes and deadlines work as under :func:`trio.run`.

Two things make the hand-off cheap, both measured against the stock guest mode:

- **trio waits on the loop, not in a thread.** In stock guest mode trio, when idle, blocks in a worker thread on its
  own epoll and posts back to the loop when woken: two thread hops for every wake-up. Here the loop watches trio's
  epoll descriptor as a reader (an epoll descriptor is readable when it has events) with a timer for trio's next
  deadline, so an idle trio costs no thread at all. It relies on trio's Linux I/O manager; where that is not there,
  the stock thread is used (:func:`loop_waits_for_trio` says which).
- **A reply wakes its task directly.** :func:`await_unary` reschedules the waiting trio task from the call's done
  callback, on the loop's own thread, and starts trio's tick at once if trio was idle: no wake-up through trio's
  entry queue and socket. Replies that arrive together are run in one tick.

:func:`run` is the entry point (like :func:`trio.run`); :func:`active` tells code under it that grpc.aio may be used,
so a transport picks grpc.aio under the host and grpcio's futures under a plain :func:`trio.run` (as in tests).
"""

from __future__ import annotations

import asyncio
import gc
import math
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import grpc
import grpc.aio
import outcome
import trio
import trio._core._run as trio_run  # the guest tick's thread hand-off, replaced below (see LoopWait)

T = TypeVar("T")

EOF: object = grpc.aio.EOF  # type: ignore[attr-defined]  # exported by grpc.aio, missing in grpc-stubs
"""grpc.aio's marker of a call that ended without a response (its status says why)."""

_state = threading.local()
"""This thread's host, while :func:`run` runs: ``_state.host``."""


class LoopWait:
    """trio's wait for I/O, done by the asyncio loop: trio's epoll descriptor as a reader, its next deadline as a
    timer. At most one wait is pending; :meth:`wake_now` ends it early when a task was scheduled from the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, io_manager: Any) -> None:
        self.loop = loop
        self.io_manager = io_manager
        self.fd: int = io_manager._epoll.fileno()
        self._deliver: Callable[[outcome.Outcome[Any]], None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    @property
    def pending(self) -> bool:
        return self._deliver is not None

    def start(self, timeout: float, deliver: Callable[[outcome.Outcome[Any]], None]) -> None:
        """Wait up to ``timeout`` seconds for trio's I/O, then hand the events to ``deliver`` (trio's own callback,
        which runs the next tick on the loop)."""
        self._deliver = deliver
        self.loop.add_reader(self.fd, self._readable)
        if timeout != math.inf:
            self._timer = self.loop.call_later(timeout, self.wake_now)

    def _readable(self) -> None:
        self._finish(outcome.capture(self.io_manager.get_events, 0))

    def wake_now(self) -> None:
        """End the wait with no events: trio has work (a task scheduled, a deadline passed)."""
        if self._deliver is not None:
            self._finish(outcome.Value([]))

    def _finish(self, events: outcome.Outcome[Any]) -> None:
        deliver, self._deliver = self._deliver, None
        self.loop.remove_reader(self.fd)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deliver is not None:
            deliver(events)


class Host:
    """The asyncio loop and the trio run it hosts, on this thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.thread = threading.get_ident()
        self.wait: LoopWait | None = None

    def run_soon(self, function: Callable[[], object]) -> None:
        """trio's ``run_sync_soon_threadsafe``: ``call_soon`` on the loop's thread (no self-pipe write), the
        thread-safe call from any other."""
        if threading.get_ident() == self.thread:
            self.loop.call_soon(function)
        else:
            self.loop.call_soon_threadsafe(function)

    def resume(self, task: trio.lowlevel.Task, result: outcome.Outcome[Any]) -> None:
        """Reschedule a trio task from a loop callback, and run trio's tick now if trio is idle."""
        wait = self.wait
        if wait is not None and wait.pending:
            trio_run.GLOBAL_RUN_CONTEXT.runner.guest_tick_scheduled = True  # we wake it below, not through its socket
            trio.lowlevel.reschedule(task, result)
            wait.wake_now()
        else:
            trio.lowlevel.reschedule(task, result)


def active() -> bool:
    """Whether the running trio run is a guest of :func:`run`'s loop (so grpc.aio calls can be made from it)."""
    return getattr(_state, "host", None) is not None


def loop_waits_for_trio() -> bool:
    """Whether trio's idle wait is on the loop (True on Linux with trio's epoll manager) rather than a thread."""
    host: Host | None = getattr(_state, "host", None)
    return host is not None and host.wait is not None


def run(async_fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run ``async_fn(*args)`` under trio, as a guest of a new asyncio loop on this thread, and return its result
    (or raise its exception), as :func:`trio.run` does. Tasks the loop still has when trio ends (a channel's close)
    are given one pass to finish, then cancelled.

    The objects alive when the run starts (the imported modules, grpc's and trio's: hundreds of thousands) are first
    moved out of the garbage collector's way (:func:`gc.freeze`): its full collections walk every tracked object, and
    with 64 games in flight they cost some 30 µs a decision (measured by ``arena bench protocol``, 64 in flight:
    the arena's CPU a decision 167-174 µs before, 135-139 after). What they hold lives as long as the process
    anyway."""
    gc.freeze()
    loop = asyncio.new_event_loop()
    host = Host(loop)
    done: asyncio.Future[outcome.Outcome[T]] = loop.create_future()
    _state.host = host
    try:
        trio.lowlevel.start_guest_run(async_fn, *args, run_sync_soon_threadsafe=host.run_soon,
                                      run_sync_soon_not_threadsafe=loop.call_soon,
                                      done_callback=done.set_result)
        host.wait = _loop_wait(loop)
        result = loop.run_until_complete(done)
        _finish_loop_tasks(loop)
    finally:
        _state.host = None
        loop.close()
    return result.unwrap()


def _loop_wait(loop: asyncio.AbstractEventLoop) -> LoopWait | None:
    """The wait on the loop for this run, or None where trio's I/O manager is not the epoll one."""
    io_manager = trio_run.GLOBAL_RUN_CONTEXT.runner.io_manager
    if not hasattr(getattr(io_manager, "_epoll", None), "fileno"):
        return None
    return LoopWait(loop, io_manager)


def _finish_loop_tasks(loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not pending:
        return
    loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


_thread_start_soon = getattr(trio_run, "start_thread_soon")  # noqa: B009 (not exported: mypy refuses the attribute)


def _start_wait_soon(get_events: Callable[[], Any], deliver: Callable[[outcome.Outcome[Any]], None],
                     name: str | None = None) -> None:
    """What trio's guest tick calls to wait for I/O: on a hosted thread whose trio uses epoll, the wait is the
    loop's (:class:`LoopWait`); anywhere else, trio's own worker thread as before. The tick's timeout is read from
    the closure it hands over (``get_events`` is ``lambda: io_manager.get_events(timeout)``)."""
    host: Host | None = getattr(_state, "host", None)
    wait = host.wait if host is not None and threading.get_ident() == host.thread else None
    timeout = _closure_value(get_events, "timeout")
    if wait is None or not isinstance(timeout, (int, float)):
        _thread_start_soon(get_events, deliver, name)
        return
    wait.start(float(timeout), deliver)


def _closure_value(function: Callable[..., Any], name: str) -> object:
    code, cells = function.__code__, function.__closure__ or ()
    if name not in code.co_freevars:
        return None
    return cells[code.co_freevars.index(name)].cell_contents


setattr(trio_run, "start_thread_soon", _start_wait_soon)  # noqa: B010 (as above)


async def await_unary(call: Any) -> Any:
    """The response of a started grpc.aio unary call, awaited from a trio task on the host: raises the call's
    ``grpc.aio.AioRpcError``, or trio.Cancelled (the call then cancelled on the wire, so the bot sees CANCELLED)."""
    host: Host = _state.host
    task = trio.lowlevel.current_task()
    waiting = True

    def replied(finished: asyncio.Future[Any]) -> None:
        if not waiting:
            return
        try:
            response = finished.result()
        except BaseException:  # noqa: BLE001 - a cancellation or an error: the call's own await says which
            response = EOF
        if response is not EOF and response is not None:
            host.resume(task, outcome.Value(response))
            return
        # An error or a cancellation: grpc.aio raises its AioRpcError only when the call itself is awaited.
        asyncio.ensure_future(call).add_done_callback(failed)

    def failed(awaited: asyncio.Future[Any]) -> None:
        if waiting:
            host.resume(task, outcome.capture(_call_result, awaited))

    def abort(_: Any) -> trio.lowlevel.Abort:
        nonlocal waiting
        waiting = False
        call.cancel()
        return trio.lowlevel.Abort.SUCCEEDED

    _response_task(call).add_done_callback(replied)
    try:
        return await trio.lowlevel.wait_task_rescheduled(abort)
    finally:
        waiting = False


def _call_result(awaited: asyncio.Future[Any]) -> Any:
    """An awaited call's response or error; a call cancelled by its channel's close (which grpc.aio raises as
    asyncio's CancelledError, foreign to trio) as the CANCELLED error grpcio's synchronous calls raise."""
    if awaited.cancelled():
        raise grpc.aio.AioRpcError(grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                   details="the call was cancelled (its channel closed)", debug_error_string=None)
    return awaited.result()


def _response_task(call: Any) -> asyncio.Future[Any]:
    """The task that delivers a unary call's response: grpc.aio's own (one task fewer a call), else one awaiting
    the call."""
    task = getattr(call, "_invocation_task", None)
    return task if isinstance(task, asyncio.Future) else asyncio.ensure_future(call)


def from_loop(function: Callable[..., T], *args: Any) -> T:
    """Call a quick synchronous function of the trio side from the host loop's own code (a callback, or an asyncio
    task such as a grpc.aio handler, on the host's thread) and return its result. Same thread, so no hand-off: if
    the call schedules trio tasks (a trio.Event set, a memory channel's ``send_nowait``, a task spawned) while trio
    waits on the loop, its tick runs at once, without a write to trio's wake-up socket; calls made together in one
    pass of the loop are run by one tick. Raises :class:`trio.RunFinishedError` once the trio run has ended."""
    runner = getattr(trio_run.GLOBAL_RUN_CONTEXT, "runner", None)
    if runner is None:
        raise trio.RunFinishedError("the trio run has ended")
    host: Host = _state.host
    wait = host.wait
    if wait is None or not wait.pending:  # a tick is due anyway (or trio waits in its own thread, woken by reschedule)
        return function(*args)
    runner.guest_tick_scheduled = True  # a task scheduled by the call does not write the wake-up socket: woken below
    try:
        return function(*args)
    finally:
        if runner.runq:
            wait.wake_now()
        else:
            runner.guest_tick_scheduled = False


async def await_trio(async_fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``await async_fn(*args)`` on the trio side, awaited from asyncio code on the host (a grpc.aio handler): run as
    a trio system task, its result or exception handed back. Cancelling the awaiting asyncio task cancels the trio
    task; a trio run that is ending (its system tasks cancelled) raises :class:`trio.RunFinishedError`."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    scope = trio.CancelScope()

    async def in_trio() -> None:
        try:
            with scope:
                result = await async_fn(*args)
                if not done.done():
                    done.set_result(result)
        except Exception as error:
            if not done.done():
                done.set_exception(error)
        finally:
            if not done.done():
                done.set_exception(trio.RunFinishedError("the trio run is ending") if not scope.cancel_called
                                   else asyncio.CancelledError())

    from_loop(trio.lowlevel.spawn_system_task, in_trio)
    try:
        return await done
    except asyncio.CancelledError:
        from_loop(scope.cancel)
        raise


async def await_loop(awaitable: Awaitable[T]) -> T:
    """An asyncio awaitable (a grpc.aio server's start or stop, a stream's write) awaited from a trio task on the
    host: its result or exception; cancelling the trio task cancels it."""
    host: Host = _state.host
    task = trio.lowlevel.current_task()
    future = asyncio.ensure_future(awaitable)
    waiting = True

    def finished(done: asyncio.Future[T]) -> None:
        if waiting:
            host.resume(task, outcome.capture(done.result))

    def abort(_: Any) -> trio.lowlevel.Abort:
        nonlocal waiting
        waiting = False
        future.cancel()
        return trio.lowlevel.Abort.SUCCEEDED

    future.add_done_callback(finished)
    try:
        return await trio.lowlevel.wait_task_rescheduled(abort)  # type: ignore[no-any-return]
    finally:
        waiting = False


class Outbox(queue.SimpleQueue[T], Generic[T]):
    """What one side of a stream sends, in order: put by the trio side, taken by the stream's writer, an asyncio
    task on the host (:meth:`take`: a put wakes it, on the same thread)."""

    _waiter: asyncio.Future[None] | None = None

    def put(self, item: T, block: bool = True, timeout: float | None = None) -> None:
        super().put(item)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self) -> T:
        """The next item, waiting for one (from an asyncio task on the host)."""
        while self.empty():
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self.get_nowait()
