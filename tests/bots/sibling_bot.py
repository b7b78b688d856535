"""A bot whose processes try to tell each other their hands through files every sandbox sees, and that logs, from
inside, what the fair-play tests check from outside.

The channel (``--channel flock`` or ``inotify``) uses the Python standard library's own files, which every sandbox
of this bot sees read-only: slots of 29 files each (a claim file, then one file per tile), a range of slots per
entrant name so that two entrants of this program do not mix. A process remembers every hand it was dealt (its
first request of each match) and never forgets while it lives:

- ``flock``: it claims a free slot per hand (an exclusive lock on the claim file) and holds a lock on the file of each
  tile of the hand; a sibling probes every claimed slot (a non-blocking lock that fails is a locked tile).
- ``inotify``: it watches every slot's tile files, and a thread of its own keeps opening the tile files of every hand
  it remembers in the slot the hand names; a sibling reads, at each request, which tiles of which slot were opened.

Every hand heard from a sibling is logged with the match it was heard in (``heard``); the test compares them with
the opponents' hands. The log also has the process's life on the monotonic clock, which the sandbox shares with the
arena: ``start``, each request (``act``, with the match), and ``stop`` when the arena's SIGTERM comes (the process
exits right after it). Run: python tests/bots/sibling_bot.py --name NAME --channel flock --listen ADDR
"""

import argparse
import errno
import fcntl
import json
import os
import random
import signal
import sys
import threading
import time
import uuid

from arena.botkit import listen_address, make_server
from arena.protocol.convert import tile_from_pb

SLOTS = 24
FILES_PER_SLOT = 29
INSTANCE = uuid.uuid4().hex[:12]
LOCK = threading.Lock()


def log(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, "instance": INSTANCE, "t": time.monotonic(), **fields}), file=sys.stderr,
          flush=True)


def shared_files(name: str) -> list[str]:
    """This entrant's slots: files of the standard library, the same list in every sandbox."""
    top = os.path.dirname(os.__file__)
    files = sorted(os.path.join(folder, file) for folder, _, names in os.walk(top) for file in names
                   if file.endswith(".py"))
    offset = (sum(name.encode()) % 2) * SLOTS * FILES_PER_SLOT
    return files[offset:offset + SLOTS * FILES_PER_SLOT]


def slot_of(hand: frozenset[int]) -> int:
    """Where a hand is told through watches: a slot its own tiles name, so that a slot where two hands met reads
    as neither (each process tells every hand it remembers; without locks there is no claiming a slot)."""
    return sum(1 << tile for tile in hand) % SLOTS


class Channel:
    def __init__(self, name: str) -> None:
        self.files = shared_files(name)
        self.hands: dict[str, frozenset[int]] = {}
        """match id -> the hand this process was dealt in it."""
        self.refused: set[str] = set()

    def tile_file(self, slot: int, tile: int) -> str:
        return self.files[slot * FILES_PER_SLOT + 1 + tile]

    def refusal(self, call: str, error: OSError) -> None:
        if call not in self.refused:
            self.refused.add(call)
            log("refused", call=call, errno=error.errno, error=os.strerror(error.errno or 0))


class FlockChannel(Channel):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.held: dict[int, list[int]] = {}
        """slot -> the descriptors holding its locks (the claim first)."""

    def tell(self, hand: frozenset[int]) -> None:
        for slot in range(SLOTS):
            if slot in self.held:
                continue
            claim = os.open(self.files[slot * FILES_PER_SLOT], os.O_RDONLY)
            try:
                fcntl.flock(claim, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(claim)
                if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    continue
                self.refusal("flock", error)
                return
            fds = [claim]
            for tile in hand:
                fd = os.open(self.tile_file(slot, tile), os.O_RDONLY)
                fcntl.flock(fd, fcntl.LOCK_SH)
                fds.append(fd)
            self.held[slot] = fds
            return

    def listen(self) -> list[frozenset[int]]:
        heard = []
        for slot in range(SLOTS):
            if slot in self.held or not self.locked(self.files[slot * FILES_PER_SLOT]):
                continue
            heard.append(frozenset(t for t in range(28) if self.locked(self.tile_file(slot, t))))
        return heard

    def locked(self, path: str) -> bool:
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        except OSError as error:
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return True
            self.refusal("flock", error)
            return False
        finally:
            os.close(fd)


class InotifyChannel(Channel):
    """Watches through ctypes (the standard library has no inotify module)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        import ctypes

        self.libc = ctypes.CDLL(None, use_errno=True)
        self.ctypes = ctypes
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK)
        self.watches: dict[int, tuple[int, int]] = {}
        if self.fd < 0:
            self.refusal("inotify_init1", OSError(ctypes.get_errno(), ""))
            return
        for slot in range(SLOTS):
            for tile in range(28):
                wd = self.libc.inotify_add_watch(self.fd, self.tile_file(slot, tile).encode(), 0x20)  # IN_OPEN
                if wd < 0:
                    self.refusal("inotify_add_watch", OSError(ctypes.get_errno(), ""))
                    return
                self.watches[wd] = (slot, tile)

    def tell(self, hand: frozenset[int]) -> None:
        """A watch hears only what happens while it watches: a thread tells every remembered hand again and again,
        for as long as the process lives (started with the first hand)."""
        if not hasattr(self, "teller"):
            self.teller = threading.Thread(target=self.keep_telling, daemon=True)
            self.teller.start()

    def keep_telling(self) -> None:
        while True:
            with LOCK:
                remembered = list(self.hands.values())
            for hand in remembered:
                for tile in hand:
                    os.close(os.open(self.tile_file(slot_of(hand), tile), os.O_RDONLY))
            time.sleep(0.005)

    def listen(self) -> list[frozenset[int]]:
        if self.fd < 0 or not self.watches:
            return []
        opened: dict[int, set[int]] = {}
        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return []
        offset = 0
        while offset + 16 <= len(data):
            wd = int.from_bytes(data[offset:offset + 4], "little", signed=True)  # struct inotify_event: wd, mask,
            length = int.from_bytes(data[offset + 12:offset + 16], "little")  # cookie, len, then the name
            if wd in self.watches:
                slot, tile = self.watches[wd]
                opened.setdefault(slot, set()).add(tile)
            offset += 16 + length
        own = set(self.hands.values())
        return [frozenset(tiles) for slot, tiles in opened.items()
                if slot_of(frozenset(tiles)) == slot and frozenset(tiles) not in own]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--channel", choices=("flock", "inotify"), required=True)
    options, _ = parser.parse_known_args()
    log("start", name=options.name, channel=options.channel)
    channel: Channel = (FlockChannel if options.channel == "flock" else InotifyChannel)(options.name)

    def choose(request) -> int:
        match = request.match_id
        with LOCK:
            log("act", match=match)
            if match not in channel.hands:
                channel.hands[match] = frozenset(tile_from_pb(t) for t in request.observation.hand)
            channel.tell(channel.hands[match])
            for hand in channel.listen():
                if len(hand) == len(channel.hands[match]) and not hand & channel.hands[match]:
                    log("heard", match=match, hand=sorted(hand))
        legal = request.observation.legal_actions
        return random.randrange(len(legal))

    server, _ = make_server(choose, listen_address(), name=options.name)
    stop = threading.Event()

    def stopped(*_: object) -> None:
        log("stop")
        os._exit(0)  # nothing plays after the line: the process is gone as it says so

    signal.signal(signal.SIGTERM, stopped)
    stop.wait()


if __name__ == "__main__":
    main()
