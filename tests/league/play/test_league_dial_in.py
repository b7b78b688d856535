"""Dial-in versions of a league, in a real ``arena serve --league``: an author adds one with ``arena league dial-in``
(no upload, no build), plays it from its own machine with ``arena connect`` (a separate process relaying a real
bot), and the ladder seats it only while it is connected; its token plays as that version only; a league that does
not say ``dial_in = true`` refuses them; retiring the version ends its stream.
"""

from __future__ import annotations

import shlex
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from arena.league.rules.lifecycle import DONE, TABLE_STATES as ALL_TABLE_STATES
from arena.league.storage.db import open_database, sqlite_url
from arena.protocol import bot_pb2, dial_in_pb2
from arena.protocol import league_pb2 as lpb
from support.dial_in import RawDialIn
from support.league import DIAL_IN_LEAGUE, LADDER_LEAGUE, League, bearer, bot_folder, league_in
from support.paths import ROOT
from support.waiting import wait_for

LADDER_S = 600
"""Generous: every table starts a sandboxed bot and plays a deal set, on a busy 2-core machine."""
GENEROUS_S = 120
EXAMPLES = ROOT / "bots" / "python"


def dial_in(league: League, author: str, bot: str, token_file: Path) -> subprocess.CompletedProcess:
    return league.league("dial-in", "--bot", bot, "--bot-token-file", str(token_file), token=league.tokens[author])


def connect_command(printed: str, bot: str, *command: str) -> list[str]:
    """The ``arena connect`` command ``arena league dial-in`` printed (dialing in as ``bot``), to run as printed with
    the bot's command."""
    line = next(line for line in printed.splitlines() if line.startswith("play it from your machine: "))
    words = shlex.split(line.removeprefix("play it from your machine: ").removesuffix(" -- COMMAND ..."))
    at = words.index("connect")
    assert words[at + 1:at + 3] == ["--bot", bot] and "--token-file" in words
    return [*words, "--", *command]


@pytest.fixture
def league(tmp_path: Path):
    league = league_in(tmp_path, DIAL_IN_LEAGUE)
    yield league
    league.server.stop()


def test_a_dial_in_version_plays_only_while_connected(league: League, tmp_path: Path) -> None:
    for author in ("lab-a", "home", "lab-c"):
        league.add_author(author)
    league.upload("home", bot_folder(tmp_path / "random-bot", EXAMPLES / "random_bot.py"), "random")
    assert league.settled(league.token("home"), "random").state == lpb.VERSION_STATE_READY

    token_a = tmp_path / "lab-a-bot.token"
    added = dial_in(league, "lab-a", "greedy-at-home", token_a)
    assert added.returncode == 0, added.stderr
    assert stat.S_IMODE(token_a.stat().st_mode) == 0o600 and len(token_a.read_text().strip()) >= 40
    assert "dial-in version" in added.stdout and "(number 1), ready" in added.stdout
    absent = dial_in(league, "lab-c", "never-comes", tmp_path / "lab-c-bot.token")
    assert absent.returncode == 0, absent.stderr
    versions = {v.bot: v for author in ("lab-a", "lab-c") for v in league.versions(league.token(author))}
    a, c = versions["greedy-at-home"], versions["never-comes"]
    assert a.dial_in and c.dial_in and a.state == c.state == lpb.VERSION_STATE_READY and a.active
    assert token_a.read_text().strip() not in a.sha256  # what a version is tells nothing of its token

    # Nobody connected: one version is present, so the matchmaker has no table to choose.
    queue = league.stub().GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30,
                                         metadata=bearer(league.token("home")))
    assert not queue.next and not queue.playing

    # The token plays as its own version only; an author's token is no bot token.
    stolen = RawDialIn(league.server.address, "never-comes-v1", token_a.read_text().strip())
    assert stolen.wait_ended(GENEROUS_S) == (
        grpc.StatusCode.PERMISSION_DENIED, "this token is another bot's: it does not let its holder play as "
                                           "'never-comes-v1'")
    author_token = RawDialIn(league.server.address, "greedy-at-home-v1", league.token("lab-a"))
    assert author_token.wait_ended(GENEROUS_S)[0] == grpc.StatusCode.UNAUTHENTICATED

    relay = subprocess.Popen(connect_command(added.stdout, "greedy-at-home-v1", sys.executable, str(EXAMPLES / "greedy_bot.py")),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        database = open_database(sqlite_url(league.root / "data"))
        league_id = database.league("test").id

        def rated() -> bool:  # tables, not its rating's count: each table of fresh deals counts as its games
            done = [t for t in database.tables_in(league_id, (DONE,)) if a.id in t.versions]
            return len(done) >= 2 and relay.poll() is None

        wait_for(rated, LADDER_S, "the dial-in version to play two tables")
        every = database.tables_in(league_id, ALL_TABLE_STATES)
        done = [t for t in every if t.state == DONE]
        assert len(done) >= 2 and all(sorted(t.versions) == sorted([a.id, versions_of(league, "home")]) for t in done)
        assert all(c.id not in t.versions for t in every)  # never seated: it never connected

        retired = league.league("retire", str(a.id), token=league.tokens["lab-a"])
        assert retired.returncode == 0, retired.stderr
        _, err = relay.communicate(timeout=GENEROUS_S)  # the server let its stream go: the relay ends
        assert "no tournament or league on this server waits for this bot any more" in err
    finally:
        if relay.poll() is None:
            relay.kill()
            relay.communicate()


def test_a_tokenless_stream_is_refused_unread(league: League, tmp_path: Path) -> None:
    """The league's server checks its own token and the authors' itself on its other calls; a dial-in stream is let
    in by a version's token only, checked before its first message is read: junk from a caller without that token
    is UNAUTHENTICATED, not a protocol error, and only the version's own token gets as far as the protocol."""
    league.add_author("lab-a")
    token_file = tmp_path / "lab-a-bot.token"
    assert dial_in(league, "lab-a", "greedy-at-home", token_file).returncode == 0
    junk = b"\xff\xff\xff\xff"
    not_a_hello = dial_in_pb2.PlayRequest(request_id=1, act=bot_pb2.ActReply(index=0)).SerializeToString()
    missing = "missing token: send the metadata 'authorization: Bearer <token>' (arena connect --token-file F)"
    wrong = "wrong token: it is the token of no dial-in bot a tournament or league on this server waits for"
    streams = {
        "none": RawDialIn(league.server.address, "greedy-at-home-v1", None, first=junk),
        "author": RawDialIn(league.server.address, "greedy-at-home-v1", league.token("lab-a"), first=junk),
        "operator": RawDialIn(league.server.address, "greedy-at-home-v1", league.operator.read_text().strip(),
                              first=not_a_hello),
        "version": RawDialIn(league.server.address, "greedy-at-home-v1", token_file.read_text().strip(), first=junk),
    }
    assert {who: stream.wait_ended(GENEROUS_S) for who, stream in streams.items()} == {
        "none": (grpc.StatusCode.UNAUTHENTICATED, missing),
        "author": (grpc.StatusCode.UNAUTHENTICATED, wrong),
        "operator": (grpc.StatusCode.UNAUTHENTICATED, wrong),
        "version": (grpc.StatusCode.INVALID_ARGUMENT,
                    "the first message of a dial-in stream must be the hello (PlayRequest.hello)"),
    }
    assert not any(stream.received for stream in streams.values())


def versions_of(league: League, author: str) -> int:
    (version,) = league.versions(league.token(author))
    return version.id


def test_dial_in_is_refused_where_not_accepted(tmp_path: Path) -> None:
    league = league_in(tmp_path, LADDER_LEAGUE)
    try:
        league.add_author("lab-a")
        token_file = tmp_path / "bot.token"
        refused = dial_in(league, "lab-a", "remote", token_file)
        assert refused.returncode == 1
        assert refused.stderr.splitlines()[-1] == ("error: failed precondition: league 'test' does not accept dial-in "
                                                   "versions (its league file would say dial_in = true)")
        assert not token_file.exists() and league.versions(league.token("lab-a")) == []
    finally:
        league.server.stop()


def test_an_existing_token_file_is_never_written_over(league: League, tmp_path: Path) -> None:
    league.add_author("lab-a")
    kept = tmp_path / "kept.token"
    kept.write_text("something of the author's\n")
    refused = dial_in(league, "lab-a", "remote", kept)
    assert refused.returncode != 0 and "cannot write the bot token" in refused.stderr
    assert kept.read_text() == "something of the author's\n"
    assert league.versions(league.token("lab-a")) == []  # refused before anything was asked of the server


def test_only_the_author_adds_a_dial_in_version(league: League, tmp_path: Path) -> None:
    """The operator's token reaches everything else, but a dial-in version's token plays as the bot: only the
    bot's author adds one, to an existing bot or a new one; nothing is created and no token file written."""
    league.add_author("lab-a")
    added = dial_in(league, "lab-a", "remote", tmp_path / "lab-a-bot.token")
    assert added.returncode == 0, added.stderr
    lines = {}
    for bot in ("remote", "newcomer"):
        token_file = tmp_path / f"operator-{bot}.token"
        refused = league.league("dial-in", "--bot", bot, "--bot-token-file", str(token_file), token=league.operator)
        lines[bot] = (refused.returncode, refused.stdout, refused.stderr)
        assert not token_file.exists()
    assert lines == {
        "remote": (1, "", "error: permission denied: only a bot's author adds its dial-in versions: the token is "
                          "the author's to keep\n"),
        "newcomer": (1, "", "error: invalid argument: no bot 'newcomer' in league 'test': a bot is created by its "
                            "author's first upload (the operator uploads only to existing bots)\n")}
    assert [(v.bot, v.number, v.dial_in) for v in league.versions(league.operator.read_text().strip())] == [
        ("remote", 1, True)]
