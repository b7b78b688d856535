"""The seeded shuffle: the only randomness the rules ever use.

Deals must be reproducible from a recorded seed in any language, so the stream is not Python's Mersenne Twister
but SHAKE-256 (a standard extendable-output hash) of a text key, read byte by byte:

* ``below(n)`` takes the next ``k`` bytes (the fewest with ``256**k >= n``) as a big-endian integer ``x`` and
  returns ``x % n`` unless ``x`` falls in the incomplete last block (``x >= 256**k - 256**k % n``), in which case it
  reads the next ``k`` bytes instead (rejection sampling, so every value is exactly equally likely);
* ``shuffle(items)`` is Fisher-Yates from the end: for ``i`` from ``len-1`` down to ``1``, swap ``items[i]`` with
  ``items[below(i + 1)]``.

The key of a stream is ``"dominoes/v1/<label>/<seed>"`` (seed written in decimal), so distinct uses of one seed
(the lot, the deal of round 3, ...) get independent streams.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")


def stream_key(label: str, seed: int | str) -> bytes:
    """The documented key for the stream ``label`` of ``seed``."""
    return f"dominoes/v1/{label}/{seed}".encode()


class Rng:
    """A deterministic random stream from SHAKE-256 of a key; see the module docstring for the exact algorithm."""

    __slots__ = ("_key", "_buf", "_pos")

    def __init__(self, label: str, seed: int | str) -> None:
        self._key = stream_key(label, seed)
        self._buf = hashlib.shake_256(self._key).digest(256)
        self._pos = 0

    def _next_bytes(self, k: int) -> int:
        end = self._pos + k
        if end > len(self._buf):
            self._buf = hashlib.shake_256(self._key).digest(2 * len(self._buf) + k)
        value = int.from_bytes(self._buf[self._pos:end], "big")
        self._pos = end
        return value

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError(f"n must be positive, got {n}")
        k = 1
        while 256**k < n:
            k += 1
        space = 256**k
        limit = space - space % n
        while True:
            x = self._next_bytes(k)
            if x < limit:
                return x % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Shuffle in place (Fisher-Yates from the end)."""
        below = self.below
        for i in range(len(items) - 1, 0, -1):
            j = below(i + 1)
            items[i], items[j] = items[j], items[i]
