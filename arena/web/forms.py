"""The upload form's body, read as hostile input: spooled to a private file under a cap, then its parts found in
place (``mmap``), so the archive goes to the league's own upload path (:meth:`arena.league.service.LeagueCore.upload`,
which counts it against the league's limit and checks it) as chunks, the way the gRPC Upload's arrive. Nothing of
the body is held in memory or parsed before the whole of it is known to be within the cap.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from pathlib import Path
from typing import Iterator

import trio
from starlette.requests import Request

from ..league.errors import LeagueError
from ..league.service import over_limit


async def spooled_body(request: Request, folder: Path, limit: int, limit_mb: int) -> Path:
    """The request's body in a private temporary file, refused (the league's one line) past ``limit`` bytes."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise over_limit(limit_mb)
    fd, name = tempfile.mkstemp(dir=folder, prefix=".form-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            size = 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise over_limit(limit_mb)
                await trio.to_thread.run_sync(out.write, chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


class FormError(LeagueError):
    """An upload form that is not one (no boundary, a part cut short, no archive)."""


FORM_FIELD_BYTES = 1024


def form_parts(path: Path, content_type: str) -> tuple[dict[str, str], tuple[int, int]]:
    """A spooled ``multipart/form-data`` body's text fields and where its ``archive`` file lies in it (offset,
    length), read through ``mmap`` (nothing of the file is copied); blocking."""
    kind, _, rest = content_type.partition(";")
    boundary = next((v.strip().strip('"') for k, _, v in (p.strip().partition("=") for p in rest.split(";"))
                     if k.lower() == "boundary"), "")
    if kind.strip().lower() != "multipart/form-data" or not boundary:
        raise FormError("an upload is a multipart/form-data form (the page's upload form)")
    delimiter = b"--" + boundary.encode("latin-1")
    fields: dict[str, str] = {}
    archive: tuple[int, int] | None = None
    with open(path, "rb") as file:
        if os.fstat(file.fileno()).st_size == 0:
            raise FormError("the upload form is empty")
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as body:
            at = body.find(delimiter)
            while at >= 0 and body[at + len(delimiter):at + len(delimiter) + 2] == b"\r\n":
                head_end = body.find(b"\r\n\r\n", at)
                end = body.find(b"\r\n" + delimiter, head_end + 4) if head_end >= 0 else -1
                if end < 0:
                    raise FormError("the upload form is cut short (a part without its end)")
                name, filename = _disposition(body[at + len(delimiter) + 2:head_end].decode("utf-8", "replace"))
                start = head_end + 4
                if filename is not None and name == "archive":
                    archive = (start, end - start)
                elif filename is None and end - start <= FORM_FIELD_BYTES:
                    fields[name] = body[start:end].decode("utf-8", "replace")
                at = end + 2
    if archive is None:
        raise FormError("the upload form holds no archive (its file field, archive)")
    return fields, archive


def _disposition(headers: str) -> tuple[str, str | None]:
    """A part's field name and file name (None for a text field) from its Content-Disposition."""
    for line in headers.split("\r\n"):
        key, _, value = line.partition(":")
        if key.strip().lower() == "content-disposition":
            params = dict((k.strip().lower(), v.strip().strip('"')) for k, _, v in
                          (p.partition("=") for p in value.split(";")[1:]))
            return params.get("name", ""), params.get("filename")
    return "", None


UPLOAD_CHUNK = 256 * 1024


def part_chunks(path: Path, part: tuple[int, int]) -> Iterator[bytes]:
    """The archive's bytes from the spooled form, as the league's receive reads them (on its worker thread)."""
    start, length = part
    with open(path, "rb") as file:
        file.seek(start)
        while length > 0:
            chunk = file.read(min(UPLOAD_CHUNK, length))
            if not chunk:
                return
            length -= len(chunk)
            yield chunk
