"""Turn a bot's command into a contained command: the one place that decides what a bot can see and do.

A contained bot runs under bubblewrap with its own PID, IPC, UTS, network and mount namespaces. Its filesystem is a
fresh tmpfs holding only: the system's program folders read-only (``/usr`` and the ``/bin``, ``/lib`` links), a few
files of ``/etc`` that programs need to start (the loader cache, certificates, alternatives, the JVM's settings),
the arena's Python environment read-only (so ``python bot.py`` with ``arena.botkit`` works), the protocol's
``.proto`` files (for bots that load them at run time), the bot's own folder
read-only, a private ``/tmp`` capped in size (also its ``HOME``), a ``/proc`` showing only its own processes, and a
folder for its socket at ``/run/arena``. Those two are its only writable places, and both are tmpfs mounts of the
sandbox's own, capped in size: ``/tmp`` at ``tmp_mb``, ``/run/arena`` at a few KiB (a socket takes no room), so
nothing it writes can grow the host's disk. The arena reaches the socket from outside through the sandbox's first
process (``/proc/<pid>/root/run/arena``, the pid told by bubblewrap). Every other mount is read-only, the root and
``/dev`` included. No network device but its own loopback. A seccomp filter (:mod:`.syscalls`) refuses the calls
that lock or watch a file, so two sandboxes of one bot cannot signal each other through a file both see.
When the arena is root the bot runs as a user of its own (a fresh uid per start, no capabilities, no new privileges)
so nothing it does outside its namespaces has the arena's rights; otherwise bubblewrap maps it to the arena's user in
a user namespace where it cannot make further namespaces. Its environment is an allow-list, it inherits no file
descriptor but its standard streams, and it enters its cgroup (or gets its rlimits) before anything of it runs.
Stopping a bot kills bubblewrap, whose PID namespace takes every process of the bot with it, ``setsid`` or not; the
cgroup is killed too, as a second line.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.sandbox.cgroups import BotCgroup, CgroupError
from arena.sandbox.host import Host, host
from arena.sandbox.limits import DEFAULT_LIMITS, Limits
from arena.sandbox.syscalls import FILTER_NAME, program_fd, refusal_line

LISTEN_DIR_INSIDE = "/run/arena"
SOCKET_INSIDE = f"{LISTEN_DIR_INSIDE}/bot.sock"
"""Where a sandboxed bot listens (``unix:`` and this, in its ``DOMINOES_BOT_LISTEN``)."""
TMP_INSIDE = "/tmp"
"""The sandbox's private tmpfs, capped at ``tmp_mb``: also its ``HOME`` and ``TMPDIR``."""
PROC_INSIDE = "/proc"
DEV_INSIDE = "/dev"
IDENTITY_FILES = ("passwd", "group")
"""The files of ``/etc`` made for each start, naming only the sandbox's own user (runtimes such as the JVM look it
up)."""
SOCKET_DIR_BYTES = 64 * 1024
"""The size of the sandbox's socket folder: room for a socket (which takes none) and not for data."""
TRANSPORTS = ("unix", "tcp")
BRIDGE_PORT = 50051
"""The port a TCP bot listens on inside its sandbox: its network namespace is its own, so any port is free."""
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates", "localtime",
             "nsswitch.conf", "mime.types")
ETC_GLOBS = ("java-*",)
"""The JVM reads its settings from /etc/java-<version>-openjdk."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
INTERPRETER_CANDIDATES = ("python3", "perl", "ruby", "lua", "bash", "node", "php", "tclsh", "guile", "Rscript")
"""The interpreters a league allows its stdio kit by default when this machine has them
(:func:`installed_interpreters`)."""
INTERPRETERS_FOLDER = "/usr/bin"
"""Where :func:`installed_interpreters` looks for them: a system folder every sandbox mounts read-only."""
LOCALE = "C.UTF-8"
UID_RANGE = (1_000_000, 1_900_000_000)
"""Bots' users when the arena is root: far above any real account, a fresh one per start."""
SYSCALL_FILTER: Callable[[], int] | None = program_fd
"""Where each sandbox's seccomp filter comes from: a descriptor holding its BPF program, for ``bwrap --seccomp``.
The attack tests set it to None, to show that each attack the filter stops works without it."""


class SandboxError(Exception):
    """A bot that cannot be contained as asked (its folder would expose a secret, no cgroup could be made)."""


@dataclass
class Containment:
    """One bot start, contained: what to exec, with which environment, and what to clean up after it."""

    argv: list[str]
    env: dict[str, str]
    listen_address: str
    """Where the arena connects (outside the sandbox). For a sandboxed bot it is known once bubblewrap has made the
    sandbox: :meth:`locate` sets it."""
    bot_listen_address: str
    """What the bot is told in DOMINOES_BOT_LISTEN (inside the sandbox)."""
    cwd: str | None
    private_dir: Path
    cgroup: BotCgroup | None = None
    report: dict[str, Any] = field(default_factory=dict)
    pass_fds: tuple[int, ...] = ()
    """Descriptors the started process must inherit (bubblewrap's ``--info-fd``): give them to ``Popen`` and call
    :meth:`started` after it."""
    _info_fd: int | None = None
    """The arena's end of the ``--info-fd`` pipe, where bubblewrap writes the pid of the sandbox's first process."""
    sandbox_pid: int | None = None
    """The sandbox's first process (bubblewrap's init in its PID namespace), once :meth:`locate` has read it."""
    _sandbox_fd: int | None = None
    """A pidfd of that process, opened as soon as its pid is known: the arena is not its parent, so once it has
    ended its number may be another process's, and only this descriptor still names the process itself."""
    _pinned: list[int] = field(default_factory=list)
    """The bot's socket, held open by :meth:`pin` while the arena talks to it."""
    log_head: list[str] = field(default_factory=list)
    """Lines for the head of the bot's log: what its sandbox refuses it, so a bot whose lock fails learns why."""

    def started(self) -> None:
        """The process has been started (or failed to be): the arena's copies of its inherited descriptors go."""
        for fd in self.pass_fds:
            os.close(fd)
        self.pass_fds = ()

    async def locate(self) -> str:
        """Where the arena connects: for a sandboxed bot, its socket seen through the sandbox's first process
        (``/proc/<pid>/root``), whose pid bubblewrap writes once it has made the sandbox's namespaces. A
        SandboxError when bubblewrap wrote none (it failed; its exit status says why)."""
        if self._info_fd is None:
            return self.listen_address
        stream, self._info_fd = trio.lowlevel.FdStream(self._info_fd), None
        text = b""
        async with stream:
            while chunk := await stream.receive_some(4096):
                text += chunk
        try:
            pid = int(json.loads(text)["child-pid"])
        except (ValueError, KeyError, TypeError):
            raise SandboxError(f"bubblewrap did not say where the sandbox is (it wrote {text[:200]!r})") from None
        self.sandbox_pid = pid
        try:
            self._sandbox_fd = os.pidfd_open(pid)
        except OSError:  # gone already (its start fails), or a kernel without pidfds: it is never signalled
            self._sandbox_fd = None
        self.listen_address = f"unix:/proc/{pid}/root{SOCKET_INSIDE}"
        return self.listen_address

    def pin(self) -> str:
        """The address of the very socket the bot has made, held open by inode (``O_PATH``, never following a
        symlink), for a sandboxed bot: whatever the bot puts at its socket's path later, the arena keeps talking to
        it. Without this, a bot could make ``bot.sock`` a symlink to another bot's socket (whose path, through that
        sandbox's pid, is easy to guess) and have that bot play its seat. SandboxError when what the bot put there
        is not a socket."""
        if self._info_fd is not None or not self.listen_address.startswith("unix:/proc/"):
            return self.listen_address
        path = self.listen_address[len("unix:"):]
        try:
            fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:  # it never listened: the handshake says so, as for any bot
            return self.listen_address
        except OSError as error:
            raise SandboxError(f"cannot open the bot's socket {SOCKET_INSIDE}: {error.strerror}") from None
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            os.close(fd)
            raise SandboxError(f"the bot's {SOCKET_INSIDE} is not a socket (a symlink is refused)")
        self._pinned.append(fd)
        self.listen_address = f"unix:/proc/self/fd/{fd}"
        return self.listen_address

    def over_limit(self) -> str | None:
        return self.cgroup.over_limit() if self.cgroup is not None else None

    def signal_sandbox(self, sig: int) -> bool:
        """Send ``sig`` to the processes inside the sandbox: its own process group, which bubblewrap made with the
        session of ``--new-session`` (its first process and the bot, whatever a shell wrapper started). Not to
        bubblewrap outside it: bubblewrap forwards no signal, and its end kills the sandbox at once
        (``--die-with-parent``), so a bot signalled that way never got the SIGTERM and the grace it is promised to
        save its state and end cleanly. False when there is no sandbox (the caller signals the process it started)
        or it is already gone.

        The group is named by the sandbox's first process, whose pid bubblewrap reported (not the bot: a bot cannot
        choose the number), and it is signalled only while that very process lives (asked through its pidfd): it
        leads the group, so the number is still the sandbox's. Once it has ended, the number may be any process's
        (pids wrap around: a test suite's thousands of bots recycle them), and nothing is signalled. A bot that
        left the group (its own ``setsid``) is ended with the sandbox, after the grace."""
        if self.sandbox_pid is None or self._sandbox_fd is None:
            return False
        try:
            signal.pidfd_send_signal(self._sandbox_fd, 0)  # the sandbox's first process itself, alive
            os.killpg(self.sandbox_pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def close(self) -> None:
        """Kill whatever is left of the bot and remove its cgroup and private folder. Never raises."""
        self.started()
        if self._info_fd is not None:
            os.close(self._info_fd)
            self._info_fd = None
        for fd in self._pinned:
            os.close(fd)
        self._pinned.clear()
        if self._sandbox_fd is not None:
            os.close(self._sandbox_fd)
            self._sandbox_fd = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        shutil.rmtree(self.private_dir, ignore_errors=True)


def contain(command: Sequence[str], *, listen_env: str, env: Mapping[str, str] | None = None,
            cwd: str | None = None, folder: str | None = None, limits: Limits = DEFAULT_LIMITS, sandbox: bool = True,
            protected: Sequence[Path] = (), transport: str = "unix") -> Containment:
    """A contained start of ``command``. ``protected`` are paths that no sandbox may see (run folders, tokens).
    ``transport`` is where the bot listens: ``unix`` (a socket in its private folder) or ``tcp`` (a loopback port,
    relayed from that socket inside a sandbox: see :mod:`arena.sandbox.bridge`)."""
    if transport not in TRANSPORTS:
        raise SandboxError(f"expected a transport of {', '.join(TRANSPORTS)}, got {transport!r}")
    machine = host()
    if sandbox:
        machine.require_sandbox()
    private = Path(tempfile.mkdtemp(prefix="bot-", dir=machine.work_base))
    try:
        return _contain(machine, list(command), listen_env, dict(env or {}), cwd, folder, limits, sandbox,
                        [Path(p) for p in protected], private, transport)
    except BaseException:
        shutil.rmtree(private, ignore_errors=True)
        raise


def _contain(machine: Host, command: list[str], listen_env: str, extra_env: dict[str, str], cwd: str | None,
             folder: str | None, limits: Limits, sandbox: bool, protected: list[Path], private: Path,
             transport: str) -> Containment:
    uid = secrets.randbelow(UID_RANGE[1] - UID_RANGE[0]) + UID_RANGE[0] if sandbox and machine.root else None
    work = Path(cwd or os.getcwd()).resolve()
    bot_folder = bot_folder_of(command, work, folder)
    if sandbox:  # the socket lives in the sandbox's own small tmpfs; locate() finds it from outside
        outside = inside = f"unix:{SOCKET_INSIDE}"
    else:
        listen_dir = private / "listen"
        listen_dir.mkdir(mode=0o700)
        outside = inside = f"unix:{listen_dir}/bot.sock"
    if transport == "tcp":
        inside = f"127.0.0.1:{BRIDGE_PORT}" if sandbox else f"127.0.0.1:{_free_port()}"
        outside = outside if sandbox else inside
    environment = _environment(sandbox, inside, extra_env, listen_env)
    report: dict[str, Any] = {
        "sandbox": f"bubblewrap {machine.bwrap_version.split()[-1]}" if sandbox else "none",
        "user": uid if uid is not None else "the arena's",
        "limits": limits.to_json(),
    }
    cgroup = None
    if machine.cgroups is not None:
        try:
            cgroup = machine.cgroups.new_group(limits)
        except CgroupError as error:
            raise SandboxError(str(error)) from None
        report["limits_by"] = machine.cgroups.describe()
    else:
        report["limits_by"] = machine.limits_by()
    argv = resolve_program(command, work, environment["PATH"])
    program = Path(argv[0])
    if transport == "tcp" and sandbox:  # the relay runs the bot and carries the arena's socket to its port
        argv = [sys.executable, "-m", "arena.sandbox.bridge", "--unix", SOCKET_INSIDE, "--tcp",
                inside, "--", *argv]
    problem = exposure_problem(command, work, folder, [*protected, machine.work_base]) if sandbox else None
    if problem:
        raise SandboxError(problem)
    if uid is not None and bot_folder is not None and bot_folder.stat().st_mode & 0o005 != 0o005:
        raise SandboxError(f"the bot's folder {bot_folder} is not readable by other users (mode "
                           f"{bot_folder.stat().st_mode & 0o777:o}), and the bot runs as a user of its own: "
                           f"chmod o+rx {bot_folder} (and o+r on its files)")
    run_cwd: str | None = str(work)
    info_fd: int | None = None
    pass_fds: tuple[int, ...] = ()
    log_head: list[str] = []
    if sandbox:
        info_fd, info_write = os.pipe()
        pass_fds = (info_write,)
        filter_fd = SYSCALL_FILTER() if SYSCALL_FILTER is not None else None
        if filter_fd is not None:
            pass_fds += (filter_fd,)
            log_head.append(refusal_line())
            report["sandbox"] += f" with {FILTER_NAME}"
        argv, run_cwd = _bubblewrap(machine, argv, program, work, bot_folder, private, info_write, filter_fd, limits,
                                    uid), None
    if cgroup is None:
        argv = _rlimits(machine, limits, uid) + argv
    if machine.setpriv is not None:  # dies with the arena, even when the arena is killed with SIGKILL
        argv = [machine.setpriv, "--pdeathsig", "KILL", "--", *argv]
    if cgroup is not None:
        argv = _enter_cgroup(machine.shell, cgroup.procs_files) + argv
    return Containment(argv=argv, env=environment, listen_address=outside, bot_listen_address=inside, cwd=run_cwd,
                       private_dir=private, cgroup=cgroup, report=report, pass_fds=pass_fds, _info_fd=info_fd,
                       log_head=log_head)


def bot_folder_of(command: Sequence[str], work: Path, folder: str | None) -> Path | None:
    """The bot's own folder: the one given, else the folder of the first argument that names a file (``bot.js`` in
    ``node bots/node/bot.js``) or the first argument that is a folder itself (``node bots/node``: Node runs the
    folder's package), else of the program itself when it is a path (``bots/go/bin/bot``)."""
    if folder:
        return (work / folder).resolve()
    for word in [*command[1:], command[0]]:
        if word.startswith("-"):
            continue
        path = work / word
        if path.is_file() and ("/" in word or word is not command[0]):
            return path.resolve().parent
        if path.is_dir() and word is not command[0] and word.strip("/.") != "":
            return path.resolve()
    return None


def overlaps(one: Path | str, other: Path | str) -> bool:
    """Whether one path is the other or lies inside it, either way round (both resolved). A folder bound into a
    sandbox shows everything below it: it must neither lie inside a protected folder nor hold a protected file, and
    a check of one direction only lets the other through."""
    first, second = Path(one).resolve(), Path(other).resolve()
    return first == second or first in second.parents or second in first.parents


def exposure_problem(command: Sequence[str], work: Path, folder: str | None,
                     protected: Sequence[Path]) -> str | None:
    """What a sandbox would show the bot of ``protected`` paths: its own folder and its program's folder are visible
    in it, so neither may hold a protected path or lie inside one. None when nothing shows (the arena server checks
    this when it accepts a bot, long before it starts it)."""
    folders = [bot_folder_of(command, work, folder)]
    try:
        program = Path(resolve_program(command, work, _inside_path())[0])
        folders += [f for f in (program.parent, program.resolve().parent) if not _in_system_or_python(f)]
    except SandboxError:
        pass  # a missing program is its own error, when the bot starts
    for visible in (f.resolve() for f in folders if f is not None):
        for secret in (p.resolve() for p in protected):
            if secret == visible or visible in secret.parents:
                return f"the bot's folder {visible} holds {secret}, which no bot may see; give the bot a folder of its own"
            if secret in visible.parents:
                return f"the bot's folder {visible} lies inside {secret}, which no bot may see"
    return None


def _environment(sandbox: bool, listen: str, extra: dict[str, str], listen_env: str) -> dict[str, str]:
    """Only what a bot needs: where to listen, a PATH, a HOME and TMPDIR it may write, a locale, and its own env."""
    if sandbox:
        base = sandbox_environment()
    else:
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", SYSTEM_PATH)])
        base = {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"),
                "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "LANG": os.environ.get("LANG", LOCALE)}
    return {**base, **extra, listen_env: listen}


def sandbox_environment() -> dict[str, str]:
    """What every sandbox's environment holds before its own variables (a bot's ``env``, a kit's build variables)."""
    return {"PATH": _inside_path(), "HOME": TMP_INSIDE, "TMPDIR": TMP_INSIDE, "LANG": LOCALE}


def installed_interpreters(folder: str = INTERPRETERS_FOLDER) -> tuple[str, ...]:
    """The default of a league's ``interpreters``: ``python3`` (the arena's own Python, which every sandbox holds and
    whose ``python3`` comes first on its ``PATH``), then each other name of :data:`INTERPRETER_CANDIDATES`, in that
    order, that is an executable file at ``/usr/bin/<name>`` on this machine (a symbolic link followed)."""
    present = [name for name in INTERPRETER_CANDIDATES[1:]
               if os.path.isfile(Path(folder) / name) and os.access(Path(folder) / name, os.X_OK)]
    return (INTERPRETER_CANDIDATES[0], *present)


def system_program_problem(program: str) -> str | None:
    """Why ``program`` (a name, found as a bot's sandbox finds it: on its ``PATH``; or an absolute path) is not a
    program the sandbox's own read-only system view holds, or None. The path found and the file it leads to (every
    link followed) must both lie in the system folders (:data:`SYSTEM_DIRS`) or the arena's Python installation:
    anything else would have its folder bound into the sandbox to run it (see :func:`_bubblewrap`), so a
    league's stdio bot could show its sandbox a folder of the host that no sandbox otherwise shows."""
    found = program if program.startswith("/") else shutil.which(program, path=_inside_path())
    if found is None:
        return f"{program!r} is not on the bot sandbox's PATH ({_inside_path()})"
    path = Path(found)
    if not path.is_file() or not os.access(path, os.X_OK):
        return f"{program!r} is not an executable file"
    for shown in dict.fromkeys([path, path.resolve()]):
        if not _in_system_or_python(shown.parent, with_package=False):
            return (f"{program!r} is {shown}, outside the folders every bot's sandbox mounts read-only (the system's "
                    f"{', '.join(d for d in SYSTEM_DIRS if Path(d).exists())} and the arena's Python)")
    return None


def _inside_path() -> str:
    """The arena's Python first, so a bot command saying ``python`` gets the interpreter that has ``arena``."""
    return os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), str(Path(sys.base_prefix) / "bin"),
                                          *SYSTEM_PATH.split(":")]))


def _bubblewrap(machine: Host, command: list[str], program: Path, work: Path, bot_folder: Path | None, private: Path,
                info_fd: int, filter_fd: int | None, limits: Limits, uid: int | None) -> list[str]:
    """bubblewrap's arguments: what the bot sees (read-only), its two capped writable tmpfs mounts, ``info_fd``
    for the pid through which the arena reaches its socket, and ``filter_fd`` for the seccomp filter bubblewrap
    installs just before it runs the bot (it reads and closes it: the bot never holds it)."""
    assert machine.bwrap is not None
    args = [machine.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "bot", "--info-fd", str(info_fd)]
    if filter_fd is not None:
        args += ["--seccomp", str(filter_fd)]
    if uid is None:
        args += ["--unshare-user", "--disable-userns"]
    # The private /tmp first: a bot folder under /tmp is then bound on top of it, not hidden under it.
    args += ["--size", str(limits.tmp_mb * 1024 * 1024), "--perms", "1777", "--tmpfs", TMP_INSIDE]
    view = system_view(args, private, uid)
    # The program's folder (absolute, from resolve_program): a toolchain under /opt or a home folder is bound.
    for folder in (program.parent, program.resolve().parent):
        view.ro_bind(folder)
    if bot_folder is not None:
        view.ro_bind(bot_folder)
    args += ["--proc", PROC_INSIDE, "--dev", DEV_INSIDE, "--perms", "0755", "--dir", str(Path(LISTEN_DIR_INSIDE).parent),
             "--size", str(SOCKET_DIR_BYTES), "--perms", "1777", "--tmpfs", LISTEN_DIR_INSIDE]
    # Everything bubblewrap made read-only (the root, the folders on the way to mount points, /dev, /proc): an
    # arena that is not root makes them as the bot's own user, who could otherwise fill them. Left as they are: the
    # device binds in /dev (/dev/null; a remount would make them unusable) and /dev/pts, which store nothing.
    for mount in (DEV_INSIDE, PROC_INSIDE, "/"):
        args += ["--remount-ro", mount]
    inside_cwd = work if any(work == b or work in b.parents or b in work.parents for b in view.bound) else None
    args += ["--chdir", str(inside_cwd or bot_folder or TMP_INSIDE)]
    if uid is not None:  # root sets the bot's own user up inside, then keeps nothing
        assert machine.setpriv is not None, "setpriv (util-linux) is needed to run bots as their own user"
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", machine.setpriv, f"--reuid={uid}",
                 f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    return [*args, "--", *command]


class MountView:
    """The read-only part of a sandbox's filesystem, as bubblewrap arguments appended to ``args``: what is bound
    (at its own path) and the folders made on the way to it. Shared by bots and builds, so both see the system the
    same way."""

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.made: set[Path] = {Path("/"), Path(TMP_INSIDE)}
        self.bound: list[Path] = []

    def parents_of(self, path: Path) -> None:
        """Folders on the way to a mount point, readable by the sandbox's user (bubblewrap would make them 0700):
        this is how a toolchain under /root (mode 0700 outside) is reachable inside, and nothing else of /root."""
        for parent in reversed(path.parents):
            if parent not in self.made:
                self.args.extend(["--perms", "0755", "--dir", str(parent)])
                self.made.add(parent)

    def ro_bind(self, path: Path) -> None:
        """``path`` visible read-only at its own place (once: a folder inside one bound already is skipped)."""
        if path.exists() and not any(path == b or b in path.parents for b in self.bound):
            self.parents_of(path)
            self.args.extend(["--ro-bind", str(path), str(path)])
            self.bound.append(path)


def system_view(args: list[str], private: Path, uid: int | None) -> MountView:
    """What every sandbox sees read-only: the system's program folders, the few files of /etc programs need, a
    passwd naming its user, the arena's Python and package and the protocol's .proto files."""
    view = MountView(args)
    for name in SYSTEM_DIRS:
        system = Path(name)
        if system.is_symlink():
            args.extend(["--symlink", os.readlink(system), name])
        elif system.is_dir():
            view.ro_bind(system)
    view.parents_of(Path("/etc") / IDENTITY_FILES[0])
    for name in ETC_FILES:
        args.extend(["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"])
    for pattern in ETC_GLOBS:
        for entry in sorted(Path("/etc").glob(pattern)):
            args.extend(["--ro-bind", str(entry), str(entry)])
    args.extend(_identity_files(private, uid))
    for python in (Path(sys.base_prefix), Path(sys.prefix), _arena_package(), _arena_package().parent / "proto"):
        view.ro_bind(python.resolve())
    return view


def _free_port() -> int:
    """A loopback port nobody listens on now (a bot without a sandbox shares the machine's loopback)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _in_system_or_python(folder: Path, with_package: bool = True) -> bool:
    """Folders every sandbox sees anyway (the system's programs, the arena's Python and, ``with_package``, its
    package): never a bot's secret."""
    shared = [Path(d) for d in SYSTEM_DIRS] + [Path(sys.base_prefix), Path(sys.prefix)]
    shared += [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    if with_package:
        shared.append(_arena_package())
    return any(folder == d or d in folder.parents for d in shared)


def _identity_files(private: Path, uid: int | None) -> list[str]:
    """A passwd and group naming only the bot's user, so runtimes that look their user up (the JVM) find one."""
    number = uid if uid is not None else os.getuid()
    group = uid if uid is not None else os.getgid()
    passwd, group_file = IDENTITY_FILES
    (private / passwd).write_text(f"bot:x:{number}:{group}:bot:{TMP_INSIDE}:/usr/sbin/nologin\n")
    (private / group_file).write_text(f"bot:x:{group}:\n")
    return [arg for name in IDENTITY_FILES for arg in ("--ro-bind", str(private / name), f"/etc/{name}")]


def _arena_package() -> Path:
    """The arena's own package (an editable install lives outside the environment): ``arena.botkit`` imports."""
    return Path(__file__).resolve().parents[1]


def resolve_program(command: Sequence[str], work: Path, path: str) -> list[str]:
    """The command with its program as an absolute path, found the way the bot's exec would find it (a path
    relative to the working folder, else the bot's PATH, else the arena's); a clear error when there is none."""
    word = command[0]
    if "/" in word:
        target = work / word
        if not target.is_file() or not os.access(target, os.X_OK):
            raise SandboxError(f"cannot run {word!r}: no such program (or it is not executable) in {work}")
        return [str(target), *command[1:]]
    found = shutil.which(word, path=path) or shutil.which(word)
    if found is None:
        raise SandboxError(f"cannot run {word!r}: it is not on the PATH")
    return [found, *command[1:]]


def _rlimits(machine: Host, limits: Limits, uid: int | None) -> list[str]:
    """Without a cgroup: the data segment for memory, and processes per user when the bot has a user of its own."""
    if machine.prlimit is None:
        return []
    args = [machine.prlimit, f"--data={limits.memory_mb * 1024 * 1024}"]
    if uid is not None:
        args.append(f"--nproc={limits.pids}")
    return [*args, "--"]


def _enter_cgroup(shell: str, procs_files: list[str]) -> list[str]:
    """A shell prologue that moves itself into the bot's cgroup, then execs the rest: nothing escapes the group."""
    script = 'unset PWD OLDPWD; n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"'
    return [shell, "-c", script, "arena-cgroup", str(len(procs_files)), *procs_files]
