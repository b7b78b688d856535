"""trio as a guest of grpc.aio's asyncio loop (arena/guest.py): the run behaves as ``trio.run``; an idle trio waits on
the loop, never in a thread; a unary call's reply, deadline, cancellation and closed channel reach the trio task as
grpcio's synchronous calls did. A real grpc.aio server on a loopback port, in the same loop."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import grpc.aio
import pytest
import trio

from arena import guest
from arena.protocol import bot_pb2

ACT = "/dominoes.v1.Bot/Act"


class EchoBot:
    """Answers Act with the index the request's seat names; ``hold`` keeps a call unanswered until its client
    cancels (then ``cancelled`` is set)."""

    def __init__(self) -> None:
        self.hold = False
        self.held = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def act(self, request: bot_pb2.ActRequest, context: grpc.aio.ServicerContext) -> bot_pb2.ActReply:
        if self.hold:
            self.held.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return bot_pb2.ActReply(index=request.seat)


@asynccontextmanager
async def echo_server(bot: EchoBot) -> AsyncIterator[str]:
    """A grpc.aio server of ``bot`` on a free loopback port, in the guest's loop; its address."""
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler("dominoes.v1.Bot", {"Act": grpc.unary_unary_rpc_method_handler(
        bot.act, request_deserializer=bot_pb2.ActRequest.FromString,
        response_serializer=bot_pb2.ActReply.SerializeToString)})
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await as_trio(server.start)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await as_trio(lambda: server.stop(None))


async def as_trio(make: Callable[[], Any]) -> Any:
    """Await an asyncio coroutine (made by ``make`` on the loop) from trio: the test's own small bridge."""
    done = trio.Event()
    box: dict[str, Any] = {}
    token = trio.lowlevel.current_trio_token()

    def finished(task: asyncio.Task[Any]) -> None:
        box["task"] = task
        token.run_sync_soon(done.set)

    asyncio.get_running_loop().create_task(make()).add_done_callback(finished)
    await done.wait()
    return box["task"].result()


def act_method(address: str) -> tuple[grpc.aio.Channel, Any]:
    channel = grpc.aio.insecure_channel(address)
    return channel, channel.unary_unary(ACT, request_serializer=bot_pb2.ActRequest.SerializeToString,
                                        response_deserializer=bot_pb2.ActReply.FromString)


@pytest.fixture
def threads_started(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each time trio's guest tick went to a thread to wait for I/O (the stock guest mode does at every idle)."""
    started: list[str] = []
    original = guest._thread_start_soon

    def counted(*args: Any) -> None:
        started.append("wait")
        original(*args)

    monkeypatch.setattr(guest, "_thread_start_soon", counted)
    return started


def test_the_run_returns_and_raises_as_trio_run_does() -> None:
    async def answer(x: int) -> int:
        await trio.sleep(0)
        return x * 2

    async def fail() -> None:
        await trio.sleep(0)
        raise KeyError("nope")

    assert guest.run(answer, 21) == 42
    with pytest.raises(KeyError, match="nope"):
        guest.run(fail)
    assert not guest.active()


def test_an_idle_trio_waits_on_the_loop_for_timers_threads_and_signals(threads_started: list[str]) -> None:
    async def main() -> list[object]:
        seen: list[object] = [guest.active(), guest.loop_waits_for_trio()]
        await trio.sleep(0.01)                                   # a deadline: the loop's timer
        seen.append(await trio.to_thread.run_sync(lambda: "from a thread"))  # a wake-up through trio's socket
        with trio.open_signal_receiver(signal.SIGUSR1) as signals:
            os.kill(os.getpid(), signal.SIGUSR1)
            async for number in signals:                          # a signal, through trio's wakeup descriptor
                seen.append(number)
                break
        return seen

    assert guest.run(main) == [True, True, "from a thread", signal.SIGUSR1]
    assert threads_started == []


def test_a_unary_call_answers_times_out_is_cancelled_on_the_wire_and_fails_when_closed(
        threads_started: list[str]) -> None:
    bot = EchoBot()

    async def main() -> list[object]:
        seen: list[object] = []
        async with echo_server(bot) as address:
            channel, act = act_method(address)
            replies = []
            async with trio.open_nursery() as nursery:            # eight in flight, each its own answer
                async def one(seat: int) -> None:
                    replies.append((await guest.await_unary(act(bot_pb2.ActRequest(seat=seat), timeout=10))).index)
                for seat in range(8):
                    nursery.start_soon(one, seat)
            seen.append(sorted(replies))
            bot.hold = True
            with pytest.raises(grpc.RpcError) as late:
                await guest.await_unary(act(bot_pb2.ActRequest(seat=1), timeout=0.05))
            seen.append(late.value.code())
            bot.held.clear()
            bot.cancelled.clear()
            with trio.move_on_after(0.05) as scope:
                await guest.await_unary(act(bot_pb2.ActRequest(seat=1), timeout=10))
            seen.append(scope.cancelled_caught)
            await as_trio(bot.cancelled.wait)                     # the bot saw the call cancelled
            seen.append(bot.cancelled.is_set())
            waiting = act(bot_pb2.ActRequest(seat=1), timeout=10)
            await as_trio(bot.held.wait)
            asyncio.get_running_loop().create_task(channel.close())
            with pytest.raises(grpc.RpcError) as closed:
                await guest.await_unary(waiting)
            seen.append(closed.value.code())
        return seen

    assert guest.run(main) == [list(range(8)), grpc.StatusCode.DEADLINE_EXCEEDED, True, True,
                               grpc.StatusCode.CANCELLED]
    assert threads_started == []


def test_without_a_host_the_stock_thread_waits(threads_started: list[str]) -> None:
    """The replaced hand-off keeps trio's own thread for any guest run that is not ours (and fails if it is lost)."""
    loop = asyncio.new_event_loop()
    done: asyncio.Future[Any] = loop.create_future()

    async def nap() -> str:
        await trio.sleep(0.01)
        return threading.current_thread().name

    trio.lowlevel.start_guest_run(nap, run_sync_soon_threadsafe=loop.call_soon_threadsafe,
                                  done_callback=done.set_result)
    try:
        assert loop.run_until_complete(done).unwrap() == threading.current_thread().name
    finally:
        loop.close()
    assert threads_started


def count_socket_wakeups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each time, from now on, something wakes trio through its wake-up socket (what :func:`guest.from_loop` spares);
    called from trio."""
    woken: list[str] = []
    manager = type(guest.trio_run.GLOBAL_RUN_CONTEXT.runner.io_manager)
    force_wakeup = manager.force_wakeup

    def counted(self: Any) -> None:
        woken.append("socket")
        force_wakeup(self)

    monkeypatch.setattr(manager, "force_wakeup", counted)
    return woken


def test_loop_code_calls_trio_directly_and_awaits_its_functions(threads_started: list[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A grpc.aio handler's side: a quick trio function called from an asyncio task on the host wakes the trio task
    it concerns in the same pass (no thread, no socket); a trio async function awaited from asyncio answers,
    raises, and is cancelled with the asyncio task that awaits it."""

    async def main() -> list[object]:
        socket_wakeups = count_socket_wakeups(monkeypatch)
        seen: list[object] = []
        woke = trio.Event()
        loop = asyncio.get_running_loop()

        async def set_from_loop() -> None:
            guest.from_loop(woke.set)
        loop.create_task(set_from_loop())
        await woke.wait()
        seen.append("woken")

        async def double(x: int) -> int:
            await trio.sleep(0.001)
            return 2 * x

        async def fail() -> None:
            await trio.sleep(0)
            raise KeyError("nope")

        cancelled = trio.Event()

        async def forever() -> None:
            try:
                await trio.sleep_forever()
            finally:
                cancelled.set()

        async def from_asyncio() -> list[object]:
            answers: list[object] = [await guest.await_trio(double, 21)]
            try:
                await guest.await_trio(fail)
            except KeyError as error:
                answers.append(error.args[0])
            waiting = asyncio.ensure_future(guest.await_trio(forever))
            await asyncio.sleep(0.01)
            waiting.cancel()
            answers.append(await asyncio.gather(waiting, return_exceptions=True))
            return answers

        answers = await guest.await_loop(from_asyncio())
        seen.append(answers[:2])
        seen.append(type(answers[2][0]).__name__)  # type: ignore[index]
        with trio.fail_after(5):
            await cancelled.wait()
        seen.append("trio task cancelled")
        seen.append(socket_wakeups)
        return seen

    assert guest.run(main) == ["woken", [42, "nope"], "CancelledError", "trio task cancelled", []]
    assert threads_started == []


def test_an_outbox_wakes_its_asyncio_writer_and_a_trio_task_awaits_asyncio(threads_started: list[str]) -> None:
    """What the trio side puts is taken by an asyncio task waiting on the outbox, in order; an asyncio coroutine
    awaited from trio answers, raises, and is cancelled when the trio task is."""

    async def main() -> list[object]:
        outbox: guest.Outbox[int | None] = guest.Outbox()
        taken: list[int] = []

        async def writer() -> str:
            while True:
                item = await outbox.take()
                if item is None:
                    return "done"
                taken.append(item)

        writing = asyncio.ensure_future(writer())
        for item in (1, 2, 3):
            outbox.put(item)
            await trio.sleep(0.001)
        outbox.put(4)
        outbox.put(None)
        seen: list[object] = [await guest.await_loop(writing), taken]

        async def fails() -> None:
            raise ValueError("from asyncio")
        with pytest.raises(ValueError, match="from asyncio"):
            await guest.await_loop(fails())
        stopped = asyncio.Event()

        async def endless() -> None:
            try:
                await asyncio.sleep(3600)
            finally:
                stopped.set()
        with trio.move_on_after(0.01):
            await guest.await_loop(endless())
        await guest.await_loop(stopped.wait())
        seen.append(stopped.is_set())
        return seen

    assert guest.run(main) == ["done", [1, 2, 3, 4], True]
    assert threads_started == []
