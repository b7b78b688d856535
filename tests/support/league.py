"""The league's test helpers: a real ``arena serve --league`` (:class:`League`, :func:`start_league`,
:func:`restarted`), authors' bot folders and token files, the database fixtures on SQLite and PostgreSQL, the
ladder's checks that nothing was lost or doubled (:func:`check_once`, :func:`mid_table`, :func:`verified`), and the
hostile build's witnesses."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Iterator, Sequence

import grpc
import pytest

from arena.league.authors import create_author
from arena.league.rules.lifecycle import DONE, PLAYING
from arena.league.rules.model import ONLINE
from arena.league.storage.db import Database, open_database, sqlite_url
from arena.league.rules.errors import NotFound
from arena.league.play.ladder import RECORD
from arena.league.rules.rating import recompute
from arena.protocol import league_pb2 as lpb
from arena.protocol import league_pb2_grpc as lpb_grpc
from arena.records.run_folder import RunFolder
from support.paths import ROOT
from support.servers import Server
from arena.web.access import SIGNUP_COOKIE
from support.web import WebServer, get_json, http, set_cookie
from support.waiting import wait_for

PIPELINE_S = 240
"""Generous: a check starts the bot in its sandbox and plays two matches, on a busy 2-core machine."""
GAME = """name = "test"
variant = "block"
[options]
target = 1
[time]
move_ms = 2000
startup_ms = 30000
"""
"""The test league's game: Block to 1 point, generous time for a busy machine (a league file's first lines)."""
LEAGUE = GAME + """[authors]
uploads_per_day = 2
"""
MANIFEST = 'kit = "python"\nentry = "bot.py"\nvariants = ["block"]\n'
LADDER_LEAGUE = GAME + """[ladder]
concurrency = 1
coverage = 2
placement = 1
"""
"""The test league with a quick ladder: one table at a time, each new version placed after one table."""
DIAL_IN_LEAGUE = "dial_in = true\n" + LADDER_LEAGUE
"""The quick ladder's league, where authors may add dial-in versions."""
LADDER_BOTS = {"rand": ROOT / "bots" / "python" / "random_bot.py",
               "greedy": ROOT / "bots" / "python" / "greedy_bot.py"}
"""The ladder's two bots, each uploaded by an author of its own (``author-rand``, ``author-greedy``)."""
READY, FAILED = lpb.VERSION_STATE_READY, lpb.VERSION_STATE_FAILED


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def private_file(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def bot_folder(folder: Path, source: Path | str, manifest: str = MANIFEST) -> Path:
    """A bot's folder as an author has it: ``bot.py`` (a copy of ``source``, or this text) and its bot.toml
    (``manifest``: by default a python bot of Block)."""
    folder.mkdir(parents=True)
    if isinstance(source, Path):
        shutil.copy(source, folder / "bot.py")
    else:
        (folder / "bot.py").write_text(source)
    (folder / "bot.toml").write_text(manifest)
    return folder


@dataclass
class League:
    """A server running the test league, its operator's token file and the authors' token files."""

    server: Server
    root: Path
    operator: Path
    tokens: dict[str, Path]

    def token(self, name: str) -> str:
        return self.tokens[name].read_text().strip()

    def stub(self) -> lpb_grpc.LeagueServiceStub:
        return lpb_grpc.LeagueServiceStub(grpc.insecure_channel(self.server.address))

    def league(self, *args: str, token: Path) -> subprocess.CompletedProcess:
        return self.server.cli("league", *args, "--token-file", str(token))

    def add_author(self, name: str) -> Path:
        done = self.league("add-author", name, token=self.operator)
        assert done.returncode == 0, done.stderr
        self.tokens[name] = private_file(self.root / f"{name}.token", done.stdout)
        return self.tokens[name]

    def upload(self, author: str, source: Path, bot: str) -> str:
        done = self.league("upload", str(source), "--bot", bot, token=self.tokens[author])
        assert done.returncode == 0, done.stderr
        return done.stdout

    def versions(self, token: str, bot: str = "", league: str = "") -> list[lpb.BotVersion]:
        """The versions the token's holder may see, of one bot or every one (of ``league``, when the server runs
        several)."""
        return list(self.stub().ListVersions(lpb.ListVersionsRequest(league=league, bot=bot), timeout=30,
                                             metadata=bearer(token)).versions)

    def settled(self, token: str, bot: str) -> lpb.BotVersion:
        """The bot's newest version once the pipeline is done with it (ready or failed)."""
        found: list[lpb.BotVersion] = []

        def done() -> bool:
            found[:] = self.versions(token, bot)
            return bool(found) and found[-1].state in (READY, FAILED)

        wait_for(done, PIPELINE_S, f"bot {bot} to be ready or failed")
        return found[-1]


def start_league(data: Path, operator: Path, league_file: Path, database: str | None,
                 kit_cache: Path | None = None, *, web: bool = False, public: bool = True,
                 extra: Sequence[str] = ()) -> Server:
    """A server of the league; its kit cache ``kit_cache`` (default: an empty folder beside the data folder, enough
    for the python and stdio kits, which need none). With ``web``, the public dashboard too (``--http`` on a free
    port, ``--http-public`` unless not ``public``: what a spectator without a token sees; its address is the
    server's ``web``). ``extra``: more ``arena serve`` arguments (a registry of bots for tournaments)."""
    if kit_cache is None:
        kit_cache = data.parent / "kits"
        kit_cache.mkdir(exist_ok=True)
    args = ("--token-file", str(operator), "--league", str(league_file), "--kit-cache", str(kit_cache),
            *(("--database", database) if database else ()), *extra)
    return WebServer(data, *(("--http-public",) if public else ()), *args) if web else Server(data, *args)


def restarted(league: League, database: str | None, *, web: bool = False) -> League:
    """The same league's server started again on its data folder and database (after a kill or a stop); with
    ``web``, its public dashboard too (on another port: its address is the new server's ``web``)."""
    server = start_league(league.root / "data", league.operator, league.root / "league.toml", database, web=web)
    return League(server, league.root, league.operator, league.tokens)


def league_in(root: Path, league_text: str, database: str | None = None, *, web: bool = False,
              public: bool = True, extra: Sequence[str] = ()) -> League:
    """A server of the league file ``league_text`` in ``root`` (on ``database``; default SQLite in its data
    folder), with a new operator token and no authors yet; with ``web``, its dashboard too (public unless not
    ``public``); ``extra``: more ``arena serve`` arguments."""
    operator = private_file(root / "operator.token", secrets.token_urlsafe(32))
    (root / "league.toml").write_text(league_text)
    return League(start_league(root / "data", operator, root / "league.toml", database, web=web, public=public,
                               extra=extra), root, operator, {})


def ladder_uploaded(league: League) -> None:
    """The ladder's bots (:data:`LADDER_BOTS`) uploaded by their own authors and ready (the ladder then plays
    them)."""
    for name, source in LADDER_BOTS.items():
        league.add_author(f"author-{name}")
        league.upload(f"author-{name}", bot_folder(league.root / f"{name}-bot", source), name)
    for name in LADDER_BOTS:
        assert league.settled(league.token(f"author-{name}"), name).state == lpb.VERSION_STATE_READY


def games_on_board(web: str, headers: dict[str, str] | None = None) -> int:
    """The games the league's leaderboard counts (its JSON; ``headers`` for a dashboard that is not public)."""
    return sum(row["games"] for row in get_json(f"{web}/api/leagues/test/standings", headers=headers)["standings"])


def database_of(request: pytest.FixtureRequest) -> str | None:
    """None for the default (SQLite in the data folder), or a new database on the session's PostgreSQL server."""
    from support.pg import new_database  # here: the plugin is loaded (and its asserts rewritten) before

    return None if request.param == "sqlite" else new_database(request.getfixturevalue("postgres_server"))


ATTACK = ROOT / "tests" / "bots" / "hostile_builds" / "attack.py"
"""The hostile build step of the tests: it tries the network, the secrets, a fork bomb and the disk."""


def tree_digest(folder: Path) -> str:
    """Every path, mode and content under ``folder``: equal digests mean nothing there changed."""
    digest = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(folder)):
        for name in sorted(dirs + files):
            path = Path(root) / name
            info = path.lstat()
            digest.update(f"{path}:{info.st_mode:o}:{info.st_size}\n".encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


# --- the database, empty, on SQLite and on PostgreSQL ---

@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database: a new SQLite file, or a new database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "data")
    return request.getfixturevalue("postgres_database")


@pytest.fixture
def database(database_url: str):
    database = open_database(database_url)
    yield database
    database.close()


@pytest.fixture
def league(database: Database):
    return database.ensure_league("ladder", "Ladder", "draw")


def a_bot(database: Database, league_id: int, author_name: str, bot_name: str):
    """A bot of the author (created with the bot when it is new)."""
    try:
        author = database.author(author_name)
    except NotFound:
        author = create_author(database, author_name)[0]
    return database.add_bot(league_id, author.id, bot_name)


# --- the ladder ---

def rated_with_seats(database: Database, league_id: int) -> list:
    """The done tables in their rating order, each with its games' seats as the database holds them."""
    return [(table, [seats for _, seats in database.games_of_record(league_id, RECORD.format(id=table.id))])
            for table in database.rated_tables(league_id)]


def tables_folder(league: League, name: str = "test") -> Path:
    """Where the ladder of the league ``name`` plays its tables, one run folder each."""
    return league.root / "data" / "league" / "leagues" / name / "tables"


def verified(folder: Path, games: int) -> None:
    """``arena replay --verify`` of a run folder (a table, a challenge, the finals): its ``games`` games
    re-simulated, their deals checked against the revealed master seed."""
    done = subprocess.run([sys.executable, "-m", "arena", "replay", str(folder), "--verify", "--jobs", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    said = " ".join(done.stdout.split())  # the console wraps long lines
    assert done.returncode == 0, done.stdout + done.stderr
    assert said.startswith(f"verified {games} games") and (
        ": OK; deals checked against the revealed master seed" in said), said


def check_once(database: Database, league_id: int) -> list:
    """Every finished game recorded once and every rating update applied once: two games per done table (a league
    of two players), one rated deal set per side of each, and the stored ratings equal to a recompute from the
    recorded games in order. Returns the done tables.

    A ladder still playing may finish a table (its games, state and ratings in one transaction) between two of these
    reads: they are taken again until no table ended while they were taken, so that they all see one moment."""
    while True:
        done = database.tables_in(league_id, [DONE])
        games = database.game_count(league_id)
        stored = {r.version_id: (r.mu, r.sigma, r.games) for r in database.ratings(league_id, ONLINE)}
        seated = rated_with_seats(database, league_id)
        if len(database.tables_in(league_id, [DONE])) == len(done):
            break
    assert games == 2 * len(done)
    assert sum(count for _, _, count in stored.values()) == 2 * len(done)
    assert stored == recompute(seated)
    return done


def mid_table(database: Database, league_id: int, folder: Path) -> bool:
    """Whether a table of the ladder (its run folders in ``folder``) is being played with one of its two games
    recorded: the moment a kill cuts a table in half."""
    for table in database.tables_in(league_id, [PLAYING]):
        records = RunFolder(folder / str(table.id)).records
        if records.exists() and records.read_bytes().count(b"\n") == 1:
            return True
    return False


def hostile_node_package(folder: Path, attack: str, variant: str) -> Path:
    """A node version whose package.json's postinstall runs ``attack`` (npm ci runs it during the build); its entry
    never runs, since its build fails."""
    (folder / "bot.js").write_text("// never runs: its build fails\n")
    (folder / "bot.toml").write_text(f'kit = "node"\nentry = "bot.js"\nvariants = ["{variant}"]\n')
    (folder / "package.json").write_text(json.dumps(
        {"name": "hostile", "version": "1.0.0", "private": True, "scripts": {"postinstall": attack}}))
    (folder / "package-lock.json").write_text(json.dumps(
        {"name": "hostile", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
         "packages": {"": {"name": "hostile", "version": "1.0.0", "hasInstallScript": True}}}))
    return folder


# --- a league's timeline, its teams' sign-up, a Perl bot ---

PHASE_S = 60
"""Generous: a phase moves within a second of its moment; a server's start and the ladder's first table take
longer on a busy 2-core machine."""


def whole_seconds(offset: float) -> datetime:
    """Now plus ``offset`` seconds, rounded up to a whole second (the file's times have no fraction)."""
    return datetime.fromtimestamp(int(time.time() + offset) + 1, UTC)


def status(league: League, token: str) -> lpb.GetStatusResponse:
    return league.stub().GetStatus(lpb.GetStatusRequest(), timeout=30, metadata=bearer(token))


def wait_phase(league: League, token: str, phase: str, seconds: float = PHASE_S) -> lpb.GetStatusResponse:
    found: list[lpb.GetStatusResponse] = []

    def reached() -> bool:
        found[:] = [status(league, token)]
        return found[0].phase == phase

    wait_for(reached, seconds, f"the phase {phase}")
    return found[0]


TOKEN_LINE = re.compile(r'<pre id="token">([^<]+)</pre>')
CSRF_FIELD = re.compile(r'name="csrf" value="([^"]+)"')


def invite(league: League, name: str, uses: int = 1, hours: int = 2) -> str:
    done = league.league("invite", "--league", name, "--uses", str(uses), "--hours", str(hours),
                         token=league.operator)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def saved(league: League, name: str, stdout: str) -> Path:
    """A token printed once, saved as its holder would."""
    league.tokens[name] = private_file(league.root / f"{name}.token", stdout)
    return league.tokens[name]


def web_form(league: League, name: str) -> tuple[str, str]:
    """The sign-up page of a league: its cookie and its form's CSRF token."""
    code, headers, page = http(f"{league.server.web}/leagues/{name}/signup")  # type: ignore[attr-defined]
    assert code == 200, page[:300]
    return set_cookie(headers, SIGNUP_COOKIE), CSRF_FIELD.search(page.decode()).group(1)


PERL_BOT = ROOT / "tests" / "bots" / "perl_stdio_bot.pl"


def perl_folder(folder: Path, interpreter: str = "perl", entry: str = "bot.pl") -> Path:
    """An author's Perl bot: tests/bots/perl_stdio_bot.pl as bot.pl, and its bot.toml naming ``interpreter``."""
    folder.mkdir(parents=True)
    shutil.copy(PERL_BOT, folder / "bot.pl")
    (folder / "bot.toml").write_text(f'kit = "stdio"\ninterpreter = "{interpreter}"\nentry = "{entry}"\n'
                                     'variants = ["block"]\n')
    return folder
