"""Screenshots of every kind of page of the web dashboard, at a desktop's width and a phone's, for the docs
(docs/reference/pages.md shows them):

    .venv/bin/python scripts/screenshots.py [--out docs/images/pages]

starts a real ``arena serve --league ... --http --http-public`` in a temporary folder (the test suite's harness,
tests/support/), fills it with something worth looking at, then opens each page in a real headless Chromium
(tests/support/chromium.py) and writes ``<page>-desktop.png`` (1440 CSS pixels wide) and ``<page>-phone.png`` (390
CSS pixels, a phone's browser: mobile emulation, two device pixels to one) into the folder. What it fills in:

- a league, "Spring cup", of three teams' bots, each uploaded with the command line, built and checked in its sandbox:
  one team with two bots (one of them replaced by a second version after a few tables), and the others with one;
  its ladder plays a few tables, then the league is frozen and its finals played to the end;
- two finished tournaments of the server's registered (unsandboxed) bots.

A page's shot is the top of the page, at most :data:`MAX_HEIGHT` CSS pixels: what a visitor sees first, in a file
of 20 to 300 kB (Chromium's PNG as it is: re-encoding it with zlib's best level saved 3%, and the set-up installs no
image library). A finals in another format is one more entry in :data:`LEAGUES` (its league file's ``[finals]``),
shot as ``finals-<its name>``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the arena of this clone and the test suite's harness

from support.chromium import CHROMIUM, Chromium  # noqa: E402
from support.league import FAILED, READY, League, bot_folder, league_in  # noqa: E402
from support.servers import bot_entry, registry, submit  # noqa: E402
from support.waiting import wait_for  # noqa: E402
from support.web import get_json, sign_in  # noqa: E402

from arena.protocol import league_pb2  # noqa: E402

BOTS = ROOT / "bots" / "python"
QUICK_SEARCH = ROOT / "tests" / "bots" / "quick_search_bot.py"
"""The search bot held to 100 playouts a decision: it plays in milliseconds."""
WIDTHS = {"desktop": (1440, 900, 1, False), "phone": (390, 844, 2, True)}
"""Each screen: CSS width and height, device pixels to a CSS pixel, whether a phone's browser."""
MAX_HEIGHT = 1000
"""The most of a page shot, from its top, in CSS pixels."""
FINALS_HEIGHT = 2600
"""The most of a finals page shot: down to its bracket or its rounds."""
WAIT_S = 300
"""Generous bounds on what the server does (builds, tables, the finals) on a busy machine."""
GAME = """variant = "block"
[options]
target = 20
[time]
move_ms = 2000
startup_ms = 30000
[ladder]
concurrency = 2
coverage = 60
placement = 1
[signup]
mode = "approval"
"""
"""Every league's game and ladder: Block to 20 points (a game of a few hands, worth replaying), quick tables; teams
may sign up (its form is one of the pages)."""


@dataclass(frozen=True)
class Showcase:
    """A league of the server: its name, title, and its league file's ``[finals]`` table."""

    name: str
    title: str
    finals: str

    def file(self) -> str:
        return f'name = "{self.name}"\ntitle = "{self.title}"\n{GAME}[finals]\n{self.finals}'


LEAGUES = (Showcase("spring", "Spring cup", 'format = "knockout"\nelimination = "double"\ndeal_sets = 1\n'),
           Showcase("autumn", "Autumn open", 'format = "swiss"\nrounds = 3\ndeal_sets = 1\n'))
"""The leagues served; the first one's pages are all shot, each other's finals page only (one more league, its
finals in another format, costs its builds and ladder: a second one here took the run from one minute to three)."""
TEAMS = {"tile-tamers": {"greedy": BOTS / "greedy_bot.py", "rand": BOTS / "random_bot.py"},
         "pip-squad": {"search": QUICK_SEARCH}, "double-six": {"lucky": BOTS / "random_bot.py"}}
"""Each team's bots and their programs (a Python bot's bot.py)."""
REPLACED = ("tile-tamers", "rand")
"""The bot that gets a second version once the ladder has played its first one."""
REGISTRY = ("alpha", BOTS / "random_bot.py"), ("greedy", BOTS / "greedy_bot.py"), ("search", QUICK_SEARCH)
"""The server's registered bots, which its tournaments play (unsandboxed)."""
TOURNAMENTS = ("""name = "Friday night block"
variant = "block"
games = 12
concurrency = 2
[options]
target = 20
""" + "".join(f'\n[[bots]]\nname = "{name}"\n' for name, _ in REGISTRY), """name = "Three at a table"
variant = "draw"
players = 3
games = 6
concurrency = 2
[options]
target = 10
""" + "".join(f'\n[[bots]]\nname = "{name}"\n' for name, _ in REGISTRY))
"""The tournaments submitted to the server: the first one's pages are shot."""


@dataclass
class Filled:
    """The server filled: what the pages are about."""

    league: League
    web: str
    tournament: str
    versions: dict[str, int]
    """The id of each bot's newest version."""


@dataclass(frozen=True)
class Shot:
    """A page to shoot: its file's name, its address, who looks at it (``None``: a visitor not signed in), and the
    keys pressed once it is drawn (a replay moved on to a board with tiles), and how much of it is shot, from its top
    (a finals page's bracket or rounds come after its facts and ranking)."""

    name: str
    path: str
    who: str | None = None
    keys: tuple[str, ...] = ()
    height: int = 0


INTO_THE_GAME = ("ArrowRight",) * 9
"""A replay nine moves on: the first hand's line of tiles on the table."""


# --- the server, filled ---------------------------------------------------------------------------------------------


def served(root: Path) -> League:
    """``arena serve`` with every league of :data:`LEAGUES` and the registry's bots, its dashboard public."""
    root.mkdir()
    for showcase in LEAGUES[1:]:
        (root / f"{showcase.name}.toml").write_text(showcase.file())
    bots = "".join(bot_entry(name, str(program)) for name, program in REGISTRY)
    more = [arg for showcase in LEAGUES[1:] for arg in ("--league", str(root / f"{showcase.name}.toml"))]
    return league_in(root, LEAGUES[0].file(), web=True, extra=(*registry(root, bots), *more))


def uploaded(league: League, name: str, team: str, bot: str, program: Path, note: str = "") -> None:
    """A version of the team's bot: its folder (``program`` as bot.py, ``note`` a last comment, so that a second
    version differs) uploaded with the command line."""
    folder = bot_folder(league.root / f"{name}-{bot}-{uuid.uuid4().hex[:6]}", program.read_text() + note)
    done = league.league("upload", str(folder), "--bot", bot, "--league", name, token=league.tokens[team])
    if done.returncode != 0:
        raise SystemExit(f"the upload of {bot} to {name} failed: {done.stderr.strip()}")


def ready(league: League, name: str) -> dict[str, int]:
    """Wait until each bot's newest version in the league is ready (built and checked); their ids, by bot."""
    newest: dict[str, league_pb2.BotVersion] = {}

    def settled() -> bool:
        newest.clear()
        for team in TEAMS:
            for version in league.versions(league.token(team), league=name):
                newest[version.bot] = version  # in upload order: the last one is the newest
        if failed := [v for v in newest.values() if v.state == FAILED]:
            raise SystemExit(f"{failed[0].bot} failed in {name}: {failed[0].reason}")
        return len(newest) == sum(map(len, TEAMS.values())) and all(v.state == READY for v in newest.values())

    wait_for(settled, WAIT_S, f"the versions of {name} to be built and checked")
    return {bot: version.id for bot, version in newest.items()}


def games_rated(web: str, name: str) -> int:
    """The games on the league's leaderboard, counted once for each side (a table of two games adds four)."""
    return sum(row["games"] for row in get_json(f"{web}/api/leagues/{name}/standings")["standings"])


def as_operator(league: League, *args: str) -> None:
    """An ``arena league`` command of the operator, which must succeed."""
    done = league.league(*args, token=league.operator)
    if done.returncode != 0:
        raise SystemExit(f"arena league {' '.join(args)}: {done.stderr.strip()}")


def frozen_with_finals(league: League, web: str, name: str) -> None:
    """Freeze the league, wait for its last table, then play its finals (its file's ``[finals]``) to the end."""
    as_operator(league, "freeze", "--league", name)
    wait_for(lambda: not get_json(f"{web}/api/leagues/{name}/queue")["playing"], WAIT_S, f"the last table of {name}")
    as_operator(league, "finals", "--start", "--league", name)
    wait_for(lambda: get_json(f"{web}/api/leagues/{name}/finals")["state"] == "done", WAIT_S, f"the finals of {name}")


def finished(web: str, tid: str) -> None:
    wait_for(lambda: get_json(f"{web}/api/t/{tid}")["tournament"]["state"] == "finished", WAIT_S,
             f"the tournament {tid} to finish")


def fill(league: League) -> Filled:
    """The server's leagues played to their finals and a tournament finished (see the module's text)."""
    web = league.server.web  # type: ignore[attr-defined]
    operator = (("authorization", f"Bearer {league.operator.read_text().strip()}"),)
    tournaments = [submit(league.server.stub(), text, metadata=operator).id for text in TOURNAMENTS]
    for team in TEAMS:
        league.add_author(team)
    for showcase in LEAGUES:
        for team, bots in TEAMS.items():
            for bot, program in bots.items():
                uploaded(league, showcase.name, team, bot, program)
    for showcase in LEAGUES:
        ready(league, showcase.name)
    first = LEAGUES[0].name
    wait_for(lambda: games_rated(web, first) >= 16, WAIT_S, "four tables of the ladder")
    team, bot = REPLACED
    uploaded(league, first, team, bot, TEAMS[team][bot], "\n# the second version\n")
    versions = ready(league, first)
    rated = games_rated(web, first)
    wait_for(lambda: games_rated(web, first) >= rated + 8, WAIT_S, "two more tables")
    for showcase in LEAGUES:
        frozen_with_finals(league, web, showcase.name)
    for tid in tournaments:
        finished(web, tid)
    return Filled(league, web, tournaments[0], versions)


# --- the pages ------------------------------------------------------------------------------------------------------


def shots(site: Filled) -> list[Shot]:
    """Every kind of page, and who looks at it."""
    name = LEAGUES[0].name
    league = f"/leagues/{name}"
    tid = site.tournament
    game = get_json(f"{site.web}/api/leagues/{name}/bots/greedy")["history"]["recent"][0]["url"]
    other = site.versions["search"]  # another team's version: its log is refused to tile-tamers
    author = "tile-tamers"
    return [Shot("tournaments", "/"), Shot("tournament", f"/t/{tid}"), Shot("games", f"/t/{tid}/games"),
            Shot("entrant", f"/t/{tid}/entrants/search"), Shot("game", f"/t/{tid}/games/0", keys=INTO_THE_GAME),
            Shot("leaderboard", league), Shot("queue", f"{league}/queue"), Shot("bot", f"{league}/bots/rand"),
            Shot("table-game", game, keys=INTO_THE_GAME), Shot("finals", f"{league}/finals", height=FINALS_HEIGHT),
            *(Shot(f"finals-{s.name}", f"/leagues/{s.name}/finals", height=FINALS_HEIGHT) for s in LEAGUES[1:]),
            Shot("signup", f"{league}/signup"), Shot("signin", f"/signin?next={league}/mine"),
            Shot("author", f"{league}/mine", author), Shot("log", f"{league}/versions/{site.versions['rand']}/log", author),
            Shot("refusal", f"{league}/versions/{other}/log", author)]


DRAWN = """(() => {
    if (document.readyState !== 'complete' || document.querySelector('#main a#back[href=""]')) return false;
    const streamed = ['tournaments', 'tournament', 'games', 'entrant'].includes(document.body.dataset.page)
        || !!document.body.dataset.events, state = document.getElementById('live-state');
    return !streamed || !state || state.textContent === 'live';
})()"""
"""Whether the page is drawn: loaded, a dashboard page's shell filled by its script, its event stream (if it follows
one) open."""


def shoot(browser: Chromium, site: Filled, shot: Shot, out: Path) -> list[Path]:
    """The page at each width of :data:`WIDTHS`, its PNGs written (``<name>-<width>.png``)."""
    written = []
    for screen, (width, height, scale, mobile) in WIDTHS.items():
        browser.emulate(width, height, scale=scale, mobile=mobile)
        browser.goto(site.web + shot.path)
        browser.wait_js(DRAWN, 30, f"the page {shot.path} to be drawn")
        for key in shot.keys:
            browser.key(key)
        path = out / f"{shot.name}-{screen}.png"
        browser.screenshot(path, shot.height or MAX_HEIGHT)
        written.append(path)
    return written


def shoot_all(site: Filled, out: Path, work: Path, say: Callable[[str], None]) -> list[Path]:
    """Every page of :func:`shots`, each visitor's in turn (signed in through the sign-in form, as a person is)."""
    browser = Chromium(work)
    written: list[Path] = []
    try:
        browser.open_page("about:blank")
        browser.call("Emulation.setScrollbarsHidden", {"hidden": True})  # a shot as wide as its screen
        pages = shots(site)
        for who in dict.fromkeys(shot.who for shot in pages):
            browser.call("Network.clearBrowserCookies")
            if who is not None:
                sign_in(browser, site.web, site.league.token(who))
            for shot in (s for s in pages if s.who == who):
                written += shoot(browser, site, shot, out)
                say(f"{shot.name}: {shot.path}")
    finally:
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description="Screenshots of every kind of page of the web dashboard, at a "
                                                 "desktop's and a phone's width.")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "pages",
                        help="the folder of the PNGs (default: docs/images/pages)")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"headless Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="arena-screenshots-"))
    league = served(work / "server")
    try:
        site = fill(league)
        print(f"filled in {time.monotonic() - started:.0f} s", file=sys.stderr)
        (work / "chromium").mkdir()
        written = shoot_all(site, args.out, work / "chromium", lambda line: print(line, file=sys.stderr))
    finally:
        league.server.stop()
        shutil.rmtree(work, ignore_errors=True)
    total = sum(path.stat().st_size for path in written)
    print(f"{len(written)} screenshots, {total / 1e6:.1f} MB, in {args.out} "
          f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
