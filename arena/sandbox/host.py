"""What this machine offers for containing bots, found once per arena process: bubblewrap and whether it can make
namespaces here, the seccomp filter (libseccomp), whether the arena is root (then bots run as users of their own), and
cgroups or only rlimits."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox.cgroups import CgroupError, CgroupParent, cgroup_parent
from arena.sandbox.syscalls import SyscallFilterUnavailable, filter_program

WORK_PREFIX = "arena-bots-"
OPT_OUT = ("or run the bots without a sandbox: sandbox = false in the tournament file, --no-sandbox on play, "
           "check-bot and replay --against")


class SandboxUnavailable(Exception):
    """The sandbox cannot be made here: one line naming the missing piece and the opt-out."""


@dataclass
class Host:
    bwrap: str | None
    bwrap_version: str
    bwrap_problem: str | None
    """Why bubblewrap cannot run here (missing, or it cannot create namespaces), else None."""
    filter_problem: str | None
    """Why the seccomp filter every sandbox gets cannot be built here (libseccomp missing), else None: a sandbox
    without it is refused, as one without bubblewrap is."""
    root: bool
    setpriv: str | None
    prlimit: str | None
    shell: str
    cgroups: CgroupParent | None
    cgroup_problem: str | None
    work_base: Path
    """A folder only the arena can read, holding each started bot's private folder (its socket)."""

    def require_sandbox(self) -> None:
        problem = self.bwrap_problem or self.filter_problem
        if problem is not None:
            raise SandboxUnavailable(f"cannot sandbox the bots: {problem}; {OPT_OUT}")

    def limits_by(self) -> str:
        if self.cgroups is not None:
            return self.cgroups.describe()
        return f"rlimits ({self.cgroup_problem})"


@functools.cache
def host() -> Host:
    """Probe the machine once (a trial bubblewrap run, a cgroup made and kept for the arena's bots)."""
    bwrap = shutil.which("bwrap")
    version, problem = "", None
    if bwrap is None:
        problem = ("bubblewrap (bwrap) is not installed: install the Debian or Ubuntu package bubblewrap "
                   "(apt-get install bubblewrap; bash scripts/setup.sh does it when run as root)")
    else:
        version, problem = _try_bwrap(bwrap)
    cgroups, cgroup_problem = None, None
    try:
        cgroups = cgroup_parent()
        atexit.register(cgroups.remove)
    except CgroupError as error:
        cgroup_problem = str(error)
    _remove_stale_work_folders()
    base = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-"))  # mode 0700: no other user, no sandbox
    atexit.register(shutil.rmtree, base, True)
    return Host(bwrap=bwrap, bwrap_version=version, bwrap_problem=problem, filter_problem=_filter_problem(),
                root=os.geteuid() == 0,
                setpriv=shutil.which("setpriv"), prlimit=shutil.which("prlimit"), shell=shutil.which("sh") or "/bin/sh",
                cgroups=cgroups, cgroup_problem=cgroup_problem, work_base=base)


def _filter_problem() -> str | None:
    """Why the seccomp filter cannot be built here, else None (it is built now, once, and kept)."""
    try:
        filter_program()
    except SyscallFilterUnavailable as error:
        return str(error)
    return None


def _remove_stale_work_folders() -> None:
    """The private folders of arena processes that are gone (killed with SIGKILL, so no exit handler ran). Other
    arena processes may be removing the same folders at the same moment (the Ray actors of one machine start
    together, and each finds the folders of the actors killed before them): a folder gone meanwhile is skipped, as
    cleaning up is never a reason for a bot not to start."""
    for folder in Path(tempfile.gettempdir()).glob(f"{WORK_PREFIX}*-*"):
        pid = folder.name[len(WORK_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        try:
            owner = folder.stat().st_uid
        except OSError:  # removed by another arena process since the listing
            continue
        if owner == os.geteuid():
            shutil.rmtree(folder, ignore_errors=True)


def _try_bwrap(bwrap: str) -> tuple[str, str | None]:
    """bubblewrap's version, and whether it can make the namespaces a bot gets (it cannot in some containers)."""
    try:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        trial = [bwrap, "--ro-bind", "/", "/", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                 "--die-with-parent", "--proc", "/proc", "--dev", "/dev", "true"]
        if os.geteuid() != 0:
            trial[1:1] = ["--unshare-user"]
        result = subprocess.run(trial, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as error:
        return "", f"bubblewrap ({bwrap}) does not run: {error}"
    if result.returncode != 0:
        why = (result.stderr.strip().splitlines() or ["no message"])[-1]
        return version, (f"bubblewrap cannot create the bot's namespaces here ({why}); allow unprivileged user "
                         f"namespaces (sysctl kernel.unprivileged_userns_clone=1) or run the arena as root")
    return version, None
