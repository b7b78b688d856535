"""Uploads as hostile input: every bad archive refused with its one line and nothing stored, bombs stopped at the
limit, every kit's example packed to one identity from a folder, a tar.gz and a zip, and the store's extraction."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import socket
import stat
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.league.intake.archive import IGNORED_TOP, ArchiveError
from arena.league.rules.config import ArchiveLimits
from arena.league.intake.store import Store, StoreError, _write_file
from support.elf import elf
from support.paths import ROOT

BOTS = ROOT / "bots"
ROOT = BOTS.parent
KITS = ["python", "node", "typescript", "go", "rust", "java", "cpp", "stdio"]
MANIFEST = b'kit = "python"\nentry = "bot.py"\nvariants = ["draw"]\n'
BOT = b"print('hello')\n"
SAFE = {"bot.toml": MANIFEST, "bot.py": BOT}


# ----------------------------------------------------------------------------------------------------------------
# Building archives, hostile ones included


class Member(tarfile.TarInfo):
    """A tar header with the bytes it is written with (TarInfo has slots, this has a dict)."""

    data = b""


def member(name: str | bytes, data: bytes = b"", kind: bytes = tarfile.REGTYPE, mode: int = 0o644,
           link: str = "") -> Member:
    raw = name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
    info = Member(raw)
    info.type, info.mode, info.linkname, info.size = kind, mode, link, len(data)
    info.data = data
    return info


def tar_bytes(members: list[tarfile.TarInfo], gz: bool = True) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT,
                      encoding="utf-8", errors="surrogateescape") as tar:
        for info in members:
            tar.addfile(info, io.BytesIO(info.data) if info.isreg() else None)  # type: ignore[attr-defined]
    return buffer.getvalue()


def files_tar(files: dict[str, bytes], gz: bool = True, extra: list[tarfile.TarInfo] = ()) -> bytes:
    return tar_bytes([member(name, data) for name, data in files.items()] + list(extra), gz)


def zip_bytes(files: dict[str, bytes], modes: dict[str, int] | None = None,
              compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = compression
            info.create_system = 3
            info.external_attr = ((modes or {}).get(name, stat.S_IFREG | 0o644)) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


def listing(root: Path) -> list[tuple[str, int, int]]:
    """Every path under ``root`` with its size and mode: equal before and after means nothing was stored."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            info = path.lstat()
            found.append((str(path.relative_to(root)), info.st_size if path.is_file() else 0, info.st_mode))
    return sorted(found)


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "data")


def refused(store: Store, source: Path, limits: ArchiveLimits = ArchiveLimits()) -> str:
    """The one line an upload is refused with, having checked that the store did not change at all."""
    before = listing(store.root)
    with pytest.raises(ArchiveError) as error:
        store.add(source, limits)
    assert listing(store.root) == before
    message = str(error.value)
    assert "\n" not in message
    return message


def deflate_zeros(count: int, unit: int = 1 << 20) -> bytes:
    """A raw deflate stream of ``count`` zero bytes, built in milliseconds: one fully flushed block of ``unit``
    zeros (byte-aligned, with no back reference across it), repeated; then the final empty block. No end block."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(bytes(unit)) + compressor.flush(zlib.Z_FULL_FLUSH)
    whole, rest = divmod(count, unit)
    tail = b""
    if rest:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        tail = compressor.compress(bytes(rest)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return block * whole + tail


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


FINAL_BLOCK = b"\x03\x00"


def tar_gz_bomb(size: int) -> bytes:
    """A tar.gz whose one file is ``size`` zero bytes (honestly declared in its tar header), plus a manifest."""
    head = files_tar(SAFE, gz=False)[:-1024 * 10]  # the two files, without the end-of-archive blocks
    head = head[:len(head) - len(head) % 512]
    header = member("zeros.bin").tobuf(tarfile.GNU_FORMAT)
    header = tarfile.TarInfo.frombuf(header, "utf-8", "strict")
    header.size = size
    stream = raw_deflate(head + header.tobuf(tarfile.GNU_FORMAT)) + deflate_zeros(size) + FINAL_BLOCK
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + stream + struct.pack("<II", 0, size & 0xFFFFFFFF)


def zip_bomb(actual: int, declared: int) -> bytes:
    """A zip of the manifest, bot.py and 'zeros.bin', whose deflated data inflates to ``actual`` zero bytes while
    its headers declare ``declared`` (the CRC is of nothing: only a reader that read it all would get to it)."""
    entries = [(name, raw_deflate(data), len(data), zlib.crc32(data)) for name, data in SAFE.items()]
    entries.append(("zeros.bin", deflate_zeros(actual) + FINAL_BLOCK, declared, 0))
    out, central = bytearray(), bytearray()
    for name, data, size, crc in entries:
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size, len(name), 0)
        out += name.encode() + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, 0, 8, 0, 0x21, crc, len(data), size,
                               len(name), 0, 0, 0, 0, (stat.S_IFREG | 0o644) << 16, offset) + name.encode()
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0)
    return bytes(out + central + end)


# ----------------------------------------------------------------------------------------------------------------
# Every bad upload: one line, nothing stored

LINK_RULE = "; an upload holds regular files and folders only (links are refused, even inside the folder)"
ONLY = "; an upload holds regular files and folders only"
BAD_TARS = [
    ("absolute", [member("/etc/passwd", b"x")],
     "'/etc/passwd': an absolute path; an upload's paths are relative to the bot's folder"),
    ("dot-dot", [member("../evil.py", b"x")], "'../evil.py': a '..' component; an upload's paths stay inside the "
     "bot's folder"),
    ("dot-dot inside", [member("src/../../evil.py", b"x")],
     "'src/../../evil.py': a '..' component; an upload's paths stay inside the bot's folder"),
    ("symlink out", [member("passwd", kind=tarfile.SYMTYPE, link="/etc/passwd")],
     "'passwd': a symbolic link" + LINK_RULE),
    ("symlink in", [member("again.py", kind=tarfile.SYMTYPE, link="bot.py")],
     "'again.py': a symbolic link" + LINK_RULE),
    ("hard link", [member("again.py", kind=tarfile.LNKTYPE, link="bot.py")], "'again.py': a hard link" + LINK_RULE),
    ("hard link out", [member("shadow", kind=tarfile.LNKTYPE, link="/etc/shadow")],
     "'shadow': a hard link" + LINK_RULE),
    ("char device", [member("null", kind=tarfile.CHRTYPE)], "'null': a device file" + ONLY),
    ("block device", [member("sda", kind=tarfile.BLKTYPE)], "'sda': a device file" + ONLY),
    ("fifo", [member("pipe", kind=tarfile.FIFOTYPE)], "'pipe': a FIFO" + ONLY),
    ("control character", [member("a\x1b[2Jb.py", b"x")], "'a\\x1b[2Jb.py': a control character or undecodable "
     "byte in the file name"),
    ("newline", [member("a\nb.py", b"x")], "'a\\nb.py': a control character or undecodable byte in the file name"),
    ("invalid utf-8", [member(b"caf\xe9.py", b"x")], "file name b'caf\\xe9.py' is not valid UTF-8"),
    ("backslash", [member("src\\bot.py", b"x")], "'src\\\\bot.py': a backslash in the file name"),
    ("long name", [member("x" * 300, b"x")], f"{'x' * 300!r}: a component longer than 255 bytes in the file name"),
    ("twice", [member("bot.py", b"again")], "'bot.py': two entries for the same path"),
    ("file and folder", [member("bot.py/inner.py", b"x")], "'bot.py': both a file and a folder"),
    ("file and folder entry", [member("bot.py", kind=tarfile.DIRTYPE, mode=0o755)],
     "'bot.py': both a file and a folder"),
]


@pytest.mark.parametrize("extra, message", [case[1:] for case in BAD_TARS], ids=[case[0] for case in BAD_TARS])
@pytest.mark.fast
def test_each_bad_tar_member_is_refused_with_its_line(store, tmp_path, extra, message):
    assert refused(store, write(tmp_path, "bot.tar.gz", files_tar(SAFE, extra=extra))) == message


@pytest.mark.fast
def test_a_folder_entry_named_like_a_file_is_refused(store, tmp_path):
    members = [member("bot.py", kind=tarfile.DIRTYPE, mode=0o755)] + [member(n, d) for n, d in SAFE.items()]
    assert refused(store, write(tmp_path, "x.tar", tar_bytes(members, gz=False))) == (
        "'bot.py': both a file and a folder")


BAD_ZIP_MODES = [
    ("symlink", stat.S_IFLNK | 0o777, "'link': a symbolic link" + LINK_RULE),
    ("fifo", stat.S_IFIFO | 0o644, "'link': a FIFO" + ONLY),
    ("device", stat.S_IFCHR | 0o644, "'link': a device file" + ONLY),
    ("socket", stat.S_IFSOCK | 0o644, "'link': a socket" + ONLY),
]


@pytest.mark.parametrize("mode, message", [case[1:] for case in BAD_ZIP_MODES], ids=[c[0] for c in BAD_ZIP_MODES])
@pytest.mark.fast
def test_each_bad_zip_member_is_refused_with_its_line(store, tmp_path, mode, message):
    upload = zip_bytes({**SAFE, "link": b"/etc/passwd"}, modes={"link": mode})
    assert refused(store, write(tmp_path, "bot.zip", upload)) == message


@pytest.mark.parametrize("name, message", [
    ("/etc/passwd", "'/etc/passwd': an absolute path; an upload's paths are relative to the bot's folder"),
    ("../../evil.py", "'../../evil.py': a '..' component; an upload's paths stay inside the bot's folder"),
    ("a\x07b", "'a\\x07b': a control character or undecodable byte in the file name"),
    ("a\x00b", "'a\\x00b': a control character or undecodable byte in the file name"),
])
@pytest.mark.fast
def test_bad_zip_names_are_refused(store, tmp_path, name, message):
    assert refused(store, write(tmp_path, "bot.zip", zip_with_name(name))) == message


def zip_with_name(name: str) -> bytes:
    """A zip of the safe files and one named ``name`` exactly: zipfile would cut a name at NUL, so the name is
    written with '~' for each control character and patched in (the files are stored: '~' is in no data)."""
    placeholder = "".join("~" if ord(c) < 32 or c == "\x7f" else c for c in name)
    upload = zip_bytes({**SAFE, placeholder: b"x"}, compression=zipfile.ZIP_STORED)
    assert upload.count(placeholder.encode()) == 2
    return upload.replace(placeholder.encode(), name.encode())


@pytest.mark.fast
def test_a_zip_name_that_is_not_utf8_is_refused(store, tmp_path):
    upload = zip_bytes({**SAFE, "cafX.py": b"x"}).replace(b"cafX.py", b"caf\xe9.py")
    assert refused(store, write(tmp_path, "bot.zip", upload)) == "file name b'caf\\xe9.py' is not valid UTF-8"


@pytest.mark.fast
def test_an_encrypted_or_oddly_compressed_zip_is_refused(store, tmp_path):
    upload = zip_bytes(SAFE, compression=zipfile.ZIP_BZIP2)
    assert refused(store, write(tmp_path, "bot.zip", upload)) == (
        "'bot.toml': compression method 12; a zip's files must be stored or deflated")
    flagged = bytearray(zip_bytes(SAFE, compression=zipfile.ZIP_STORED))
    central = flagged.index(b"PK\x01\x02")
    flagged[central + 8] |= 1  # general purpose flag bit 0 of the first central directory entry: encrypted
    assert refused(store, write(tmp_path, "enc.zip", bytes(flagged))) == (
        "'bot.toml': encrypted; an upload's files must be readable")


@pytest.mark.parametrize("files, message", [
    ({"bot.py": BOT}, "no bot.toml at the top of the upload"),
    ({"mybot/bot.toml": MANIFEST, "mybot/bot.py": BOT},
     "no bot.toml at the top of the upload (found 'mybot/bot.toml': upload the folder that holds it, or its "
     "contents, e.g. tar czf bot.tar.gz -C mybot .)"),
    ({"bot.toml": b'kit = "cobol"\nentry = "bot.py"\nvariants = ["draw"]\n', "bot.py": BOT},
     "bot.toml: key 'kit' must be one of python, node, typescript, go, rust, java, cpp, stdio, binary, "
     "got 'cobol'"),
    ({"bot.toml": b"kit = ", "bot.py": BOT}, "bot.toml: not valid TOML: Invalid value (at end of document)"),
    ({"bot.toml": MANIFEST.replace(b"bot.py", b"main.py"), "bot.py": BOT},
     "bot.toml: key 'entry' names 'main.py', which is not a file in the upload"),
    ({"bot.toml": MANIFEST.replace(b"bot.py", b"dist/bot.py"), "dist/bot.py": BOT},
     "bot.toml: key 'entry' names 'dist/bot.py', which is not a file in the upload (uploads leave out build "
     "output: bin/, gen/, node_modules/, target/, dist/, .git/ at the top, __pycache__/ anywhere)"),
])
@pytest.mark.fast
def test_a_missing_or_wrong_manifest_is_refused(store, tmp_path, files, message):
    assert refused(store, write(tmp_path, "bot.tar.gz", files_tar(files))) == message
    assert refused(store, write(tmp_path, "bot.zip", zip_bytes(files))) == message


@pytest.mark.fast
def test_not_an_archive_or_a_broken_one_is_refused(store, tmp_path):
    assert refused(store, write(tmp_path, "bot.rar", b"Rar!\x1a\x07\x00" + bytes(600))) == (
        "not a folder, tar, tar.gz or zip archive (by its first bytes)")
    whole = files_tar(SAFE)
    assert refused(store, write(tmp_path, "cut.tar.gz", whole[:len(whole) // 2])) == (
        "not a valid tar.gz archive: the gzip stream is cut short")
    assert refused(store, write(tmp_path, "bad.tar.gz", whole[:10] + b"\xff" * 50)) == (
        "not a valid tar.gz archive: Error -3 while decompressing data: invalid block type")
    assert refused(store, write(tmp_path, "bad.zip", b"PK\x03\x04" + bytes(100))) == (
        "not a valid zip archive: File is not a zip file")
    assert refused(store, tmp_path / "missing.zip") == (
        f"{tmp_path / 'missing.zip'}: cannot read the upload: No such file or directory")
    assert refused(store, write(tmp_path, "text.tar.gz", gzip.compress(b"not a tar" * 100))) == (
        "not a valid tar.gz archive: invalid header")
    assert refused(store, write(tmp_path, "empty.tar.gz", gzip.compress(b""))) == (
        "not a valid tar.gz archive: empty file")
    assert refused(store, write(tmp_path, "cut.tar", files_tar(SAFE, gz=False)[:1000])) == (
        "not a valid tar archive: unexpected end of data")
    assert refused(store, write(tmp_path, "empty", b"")) == (
        "not a folder, tar, tar.gz or zip archive (by its first bytes)")
    os.mkfifo(tmp_path / "fifo")
    assert refused(store, tmp_path / "fifo") == f"{tmp_path / 'fifo'}: not a folder or a file"


@pytest.mark.fast
def test_the_limits_on_size_and_files(store, tmp_path):
    upload = write(tmp_path, "bot.tar.gz", files_tar({**SAFE, "a.py": b"a", "b.py": b"b"}))
    assert refused(store, upload, ArchiveLimits(max_files=3)) == "the upload has more than 3 files"
    assert refused(store, upload, ArchiveLimits(max_compressed_bytes=100)) == (
        "the upload is over the limit of 100 bytes compressed")
    assert refused(store, upload, ArchiveLimits(max_uncompressed_bytes=2000)) == (
        "the upload is over the limit of 2,000 bytes uncompressed")
    archive = write(tmp_path, "bot.zip", zip_bytes({**SAFE, "big.py": bytes(5000)}))
    assert refused(store, archive, ArchiveLimits(max_uncompressed_bytes=4000)) == (
        "the upload is over the limit of 4,000 bytes uncompressed")
    assert refused(store, archive, ArchiveLimits(max_files=2)) == "the upload has more than 2 files"
    folder = tmp_path / "folder"
    folder.mkdir()
    for name, data in {**SAFE, "big.py": bytes(5000)}.items():
        write(folder, name, data)
    assert refused(store, folder, ArchiveLimits(max_uncompressed_bytes=4000)) == (
        "the upload is over the limit of 4,000 bytes uncompressed")
    assert refused(store, folder, ArchiveLimits(max_files=2)) == "the upload has more than 2 files"
    assert store.add(folder, ArchiveLimits(max_files=3, max_uncompressed_bytes=5100)).new


# ----------------------------------------------------------------------------------------------------------------
# Bombs: stopped at the limit, in a process whose files cannot grow past the limit and whose memory is measured

BOMB_LIMIT = 8 * 1000 * 1000
MOST_MEMORY = BOMB_LIMIT // 2
"""The most memory reading a bomb may take: half the upload limit, so a reader that held what it read (the limit's 8
MB at least, before it stops) fails. Reading takes about 0.4 MB; once in a few full runs under load, 2.3 MB."""
BOMB_RUNNER = """
import resource, sys, tempfile, tracemalloc
from arena.league.intake.archive import ArchiveError, ArchiveLimits, pack
resource.setrlimit(resource.RLIMIT_FSIZE, ({fsize}, {fsize}))  # a bigger file kills this process (SIGXFSZ)
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # and reading 10 GB into memory fails
with tempfile.TemporaryDirectory() as warm_work:  # what any first archive of its kind costs once (lazy imports, caches)
    pack(sys.argv[3], warm_work, ArchiveLimits(max_uncompressed_bytes={limit}))
tracemalloc.start()  # from here: what the bomb costs
try:
    pack(sys.argv[1], sys.argv[2], ArchiveLimits(max_uncompressed_bytes={limit}))
    print("accepted")
except ArchiveError as error:
    print(error)
print(tracemalloc.get_traced_memory()[1])
"""


def run_bomb(tmp_path: Path, upload: bytes) -> tuple[str, int]:
    """The refusal of a bomb and the most memory Python allocated meanwhile (after a small archive of its kind was
    packed: the one-time costs of a first archive are not the bomb's); the process may write no file
    bigger than the limit plus a little (a reader that did not count would be killed by the file size limit) and
    has 1 GiB of address space (one that read a bomb into memory would fail, not take the machine's memory)."""
    path = write(tmp_path, "bomb", upload)
    small = write(tmp_path, "small", zip_bytes(SAFE) if upload.startswith(b"PK") else files_tar(SAFE))
    work = tmp_path / "work"
    work.mkdir()
    code = BOMB_RUNNER.format(fsize=BOMB_LIMIT + 2 * 1000 * 1000, limit=BOMB_LIMIT)
    done = subprocess.run([sys.executable, "-c", code, str(path), str(work), str(small)], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert os.listdir(work) == []
    message, peak = done.stdout.splitlines()
    return message, int(peak)


TEN_GB = 10 * 1000 ** 3


def test_a_10_gb_tar_gz_bomb_stops_at_the_limit(tmp_path):
    bomb = tar_gz_bomb(TEN_GB)
    assert len(bomb) < 15 * 1000 * 1000
    message, peak = run_bomb(tmp_path, bomb)
    assert message == f"the upload is over the limit of {BOMB_LIMIT:,} bytes uncompressed"
    assert peak < MOST_MEMORY


def test_a_4_gb_zip_bomb_stops_at_the_limit(tmp_path):
    bomb = zip_bomb(actual=4 * 1000 ** 3, declared=4 * 1000 ** 3)
    message, peak = run_bomb(tmp_path, bomb)
    assert message == f"the upload is over the limit of {BOMB_LIMIT:,} bytes uncompressed"
    assert peak < MOST_MEMORY


def test_a_zip_understating_its_sizes_is_stopped(tmp_path):
    """It declares 1,000 bytes and inflates to 4 GB: never more than the 1,000 is read (then its CRC fails)."""
    message, peak = run_bomb(tmp_path, zip_bomb(actual=4 * 1000 ** 3, declared=1000))
    assert message == "not a valid zip archive: Bad CRC-32 for file 'zeros.bin'"
    assert peak < MOST_MEMORY


@pytest.mark.fast
def test_many_small_lying_zip_members_are_counted_together(store, tmp_path):
    """Each member's declared size is small, but they are counted as read: the total stops at the limit."""
    files = {**SAFE, **{f"part{index}.bin": bytes(1000) for index in range(20)}}
    archive = write(tmp_path, "bot.zip", zip_bytes(files))
    assert refused(store, archive, ArchiveLimits(max_uncompressed_bytes=10_000)) == (
        "the upload is over the limit of 10,000 bytes uncompressed")


# ----------------------------------------------------------------------------------------------------------------
# Folders: packed by the same rules, never following a link


def safe_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    for name, data in SAFE.items():
        write(folder, name, data)
    return folder


@pytest.mark.fast
def test_a_link_out_or_in_is_refused(store, tmp_path):
    folder = safe_folder(tmp_path)
    (folder / "etc").symlink_to("/etc")
    assert refused(store, folder) == "'etc': a symbolic link" + LINK_RULE
    (folder / "etc").unlink()
    (folder / "again.py").symlink_to("bot.py")
    assert refused(store, folder) == "'again.py': a symbolic link" + LINK_RULE


@pytest.mark.fast
def test_a_fifo_is_refused_without_blocking(store, tmp_path):
    folder = safe_folder(tmp_path)
    os.mkfifo(folder / "pipe")
    assert refused(store, folder) == "'pipe': a FIFO" + ONLY


@pytest.mark.fast
def test_a_socket_or_device_is_refused(store, tmp_path):
    folder = safe_folder(tmp_path)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "sock"))
        assert refused(store, folder) == "'sock': a socket" + ONLY
    os.unlink(folder / "sock")
    os.mknod(folder / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    assert refused(store, folder) == "'null': a device file" + ONLY


@pytest.mark.fast
def test_build_output_is_left_out_even_with_links_inside(store, tmp_path):
    folder = safe_folder(tmp_path)
    clean = store.add(folder).sha256
    for name in IGNORED_TOP:
        (folder / name).mkdir()
        write(folder / name, "out", b"built")
        (folder / name / "link").symlink_to("/etc/passwd")
    (folder / "src" / "__pycache__").mkdir(parents=True)
    write(folder / "src" / "__pycache__", "bot.cpython-311.pyc", b"\x00")
    stored = store.add(folder)
    assert stored.sha256 == clean and not stored.new
    assert [entry.path for entry in stored.files] == ["bot.py", "bot.toml"]
    as_tar = tarfile.open(write(tmp_path, "all.tar", b""), "w")
    as_tar.add(folder, arcname=".")
    as_tar.close()
    assert store.add(tmp_path / "all.tar").sha256 == clean


@pytest.mark.fast
def test_setuid_bits_are_stripped_and_modes_normalised(store, tmp_path):
    upload = tar_bytes([member("bot.toml", MANIFEST, mode=0o6777), member("bot.py", BOT, mode=0o4750),
                        member("data.txt", b"d", mode=0o600)])
    stored = store.add(write(tmp_path, "bot.tar.gz", upload))
    with tarfile.open(store.path_of(stored.sha256)) as tar:
        assert [(m.name, oct(m.mode), m.uid, m.gid, m.uname, m.mtime) for m in tar] == [
            ("bot.py", "0o755", 0, 0, "", 0), ("bot.toml", "0o755", 0, 0, "", 0), ("data.txt", "0o644", 0, 0, "", 0)]
    build = tmp_path / "build"
    store.extract_to(stored.sha256, build)
    assert {path.name: oct(path.stat().st_mode) for path in build.iterdir()} == {
        "bot.py": "0o100755", "bot.toml": "0o100755", "data.txt": "0o100644"}


# ----------------------------------------------------------------------------------------------------------------
# Every kit's example: one identity from its folder, a tar.gz and a zip; the store extracts it back


def kept_files(folder: Path) -> dict[str, bytes]:
    """A kit folder's files as an author would archive them, without the build output that .gitignore lists."""
    kept = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts[0] in IGNORED_TOP or "__pycache__" in relative.parts or not path.is_file():
            continue
        kept[relative.as_posix()] = path.read_bytes()
    return kept


def modes_of(folder: Path, files: dict[str, bytes]) -> dict[str, int]:
    return {name: (folder / name).stat().st_mode for name in files}


@pytest.mark.parametrize("kit", KITS)
@pytest.mark.fast
def test_a_kit_is_one_identity_as_folder_tar_gz_or_zip(store, tmp_path, kit):
    folder = BOTS / kit
    files = kept_files(folder)
    modes = modes_of(folder, files)
    from_folder = store.add(folder)
    assert from_folder.manifest.kit == kit
    assert [entry.path for entry in from_folder.files] == sorted(files)
    members = [member(f"./{name}", data, mode=modes[name]) for name, data in files.items()]
    from_tar = store.add(write(tmp_path, "bot.tar.gz", tar_bytes(members)))
    from_zip = store.add(write(tmp_path, "bot.zip", zip_bytes(files, modes)))
    assert from_tar.sha256 == from_zip.sha256 == from_folder.sha256
    assert (from_folder.new, from_tar.new, from_zip.new) == (True, False, False)
    assert [path for path, _, _ in listing(store.root) if path.endswith(".tar")] == [
        f"{from_folder.sha256[:2]}/{from_folder.sha256}.tar"]

    build = tmp_path / "build"
    extracted = store.extract_to(from_folder.sha256, build)
    assert extracted == from_folder.files
    assert kept_files(build) == files
    for name in files:
        assert bool((build / name).stat().st_mode & 0o100) == bool(modes[name] & 0o111), name


# ----------------------------------------------------------------------------------------------------------------
# The store


@pytest.mark.fast
def test_the_store_is_private_and_idempotent(store, tmp_path):
    folder = safe_folder(tmp_path)
    first = store.add(folder)
    before = listing(store.root)
    again = store.add(folder)
    assert (again.sha256, again.new, first.new) == (first.sha256, False, True)
    assert listing(store.root) == before
    path = store.path_of(first.sha256)
    assert path == tmp_path / "data" / "store" / first.sha256[:2] / f"{first.sha256}.tar"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (store.root, store.tmp, path.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert os.listdir(store.tmp) == []


@pytest.mark.fast
def test_extract_needs_a_new_folder_and_follows_no_link(store, tmp_path):
    sha = store.add(safe_folder(tmp_path)).sha256
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "build").symlink_to(outside)
    with pytest.raises(StoreError, match="cannot make the build folder .File exists.; it must be new$"):
        store.extract_to(sha, tmp_path / "build")
    assert os.listdir(outside) == []
    with pytest.raises(StoreError, match="^no version 0{64} in the store$"):
        store.extract_to("0" * 64, tmp_path / "new")
    with pytest.raises(StoreError, match="^expected a SHA-256 of 64 lowercase hex digits, got '../x'$"):
        store.extract_to("../x", tmp_path / "new")


@pytest.mark.fast
def test_a_link_planted_meanwhile_is_not_followed(tmp_path):
    """What a build process racing the extraction could do: put a link where a folder is about to be made."""
    build, outside = tmp_path / "build", tmp_path / "outside"
    build.mkdir()
    outside.mkdir()
    (build / "src").symlink_to(outside)
    fd = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(StoreError, match="^cannot open the folder 'src' in the build folder: Not a directory$"):
            _write_file(fd, "src/bot.py", 0o644, io.BytesIO(b"x"))
        (build / "bot.py").symlink_to(outside / "bot.py")
        with pytest.raises(StoreError, match="^cannot write 'bot.py' into the build folder: File exists$"):
            _write_file(fd, "bot.py", 0o644, io.BytesIO(b"x"))
    finally:
        os.close(fd)
    assert os.listdir(outside) == []


@pytest.mark.fast
def test_extract_re_checks_a_stored_archive(store, tmp_path):
    """An archive planted in the store under its true SHA-256, holding '../escape': refused, nothing written."""
    evil = tar_bytes([member("bot.toml", MANIFEST), member("../escape", b"x")], gz=False)
    sha = hashlib.sha256(evil).hexdigest()
    store.path_of(sha).parent.mkdir()
    store.path_of(sha).write_bytes(evil)
    with pytest.raises(StoreError, match=r"^a stored archive holds '../escape': a '..' component$"):
        store.extract_to(sha, tmp_path / "build")
    assert not (tmp_path / "build").exists() and not (tmp_path / "escape").exists()

    good = store.add(safe_folder(tmp_path)).sha256
    path = store.path_of(good)
    damaged = bytearray(path.read_bytes())
    damaged[600] ^= 1
    path.write_bytes(bytes(damaged))
    with pytest.raises(StoreError, match=f"^the stored archive of {good} is damaged: its SHA-256 is [0-9a-f]{{64}}$"):
        store.extract_to(good, tmp_path / "build")
    assert not (tmp_path / "build").exists()


# ----------------------------------------------------------------------------------------------------------------
# Random names: any safe set of paths gives one identity by every route; any control character is refused

COMPONENT = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N"), include_characters="-_. é☃"),
                    min_size=1, max_size=12).filter(lambda part: part not in (".", "..") and part.strip())
PATH = st.lists(COMPONENT, min_size=1, max_size=3).map("/".join)


def without_clashes(paths: list[str]) -> bool:
    names = set(paths) | {"bot.toml", "bot.py"}
    prefixes = {"/".join(p.split("/")[:end]) for p in names for end in range(1, len(p.split("/")))}
    tops = {p.split("/")[0] for p in names}
    return not (names & prefixes) and not tops & set(IGNORED_TOP) and "__pycache__" not in "/".join(names) \
        and not set(paths) & set(SAFE)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=st.lists(PATH, min_size=1, max_size=6, unique=True).filter(without_clashes), data=st.data())
@pytest.mark.fast
def test_random_names_give_one_identity_by_every_route(tmp_path_factory, paths, data):
    tmp = tmp_path_factory.mktemp("names")
    store = Store(tmp / "data")
    files = {**SAFE, **{path: data.draw(st.binary(max_size=64)) for path in paths}}
    folder = tmp / "bot"
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    shas = {store.add(folder).sha256, store.add(write(tmp, "b.tar.gz", files_tar(files))).sha256,
            store.add(write(tmp, "b.zip", zip_bytes(files))).sha256}
    assert len(shas) == 1
    build = tmp / "build"
    store.extract_to(shas.pop(), build)
    assert kept_files(build) == files


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=PATH, control=st.characters(categories=("Cc",)), at=st.integers(min_value=0))
@pytest.mark.fast
def test_a_control_character_in_a_name_is_refused(tmp_path_factory, path, control, at):
    at %= len(path) + 1
    name = path[:at] + control + path[at:]
    if control == "\x00":  # tar ends a name at NUL; zip keeps it: test the zip
        upload = write(tmp_path_factory.mktemp("nul"), "bot.zip", zip_with_name(name))
    else:
        upload = write(tmp_path_factory.mktemp("cc"), "bot.tar.gz", files_tar({**SAFE, name: b"x"}))
    store = Store(tmp_path_factory.mktemp("data"))
    before = listing(store.root)
    with pytest.raises(ArchiveError) as error:
        store.add(upload)
    assert listing(store.root) == before
    assert str(error.value) == f"{name!r}: a control character or undecodable byte in the file name"


@pytest.mark.fast
def test_concatenated_gzip_members_read_as_one_stream(store, tmp_path):
    whole = files_tar(SAFE, gz=False)
    upload = gzip.compress(whole[:1024]) + gzip.compress(whole[1024:])
    assert store.add(write(tmp_path, "two.tar.gz", upload)).sha256 == store.add(
        write(tmp_path, "one.tar", whole)).sha256


# ----------------------------------------------------------------------------------------------------------------
# The binary kit: the entry must be an executable static ELF for this machine


BINARY_MANIFEST = b'kit = "binary"\nentry = "bot"\nvariants = ["draw"]\n'


def binary_upload(tmp_path: Path, program: bytes, mode: int = 0o755, entry: str = "bot") -> Path:
    manifest = BINARY_MANIFEST.replace(b'"bot"', f'"{entry}"'.encode())
    return write(tmp_path, "bot.tar.gz", tar_bytes([member("bot.toml", manifest), member(entry, program, mode=mode)]))


@pytest.mark.fast
def test_a_static_binary_is_accepted(store, tmp_path):
    if os.uname().machine != "x86_64":
        pytest.skip("the crafted ELF header is for x86_64")
    stored = store.add(binary_upload(tmp_path, elf((6, 1))))
    assert stored.manifest.kit == "binary" and stored.files[0].executable
    go = BOTS / "go" / "bin" / "bot"
    if go.is_file():  # the Go kit's build: CGO_ENABLED=0, a real static binary
        assert store.add(binary_upload(tmp_path, go.read_bytes())).new


@pytest.mark.fast
def test_a_dynamic_unexecutable_or_missing_binary_is_refused(store, tmp_path):
    sh = Path("/bin/sh").resolve().read_bytes()
    assert refused(store, binary_upload(tmp_path, sh)) == (
        "bot.toml: key 'entry' names 'bot': expected a statically linked executable, got one that needs a dynamic "
        "loader (PT_INTERP): link it statically (e.g. CGO_ENABLED=0, or -static)")
    assert refused(store, binary_upload(tmp_path, b"#!/bin/sh\nexec /bin/sh\n" + bytes(64))) == (
        "bot.toml: key 'entry' names 'bot': expected an ELF executable, got a file starting with b'#!/b'")
    assert refused(store, binary_upload(tmp_path, sh, mode=0o644)) == (
        "bot.toml: key 'entry' names 'bot', which is not executable (set its mode, chmod +x)")
    assert refused(store, binary_upload(tmp_path, sh, entry="bin/bot")).startswith(
        "bot.toml: key 'entry' names 'bin/bot', which is not a file in the upload (uploads leave out build output")


def test_a_pax_header_claiming_10_gb_is_stopped(tmp_path):
    """tarfile reads a pax header whole: the counter under it stops it at the limit, so memory stays near it."""
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, TEN_GB
    stream = raw_deflate(header.tobuf(tarfile.GNU_FORMAT)) + deflate_zeros(TEN_GB) + FINAL_BLOCK
    bomb = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + stream + bytes(8)
    message, peak = run_bomb(tmp_path, bomb)
    assert message == f"the upload is over the limit of {BOMB_LIMIT:,} bytes uncompressed"
    assert peak < 3 * BOMB_LIMIT
