"""The root of the arena's errors, below every other module (it imports nothing of the arena).

Every refusal the arena explains to people is an :class:`ArenaError`: its message is one line that says what was
expected and shows the bad value, so the command line catches ``ArenaError`` once and prints ``error: <message>``,
and the server puts the same line in a tournament's FAILED state. The families under it say whose the problem is:

- a command line that cannot work (options that do not go together), :class:`UsageError`;
- the rules engine's :class:`~arena.rules.errors.RulesError` (a bad option, deal, tile or action);
- a tournament file's :class:`~arena.tournament.spec.SpecError` and a limit's
  :class:`~arena.sandbox.limits.LimitsError`;
- a server or client setting's :class:`~arena.server.auth.ConfigError`;
- a run that stopped or could not start, :class:`~arena.tournament.errors.RunError` (a full disk is
  :class:`~arena.tournament.errors.RecordsNotWritten`: not a bad value of anyone's, so not a ``ValueError``);
- records that cannot be used or exported (:class:`~arena.records.replay.RecordError`,
  :class:`~arena.records.schema.RecordFormatError`, :class:`~arena.records.jsonform.FormatError`,
  :class:`~arena.records.export.ExportError`) and standings or tests fed data that does not fit
  (:class:`~arena.tournament.standings.OutcomeError`, :class:`~arena.tournament.sprt.SprtError`,
  :class:`~arena.tournament.likelihood.FitError`).

The families that refuse a bad *value* are also ``ValueError``s, as they always were, because callers catch them as
such (a damaged folder read with ``json``, a field parsed with ``int``); the others are not.
"""

from os import PathLike
from pathlib import Path


class ArenaError(Exception):
    """Anything the arena refuses or cannot do, with a one-line message for people."""


class UsageError(ArenaError, ValueError):
    """A command line whose options cannot work together, or an option's value out of range (exit status 2)."""


def read_named_file(path: str | PathLike[str], what: str, error: type[ArenaError]) -> str:
    """The text of a file a person named (``what``: "tournament file", "league file", ...), or ``error`` with one
    line: no such file, or why it cannot be read (a folder, no permission, not UTF-8). Every file the arena is told
    to read is refused the same way, so a typo in any path reads the same."""
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as error_read:
        raise error(f"{path}: cannot read the {what}: {error_read}") from None

