"""A bot's log, capped: the bot writes into a pipe, the arena copies up to the limit into the log file, writes one
line saying the log was cut, and from then on reads and drops the rest, so the bot keeps running (a full pipe would
block it) and the disk is safe."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

import trio

CHUNK = 65536


class CappedLog:
    """The read end of a bot's stdout and stderr pipe, copied to ``log`` by a trio system task until EOF."""

    def __init__(self, log: IO[bytes], limit_bytes: int) -> None:
        self.log = log
        self.limit = limit_bytes
        self.written = 0
        self.dropped = 0
        self._read_fd, self.write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self._done = trio.Event()
        self._stream: trio.lowlevel.FdStream | None = None

    def start(self) -> None:
        """Close the arena's copy of the write end (the bot holds its own) and start copying."""
        os.close(self.write_fd)
        self._stream = trio.lowlevel.FdStream(self._read_fd)
        trio.lowlevel.spawn_system_task(self._copy, name=f"bot log {Path(self.log.name).name}")

    def close_unstarted(self) -> None:
        os.close(self.write_fd)
        os.close(self._read_fd)
        self.log.close()

    async def _copy(self) -> None:
        assert self._stream is not None
        try:
            while True:
                data = await self._stream.receive_some(CHUNK)
                if not data:
                    break
                self._keep(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError, OSError):
            pass
        finally:
            self._finish()

    def _keep(self, data: bytes) -> None:
        room = self.limit - self.written
        if room > 0:
            self.log.write(data[:room])
            self.log.flush()
            self.written += min(room, len(data))
        if len(data) > room:
            if self.dropped == 0:
                self.log.write(f"\n--- the log is cut here: the bot wrote more than its log limit of "
                               f"{self.limit // (1024 * 1024)} MiB; the rest of its output is dropped ---\n".encode())
                self.log.flush()
            self.dropped += len(data) - max(room, 0)

    def _finish(self) -> None:
        if self.dropped:
            self.log.write(f"--- {self.dropped} bytes of output dropped ---\n".encode())
        self.log.close()
        self._done.set()

    async def wait_closed(self, timeout_s: float) -> None:
        """Wait for the copy to reach EOF (every process of the bot gone); close the pipe after ``timeout_s``."""
        with trio.move_on_after(timeout_s):
            await self._done.wait()
        if not self._done.is_set() and self._stream is not None:
            await self._stream.aclose()
            await self._done.wait()
