"""The system calls a sandboxed bot is refused: a seccomp filter, built once per arena process with libseccomp (through
``pyseccomp``) and handed to bubblewrap (``--seccomp FD``), which installs it just before it runs the bot.

Why: two sandboxes of one entrant (the processes playing the two seat rotations of one duplicate deal) see the same
inodes (the bot's own folder, the arena's Python, the system's programs), and a lock or a watch on an inode works
across mount, PID and user namespaces, on a read-only descriptor of a read-only mount. One process holds a lock, or
opens a watched file, and the other learns a bit: a hand, told tile by tile. So every call that locks a file, asks
about another's lock, leases a file, or watches one is refused with :data:`ERRNO`, never a kill, so a runtime that
tries a lock and copes (most do, for file systems without locks) keeps working.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
from types import ModuleType
from typing import Any

ERRNO = errno.EPERM
"""What a refused call returns: "operation not permitted", the errno of a call a seccomp policy forbids."""
REFUSED_CALLS = ("flock", "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark")
"""Refused whatever their arguments."""
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
"""The open-file-description locks (Linux 3.15); Python's fcntl module names them only from 3.12."""
REFUSED_FCNTL = {"F_GETLK": fcntl.F_GETLK, "F_SETLK": fcntl.F_SETLK, "F_SETLKW": fcntl.F_SETLKW,
                 "F_OFD_GETLK": F_OFD_GETLK, "F_OFD_SETLK": F_OFD_SETLK, "F_OFD_SETLKW": F_OFD_SETLKW,
                 "F_SETLEASE": fcntl.F_SETLEASE, "F_GETLEASE": fcntl.F_GETLEASE, "F_NOTIFY": fcntl.F_NOTIFY}
"""The ``fcntl`` commands refused: record locks (POSIX and open-file-description), leases, and dnotify."""
FCNTL_CALLS = ("fcntl", "fcntl64")
"""``fcntl64`` is the 32-bit ABIs' name; libseccomp leaves out a name an architecture does not have."""
FILTER_NAME = "a seccomp filter (no file locks, leases or watches)"
"""How a bot's containment report (check-bot, a run's bots.json) names the filter."""
COMMAND_MASK = 0xFFFFFFFF
"""The kernel reads fcntl's command as a 32-bit ``unsigned int``: the filter compares the low 32 bits only, so a
command with high bits set (which the kernel drops) is refused like the plain one."""


class SyscallFilterUnavailable(Exception):
    """The filter cannot be built here (pyseccomp or the system's libseccomp is missing): one line saying which."""


def refusal_line() -> str:
    """The line at the head of a sandboxed bot's log, so a bot whose lock or watch fails learns why. Short: the
    messages that quote a log's end (a bot that did not start) quote it too, beside the bot's own last words."""
    return (f"--- sandbox: {', '.join(REFUSED_CALLS)} and fcntl {'/'.join(REFUSED_FCNTL)} fail with "
            f"{errno.errorcode[ERRNO]} ({os.strerror(ERRNO)}): no file locks, leases or watches ---")


@functools.cache
def filter_program() -> bytes:
    """The filter as a BPF program, for ``bwrap --seccomp``: built once, for this machine's architecture and the
    32-bit ABIs it can also run (a call made through ``int 0x80`` is filtered the same way).
    SyscallFilterUnavailable when libseccomp cannot be loaded or refuses."""
    try:  # loaded on first use: a machine without libseccomp2 still runs everything but the filter
        import pyseccomp as seccomp  # noqa: PLC0415
    except (ImportError, OSError, RuntimeError) as error:  # pyseccomp raises RuntimeError without libseccomp
        raise SyscallFilterUnavailable(f"the seccomp filter cannot be built ({error}): install libseccomp2 "
                                       f"(apt-get install libseccomp2) and pyseccomp (bash scripts/setup.sh)") from None
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for arch in _compat_arches(seccomp):
            rules.add_arch(arch)
        refuse = seccomp.ERRNO(ERRNO)
        for call in REFUSED_CALLS:
            rules.add_rule(refuse, call)
        for call in FCNTL_CALLS:
            for command in REFUSED_FCNTL.values():
                rules.add_rule(refuse, call, seccomp.Arg(1, seccomp.MASKED_EQ, COMMAND_MASK, command))
        return _exported(rules)
    except OSError as error:
        raise SyscallFilterUnavailable(f"libseccomp refused the seccomp filter: {error}") from None


def _compat_arches(seccomp: ModuleType) -> list[int]:
    """The 32-bit ABIs a 64-bit kernel also runs: a call through them must meet the same rules, not another table."""
    native = seccomp.system_arch()
    if native == seccomp.Arch.X86_64:
        return [seccomp.Arch.X86, seccomp.Arch.X32]
    if native == seccomp.Arch.AARCH64:
        return [seccomp.Arch.ARM]
    return []


def _exported(rules: Any) -> bytes:
    """The BPF program libseccomp writes (it writes to a descriptor: an anonymous memory file, read back)."""
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)
    try:
        with open(fd, "wb", closefd=False) as out:
            rules.export_bpf(out)
        os.lseek(fd, 0, os.SEEK_SET)
        return _read_all(fd)
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    return data


def program_fd() -> int:
    """A fresh descriptor holding the filter, at its start, for one bubblewrap (which reads it, then closes it).
    Close-on-exec: only the start that passes it on (``pass_fds``) hands it to bubblewrap, never to another child."""
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, filter_program())
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
