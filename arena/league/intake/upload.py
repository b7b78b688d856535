"""An upload's bytes, whichever client sends them (the gRPC Upload's chunks, the web's form): received into a
private temporary file within the league's archive limit, refused with one line as soon as they pass it, then
checked into the canonical archive (:func:`~arena.league.intake.archive.pack`). Blocking, on a worker thread; or,
for chunks that arrive on an asyncio loop (the gRPC Upload's request stream), :func:`received_upload`, which reads
them on the loop and writes each on a worker thread."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterable, Iterable
from pathlib import Path

from arena.league.intake.archive import Packed, pack
from arena.league.rules.config import LeagueConfig, archive_limits
from arena.league.rules.errors import LeagueError


def over_limit(limit_mb: int) -> LeagueError:
    """The refusal of an archive past the league's size: one line, whichever client sent it (gRPC or the web)."""
    return LeagueError(f"the archive is over the league's limit of {limit_mb} MiB (upload.archive_mb); nothing was "
                       f"stored")


class ArchiveFile:
    """An archive's bytes as they arrive, in a private temporary file in ``folder``, refused as soon as they pass
    ``limit`` bytes (blocking calls: on a worker thread)."""

    def __init__(self, folder: Path, limit: int, limit_mb: int) -> None:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".upload-")
        self.path = Path(name)
        self._out = os.fdopen(fd, "wb")
        self._limit, self._limit_mb = limit, limit_mb
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self._limit:
            raise over_limit(self._limit_mb)
        self._out.write(chunk)

    def finish(self) -> Path:
        """The file, complete; refused when no byte came."""
        self._out.close()
        if self.size == 0:
            raise LeagueError("the upload holds no archive (no chunks)")
        return self.path

    def discard(self) -> None:
        self._out.close()
        self.path.unlink(missing_ok=True)


def receive_archive(chunks: Iterable[bytes], folder: Path, limit: int, limit_mb: int) -> Path:
    """An archive's bytes into a private temporary file in ``folder``, refused as soon as they pass ``limit``
    bytes (blocking: on a worker thread)."""
    archive = ArchiveFile(folder, limit, limit_mb)
    try:
        for chunk in chunks:
            archive.add(chunk)
        return archive.finish()
    except BaseException:
        archive.discard()
        raise


async def received_upload(chunks: AsyncIterable[bytes], folder: Path, config: LeagueConfig) -> Packed:
    """:func:`checked_upload` for chunks read on an asyncio loop: each read there, written on a worker thread, the
    archive checked on one; refused as soon as the bytes pass the league's limit."""
    limits = archive_limits(config)
    archive = await asyncio.to_thread(ArchiveFile, folder, limits.max_compressed_bytes, config.upload.archive_mb)
    try:
        async for chunk in chunks:
            await asyncio.to_thread(archive.add, chunk)
        received = await asyncio.to_thread(archive.finish)
    except BaseException:
        archive.discard()
        raise
    try:
        return await asyncio.to_thread(pack, received, folder, limits)
    finally:
        received.unlink(missing_ok=True)


def checked_upload(chunks: Iterable[bytes], folder: Path, config: LeagueConfig) -> Packed:
    """An upload's bytes received within the league's limits and checked into its canonical archive (blocking)."""
    limits = archive_limits(config)
    received = receive_archive(chunks, folder, limits.max_compressed_bytes, config.upload.archive_mb)
    try:
        return pack(received, folder, limits)
    finally:
        received.unlink(missing_ok=True)
