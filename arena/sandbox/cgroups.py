"""Control groups for bots: memory, processes and CPU, on cgroup v2 where it is mounted with those controllers and on
cgroup v1 otherwise (as on these machines), from one interface.

The arena makes one parent group per arena process (``arena-bots-<pid>``) beside or below its own group, and one
child per bot start. A bot enters its group before it execs anything (a two-line shell prologue writes its pid into
``cgroup.procs``), so nothing it forks can be outside. A group left behind by an arena killed with SIGKILL is removed
by the next arena that finds it. Where no group can be made (no permission, no controller, a v2 group that already
holds processes), :func:`cgroup_parent` says why and the caller falls back to rlimits.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox.limits import Limits

CONTROLLERS_V1 = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
PARENT_PREFIX = "arena-bots-"


@dataclass(frozen=True)
class Mount:
    controller: str
    """'memory', 'pids', 'cpu' for v1; '' for the unified v2 hierarchy."""
    path: Path
    own_group: str
    """The arena's own group in this hierarchy, from /proc/self/cgroup."""


def _mounts() -> tuple[list[Mount], Mount | None]:
    """The v1 hierarchies of our controllers, and the v2 hierarchy, where mounted."""
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, group = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name] = group
    v1: list[Mount] = []
    v2: Mount | None = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _source, options = (right.split(" ") + ["", ""])[:3]
        point = Path(left.split(" ")[4])
        if fstype == "cgroup2" and "" in own:
            v2 = Mount("", point, own[""])
        elif fstype == "cgroup":
            for name in CONTROLLERS_V1:
                if name in options.split(",") and name in own:
                    v1.append(Mount(name, point, own[name]))
    return v1, v2


class CgroupError(Exception):
    """Why no cgroup can be made here, in words for bots.json and check-bot."""


class BotCgroup:
    """One bot start's group (a directory per v1 hierarchy, or one v2 directory)."""

    def __init__(self, version: int, dirs: dict[str, Path], limits: Limits) -> None:
        self.version = version
        self.dirs = dirs
        self.limits = limits

    @property
    def procs_files(self) -> list[str]:
        """The files the bot's first process writes its pid into before exec."""
        return [str(d / "cgroup.procs") for d in dict.fromkeys(self.dirs.values())]

    def over_limit(self) -> str | None:
        """The limit the bot went over, if the kernel stopped it for one: memory (an OOM kill), or processes."""
        memory = self.dirs["memory"] / ("memory.events" if self.version == 2 else "memory.oom_control")
        if _counter(memory, "oom_kill") > 0:
            return f"memory {self.limits.memory_mb} MiB"
        if _counter(self.dirs["pids"] / "pids.events", "max") > 0:
            return f"processes {self.limits.pids}"
        return None

    def pids(self) -> list[int]:
        try:
            text = (self.dirs["pids"] / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def kill(self) -> None:
        """SIGKILL everything in the group (v2's cgroup.kill where there is one)."""
        if self.version == 2 and (self.dirs["pids"] / "cgroup.kill").exists():
            _write(self.dirs["pids"] / "cgroup.kill", "1")
            return
        for _ in range(100):
            pids = self.pids()
            if not pids:
                return
            kill_members(pids, self.pids)

    def remove(self) -> None:
        """Kill what is left and remove the group; a group whose last process is still dying is retried briefly."""
        self.kill()
        for path in dict.fromkeys(self.dirs.values()):
            _rmdir_when_empty(path)


class CgroupParent:
    """The arena process's parent group, under which each bot start gets its own group."""

    def __init__(self, version: int, parents: dict[str, Path]) -> None:
        self.version = version
        self.parents = parents
        self._numbers = itertools.count()

    def describe(self) -> str:
        return f"cgroup v{self.version}"

    def new_group(self, limits: Limits) -> BotCgroup:
        name = f"bot-{next(self._numbers)}"
        dirs: dict[str, Path] = {}
        try:
            for controller, parent in self.parents.items():
                path = parent / name
                path.mkdir(exist_ok=True)
                dirs[controller] = path
            if self.version == 2:
                _apply_v2(dirs["memory"], limits)
            else:
                _apply_v1(dirs, limits)
        except OSError as error:
            BotCgroup(self.version, dirs, limits).remove() if dirs else None
            raise CgroupError(f"cannot make a cgroup for a bot: {error}") from None
        return BotCgroup(self.version, dirs, limits)

    def remove(self) -> None:
        for parent in self.parents.values():
            for child in parent.glob("bot-*"):
                _rmdir_when_empty(child)
            _rmdir_when_empty(parent)


def _apply_v1(dirs: dict[str, Path], limits: Limits) -> None:
    memory = limits.memory_mb * 1024 * 1024
    _write(dirs["memory"] / "memory.limit_in_bytes", str(memory))
    if (dirs["memory"] / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
        _write(dirs["memory"] / "memory.memsw.limit_in_bytes", str(memory))
    _write(dirs["pids"] / "pids.max", str(limits.pids))
    if "cpu" in dirs:
        _write(dirs["cpu"] / "cpu.shares", "1024")  # the same weight for every bot
        _write(dirs["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
        _write(dirs["cpu"] / "cpu.cfs_quota_us", str(max(1000, int(limits.cpus * CPU_PERIOD_US))))


def _apply_v2(path: Path, limits: Limits) -> None:
    _write(path / "memory.max", str(limits.memory_mb * 1024 * 1024))
    if (path / "memory.swap.max").exists():
        _write(path / "memory.swap.max", "0")
    if (path / "memory.oom.group").exists():  # an OOM kills the whole bot, not one of its threads' processes
        _write(path / "memory.oom.group", "1")
    _write(path / "pids.max", str(limits.pids))
    if (path / "cpu.max").exists():
        _write(path / "cpu.weight", "100")
        _write(path / "cpu.max", f"{max(1000, int(limits.cpus * CPU_PERIOD_US))} {CPU_PERIOD_US}")


def cgroup_parent() -> CgroupParent:
    """Make this arena process's parent group, or raise CgroupError saying why not."""
    try:
        v1, v2 = _mounts()
    except OSError as error:
        raise CgroupError(f"cannot read this process's cgroups: {error}") from None
    names = {m.controller for m in v1}
    if {"memory", "pids"} <= names:
        return _parent_v1([m for m in v1 if m.controller in CONTROLLERS_V1])
    if v2 is not None:
        return _parent_v2(v2)
    raise CgroupError("no cgroup hierarchy with the memory and pids controllers is mounted")


def _parent_v1(mounts: list[Mount]) -> CgroupParent:
    parents: dict[str, Path] = {}
    try:
        for mount in mounts:
            base = mount.path / mount.own_group.lstrip("/")
            _remove_stale(base)
            parent = base / f"{PARENT_PREFIX}{os.getpid()}"
            parent.mkdir(exist_ok=True)
            parents[mount.controller] = parent
    except OSError as error:
        for parent in parents.values():
            _rmdir_when_empty(parent)
        raise CgroupError(f"cannot make a cgroup under {mounts[0].path}: {error.strerror or error}") from None
    return CgroupParent(1, parents)


def _parent_v2(mount: Mount) -> CgroupParent:
    """v2 forbids controllers below a group that holds processes: the parent goes beside the arena's own group
    (or at the root, which is exempt), where the controllers are already delegated."""
    own = mount.path / mount.own_group.lstrip("/")
    base = own if own == mount.path else own.parent
    wanted = {"memory", "pids", "cpu"}
    available = set(_read(base / "cgroup.subtree_control").split())
    if not {"memory", "pids"} <= available:
        try:
            _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(wanted & set(
                _read(base / "cgroup.controllers").split()))))
        except OSError as error:
            raise CgroupError(f"cgroup v2: the memory and pids controllers are not delegated to {base} "
                              f"({error.strerror or error})") from None
    _remove_stale(base)
    parent = base / f"{PARENT_PREFIX}{os.getpid()}"
    try:
        parent.mkdir(exist_ok=True)
        enabled = wanted & set(_read(parent / "cgroup.controllers").split())
        _write(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(enabled)))
    except OSError as error:
        _rmdir_when_empty(parent)
        raise CgroupError(f"cannot make a cgroup under {base}: {error.strerror or error}") from None
    return CgroupParent(2, {"memory": parent, "pids": parent})


def _remove_stale(base: Path) -> None:
    """Groups of arena processes that no longer exist (killed with SIGKILL) are emptied and removed. Another arena
    process may be removing the same group at the same moment (the Ray actors of one machine start together): a
    group gone meanwhile is skipped, not a reason to go without cgroups."""
    for parent in base.glob(f"{PARENT_PREFIX}*"):
        pid = parent.name[len(PARENT_PREFIX):]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                children = list(parent.glob("bot-*"))
            except OSError:  # removed by another arena process since the listing
                continue
            for child in children:
                BotCgroup(1, {"pids": child, "memory": child}, Limits()).kill()
                _rmdir_when_empty(child)
            _rmdir_when_empty(parent)


def _rmdir_when_empty(path: Path) -> None:
    for _ in range(50):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)  # the kernel is still tearing the group's last process down


def _counter(path: Path, key: str) -> int:
    for line in _read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


KILL_BATCH = 256
"""Pidfds held open at once while a group is emptied (a fork bomb's thousands stay under the open-file limit)."""


def kill_members(pids: list[int], members: Callable[[], list[int]]) -> None:
    """SIGKILL the group's members ``pids``, each through a pidfd opened before the membership is read again: a
    number read from ``cgroup.procs`` may be freed and given to any process of the machine before the kill (pids wrap
    around), and a kill by number would then reach it. Once a pidfd names a process and its number is still a
    member's, it is that member (two living processes never share a number); if it has ended, the signal reaches no
    one. One read of the membership a batch, not a pid."""
    for start in range(0, len(pids), KILL_BATCH):
        opened: dict[int, int] = {}
        try:
            for pid in pids[start:start + KILL_BATCH]:
                try:
                    opened[pid] = os.pidfd_open(pid)
                except ProcessLookupError:
                    pass
            listed = set(members()) if opened else set()
            for pid, pidfd in opened.items():
                if pid in listed:
                    try:
                        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        finally:
            for pidfd in opened.values():
                os.close(pidfd)
