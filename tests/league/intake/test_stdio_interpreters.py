"""The stdio kit runs a script with an interpreter the league allows: a Perl bot uploaded to a real ``arena serve
--league`` is built, checked and plays the ladder beside a Python stdio bot; an interpreter the league does not
allow and an entry that is not in the upload are refused at the upload; an interpreter outside the folders the bot's
sandbox mounts read-only is refused at the build (and the attack it stops, tried with the refusal removed, reads a
file of the host that no sandbox shows)."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
import trio

from arena.league.intake import build as league_build
from arena.league.intake.build import BuildLimits, KitCache, build_version
from arena.league.rules.manifest import parse_manifest
from arena.league.intake.pipeline import runnable_spec
from arena.league.rules.errors import LeagueError
from arena.league.rules.model import ONLINE, Runnable, Version
from arena.players.process import BotProcess, BotSpec
from arena.protocol import league_pb2 as lpb
from arena.sandbox import host
from arena.sandbox.contain import SYSTEM_DIRS
from arena.league.storage.db import open_database, sqlite_url
from support.league import FAILED, GAME, READY, League, league_in, perl_folder
from support.paths import ROOT
from support.waiting import wait_for

pytestmark = pytest.mark.skipif(host().bwrap_problem is not None or host().cgroups is None or
                                shutil.which("perl", path="/usr/bin") is None,
                                reason="needs bubblewrap, cgroups and /usr/bin/perl")

LADDER_S = 600
"""Generous: each table starts two bots in their sandbox and plays a deal set, on a busy 2-core machine."""
LADDER = GAME + """[ladder]
concurrency = 1
coverage = 2
placement = 1
"""


def test_a_perl_bot_is_built_checked_and_plays_the_ladder_beside_a_python_stdio_bot(tmp_path: Path) -> None:
    league = league_in(tmp_path, 'interpreters = ["python3", "perl"]\n' + LADDER)
    try:
        league.add_author("perl-author")
        league.add_author("python-author")
        league.upload("perl-author", perl_folder(tmp_path / "perl-bot"), "camel")
        league.upload("python-author", ROOT / "bots" / "stdio", "snake")  # python3, the default interpreter
        camel = league.settled(league.token("perl-author"), "camel")
        snake = league.settled(league.token("python-author"), "snake")
        assert (camel.state, snake.state) == (READY, READY), (camel.reason, snake.reason)
        db = open_database(sqlite_url(league.root / "data"))
        assert db.version(camel.id).runnable.command == ("perl", "bot.pl")
        assert db.version(snake.id).runnable.command == ("python3", "bot.py")
        assert db.version(camel.id).runnable.protocol == "stdio"
        league_id = db.league("test").id

        def both_rated() -> bool:  # a ladder table of the two, played and rated
            rated = {r.version_id: r.games for r in db.ratings(league_id, ONLINE)}
            return rated.get(camel.id, 0) >= 1 and rated.get(snake.id, 0) >= 1

        wait_for(both_rated, LADDER_S, "the Perl and the Python stdio versions to play a ladder table")
    finally:
        league.server.stop()


def test_what_an_interpreter_may_not_be_is_refused(tmp_path: Path) -> None:
    """Not allowed by the league, or an entry the upload lacks: refused at the upload, nothing stored. Allowed by the
    league but outside the sandbox's system folders: the build refuses it, the version fails with why."""
    outside = tmp_path / "tools" / "perl"
    outside.parent.mkdir()
    outside.symlink_to(shutil.which("perl", path="/usr/bin"))
    league = league_in(tmp_path, f'interpreters = ["python3", "perl", "bash", "{outside}"]\n' + GAME)
    try:
        league.add_author("author")
        done = league.league("upload", str(perl_folder(tmp_path / "cobol-bot", "cobol")), "--bot", "old",
                             token=league.tokens["author"])
        assert (done.returncode, done.stderr) == (
            1, "error: invalid argument: the stdio kit's interpreter 'cobol' is not one this league allows: python3, "
               f"perl, bash, {outside}\n")
        missing = perl_folder(tmp_path / "missing-bot", entry="src/bot.pl")
        done = league.league("upload", str(missing), "--bot", "lost", token=league.tokens["author"])
        assert (done.returncode, done.stderr.splitlines()) == (
            1, [f"error: {missing}: bot.toml: key 'entry' names 'src/bot.pl', which is not a file in the upload"])
        assert league.versions(league.token("author")) == []

        league.upload("author", perl_folder(tmp_path / "outside-bot", str(outside)), "escaper")
        version = league.settled(league.token("author"), "escaper")
        assert (version.state, version.reason) == (
            FAILED, f"build failed: the stdio kit's interpreter cannot run in the bot's sandbox: '{outside}' is "
                    f"{outside}, outside the folders every bot's sandbox mounts read-only (the system's "
                    f"{system_folders()} and the arena's Python)")
    finally:
        league.server.stop()


def system_folders() -> str:
    return ", ".join(d for d in SYSTEM_DIRS if Path(d).exists())


READER = r"""#!/usr/bin/perl
# Says in its hello's name what it read of the file beside its interpreter (or that it could not).
use strict; use warnings; use JSON::PP;
$| = 1;
my $json = JSON::PP->new->canonical;
my $secret = "nothing";
if (open(my $file, "<", "SECRET")) { $secret = <$file>; close $file; }
chomp $secret;
while (my $line = <STDIN>) {
    my $message = $json->decode($line);
    if (exists $message->{hello}) {
        print $json->encode({name => "read-$secret", version => "1", author => "x", protocolVersion => 1}), "\n";
    } elsif (exists $message->{act}) {
        print $json->encode({index => 0}), "\n";
    }
}
"""


def test_an_interpreter_outside_the_system_folders_would_show_its_folder_to_the_bot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interpreter's folder would be bound into the sandbox to run it: a file beside it (a host's secret) would
    be the bot's to read. The build refuses it; with the refusal removed, the bot reads the file. (Its name has no
    syntax check in the build, whose own sandbox would not find it: the build itself passes.)"""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "runner").symlink_to(shutil.which("perl", path="/usr/bin"))
    secret = "hostsecret"
    (tools / "SECRET").write_text(secret + "\n")
    tools.chmod(0o755)
    (tools / "SECRET").chmod(0o644)
    reader = READER.replace('"SECRET"', f'"{tools / "SECRET"}"')
    source = tmp_path / "source"
    source.mkdir()
    (source / "bot.pl").write_text(reader)
    (source / "bot.toml").write_text(f'kit = "stdio"\ninterpreter = "{tools / "runner"}"\nentry = "bot.pl"\n'
                                     'variants = ["block"]\n')
    manifest = parse_manifest((source / "bot.toml").read_bytes())

    def build(work: Path):
        work.mkdir()
        return trio.run(build_version, source, manifest, work, KitCache(tmp_path / "kits"), BuildLimits(),
                        work / "build.log")

    refused = build(tmp_path / "refused")
    assert (refused.ok, refused.why) == (
        False, f"the stdio kit's interpreter cannot run in the bot's sandbox: '{tools / 'runner'}' is "
               f"{tools / 'runner'}, outside the folders every bot's sandbox mounts read-only (the system's "
               f"{system_folders()} and the arena's Python)")

    monkeypatch.setattr(league_build, "system_program_problem", lambda program: None)
    built = build(tmp_path / "unguarded")
    assert built.ok, built.why
    assert built.command == (str(tools / "runner"), "bot.pl")
    version_folder = built.folder
    spec = BotSpec("reader", command=built.command, cwd=str(version_folder), folder=str(version_folder),
                   protocol="stdio")
    assert trio.run(hello_name, spec, tmp_path / "logs") == f"read-{secret}"

    monkeypatch.undo()  # the refusal back: every start of a built version checks its interpreter again
    now = datetime.now(timezone.utc)
    row = Version(7, 1, 1, 1, "0" * 64, "ready", None, now, now, None, None, 0,
                  Runnable(built.command, version_folder.name, "stdio"))
    with pytest.raises(LeagueError) as caught:
        runnable_spec(version_folder.parent, row, "reader", spec.limits)
    assert str(caught.value) == f"version 7: {refused.why}"


async def hello_name(spec: BotSpec, logs: Path) -> str:
    process = BotProcess(spec, logs, startup_s=60)
    try:
        client = await process.ensure_running()
        return client.hello.name if client.hello is not None else "?"
    finally:
        await process.stop()
