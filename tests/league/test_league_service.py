"""The league's service end to end: a real ``arena serve --league`` process, real gRPC, the CLI through subprocess,
and the database: SQLite in its data folder, and the same tests on a real PostgreSQL (tests/support/pg.py).

One server (module fixture) has an operator, two authors (alice, bob) whose Python bots were uploaded from their
folders with ``arena league upload`` and went through the pipeline (uploaded -> building -> checking -> ready), and
a broken bot of bob's that failed its check. The tests then attack it: another author's versions, a revoked token,
an author's token on the Arena service, a bad archive, the same archive twice, the daily upload limit. A second
server is killed with SIGKILL mid-pipeline and restarted on the same data folder.
"""

from __future__ import annotations

import io
import secrets
import shutil
import signal
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import grpc
import pytest

from arena.protocol import arena_pb2 as apb
from arena.protocol import arena_pb2_grpc as apb_grpc
from arena.protocol import league_pb2 as lpb
from arena.protocol import league_pb2_grpc as lpb_grpc
from support.paths import ROOT
from support.servers import Server
from support.league import (FAILED, GAME, LEAGUE, MANIFEST, PIPELINE_S, READY, League, bearer, bot_folder,
                            database_of, league_in, private_file, start_league)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def league(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[League]:
    root = tmp_path_factory.mktemp("league")
    operator = private_file(root / "operator.token", secrets.token_urlsafe(32))
    league_file = root / "league.toml"
    league_file.write_text(LEAGUE)
    server = start_league(root / "data", operator, league_file, database_of(request))
    try:
        setup = League(server, root, operator, {})
        setup.add_author("alice")
        setup.add_author("bob")
        setup.upload("alice", bot_folder(root / "alice-bot", ROOT / "bots" / "python" / "random_bot.py"), "rand")
        setup.upload("bob", bot_folder(root / "bob-bot", ROOT / "bots" / "python" / "greedy_bot.py"), "greedy")
        setup.upload("bob", bot_folder(root / "bob-broken", "raise SystemExit('this bot never starts')\n"),
                     "broken")
        yield setup
    finally:
        server.stop()


def test_two_authors_bots_become_ready(league: League) -> None:
    rand = league.settled(league.token("alice"), "rand")
    greedy = league.settled(league.token("bob"), "greedy")
    for version, author in ((rand, "alice"), (greedy, "bob")):
        assert (version.state, version.author, version.number, version.active) == (READY, author, 1, True)
        assert len(version.sha256) == 64
        log = league.stub().GetBuildLog(lpb.GetBuildLogRequest(version_id=version.id), timeout=30,
                                        metadata=bearer(league.token(author)))
        assert '"passed": true' in log.check_report
        assert '"variant": "block"' in log.check_report and "sandbox bubblewrap" in log.check_report
        assert "ast.parse" in log.build_log and "--- the build succeeded: built in " in log.build_log


def test_a_bot_that_fails_its_check_is_failed_with_why(league: League) -> None:
    broken = league.settled(league.token("bob"), "broken")
    assert broken.state == FAILED
    assert broken.reason.startswith("check failed: ")
    shown = league.league("log", str(broken.id), token=league.tokens["bob"])
    assert shown.returncode == 0 and "failed (check failed: " in shown.stdout


def test_an_author_cannot_read_list_retire_or_upload_to_anothers(league: League) -> None:
    rand = league.settled(league.token("alice"), "rand")
    stub, bob = league.stub(), bearer(league.token("bob"))
    for call, request in ((stub.GetBuildLog, lpb.GetBuildLogRequest(version_id=rand.id)),
                          (stub.RetireVersion, lpb.RetireVersionRequest(version_id=rand.id)),
                          (stub.ListVersions, lpb.ListVersionsRequest(bot="rand"))):
        with pytest.raises(grpc.RpcError) as refused:
            call(request, timeout=30, metadata=bob)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "author 'bob' may not" in refused.value.details() and "another author's" in refused.value.details()
    assert {v.bot for v in league.versions(league.token("bob"))} == {"greedy", "broken"}
    assert {b.name for b in stub.ListBots(lpb.ListBotsRequest(), timeout=30, metadata=bob).bots} == {"greedy",
                                                                                                     "broken"}
    shown = league.league("log", str(rand.id), token=league.tokens["bob"])
    assert shown.returncode == 1
    assert shown.stderr.startswith("error: permission denied: author 'bob' may not read the build log of")
    assert shown.stderr.count("\n") == 1
    uploaded = league.league("upload", str(league.root / "bob-bot"), "--bot", "rand", token=league.tokens["bob"])
    assert uploaded.returncode == 1 and "may not upload to bot 'rand'" in uploaded.stderr
    assert league.versions(league.token("alice"), "rand")[-1].state == READY  # untouched
    operator = bearer(league.operator.read_text().strip())
    assert {v.bot for v in stub.ListVersions(lpb.ListVersionsRequest(), timeout=30,
                                             metadata=operator).versions} == {"rand", "greedy", "broken"}


def test_only_the_operator_creates_or_revokes_authors(league: League) -> None:
    stub = league.stub()
    for call, request in ((stub.AddAuthor, lpb.AddAuthorRequest(name="mallory")),
                          (stub.RevokeToken, lpb.RevokeTokenRequest(author="bob"))):
        with pytest.raises(grpc.RpcError) as refused:
            call(request, timeout=30, metadata=bearer(league.token("alice")))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "only the operator may" in refused.value.details()


def test_a_share_link_is_the_operators_and_needs_a_dashboard(league: League) -> None:
    """ShareLeague: an author is refused first; the operator, on a server without a dashboard, gets one line (a link
    would open nothing)."""
    stub = league.stub()
    for token, code, line in (
            (league.token("alice"), grpc.StatusCode.PERMISSION_DENIED,
             "author 'alice' may not make a share link: only the operator may"),
            (league.operator.read_text().strip(), grpc.StatusCode.FAILED_PRECONDITION,
             "this server serves no web dashboard (arena serve --http ADDR): a share link would open nothing")):
        with pytest.raises(grpc.RpcError) as refused:
            stub.ShareLeague(lpb.ShareLeagueRequest(hours=2), timeout=30, metadata=bearer(token))
        assert (refused.value.code(), refused.value.details()) == (code, line)


def test_a_revoked_or_wrong_token_is_refused(league: League) -> None:
    carol = league.add_author("carol")
    assert league.versions(league.token("carol")) == []
    done = league.league("revoke", "carol", token=league.operator)
    assert done.returncode == 0 and "revoked" in done.stdout
    for token, words in ((league.token("carol"), "the token of author 'carol' was revoked"),
                         (secrets.token_urlsafe(32), "wrong token")):
        with pytest.raises(grpc.RpcError) as refused:
            league.versions(token)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert words in refused.value.details()
    shown = league.league("bots", token=carol)
    assert shown.returncode == 1 and "unauthenticated: the token of author 'carol' was revoked" in shown.stderr


def test_an_authors_token_does_not_reach_the_arena_service(league: League) -> None:
    """The server's token check lets only the league's calls through to their own check."""
    arena = apb_grpc.ArenaStub(grpc.insecure_channel(league.server.address))
    with pytest.raises(grpc.RpcError) as refused:
        arena.ListTournaments(apb.ListTournamentsRequest(), timeout=30, metadata=bearer(league.token("alice")))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    operator = bearer(league.operator.read_text().strip())
    assert arena.ListTournaments(apb.ListTournamentsRequest(), timeout=30, metadata=operator) is not None


def stored_files(league: League) -> list[Path]:
    return sorted(p for p in (league.server.data / "league" / "store").rglob("*") if p.is_file())


def test_a_bad_archive_is_refused_and_nothing_is_stored(league: League) -> None:
    evil = league.root / "evil.tar"
    with tarfile.open(evil, "w") as tar:
        for name, data in (("bot.toml", MANIFEST.encode()), ("bot.py", b"print(1)\n"), ("../escape.py", b"x\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    before = stored_files(league)
    done = league.league("upload", str(evil), "--bot", "evil", token=league.tokens["alice"])
    assert done.returncode == 1
    assert done.stderr.startswith("error: invalid argument: ") and "'..'" in done.stderr
    assert stored_files(league) == before
    assert {v.bot for v in league.versions(league.token("alice"))} == {"rand"}
    assert not (league.server.data / "league" / "escape.py").exists()


def test_the_same_archive_twice_is_one_version(league: League) -> None:
    first = league.settled(league.token("alice"), "rand")
    again = league.root / "rand.tar.gz"
    with tarfile.open(again, "w:gz") as tar:  # the same files in another container: the same canonical archive
        for name in ("bot.toml", "bot.py"):
            tar.add(league.root / "alice-bot" / name, arcname=name)
    shown = league.upload("alice", again, "rand")
    assert shown.startswith(f"already uploaded (the same archive is one version): version {first.id} ")
    assert first.sha256 in shown
    assert [v.id for v in league.versions(league.token("alice"), "rand")] == [first.id]


def test_uploads_past_the_daily_limit_are_refused(league: League) -> None:
    """bob has uploaded two versions, the league's uploads_per_day; a third is refused and stores nothing."""
    before = stored_files(league)
    third = bot_folder(league.root / "bob-third", "print('a third bot')\n")
    done = league.league("upload", str(third), "--bot", "third", token=league.tokens["bob"])
    assert done.returncode == 1
    assert "permission denied: author 'bob' has uploaded 2 versions in the last 24 hours" in done.stderr
    assert stored_files(league) == before


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> str | None:
    return database_of(request)


def test_a_kill_mid_pipeline_leaves_nothing_half_done(tmp_path: Path, database: str | None) -> None:
    """SIGKILL while the version is being checked (its bot takes seconds to start), then a restart on the same data
    folder: the version is requeued and ends ready."""
    operator = private_file(tmp_path / "operator.token", secrets.token_urlsafe(32))
    league_file = tmp_path / "league.toml"
    league_file.write_text(LEAGUE)
    slow = bot_folder(tmp_path / "slow", "import time\ntime.sleep(3)\n"
                      + (ROOT / "bots" / "python" / "random_bot.py").read_text())
    server = start_league(tmp_path / "data", operator, league_file, database)
    setup = League(server, tmp_path, operator, {})
    try:
        setup.add_author("alice")
        setup.upload("alice", slow, "slow")
        token = setup.token("alice")
        # the server's own line, not a poll of the state: a poll slowed by a busy machine can miss the seconds of it
        server.wait_line(r"league version checking \(version=1 ", PIPELINE_S)
    finally:
        server.stop(signal.SIGKILL)
    setup.server = start_league(tmp_path / "data", operator, league_file, database)
    try:
        version = setup.settled(token, "slow")
        assert any("league version requeued (version=1 " in line for line in setup.server.output)
        assert (version.id, version.state, version.number) == (1, READY, 1)
        assert version.reason == ""
    finally:
        setup.server.stop()


def test_an_endless_upload_is_refused_at_the_size_limit(league: League) -> None:
    """The limit is counted while the chunks arrive: a stream that never ends is refused once past the league's
    upload.archive_mb (16 MiB by default), and leaves no file behind."""
    before = stored_files(league)
    sent = []

    def endless() -> Iterator[lpb.UploadRequest]:
        yield lpb.UploadRequest(start=lpb.UploadStart(bot="endless"))
        while True:
            sent.append(1)
            yield lpb.UploadRequest(chunk=b"\0" * (1 << 20))

    with pytest.raises(grpc.RpcError) as refused:
        league.stub().Upload(endless(), timeout=120, metadata=bearer(league.token("alice")))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details() == ("the archive is over the league's limit of 16 MiB (upload.archive_mb); "
                                       "nothing was stored")
    assert 16 <= len(sent) < 200
    assert stored_files(league) == before


def test_the_upload_files_limit_is_enforced(tmp_path: Path) -> None:
    """A league's ``[upload] files`` decides, on the client as on the server: a folder of 5,500 files (more than the
    archive checker's own default of 5,000) goes through ``arena league upload`` to a league allowing 6,000, and
    one of 6,100 is refused with the league's number."""
    league = league_in(tmp_path, GAME + "[upload]\nfiles = 6000\n")
    try:
        league.add_author("ann")
        for bot, files in (("many", 5500), ("too-many", 6100)):
            folder = bot_folder(tmp_path / bot, ROOT / "bots" / "python" / "random_bot.py")
            (folder / "data").mkdir()
            for number in range(files - 3):  # bot.py, bot.toml and the folder data count too
                (folder / "data" / f"{number}.txt").write_text("x")
            done = league.league("upload", str(folder), "--bot", bot, token=league.tokens["ann"])
            if bot == "many":
                assert done.returncode == 0 and done.stdout.startswith("uploaded: version 1 of bot 'many'"), (
                    done.stderr)
            else:
                assert (done.returncode, done.stderr) == (
                    1, "error: invalid argument: the upload has more than 6,000 files\n")
    finally:
        league.server.stop()


@pytest.mark.parametrize("args, message", [
    (("--league", "LEAGUE"), "error: --league needs --token-file FILE: the operator's token"),
    (("--database", "sqlite:///x.db"), "error: --database goes with --league FILE"),
    (("--league", "missing.toml", "--token-file", "TOKEN"), "error: missing.toml: no such league file"),
    (("--kit-cache", "kits"), "error: --kit-cache goes with --league FILE"),
    (("--league", "LEAGUE", "--token-file", "TOKEN", "--kit-cache", "data/kits"), "error: --kit-cache /"),
    (("--league", "LEAGUE", "--token-file", "TOKEN", "--kit-cache", "."), "error: --kit-cache /"),  # holds them
])
def test_serve_refuses_an_unrunnable_league_in_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    import sys

    (tmp_path / "league.toml").write_text(LEAGUE)
    token = private_file(tmp_path / "token", secrets.token_urlsafe(32))
    argv = [str(tmp_path / "league.toml") if a == "LEAGUE" else str(token) if a == "TOKEN" else a for a in args]
    done = subprocess.run([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data",
                           str(tmp_path / "data"), *argv], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(message)
    assert done.stderr.count("\n") == 1
