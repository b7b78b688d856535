"""Why a tournament run stops, or cannot start, and how it says so.

An entrant that cannot play (its program is missing, it exits or stays silent before its handshake, it does not
play the variant) is found before the first game, by starting every entrant once, and stops the run with
:class:`EntrantsCannotPlay`; a write to the run folder that fails (a full disk, a file size limit) stops the games in
flight and raises :class:`RecordsNotWritten`, saying how many games are safe. Both are :class:`RunError`, an
:class:`~arena.errors.ArenaError` (not a ``ValueError``: a full disk is nobody's bad value), so every caller that
reports one in a line (the CLI, the server's FAILED state) reports these the same way. Their own module, so that
the driver (:mod:`arena.tournament.runner`), the backends (worker processes, Ray) and the league's callers that
catch them need not import one another for them.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator, Sequence
from pathlib import Path

from arena.display import count_text
from arena.errors import ArenaError
from arena.records.run_folder import STANDINGS


class SpecError(ArenaError, ValueError):
    """A tournament file that cannot be run, with the key and the allowed values in the message (raised by
    :mod:`arena.tournament.spec`; here, so that the league's errors, which subclass it, load no tournament)."""


class RunError(ArenaError):
    """A tournament that stopped, or could not start, for a reason its file could not show."""


class EntrantsCannotPlay(RunError):
    """Entrants whose bot could not be started before the first game; nothing was played."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems = tuple(problems)
        """(bot name, why it cannot play) per entrant, in entrant order."""
        if len(problems) == 1:
            name, why = problems[0]
            text = f"bot {name!r} cannot play: {why}; no game was played"
        else:
            text = (f"{len(problems)} bots cannot play (no game was played): "
                    + "; ".join(f"bot {name!r}: {why}" for name, why in problems))
        super().__init__(text)


class RecordsNotWritten(RunError):
    """A write to the run folder failed mid-run: which file, why, and how many games are safe."""

    def __init__(self, path: Path, error: OSError, safe: int, total: int, standings_error: OSError | None) -> None:
        self.path, self.error, self.safe, self.total = path, error, safe, total
        self.given_up: list[str] = []
        """The entrants given up on before the write failed (as :attr:`~arena.tournament.summary.RunSummary.given_up`)."""
        if path.name == STANDINGS:
            standings = ""
        elif standings_error is not None:
            standings = f" ({STANDINGS} could not be written either: {_reason(standings_error)})"
        else:
            standings = f" ({STANDINGS} holds their standings)"
        super().__init__(f"cannot write {path}: {_reason(error)}; {safe} of {count_text(total, 'game')} are "
                         f"recorded and safe in {path.parent}{standings}")

    @property
    def remedy(self) -> str:
        """What to do before resuming, by the error's kind."""
        if self.error.errno in (errno.ENOSPC, errno.EDQUOT):
            return "free some space"
        if self.error.errno == errno.EFBIG:
            return "raise the file size limit (ulimit -f)"
        return "fix the cause"


class WriteFailed(Exception):
    """A write to the run folder failed: which file (a write on an open file does not say), and the error."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"{path}: {error}")
        self.path, self.error = path, error


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an OSError of the block into :class:`WriteFailed` naming ``path``."""
    try:
        yield
    except OSError as error:
        raise WriteFailed(path, error) from error


def _reason(error: OSError | None) -> str:
    """An OS error in its own words (``No space left on device``), without the errno and path a user already sees."""
    return (error.strerror or str(error)) if error is not None else ""


__all__ = ["RunError", "EntrantsCannotPlay", "RecordsNotWritten", "WriteFailed", "writing"]
