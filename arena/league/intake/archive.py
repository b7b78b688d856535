"""An upload (a folder, a tar, a tar.gz or a zip) read as hostile input into one canonical archive and its file list.

Nothing of an upload is ever extracted: every member's bytes go, through counters, into one spool file of this
process's own making, and the canonical archive is written from that spool. So an absolute path, a '..', a link or a
device in an upload can never touch the disk; it is refused with one line, and nothing is kept.

Limits are counted on the bytes as they are read, never on what headers say: a gzip of 10 GB of zeros stops at the
uncompressed limit (the gzip stream is inflated here, at most 64 KiB at a time), and a zip whose headers lie about
sizes is stopped by the same counter (zipfile also never returns more than a member's declared size and checks its
CRC). The memory used is a buffer or two; the disk used is at most the uncompressed limit twice (spool + archive).

Decisions (see the docs' "archive rules"):

- Links, symbolic or hard, are refused, even those that stay inside the folder: a version holds regular files and
  folders only, so what is built is what was read. Devices, FIFOs and sockets are refused.
- Modes are normalised: a file is 0755 if any executable bit was set, else 0644; setuid, setgid and sticky bits are
  stripped (never refused: archivers set them by accident, and the canonical archive cannot carry them).
- Build output is left out, as the kits' .gitignore does: the top-level folders bin/, gen/, node_modules/, target/,
  dist/ and .git/, and __pycache__/ at any depth. Their members are never read into the version (a tar's bytes still
  count towards the uncompressed limit, as they must be inflated to be skipped).
- Empty folders are dropped; the canonical archive lists files only.

The version's identity is the SHA-256 of the canonical archive: a POSIX (pax) tar of the kept files sorted by path,
with mtime 0, uid and gid 0, no owner names and the modes above. The same files, from a folder, a tar.gz or a zip,
give the same identity.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO, cast

from arena.league.rules.config import MIB, ArchiveLimits
from arena.league.rules.errors import LeagueError
from arena.league.rules.manifest import (
    BINARY,
    MANIFEST_NAME,
    Manifest,
    ManifestError,
    check_static_elf,
    parse_manifest,
    path_problem,
)

CHUNK = 64 * 1024
IGNORED_TOP = ("bin", "gen", "node_modules", "target", "dist", ".git")
"""Top-level folders left out of every upload: the kits' build output (as their .gitignore says) and git's folder."""
IGNORED_ANYWHERE = ("__pycache__",)
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
FILE_MODE, EXECUTABLE_MODE = 0o644, 0o755


def size_text(size: int) -> str:
    """A size limit as messages show it: whole MiB as "16 MiB", anything else in bytes ("2,000 bytes")."""
    return f"{size // MIB} MiB" if size and size % MIB == 0 else f"{size:,} bytes"


DEFAULT_LIMITS = ArchiveLimits()
"""The limits of an upload when no league gives its own (frozen: one shared default)."""


class ArchiveError(LeagueError):
    """An upload refused; the message is one line for the author. (Not a ValueError: tarfile catches some.)"""


@dataclass(frozen=True)
class FileEntry:
    """One file of a version, as the canonical archive holds it."""

    path: str
    size: int
    executable: bool
    sha256: str


@dataclass
class Packed:
    """A checked upload: its canonical archive (a temporary file until a store takes it), identity and files."""

    sha256: str
    path: Path
    files: tuple[FileEntry, ...]
    manifest: Manifest

    def discard(self) -> None:
        """Remove the temporary archive (a store that took it has renamed it already)."""
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> Packed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def pack(source: str | os.PathLike[str], workdir: str | os.PathLike[str],
         limits: ArchiveLimits = DEFAULT_LIMITS) -> Packed:
    """Check an upload and write its canonical archive into ``workdir``; an ArchiveError leaves nothing behind."""
    spool_fd, spool_name = tempfile.mkstemp(dir=workdir, prefix=".spool-")
    try:
        with os.fdopen(spool_fd, "w+b") as spool:
            collector = _Collector(spool, _Budget(limits))
            _read_source(Path(source), collector, limits)
            manifest = _checked_manifest(collector)
            return _write_canonical(collector, manifest, Path(workdir))
    finally:
        os.unlink(spool_name)


# ----------------------------------------------------------------------------------------------------------------
# Counting


class _Budget:
    """The uncompressed bytes and the files of one upload, refused the moment one goes over its limit."""

    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.bytes = 0
        self.files = 0

    def take_bytes(self, count: int) -> None:
        self.bytes += count
        if self.bytes > self.limits.max_uncompressed_bytes:
            raise ArchiveError(f"the upload is over the limit of {size_text(self.limits.max_uncompressed_bytes)} "
                               "uncompressed")

    def take_file(self) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise ArchiveError(f"the upload has more than {self.limits.max_files:,} files")


class _Counted(io.RawIOBase):
    """A file read through a counter (``take``, which raises past a limit), at most one chunk at a time."""

    def __init__(self, raw: IO[bytes] | io.RawIOBase, take: Callable[[int], None]) -> None:
        self.raw = raw
        self.take = take

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.raw.read(min(len(buffer), CHUNK))
        self.take(len(data))
        buffer[:len(data)] = data
        return len(data)


class _Gunzip(io.RawIOBase):
    """A gzip stream inflated at most one buffer at a time, every byte counted before it is returned.

    zlib's ``max_length`` keeps a bomb's output to the buffer asked for; the counter stops the stream at the limit.
    Concatenated gzip members are read one after another, as gzip(1) does.
    """

    def __init__(self, raw: IO[bytes] | io.RawIOBase, take: Callable[[int], None]) -> None:
        self.raw = raw
        self.take = take
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.pending = b""
        self.done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self.done:
            if not self.pending:
                self.pending = self.raw.read(CHUNK)
                if not self.pending:
                    if self.inflater.eof:
                        self.done = True
                        break
                    raise ArchiveError("not a valid tar.gz archive: the gzip stream is cut short")
            if self.inflater.eof:  # another gzip member follows
                self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                data = self.inflater.decompress(self.pending, min(len(buffer), CHUNK))
            except zlib.error as error:
                raise ArchiveError(f"not a valid tar.gz archive: {error}") from None
            self.pending = self.inflater.unconsumed_tail or self.inflater.unused_data
            if data:
                self.take(len(data))
                buffer[:len(data)] = data
                return len(data)
        return 0


# ----------------------------------------------------------------------------------------------------------------
# Collecting: every source gives members; the collector checks each one and spools the kept files' bytes


@dataclass
class _Spooled:
    offset: int
    size: int
    executable: bool
    sha256: str


@dataclass
class _Collector:
    spool: BinaryIO
    budget: _Budget
    count_bytes: bool = True
    """False for a tar: its whole inflated stream is counted already, headers and left-out members too."""
    files: dict[str, _Spooled] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)

    def path_of(self, raw: bytes) -> str | None:
        """The normal path of a member's name, or None for the root folder and for left-out build output."""
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ArchiveError(f"file name {raw!r} is not valid UTF-8") from None
        if name.startswith("/"):
            raise ArchiveError(f"{name!r}: an absolute path; an upload's paths are relative to the bot's folder")
        parts = [part for part in name.split("/") if part not in ("", ".")]
        path = "/".join(parts)
        if not path:
            return None
        problem = path_problem(path)
        if problem == "a '..' component":
            raise ArchiveError(f"{name!r}: a '..' component; an upload's paths stay inside the bot's folder")
        if problem:
            raise ArchiveError(f"{name!r}: {problem} in the file name")
        if parts[0] in IGNORED_TOP or any(part in IGNORED_ANYWHERE for part in parts):
            return None
        return path

    def add_folder(self, path: str) -> None:
        self.folders.add(path)

    def add_file(self, path: str, mode: int, data: IO[bytes]) -> None:
        """Spool one regular file's bytes (counted as read, whatever a header declared), once per path."""
        if path in self.files:
            raise ArchiveError(f"{path!r}: two entries for the same path")
        self.budget.take_file()
        offset = self.spool.seek(0, os.SEEK_END)
        digest = hashlib.sha256()
        size = 0
        while chunk := data.read(CHUNK):
            if self.count_bytes:
                self.budget.take_bytes(len(chunk))
            digest.update(chunk)
            self.spool.write(chunk)
            size += len(chunk)
        self.files[path] = _Spooled(offset, size, bool(mode & 0o111), digest.hexdigest())

    def refuse_file_folder_clashes(self) -> None:
        for path in sorted(self.files):
            parts = path.split("/")
            for end in range(1, len(parts)):
                prefix = "/".join(parts[:end])
                if prefix in self.files:
                    raise ArchiveError(f"{prefix!r}: both a file and a folder")
        clash = next((path for path in sorted(self.folders) if path in self.files), None)
        if clash:
            raise ArchiveError(f"{clash!r}: both a file and a folder")

    def read(self, path: str) -> bytes:
        spooled = self.files[path]
        self.spool.seek(spooled.offset)
        return self.spool.read(spooled.size)

    def opened(self, path: str) -> BinaryIO:
        """A file of the upload, readable and seekable (for the ELF check)."""
        spooled = self.files[path]
        # a raw slice reads and seeks as every caller uses it; BinaryIO is the name they take it by
        return cast(BinaryIO, _Range(self.spool, spooled.offset, spooled.size))


class _Range(io.RawIOBase):
    """A slice of the spool as a file of its own."""

    def __init__(self, spool: BinaryIO, offset: int, size: int) -> None:
        self.spool, self.offset, self.size, self.position = spool, offset, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, position: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.position, 2: self.size}[whence]
        self.position = max(0, min(self.size, base + position))
        return self.position

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self.size - self.position)
        self.spool.seek(self.offset + self.position)
        data = self.spool.read(count)
        buffer[:len(data)] = data
        self.position += len(data)
        return len(data)


def _refuse_kind(name: str, kind: str) -> None:
    raise ArchiveError(f"{name!r}: {kind}; an upload holds regular files and folders only"
                       + (" (links are refused, even inside the folder)" if "link" in kind else ""))


# ----------------------------------------------------------------------------------------------------------------
# Sources


def _read_source(source: Path, collector: _Collector, limits: ArchiveLimits) -> None:
    if source.is_dir():
        _read_folder(source, collector)
        return
    try:
        info = source.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block, a device never end
            raise ArchiveError(f"{source}: not a folder or a file")
        size = info.st_size
        with open(source, "rb") as raw:
            head = raw.read(512)
    except OSError as error:
        raise ArchiveError(f"{source}: cannot read the upload: {error.strerror}") from None
    if size > limits.max_compressed_bytes:
        raise ArchiveError(f"the upload is over the limit of {size_text(limits.max_compressed_bytes)} compressed")
    if head.startswith(ZIP_MAGICS):
        _read_zip(source, collector)
    elif head.startswith(GZIP_MAGIC) or head[257:262] == b"ustar":
        _read_tar(source, collector, limits, gzipped=head.startswith(GZIP_MAGIC))
    else:
        raise ArchiveError("not a folder, tar, tar.gz or zip archive (by its first bytes)")


def _read_tar(source: Path, collector: _Collector, limits: ArchiveLimits, gzipped: bool) -> None:
    """A tar read as a stream (never seeking), the inflated bytes counted by the budget before tarfile sees them."""
    collector.count_bytes = False
    budget = collector.budget

    seen = 0

    def over_compressed(count: int) -> None:  # the size was checked; this holds for a file that grows meanwhile
        nonlocal seen
        seen += count
        if seen > limits.max_compressed_bytes:
            raise ArchiveError(f"the upload is over the limit of {size_text(limits.max_compressed_bytes)} compressed")

    kind = "tar.gz" if gzipped else "tar"
    with open(source, "rb") as file:
        raw = _Counted(file, over_compressed)
        stream = _Gunzip(raw, budget.take_bytes) if gzipped else _Counted(raw, budget.take_bytes)
        try:
            with tarfile.open(fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape") as tar:
                for member in tar:
                    _add_tar_member(tar, member, collector)
        except (tarfile.TarError, EOFError, OSError) as error:
            raise ArchiveError(f"not a valid {kind} archive: {error}") from None


def _add_tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, collector: _Collector) -> None:
    raw = member.name.encode("utf-8", "surrogateescape")
    path = collector.path_of(raw)
    if path is None:
        return
    if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
        data = tar.extractfile(member)
        assert data is not None
        collector.add_file(path, member.mode, data)
    elif member.isdir():
        collector.add_folder(path)
    else:
        _refuse_kind(member.name, _TAR_KINDS.get(member.type, f"an entry of tar type {member.type!r}"))


_TAR_KINDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.CHRTYPE: "a device file",
              tarfile.BLKTYPE: "a device file", tarfile.FIFOTYPE: "a FIFO",
              tarfile.GNUTYPE_SPARSE: "a sparse file", tarfile.CONTTYPE: "a contiguous file"}


def _read_zip(source: Path, collector: _Collector) -> None:
    """A zip read member by member; each member's bytes counted as inflated, whatever its headers declare."""
    try:
        with zipfile.ZipFile(source) as archive:
            for info in archive.infolist():
                _add_zip_member(archive, info, collector)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError) as error:
        raise ArchiveError(f"not a valid zip archive: {error}") from None


def _add_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, collector: _Collector) -> None:
    raw = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    path = collector.path_of(raw)
    if path is None:
        return
    mode = info.external_attr >> 16 if info.create_system == 3 else 0
    kind = stat.S_IFMT(mode)
    if info.is_dir() or kind == stat.S_IFDIR:
        collector.add_folder(path)
        return
    if kind not in (0, stat.S_IFREG):
        _refuse_kind(info.orig_filename, _MODE_KINDS.get(kind, f"a file of type {kind:o}"))
    if info.flag_bits & 0x1:
        raise ArchiveError(f"{info.orig_filename!r}: encrypted; an upload's files must be readable")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ArchiveError(f"{info.orig_filename!r}: compression method {info.compress_type}; a zip's files must be "
                           "stored or deflated")
    with archive.open(info) as data:
        collector.add_file(path, mode, data)


_MODE_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFCHR: "a device file", stat.S_IFBLK: "a device file",
               stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


def _read_folder(root: Path, collector: _Collector) -> None:
    """A folder read through directory file descriptors, never following a symbolic link (not even in a race)."""
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise ArchiveError(f"{root}: cannot read the folder: {error.strerror}") from None
    try:
        _read_folder_fd(root_fd, b"", collector)
    except OSError as error:  # a folder that changes while it is read
        raise ArchiveError(f"{root}: cannot read the folder: {error.strerror}") from None
    finally:
        os.close(root_fd)


def _read_folder_fd(folder_fd: int, prefix: bytes, collector: _Collector) -> None:
    with os.scandir(folder_fd) as scan:
        names = sorted(os.fsencode(entry.name) for entry in scan)
    for name in names:
        raw = prefix + name
        path = collector.path_of(raw)
        if path is None:
            continue
        info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            collector.add_folder(path)
            child = _open_no_follow(name, folder_fd, os.O_DIRECTORY, path)
            try:
                _read_folder_fd(child, raw + b"/", collector)
            finally:
                os.close(child)
        elif stat.S_ISREG(info.st_mode):
            fd = _open_no_follow(name, folder_fd, os.O_NONBLOCK, path)
            with os.fdopen(fd, "rb") as data:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    _refuse_kind(path, "not a regular file")
                collector.add_file(path, os.fstat(fd).st_mode, data)
        else:
            _refuse_kind(path, _MODE_KINDS.get(stat.S_IFMT(info.st_mode), "a special file"))


def _open_no_follow(name: bytes, folder_fd: int, flags: int, path: str) -> int:
    try:
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | flags, dir_fd=folder_fd)
    except OSError as error:  # ELOOP: it became a link since it was listed
        raise ArchiveError(f"{path!r}: cannot be read ({error.strerror})") from None


# ----------------------------------------------------------------------------------------------------------------
# The manifest, and the canonical archive


def _checked_manifest(collector: _Collector) -> Manifest:
    collector.refuse_file_folder_clashes()
    if MANIFEST_NAME not in collector.files:
        nested = sorted(path for path in collector.files if path.endswith("/" + MANIFEST_NAME))
        hint = (f" (found {nested[0]!r}: upload the folder that holds it, or its contents, e.g. "
                f"tar czf bot.tar.gz -C {nested[0].rsplit('/', 1)[0]} .)") if nested else ""
        raise ArchiveError(f"no {MANIFEST_NAME} at the top of the upload{hint}")
    try:
        manifest = parse_manifest(collector.read(MANIFEST_NAME))
        _check_entry(manifest, collector)
    except ManifestError as error:
        raise ArchiveError(f"{MANIFEST_NAME}: {error}") from None
    return manifest


def _check_entry(manifest: Manifest, collector: _Collector) -> None:
    entry = manifest.entry
    if entry not in collector.files:
        parts = entry.split("/")
        left_out = parts[0] in IGNORED_TOP or any(part in IGNORED_ANYWHERE for part in parts)
        why = (f" (uploads leave out build output: {', '.join(name + '/' for name in IGNORED_TOP)} at the top, "
               f"{IGNORED_ANYWHERE[0]}/ anywhere)") if left_out else ""
        raise ManifestError(f"key 'entry' names {entry!r}, which is not a file in the upload{why}")
    if manifest.kit == BINARY:
        spooled = collector.files[entry]
        if not spooled.executable:
            raise ManifestError(f"key 'entry' names {entry!r}, which is not executable (set its mode, chmod +x)")
        try:
            check_static_elf(collector.opened(entry), spooled.size)
        except ManifestError as error:
            raise ManifestError(f"key 'entry' names {entry!r}: {error}") from None


def canonical_info(entry: FileEntry) -> tarfile.TarInfo:
    """The tar header of a file in a canonical archive: nothing but its path, size and executable bit."""
    info = tarfile.TarInfo(entry.path)
    info.size = entry.size
    info.mode = EXECUTABLE_MODE if entry.executable else FILE_MODE
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    return info


def _write_canonical(collector: _Collector, manifest: Manifest, workdir: Path) -> Packed:
    files = tuple(FileEntry(path, spooled.size, spooled.executable, spooled.sha256)
                  for path, spooled in sorted(collector.files.items()))
    fd, name = tempfile.mkstemp(dir=workdir, prefix=".upload-", suffix=".tar")
    try:
        with os.fdopen(fd, "w+b") as out:
            with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
                for entry in files:
                    tar.addfile(canonical_info(entry), collector.opened(entry.path))
            out.flush()
            os.fsync(out.fileno())
            out.seek(0)
            digest = hashlib.file_digest(out, "sha256").hexdigest()
    except BaseException:
        os.unlink(name)
        raise
    return Packed(sha256=digest, path=Path(name), files=files, manifest=manifest)


def iter_canonical(stream: BinaryIO) -> Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]:
    """The members of a canonical archive, read as a stream (for a store re-checking what it extracts)."""
    with tarfile.open(fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape") as tar:
        for member in tar:
            yield tar, member
