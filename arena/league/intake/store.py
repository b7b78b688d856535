"""The bot store: canonical archives on disk by their SHA-256, ``<data>/store/<sha[:2]>/<sha>.tar``.

A version is immutable, so a stored archive is never rewritten: storing the same archive twice finds it there and
does nothing. An archive appears whole or not at all (written to a temporary file in the store, fsynced, renamed,
and the folder fsynced), so a crash never leaves half an archive under a version's name. Folders are 0700 and files
0600: uploads are strangers' code, and another author must not read them off the disk.

Extracting for a build re-checks what it writes, as if the archive were an upload again: the archive's SHA-256 must
be its name, every member a regular file with a plain relative path, and every file is created relative to folder
descriptors opened without following links, in a build folder that did not exist before.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from arena.league.intake.archive import (
    CHUNK,
    DEFAULT_LIMITS,
    EXECUTABLE_MODE,
    FILE_MODE,
    FileEntry,
    Packed,
    iter_canonical,
    pack,
)
from arena.league.rules.config import ArchiveLimits
from arena.league.rules.errors import LeagueError
from arena.league.rules.manifest import Manifest, path_problem

SHA256_PATTERN = re.compile(r"[0-9a-f]{64}")
FOLDER_MODE, ARCHIVE_MODE = 0o700, 0o600


class StoreError(LeagueError):
    """The store cannot do what was asked; one line, for the operator."""


@dataclass(frozen=True)
class Stored:
    """A version in the store: its identity, files and manifest (from the upload that stored it)."""

    sha256: str
    files: tuple[FileEntry, ...]
    manifest: Manifest
    new: bool
    """False when the same archive was in the store already (the upload was a no-op)."""


class Store:
    """Content-addressed canonical archives under ``<data>/store``; temporary files in ``<data>/store/tmp``."""

    def __init__(self, data: str | os.PathLike[str]) -> None:
        self.root = Path(data) / "store"
        self.tmp = self.root / "tmp"
        for folder in (self.root, self.tmp):
            folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
            os.chmod(folder, FOLDER_MODE)

    def path_of(self, sha256: str) -> Path:
        if not SHA256_PATTERN.fullmatch(sha256):
            raise StoreError(f"expected a SHA-256 of 64 lowercase hex digits, got {sha256!r}")
        return self.root / sha256[:2] / f"{sha256}.tar"

    def has(self, sha256: str) -> bool:
        return self.path_of(sha256).is_file()

    def add(self, source: str | os.PathLike[str], limits: ArchiveLimits = DEFAULT_LIMITS) -> Stored:
        """Check an upload (a folder or an archive) and store it; an ArchiveError stores nothing."""
        packed = pack(source, self.tmp, limits)
        new = self.put(packed)
        return Stored(packed.sha256, packed.files, packed.manifest, new)

    def put(self, packed: Packed) -> bool:
        """Move a packed upload's archive into the store (True), or drop it if that version is there (False)."""
        target = self.path_of(packed.sha256)
        if target.is_file():
            packed.discard()
            return False
        try:
            target.parent.mkdir(mode=FOLDER_MODE, exist_ok=True)
            os.chmod(packed.path, ARCHIVE_MODE)
            _fsync_file(packed.path)
            os.rename(packed.path, target)
            _fsync_folder(target.parent)
            _fsync_folder(self.root)
        except OSError as error:
            packed.discard()
            raise StoreError(f"cannot store {packed.sha256}: {error.strerror}") from None
        return True

    def remove(self, sha256: str) -> bool:
        """Remove a version's archive (a version deleted to respect ``versions_kept``, whose archive no other version
        has); True when there was one."""
        try:
            os.unlink(self.path_of(sha256))
        except FileNotFoundError:
            return False
        _fsync_folder(self.path_of(sha256).parent)
        return True

    def extract_to(self, sha256: str, dest: str | os.PathLike[str]) -> tuple[FileEntry, ...]:
        """Write a version's files into ``dest``, a new folder (its parent must exist); on any error, no ``dest``."""
        source = self.path_of(sha256)
        try:
            archive = open(source, "rb")
        except FileNotFoundError:
            raise StoreError(f"no version {sha256} in the store") from None
        with archive:
            actual = hashlib.file_digest(archive, "sha256").hexdigest()
            if actual != sha256:
                raise StoreError(f"the stored archive of {sha256} is damaged: its SHA-256 is {actual}")
            archive.seek(0)
            try:
                os.mkdir(dest, FOLDER_MODE)
            except OSError as error:
                raise StoreError(f"{dest}: cannot make the build folder ({error.strerror}); it must be new") from None
            try:
                dest_fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
                try:
                    return _extract_members(archive, dest_fd)
                finally:
                    os.close(dest_fd)
            except BaseException:
                shutil.rmtree(dest, ignore_errors=True)  # fd-based on Linux: follows no link inside
                raise


def _extract_members(archive: BinaryIO, dest_fd: int) -> tuple[FileEntry, ...]:
    files: list[FileEntry] = []
    seen: set[str] = set()
    try:
        for tar, member in iter_canonical(archive):
            _recheck(member, seen)
            data = tar.extractfile(member)
            assert data is not None
            files.append(_write_file(dest_fd, member.name, member.mode, data))
    except (tarfile.TarError, EOFError) as error:
        raise StoreError(f"a stored archive cannot be read: {error}") from None
    return tuple(files)


def _recheck(member: tarfile.TarInfo, seen: set[str]) -> None:
    """The rules of an upload once more: a plain relative path, once, a regular file with a normal mode."""
    problem = path_problem(member.name)
    if problem or member.type != tarfile.REGTYPE or member.mode not in (FILE_MODE, EXECUTABLE_MODE) \
            or member.name in seen:
        why = problem or ("not a regular file" if member.type != tarfile.REGTYPE else
                          "a second entry" if member.name in seen else f"mode {member.mode:o}")
        raise StoreError(f"a stored archive holds {member.name!r}: {why}")
    seen.add(member.name)


def _write_file(dest_fd: int, path: str, mode: int, data: IO[bytes]) -> FileEntry:
    *folders, name = path.split("/")
    parent = _open_folders(dest_fd, folders)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=parent)
    except OSError as error:
        raise StoreError(f"cannot write {path!r} into the build folder: {error.strerror}") from None
    finally:
        if parent != dest_fd:
            os.close(parent)
    digest = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := data.read(CHUNK):
            out.write(chunk)
            digest.update(chunk)
            size += len(chunk)
        os.fchmod(out.fileno(), mode)  # not the umask's
    return FileEntry(path, size, mode == EXECUTABLE_MODE, digest.hexdigest())


def _open_folders(dest_fd: int, folders: list[str]) -> int:
    """The folder ``folders`` below ``dest_fd``, made as needed and opened without following a link at any step."""
    fd = dest_fd
    for folder in folders:
        try:
            os.mkdir(folder, EXECUTABLE_MODE, dir_fd=fd)
        except FileExistsError:
            pass
        try:
            child = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError as error:
            raise StoreError(f"cannot open the folder {folder!r} in the build folder: {error.strerror}") from None
        finally:
            if fd != dest_fd:
                os.close(fd)
        fd = child
    return fd


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
