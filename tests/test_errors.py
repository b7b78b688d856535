"""The error hierarchy says whose a problem is: every refusal is an :class:`~arena.errors.ArenaError` the command
line prints as one line, only the rules' refusals are rules errors, and a failed disk write is no bad value."""

from __future__ import annotations

import errno
from pathlib import Path

import grpc
import pytest
import trio

from arena.errors import ArenaError, UsageError
from arena.records.export import ExportError
from arena.records.jsonform import FormatError
from arena.records.replay import RecordError
from arena.records.schema import RecordFormatError
from arena.rules.errors import IllegalActionError, OptionError, RulesError
from arena.sandbox.limits import LimitsError
from arena.league.rules.errors import LeagueError, NotFound, PermissionDenied, StateError, Unauthenticated
from arena.server.auth import ConfigError
from arena.server.core import SHUTTING_DOWN, ApiError, Refusal
from arena.server.status import status_of
from arena.tournament.errors import EntrantsCannotPlay, RecordsNotWritten, RunError
from arena.tournament.likelihood import FitError
from arena.tournament.spec import SpecError
from arena.tournament.sprt import SprtError
from arena.tournament.standings import OutcomeError

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize("error", [UsageError, RulesError, OptionError, IllegalActionError, SpecError, LimitsError,
                                   ConfigError, RunError, EntrantsCannotPlay, RecordsNotWritten, RecordError,
                                   RecordFormatError, FormatError, ExportError, SprtError, OutcomeError, FitError])
def test_every_refusal_is_an_arena_error(error: type[Exception]) -> None:
    assert issubclass(error, ArenaError)


@pytest.mark.parametrize("error", [UsageError, SpecError, LimitsError, ConfigError, RunError, EntrantsCannotPlay,
                                   RecordsNotWritten, RecordError, RecordFormatError, FormatError, ExportError,
                                   SprtError, OutcomeError, FitError])
def test_only_the_rules_refusals_are_rules_errors(error: type[Exception]) -> None:
    assert not issubclass(error, RulesError)


def test_a_failed_write_is_an_arena_error_only(tmp_path: Path) -> None:
    """RecordsNotWritten (a full disk) is an ArenaError the CLI prints in a line, and neither a RulesError nor a
    ValueError that a caller catching bad values would swallow."""
    error = RecordsNotWritten(tmp_path / "games.jsonl", OSError(errno.ENOSPC, "No space left on device"), 3, 10,
                              None)
    assert isinstance(error, ArenaError) and isinstance(error, RunError)
    assert not isinstance(error, (RulesError, SpecError, ValueError))
    assert str(error).startswith(f"cannot write {tmp_path / 'games.jsonl'}: No space left on device; 3 of 10 games")


@pytest.mark.parametrize("error", [RulesError, SpecError, LimitsError, ConfigError, RecordFormatError, FormatError,
                                   ExportError, SprtError, OutcomeError, FitError])
def test_refusals_of_a_bad_value_stay_value_errors(error: type[Exception]) -> None:
    """Callers catch these as ValueError (a damaged folder read with json, a field parsed with int): they stay so."""
    assert issubclass(error, ValueError)


@pytest.mark.parametrize(("error", "code"), [
    (Unauthenticated("no token"), grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied("another author's"), grpc.StatusCode.PERMISSION_DENIED),
    (NotFound("no bot"), grpc.StatusCode.NOT_FOUND),
    (StateError("frozen"), grpc.StatusCode.FAILED_PRECONDITION),
    (LeagueError("bad archive"), grpc.StatusCode.INVALID_ARGUMENT),
    (SpecError("bad spec"), grpc.StatusCode.INVALID_ARGUMENT),
    (ApiError(Refusal.RESOURCE_EXHAUSTED, "no room"), grpc.StatusCode.RESOURCE_EXHAUSTED),
    (ApiError(Refusal.DATA_LOSS, "unreadable"), grpc.StatusCode.DATA_LOSS),
])
def test_both_services_refuse_with_a_status_and_line(error: Exception, code: grpc.StatusCode) -> None:
    assert status_of(error) == (code, str(error))


def test_every_server_refusal_has_its_names_status_code() -> None:
    answered = [status_of(ApiError(refusal, "why")) for refusal in Refusal]
    assert [(found[0].name, found[1]) if found else None for found in answered] == [(r.name, "why") for r in Refusal]


def test_shutdown_is_unavailable_and_a_bug_is_no_refusal() -> None:
    assert status_of(trio.RunFinishedError("gone")) == (grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)
    assert status_of(KeyError("a bug")) is None
