"""A hostile bot for the security tests: it plays legal moves, and on its first decision tries one attack a
stranger's bot would try, then reports what it got as one line ``ATTACK <name> <json>`` in its log (the only place
a sandboxed bot can write to that the test can read).

Attacks (``--attack``):
  secrets   read every file it can find whose name looks like a secret (seed, records, tokens, logs, sockets),
            walking the folders a bot could guess, plus the exact paths in $ATTACK_PATHS (a bot that knows the
            arena's layout); reports each file read with its first bytes
  procs     list every process it can see, read their command lines and environments, and SIGKILL each one whose
            command line holds $ATTACK_VICTIM (the other bots); reports who it saw, read and killed
  network   connect to 127.0.0.1:$ATTACK_PORT and to every Unix socket it can find; reports what connected
            (in the background: walking the folders takes longer than a move may, on a busy machine)
  disk      write $ATTACK_DISK_MB MiB into its socket folder, its /tmp, and every folder it can create a file in
            (found by walking the whole filesystem it sees); reports the writable folders and the bytes each took
            (in the background)
  mounts    report every mount it sees: mount point, filesystem type, per-mount options (/proc/self/mountinfo)
  project   list what it sees of the project checkout it comes from (two folders above its own file)
  redirect  listen on another path and make its socket's path a symlink to $ATTACK_TARGET (another bot's socket,
            as the arena sees it), so that the arena would talk to that bot in its place
  setsid    leave a grandchild behind in a new session that ignores SIGTERM, its command line tagged $ATTACK_TAG
  memory    allocate memory 64 MiB at a time, touching every page, up to 4 GiB
  pids      start threads until the kernel refuses, report how many, then exit
  log       write $ATTACK_LOG_MB MiB to stderr, then play on
  tmp       write into /tmp until it is full, then try to write anywhere else; report bytes and writable places
  cpu       start $ATTACK_SPINNERS processes that spin forever, then play on

With $ATTACK_AT_START set, the attack starts as the bot does, before any decision (a hog beside other bots' games,
not in them).
  env       report its environment's names and its open file descriptors
  deals     report each match it plays (a bot with memory would recognise a deal it saw from another seat)
  channel   pass a bit to another process of the same bot through $ATTACK_FILE, a file of its own read-only folder
            both see, by $ATTACK_CHANNEL, as $ATTACK_ROLE (send or receive); start it with $ATTACK_AT_START.
            Locks (flock; posix: fcntl F_SETLK; ofd: F_OFD_SETLK; posix-wide: F_SETLK with high bits set in the
            command, which the kernel drops, through syscall(2)): the sender holds a read lock and reports
            {"sent"}; the receiver, started after, asks whether another holds one and reports {"received"}.
            Watches (lease: a write lease, broken by another's open; inotify; fanotify; dnotify: fcntl F_NOTIFY on
            the folder): the receiver reports {"watching"}, then {"received"} once another process opens the
            file (or false after $ATTACK_WAIT_S); the sender, started after, opens and reads it, and reports
            {"sent"}. A refused call is reported with its errno name instead of a bit.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import fcntl
import json
import platform
import select
import struct
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from arena.protocol import bot_pb2
from testbot import serve_handlers

parser = argparse.ArgumentParser()
parser.add_argument("--attack", required=True)
parser.add_argument("--listen")
parser.add_argument("--tag", help="ignored: lets a test find its bot processes")
args = parser.parse_args()
ATTACK = args.attack
SECRET_NAMES = ("seed", "secret", "token", "games.jsonl", "server.json", "standings", "bots.json", ".log", "key")
GUESSED_ROOTS = ("/tmp", "/run", "/var/tmp", "/root", "/home", "/work", "/srv", "/opt", "/etc", os.getcwd())
started = threading.Event()
matches_seen: set[str] = set()


def report(name: str, result: object) -> None:
    if result is None:  # the attack reported for itself
        return
    print(f"ATTACK {name} {json.dumps(result, sort_keys=True)}", file=sys.stderr, flush=True)


def read_start(path: Path, size: int = 300) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(size).decode(errors="replace")
    except OSError:
        return None


def attack_secrets() -> dict:
    found: dict[str, str] = {}
    candidates = [Path(p) for p in os.environ.get("ATTACK_PATHS", "").split(os.pathsep) if p]
    budget = 50_000
    for root in GUESSED_ROOTS:
        for folder, dirs, files in os.walk(root):
            budget -= len(files) + len(dirs)
            if budget < 0:
                break
            candidates += [Path(folder) / f for f in files if any(s in f.lower() for s in SECRET_NAMES)]
    for path in candidates:
        if path.is_dir():
            candidates += [p for p in path.rglob("*") if p.is_file()][:200]
            continue
        text = read_start(path)
        if text is not None:
            found[str(path)] = text
    return {"read": found}


def processes() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def attack_procs() -> dict:
    me, victim = os.getpid(), os.environ.get("ATTACK_VICTIM", "\0")
    mine = {me, os.getppid()}
    seen, environ_read, killed, signalable = {}, [], [], []
    for pid in processes():
        if pid in mine:
            continue
        cmdline = read_start(Path(f"/proc/{pid}/cmdline"), 2000)
        seen[pid] = (cmdline or "").replace("\0", " ")
        if read_start(Path(f"/proc/{pid}/environ")) not in (None, ""):
            environ_read.append(pid)
        try:
            os.kill(pid, 0)
            signalable.append(pid)
        except OSError:
            continue
        if victim in seen[pid]:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
    return {"seen": seen, "environ_read": environ_read, "signalable": signalable, "killed": killed}


def attack_network() -> dict:
    connected = []
    port = os.environ.get("ATTACK_PORT")
    if port:
        try:
            with socket.create_connection(("127.0.0.1", int(port)), timeout=1):
                connected.append(f"127.0.0.1:{port}")
        except OSError:
            pass
    own = os.environ.get("DOMINOES_BOT_LISTEN", "").removeprefix("unix:")
    for root in ("/tmp", "/run", "/var/run", "/work", "/root"):
        for folder, _, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                if path == own or not name.endswith(".sock"):
                    continue
                with socket.socket(socket.AF_UNIX) as s:
                    try:
                        s.connect(path)
                        connected.append(path)
                    except OSError:
                        pass
    return {"connected": connected}


def attack_setsid() -> dict:
    child = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
         "signal.signal(signal.SIGHUP, signal.SIG_IGN); time.sleep(1000)", os.environ["ATTACK_TAG"]],
        start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return {"grandchild": child.pid}


def attack_memory() -> dict:
    hoard = []
    for _ in range(64):
        block = bytearray(64 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        hoard.append(block)
        report("memory_progress", {"mib": 64 * len(hoard)})
    return {"mib": 64 * len(hoard)}


def attack_pids() -> dict:
    """Threads count as processes for the kernel's limit, and starting one never forks a gRPC process."""
    forever = threading.Event()
    started, error = 0, None
    for _ in range(5000):
        try:
            threading.Thread(target=forever.wait, daemon=True).start()
            started += 1
        except RuntimeError as e:  # "can't start new thread"
            error = str(e)
            break
    report("pids", {"started": started, "error": error})
    os._exit(7)


def attack_log() -> dict:
    line = ("x" * 1023 + "\n").encode()
    for _ in range(int(os.environ.get("ATTACK_LOG_MB", "20")) * 1024):
        os.write(2, line)
    return {"written_mib": int(os.environ.get("ATTACK_LOG_MB", "20"))}


def attack_tmp() -> dict:
    written = 0
    chunk = b"\0" * (1024 * 1024)
    try:
        with open("/tmp/fill", "wb") as f:
            while written < 4096 * len(chunk):
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError:
        pass
    writable = []
    for place in ("/", "/etc", "/usr", os.getcwd(), os.path.dirname(os.path.abspath(__file__)), "/root", "/work",
                  "/var/tmp", "/dev/shm", "/run"):
        try:
            with open(os.path.join(place, "attack-was-here"), "w") as f:
                f.write("x")
            writable.append(place)
        except OSError:
            pass
    return {"written": written, "writable": writable}


def fill(path: str, limit: int) -> int:
    """Bytes written into a new file at ``path``, up to ``limit``, until the filesystem refuses (what the file
    holds then, counted by the filesystem itself)."""
    chunk = b"\0" * (1024 * 1024)
    try:
        with open(path, "wb", buffering=0) as f:
            while f.tell() < limit:
                f.write(chunk)
    except OSError:
        pass
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def writable_folders() -> list[str]:
    """Every folder of the filesystem it sees in which it can create a file (the kernel's own trees skipped)."""
    found = []
    for folder, dirs, _ in os.walk("/"):
        if folder in ("/proc", "/sys"):
            dirs.clear()
            continue
        probe = os.path.join(folder, f".attack-probe-{os.getpid()}")
        try:
            os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            os.unlink(probe)
            found.append(folder)
        except OSError:
            pass
    return found


def attack_disk() -> dict:
    limit = int(os.environ.get("ATTACK_DISK_MB", "200")) * 1024 * 1024
    places = list(dict.fromkeys(["/run/arena", "/tmp", *writable_folders()]))
    written = {}
    for place in places:
        written[place] = fill(os.path.join(place, "attack-fill"), limit)
    return {"written": written, "writable": writable_folders()}


def attack_mounts() -> dict:
    mounts = []
    for line in open("/proc/self/mountinfo").read().splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split(" ")
        mounts.append({"point": fields[4], "options": fields[5].split(","), "fstype": right.split(" ")[0],
                       "super": right.split(" ")[2].split(",") if len(right.split(" ")) > 2 else []})
    return {"mounts": mounts}


def attack_project() -> dict:
    root = Path(__file__).resolve().parents[2]
    seen = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel.split(os.sep)[0] in (".venv", "arena", "proto"):  # the shared environment and protocol, by design
            dirs.clear()
        seen += [os.path.normpath(os.path.join(rel, name)) for name in dirs + files]
    return {"root": str(root), "seen": sorted(seen)}


def attack_cpu() -> dict:
    spinners = int(os.environ.get("ATTACK_SPINNERS", "32"))
    for _ in range(spinners):
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
    return {"spinners": spinners}


def attack_env() -> dict:
    return {"env": sorted(os.environ), "fds": sorted(int(f) for f in os.listdir("/proc/self/fd"))}


LOCK_CHANNELS = {"flock", "posix", "ofd", "posix-wide"}
F_OFD_GETLK, F_OFD_SETLK = 36, 37
SYS_FCNTL = {"x86_64": 72, "aarch64": 25}
HIGH_BITS = 1 << 32
"""Set in a command passed to the kernel's fcntl, which reads an unsigned int: a filter comparing all 64 bits of
the argument would let F_SETLK | HIGH_BITS through as something else."""
IN_ACCESS, IN_OPEN = 0x1, 0x20
FAN_CLASS_NOTIF, FAN_REPORT_FID, FAN_MARK_ADD, FAN_ACCESS, FAN_OPEN, AT_FDCWD = 0, 0x200, 0x1, 0x1, 0x20, -100
DN_ACCESS, DN_MULTISHOT = 0x1, 0x80000000
libc = ctypes.CDLL(None, use_errno=True)
held: list[int] = []
"""Descriptors the sender keeps open for as long as it lives: its lock lives with them."""


def errno_name(error: OSError) -> str:
    return errno.errorcode.get(error.errno or 0, str(error.errno))


def lock_record(kind: int) -> bytes:
    """A struct flock for the whole file (type, whence, start, length, pid), laid out as the kernel reads it."""
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, 0, 0, 0)


def record_lock(fd: int, command: int, kind: int, wide: bool) -> int:
    """fcntl with a lock record; the lock type the kernel answers. ``wide``: the command with high bits set, through
    syscall(2), since Python's fcntl passes an int."""
    record = lock_record(kind)
    if not wide:
        return struct.unpack("hhqqi4x", fcntl.fcntl(fd, command, record))[0]
    buffer = ctypes.create_string_buffer(record, len(record))
    if libc.syscall(ctypes.c_long(SYS_FCNTL[platform.machine()]), ctypes.c_long(fd),
                    ctypes.c_ulong(command | HIGH_BITS), buffer) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return struct.unpack("hhqqi4x", buffer.raw)[0]


def send_by_lock(channel: str, path: str) -> dict:
    """Hold a read lock on ``path`` (opened read-only) for the rest of this process's life: the bit is 1."""
    fd = os.open(path, os.O_RDONLY)
    held.append(fd)
    try:
        if channel == "flock":
            fcntl.flock(fd, fcntl.LOCK_SH)
        else:
            record_lock(fd, F_OFD_SETLK if channel == "ofd" else fcntl.F_SETLK, fcntl.F_RDLCK,
                        channel == "posix-wide")
    except OSError as error:
        return {"sent": False, "errno": errno_name(error)}
    return {"sent": True}


def receive_by_lock(channel: str, path: str) -> dict:
    """Whether another process holds a lock on ``path``: the bit."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if channel == "flock":
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return {"received": False}
            except BlockingIOError:
                return {"received": True}
        kind = record_lock(fd, F_OFD_GETLK if channel == "ofd" else fcntl.F_GETLK, fcntl.F_WRLCK,
                           channel == "posix-wide")
        return {"received": kind != fcntl.F_UNLCK}
    except OSError as error:
        return {"received": None, "errno": errno_name(error)}
    finally:
        os.close(fd)


def checked(result: int) -> int:
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result


def watch(channel: str, path: str) -> int | None:
    """Start watching ``path``: a descriptor that becomes readable on another's open, or None where the news comes
    as SIGIO (a lease, dnotify)."""
    if channel == "inotify":
        fd = checked(libc.inotify_init1(0))
        checked(libc.inotify_add_watch(fd, path.encode(), IN_ACCESS | IN_OPEN))
        return fd
    if channel == "fanotify":
        fd = checked(libc.fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID, os.O_RDONLY))
        checked(libc.fanotify_mark(fd, FAN_MARK_ADD, ctypes.c_uint64(FAN_ACCESS | FAN_OPEN), AT_FDCWD, path.encode()))
        return fd
    if channel == "lease":
        fd = os.open(path, os.O_RDONLY)
        held.append(fd)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        return None
    if channel == "dnotify":
        fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
        held.append(fd)
        fcntl.fcntl(fd, fcntl.F_NOTIFY, DN_ACCESS | DN_MULTISHOT)
        return None
    raise ValueError(f"no channel {channel!r}")


def receive_by_watch(channel: str, path: str) -> None:
    """Report that the watch is set, then whether another process opened the file within $ATTACK_WAIT_S."""
    try:
        fd = watch(channel, path)
    except OSError as error:
        report("channel", {"watching": False, "errno": errno_name(error)})
        return
    report("channel", {"watching": True})
    wait_s = float(os.environ.get("ATTACK_WAIT_S", "120"))
    if fd is None:
        received = signal.sigtimedwait({signal.SIGIO}, wait_s) is not None
        for lease in held if channel == "lease" else ():
            fcntl.fcntl(lease, fcntl.F_SETLEASE, fcntl.F_UNLCK)  # let the sender's open go on
    else:
        received = bool(select.select([fd], [], [], wait_s)[0])
    report("channel", {"received": received})


def send_by_opening(path: str) -> dict:
    with open(path, "rb") as f:
        f.read()
    return {"sent": True}


def attack_channel() -> dict | None:
    channel, role, path = os.environ["ATTACK_CHANNEL"], os.environ["ATTACK_ROLE"], os.environ["ATTACK_FILE"]
    if channel in LOCK_CHANNELS:
        return send_by_lock(channel, path) if role == "send" else receive_by_lock(channel, path)
    if role == "send":
        return send_by_opening(path)
    receive_by_watch(channel, path)
    return None


ATTACKS = {"secrets": attack_secrets, "procs": attack_procs, "network": attack_network, "setsid": attack_setsid,
           "memory": attack_memory, "pids": attack_pids, "log": attack_log, "tmp": attack_tmp, "cpu": attack_cpu,
           "env": attack_env, "disk": attack_disk, "mounts": attack_mounts, "project": attack_project,
           "channel": attack_channel}
BACKGROUND = {"network", "disk"}
"""Attacks that take longer than a move may: run beside the game; the test waits for their report."""


def hello(request, context):
    return bot_pb2.HelloReply(name=f"attack-{ATTACK}", version="1", protocol_version=1)


def act(request, context):
    if ATTACK in ATTACKS and not started.is_set():
        started.set()
        if ATTACK in BACKGROUND:
            threading.Thread(target=lambda: report(ATTACK, ATTACKS[ATTACK]()), daemon=True).start()
        else:
            report(ATTACK, ATTACKS[ATTACK]())
    if ATTACK == "deals":
        notice_match(request)
    return bot_pb2.ActReply(index=0)


def notice_match(request) -> None:
    """Each match this process plays, once: the test maps them to deal sets through the records."""
    if request.match_id not in matches_seen:
        matches_seen.add(request.match_id)
        report("deals", {"match": request.match_id})


def notify(request, context):
    return bot_pb2.NotifyReply()


def listen_through_a_symlink(target: str) -> None:
    """Serve on a socket of its own, then put a symlink to ``target`` where the arena looks for its socket."""
    own = os.environ["DOMINOES_BOT_LISTEN"].removeprefix("unix:")
    real = os.path.join(os.path.dirname(own), "real.sock")
    threading.Thread(target=serve_handlers, args=(hello, act, notify, f"unix:{real}"), daemon=True).start()
    while not os.path.exists(real):
        threading.Event().wait(0.01)
    os.symlink(target, own)
    threading.Event().wait()


if __name__ == "__main__":
    if ATTACK == "channel":  # a broken lease and dnotify say so with SIGIO: blocked in every thread (those started
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGIO})  # later inherit it), the receiver waits for it
    if os.environ.get("ATTACK_AT_START") and ATTACK in ATTACKS:
        started.set()
        threading.Thread(target=lambda: report(ATTACK, ATTACKS[ATTACK]()), daemon=True).start()
    if ATTACK == "redirect":
        listen_through_a_symlink(os.environ["ATTACK_TARGET"])
    serve_handlers(hello, act, notify, args.listen)
