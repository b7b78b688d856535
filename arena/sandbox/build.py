"""The build profile of the sandbox: a stranger's build (``go build``, ``cargo build``, ``npm ci``) contained as a bot
is, because its build steps (a ``build.rs``, an npm ``postinstall``, a Maven plugin) are the stranger's code too.

A build runs under bubblewrap with the bot's namespaces (PID, IPC, UTS, mount, and a network namespace with only its
own loopback), as a fresh user when the arena is root, with no capabilities, an allow-listed environment, and in a
cgroup of its own (memory, processes, CPU) that it enters before any of it runs. What it sees: the system's program
folders and the arena's Python read-only (as a bot does), the kit's toolchains and pre-fetched dependency caches
read-only, a private ``/tmp`` capped in size (its ``HOME``), and its build folder at ``/build`` -- its only writable
place that outlives it. When the arena is root that folder is a tmpfs mounted for this build, capped at
``disk_mb`` (and charged to the build's memory cgroup), so a build that writes gigabytes gets "no space left"
instead of filling the host's disk; what it leaves is copied out (regular files, folders and symbolic links only)
once every process of it is gone. A wall-clock timeout kills the whole cgroup; its output goes to a capped log.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from arena.sandbox.cgroups import CgroupError
from arena.sandbox.contain import (
    DEV_INSIDE,
    PROC_INSIDE,
    TMP_INSIDE,
    UID_RANGE,
    SandboxError,
    _arena_package,
    _enter_cgroup,
    _inside_path,
    overlaps,
    sandbox_environment,
    system_view,
)
from arena.sandbox.host import Host, host
from arena.sandbox.limits import Limits
from arena.sandbox.logs import CappedLog

BUILD_DIR_INSIDE = "/build"
PROTO_INSIDE = "/proto"
PROTO_TIME = 946684800
"""The modification time of every .proto file a build sees (2000-01-01): a checkout's own times say when it was
cloned, and CMake or cargo would regenerate the protocol code of a warm build folder made before that clone. What
the files hold is in :func:`proto_digest` instead, which names the warm folder they were built into."""
KILL_WAIT_S = 30.0
"""How long, after a kill, to wait for the last process of a build to be gone (the kernel is quick; a busy machine
is not)."""


@dataclass(frozen=True)
class BuildLimits:
    """What one build may use. The defaults fit a cold ``go build`` or ``cargo build --release`` of a kit's example
    on a small machine."""

    memory_mb: int = 2048
    """MiB of resident memory of the whole build, its ``/tmp`` and (as root) its build folder's tmpfs included."""
    pids: int = 256
    """Processes and threads alive at once (compilers run a few in parallel)."""
    disk_mb: int = 1024
    """MiB of the build folder (a tmpfs when the arena is root): sources, outputs and build caches together."""
    tmp_mb: int = 256
    """MiB of the build's private ``/tmp`` (also its ``HOME``), as ``[limits] tmp_mb`` is a bot's."""
    log_mb: int = 4
    """MiB of the build log; the rest of the build's output is dropped."""
    cpus: float = 1.0
    """CPU time per wall-clock second (1.0 = one core), as a bot's."""
    timeout_s: float = 600.0
    """Seconds of wall-clock time for the whole build; then every process of it is killed."""

    def as_bot_limits(self) -> Limits:
        """The cgroup's share of these limits, in the form the cgroup code takes."""
        return Limits(memory_mb=self.memory_mb, pids=self.pids, log_mb=self.log_mb, tmp_mb=self.tmp_mb,
                      cpus=self.cpus)

    def describe(self) -> str:
        return (f"memory {self.memory_mb} MiB, {self.pids} processes, build folder {self.disk_mb} MiB, /tmp "
                f"{self.tmp_mb} MiB, log {self.log_mb} MiB, {self.cpus:g} CPU, {self.timeout_s:g} s")


DEFAULT_BUILD_LIMITS = BuildLimits()
"""The build limits of a league that sets none (frozen: one value shared by every default argument)."""


@dataclass(frozen=True)
class BuildJob:
    """One contained build: a shell script run in ``/build``, with what it may read and its environment."""

    script: str
    """Run with ``sh -eu`` in the build folder (``set -x`` shows each step in the log)."""
    env: Mapping[str, str] = field(default_factory=dict)
    read_only: Sequence[Path] = ()
    """Toolchains and dependency caches, visible at their own paths, read-only."""


@dataclass(frozen=True)
class BuildOutcome:
    ok: bool
    why: str
    """One line: "built in 12.3 s", "exit status 1 (see the log)", "timed out after 600 s", "over its memory ..."."""
    seconds: float


async def run_build(job: BuildJob, source: Path, out: Path, limits: BuildLimits, log: Path,
                    protected: Sequence[Path] = ()) -> BuildOutcome:
    """Build ``source`` (a folder, left as it is) into ``out`` (a new folder: the source's files plus what the build
    made), contained; the build's output goes to ``log``. ``protected`` are paths the build must not see (checked
    before anything starts: none may be a toolchain or cache bound into it, lie inside one or hold one). Never leaves
    a process or a mount behind."""
    for path in job.read_only:
        for secret in protected:
            if overlaps(path, secret):  # a toolchain inside a protected folder, or holding a protected file
                raise SandboxError(f"the build would see {secret} through {path}")
    machine = host()
    machine.require_sandbox()
    uid = secrets.randbelow(UID_RANGE[1] - UID_RANGE[0]) + UID_RANGE[0] if machine.root else None
    private = Path(tempfile.mkdtemp(prefix="build-", dir=machine.work_base))
    folder = private / "build"
    folder.mkdir()
    mounted = False
    try:
        if machine.root:
            _mount_tmpfs(folder, limits.disk_mb)
            mounted = True
        try:
            _copy_tree(source, folder)
        except OSError as error:
            why = f"the version's files do not fit its build folder of {limits.disk_mb} MiB ({error.strerror})"
            _append(log, f"--- the build failed: {why} ---\n")
            return BuildOutcome(ok=False, why=why, seconds=0.0)
        if uid is not None:
            _chown_tree(folder, uid)
        started = time.perf_counter()
        outcome = await _run(machine, job, folder, private, limits, log, uid)
        seconds = time.perf_counter() - started
        why = outcome or f"built in {seconds:.1f} s"
        _append(log, f"--- the build {'succeeded' if outcome is None else 'failed'}: {why} ---\n")
        if outcome is None:
            out.mkdir(mode=0o755)
            _copy_tree(folder, out, keep_times=True)
        return BuildOutcome(ok=outcome is None, why=why, seconds=seconds)
    finally:
        if mounted:
            _umount(folder)
        shutil.rmtree(private, ignore_errors=True)


async def _run(machine: Host, job: BuildJob, folder: Path, private: Path, limits: BuildLimits, log: Path,
               uid: int | None) -> str | None:
    """Run the job; None when it exited 0, else why it failed."""
    try:
        cgroup = machine.cgroups.new_group(limits.as_bot_limits()) if machine.cgroups is not None else None
    except CgroupError as error:
        raise SandboxError(str(error)) from None
    if cgroup is None:
        raise SandboxError(f"a build needs cgroups for its limits: {machine.cgroup_problem}")
    argv = _bubblewrap(machine, job, folder, private, limits, uid)
    if machine.setpriv is not None:
        argv = [machine.setpriv, "--pdeathsig", "KILL", "--", *argv]
    argv = _enter_cgroup(machine.shell, cgroup.procs_files) + argv
    env = {**sandbox_environment(), **job.env}
    capped = CappedLog(open(log, "wb"), limits.log_mb * 1024 * 1024)
    try:
        try:
            process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=capped.write_fd,
                                       stderr=capped.write_fd, start_new_session=True)
        except OSError as error:
            capped.close_unstarted()
            return f"cannot start the build: {error}"
        capped.start()
        timed_out = False
        with trio.move_on_after(limits.timeout_s):
            status = await _wait(process)
        if process.poll() is None:
            timed_out = True
            os.killpg(process.pid, signal.SIGKILL)
        cgroup.kill()
        status = await _wait(process)
        with trio.CancelScope(shield=True):
            await capped.wait_closed(KILL_WAIT_S)
        over = cgroup.over_limit()
        if timed_out:
            return f"timed out after {limits.timeout_s:g} s (every process of it was killed)"
        if over:
            return f"over its {over} limit (stopped by the kernel)"
        if status != 0:
            return f"exit status {status} (see the build log)" if status > 0 else f"killed by signal {-status}"
        return None
    finally:
        cgroup.remove()


async def _wait(process: subprocess.Popen[bytes]) -> int:
    """Wait for ``process`` through a pidfd, without a thread (see arena.players.process.ChildProcess for why)."""
    if process.poll() is not None:
        return process.returncode
    fd = os.pidfd_open(process.pid)
    try:
        while process.poll() is None:
            await trio.lowlevel.wait_readable(fd)
    finally:
        trio.lowlevel.notify_closing(fd)
        os.close(fd)
    return process.returncode


@functools.cache
def proto_digest() -> str:
    """Sixteen hex digits of the arena's .proto files (their paths and bytes): a warm build folder's protocol."""
    digest = hashlib.sha256()
    root = _arena_package().parent / "proto"
    for path in sorted(root.rglob("*.proto")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _stage_proto(private: Path) -> Path:
    """A copy of the arena's .proto files in the build's private folder, every time :data:`PROTO_TIME`."""
    root = _arena_package().parent / "proto"
    staged = private / "proto"
    for path in sorted(root.rglob("*.proto")):
        target = staged / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    for path in [*staged.rglob("*"), staged]:
        os.utime(path, (PROTO_TIME, PROTO_TIME), follow_symlinks=False)
    return staged


def _bubblewrap(machine: Host, job: BuildJob, folder: Path, private: Path, limits: BuildLimits,
                uid: int | None) -> list[str]:
    """bubblewrap's arguments for a build: the bot's namespaces and system view, the job's read-only toolchains and
    caches, a capped ``/tmp``, and the build folder writable at ``/build``."""
    assert machine.bwrap is not None
    args = [machine.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "build"]
    if uid is None:
        args += ["--unshare-user", "--disable-userns"]
    args += ["--size", str(limits.tmp_mb * 1024 * 1024), "--perms", "1777", "--tmpfs", TMP_INSIDE]
    view = system_view(args, private, uid)
    for path in job.read_only:
        view.ro_bind(Path(path).resolve())
    # The protocol's files at /proto too: a kit's example (bots/<kit>/) finds them at ../../proto, which from
    # /build is /proto (the Rust kit's build.rs, the Java kit's pom.xml), staged with times of their own.
    view.parents_of(Path(PROTO_INSIDE) / "x")
    args += ["--ro-bind", str(_stage_proto(private)), PROTO_INSIDE]
    args += ["--bind", str(folder), BUILD_DIR_INSIDE, "--proc", PROC_INSIDE, "--dev", DEV_INSIDE]
    for mount in (DEV_INSIDE, PROC_INSIDE, "/"):
        args += ["--remount-ro", mount]
    args += ["--chdir", BUILD_DIR_INSIDE]
    if uid is not None:
        assert machine.setpriv is not None, "setpriv (util-linux) is needed to run builds as their own user"
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", machine.setpriv, f"--reuid={uid}",
                 f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    else:
        args.append("--")
    return [*args, machine.shell, "-eu", "-c", f"set -x\n{job.script}"]


def _copy_tree(source: Path, dest: Path, keep_times: bool = False) -> None:
    """Copy the folders, regular files and symbolic links of ``source`` into the existing folder ``dest``, never
    following a link; anything else a build left (a FIFO, a socket) is dropped. Files are the arena's, readable by
    all (a bot runs as a user of its own), executable when they were. ``keep_times`` keeps the files' modification
    times (what a build made: a warm build folder kept by prepare_kits must look up to date to make); a version's
    sources going in get the time of the copy instead, newer than any warm output, so make recompiles what they
    feed whatever times the archive said."""
    for root, dirs, files in os.walk(source, followlinks=False):
        rel = Path(root).relative_to(source)
        for name in dirs + files:
            src, dst = Path(root) / name, dest / rel / name
            info = src.lstat()
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(src), dst)
            elif stat.S_ISDIR(info.st_mode):
                dst.mkdir(mode=0o755)
                os.chmod(dst, 0o755)
            elif stat.S_ISREG(info.st_mode):
                with open(src, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as reading, \
                        open(dst, "xb") as writing:
                    shutil.copyfileobj(reading, writing)
                os.chmod(dst, 0o755 if info.st_mode & 0o100 else 0o644)
                if keep_times:
                    os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]


def _chown_tree(folder: Path, uid: int) -> None:
    """The build's own user owns its build folder (it writes nothing else)."""
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files, ""]:
            os.lchown(Path(root) / name, uid, uid)


def _append(log: Path, line: str) -> None:
    with open(log, "ab") as file:
        file.write(line.encode())


_libc = ctypes.CDLL(None, use_errno=True)
MNT_DETACH = 2


def _mount_tmpfs(folder: Path, size_mb: int) -> None:
    """A tmpfs of ``size_mb`` at ``folder``: the build's disk cap (root only). No device, setuid or exec bits
    honoured beyond what a build needs (it must run what it compiles, so exec stays)."""
    options = f"size={size_mb}m,mode=0755".encode()
    flags = 0x2 | 0x4  # MS_NOSUID | MS_NODEV
    if _libc.mount(b"tmpfs", str(folder).encode(), b"tmpfs", flags, options) != 0:
        error = ctypes.get_errno()
        raise SandboxError(f"cannot mount the build folder's tmpfs at {folder}: {os.strerror(error)}")


def _umount(folder: Path) -> None:
    _libc.umount2(str(folder).encode(), MNT_DETACH)


def inside_path() -> str:
    """The PATH a build gets (the arena's Python first, then the system's), for recipes that put a toolchain first."""
    return _inside_path()
