"""An upload's bytes, whichever client sends them (the gRPC Upload's chunks, the web's form): received into a
private temporary file within the league's archive limit, refused with one line as soon as they pass it, then
checked into the canonical archive (:func:`~arena.league.intake.archive.pack`). Blocking: on a worker thread."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from arena.league.intake.archive import Packed, pack
from arena.league.rules.config import LeagueConfig, archive_limits
from arena.league.rules.errors import LeagueError


def over_limit(limit_mb: int) -> LeagueError:
    """The refusal of an archive past the league's size: one line, whichever client sent it (gRPC or the web)."""
    return LeagueError(f"the archive is over the league's limit of {limit_mb} MiB (upload.archive_mb); nothing was "
                       f"stored")


def receive_archive(chunks: Iterable[bytes], folder: Path, limit: int, limit_mb: int) -> Path:
    """An archive's bytes into a private temporary file in ``folder``, refused as soon as they pass ``limit``
    bytes (blocking: on a worker thread)."""
    fd, name = tempfile.mkstemp(dir=folder, prefix=".upload-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            size = 0
            for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise over_limit(limit_mb)
                out.write(chunk)
        if size == 0:
            raise LeagueError("the upload holds no archive (no chunks)")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def checked_upload(chunks: Iterable[bytes], folder: Path, config: LeagueConfig) -> Packed:
    """An upload's bytes received within the league's limits and checked into its canonical archive (blocking)."""
    limits = archive_limits(config)
    received = receive_archive(chunks, folder, limits.max_compressed_bytes, config.upload.archive_mb)
    try:
        return pack(received, folder, limits)
    finally:
        received.unlink(missing_ok=True)
