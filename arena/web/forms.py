"""The upload form's body, read as hostile input: spooled to a private file under a cap, then parsed by
python-multipart (streaming), its archive written to a file of its own, so the archive goes to the league's own
upload path (:meth:`arena.league.core.LeagueCore.upload`, which counts it against the league's limit and checks
it) as chunks, the way the gRPC Upload's arrive. Nothing of the body is held in memory or parsed before the whole of
it is known to be within the cap.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import trio
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from arena.league.intake.upload import over_limit
from arena.league.rules.errors import LeagueError

DRAINED_BYTES = 64 * 1024 * 1024
"""How much of a refused body is still read (and thrown away) so that its sender gets the refusal."""
DRAIN_S = 10.0
"""How long a refused body is read at most, for the same reason."""


async def spooled_body(request: Request, folder: Path, limit: int, limit_mb: int) -> Path:
    """The request's body in a private temporary file, refused (the league's one line) past ``limit`` bytes."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        await drained(request.stream())
        raise over_limit(limit_mb)
    fd, name = tempfile.mkstemp(dir=folder, prefix=".form-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            size = 0
            stream = request.stream()
            async for chunk in stream:
                size += len(chunk)
                if size > limit:
                    await drained(stream)
                    raise over_limit(limit_mb)
                await trio.to_thread.run_sync(out.write, chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


async def drained(stream: AsyncIterator[bytes]) -> None:
    """Read what is left of a refused body, up to :data:`DRAINED_BYTES` and :data:`DRAIN_S`, and throw it away: a
    server that answers and closes while its client is still sending resets the connection, and the client (urllib,
    curl, a browser on a slow link) then reports a broken pipe instead of the refusal's line (as nginx lingers)."""
    read = 0
    with trio.move_on_after(DRAIN_S):
        async for chunk in stream:
            read += len(chunk)
            if read > DRAINED_BYTES:
                return


class FormError(LeagueError):
    """An upload form that is not one (no boundary, a part cut short, no archive)."""


FORM_FIELD_BYTES = 1024
"""A text field longer than this (the form's are a bot's name and a token) is not kept."""
UPLOAD_CHUNK = 256 * 1024


@dataclass
class _Part:
    """The part being read: its field name, file name (None for a text field) and what of it is kept."""

    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    name: str = ""
    filename: str | None = None
    text: bytearray = field(default_factory=bytearray)


def form_parts(path: Path, content_type: str) -> tuple[dict[str, str], Path]:
    """A spooled ``multipart/form-data`` body's text fields, and its ``archive`` file written to a private file
    beside it (the caller removes both); parsed by python-multipart, streaming (nothing of the archive is held in
    memory); blocking."""
    kind, params = parse_options_header(content_type)
    boundary = params.get(b"boundary", b"")
    if kind != b"multipart/form-data" or not boundary:
        raise FormError("an upload is a multipart/form-data form (the page's upload form)")
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=".archive-")
    archive_path = Path(name)
    try:
        with os.fdopen(fd, "wb") as archive, open(path, "rb") as body:
            fields, found = _parse(body, boundary, archive)
    except BaseException:
        archive_path.unlink(missing_ok=True)
        raise
    if not found:
        archive_path.unlink(missing_ok=True)
        raise FormError("the upload form holds no archive (its file field, archive)")
    return fields, archive_path


def _parse(body: BinaryIO, boundary: bytes, archive: BinaryIO) -> tuple[dict[str, str], bool]:
    """The text fields, with the ``archive`` file's bytes written to ``archive``; whether there was one."""
    fields: dict[str, str] = {}
    part = _Part()
    header: list[bytes] = [b"", b""]
    found = ended = False

    def begin() -> None:
        nonlocal part
        part = _Part()

    def header_end() -> None:
        part.headers.append((header[0], header[1]))
        header[:] = [b"", b""]

    def headers_done() -> None:
        nonlocal found
        for key, value in part.headers:
            if key.lower() == b"content-disposition":
                _, params = parse_options_header(value)
                part.name = params.get(b"name", b"").decode("utf-8", "replace")
                file_name = params.get(b"filename")
                part.filename = None if file_name is None else file_name.decode("utf-8", "replace")
        if part.filename is not None and part.name == "archive":
            found = True

    def data(chunk: bytes, start: int, end: int) -> None:
        if part.filename is not None and part.name == "archive":
            archive.write(chunk[start:end])
        elif part.filename is None and len(part.text) <= FORM_FIELD_BYTES:
            part.text += chunk[start:end]

    def end() -> None:
        if part.filename is None and len(part.text) <= FORM_FIELD_BYTES:
            fields[part.name] = part.text.decode("utf-8", "replace")

    def body_end() -> None:
        nonlocal ended
        ended = True

    callbacks = {"on_part_begin": begin, "on_part_data": data, "on_part_end": end, "on_headers_finished": headers_done,
                 "on_header_field": lambda c, s, e: header.__setitem__(0, header[0] + c[s:e]),
                 "on_header_value": lambda c, s, e: header.__setitem__(1, header[1] + c[s:e]),
                 "on_header_end": header_end, "on_end": body_end}
    parser = MultipartParser(boundary, callbacks)  # type: ignore[arg-type]
    size = 0
    try:
        while chunk := body.read(UPLOAD_CHUNK):
            size += len(chunk)
            parser.write(chunk)
        parser.finalize()
    except MultipartParseError as error:
        raise FormError(f"the upload form is malformed: {str(error)[:120]}") from None
    if size == 0:
        raise FormError("the upload form is empty")
    if not ended:
        raise FormError("the upload form is cut short (a part without its end)")
    return fields, found


def part_chunks(path: Path) -> Iterator[bytes]:
    """The archive's bytes, as the league's receive reads them (on its worker thread)."""
    with open(path, "rb") as file:
        while chunk := file.read(UPLOAD_CHUNK):
            yield chunk
