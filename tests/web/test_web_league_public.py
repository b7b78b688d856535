"""A league's public site (``arena serve --league --http --http-public``) and its share links (``arena league
share``), attacked while a deal set is being played: a real server whose ladder seats two uploaded bots in their
sandbox, one of them held at a gate (tests/bots/seat_gated_bot.py) so that one rotation of the table's deal set is
recorded while the other is held. Neither a spectator without a token nor a share link's visitor may open either
game (the recorded one shows the deals the held one is being played with) until the table is done; then both open,
and the queue and the bot's page link them. The refusal page links back to where the visitor came from on this site,
never to another site.
"""

from __future__ import annotations

import re
from pathlib import Path

from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.store import ReadReport, iter_records
from arena.web.access import SHARE_COOKIE
from support.league import GAME, League, bot_folder, league_in, tables_folder
from support.paths import ROOT
from support.servers import open_gate
from support.waiting import wait_for
from support.web import get_json, http, links_of, set_cookie

PIPELINE_S = 300
"""Generous: a version is built and checked by playing it in its sandbox, on a busy 2-core machine."""
TABLE_S = 300
GATED_BOT = ROOT / "tests" / "bots" / "seat_gated_bot.py"
GREEDY_BOT = ROOT / "bots" / "python" / "greedy_bot.py"
LEAGUE = GAME.replace("move_ms = 2000", "move_ms = 600000") + """[ladder]
concurrency = 1
coverage = 2
placement = 1
"""
"""One table at a time; a move may take ten minutes, so the held rotation waits at the gate, not for a timeout."""
WAITING = re.compile(rb"waiting in seat (\d)")


def ready(league: League, author: str, source: Path, bot: str) -> int:
    """``bot`` uploaded by a new author and ready: its version's id."""
    league.add_author(author)
    league.upload(author, bot_folder(league.root / bot, source), bot)
    version = league.settled(league.token(author), bot)
    assert version.state == 4, version  # VERSION_STATE_READY
    return version.id


def built_gate(league: League, version_id: int) -> Path:
    """Where the gated bot reads its gate: beside its bot.py in the version's built folder."""
    found = [p for p in (league.root / "data").rglob("bot.py") if f"/versions/{version_id}/" in str(p)]
    assert len(found) == 1, found
    return found[0].with_name("gate")


def held_seats(table: Path) -> list[int]:
    """The seats the gated bot has said it waits in at this table, in its bots' logs (copied as the bot writes)."""
    logs = RunFolder(table).bot_logs
    files = sorted(p for p in logs.rglob("*") if p.is_file()) if logs.exists() else []
    return [int(seat) for log in files for seat in WAITING.findall(log.read_bytes())]


def recorded(table: Path) -> list[int]:
    """The indexes of the table's recorded games."""
    records = RunFolder(table).records
    return [index_of(record) for record in iter_records(records, ReadReport())] if records.exists() else []


def back_link(page: bytes) -> str:
    match = re.search(rb'<a id="back" href="([^"]*)">', page)
    assert match is not None, page[:400]
    return match.group(1).decode()


def test_a_deal_set_in_flight_shows_no_game_to_spectators_or_share_links(tmp_path: Path) -> None:
    league = league_in(tmp_path, LEAGUE, web=True)  # public: a spectator needs no token
    web = league.server.web  # type: ignore[attr-defined]
    try:
        gated = ready(league, "author-gated", GATED_BOT, "gated")
        gate = built_gate(league, gated)
        open_gate(gate, "")  # closed in every seat before a second version makes a table possible
        ready(league, "author-greedy", GREEDY_BOT, "greedy")

        # the operator's share link, made without curl: its path, and the whole link with --web
        made = league.league("share", "--web", web, "--hours", "2", token=league.operator)
        assert made.returncode == 0, made.stderr
        link = made.stdout.strip()
        assert re.fullmatch(rf"{re.escape(web)}/share/[\w-]+\.[0-9a-f]{{64}}", link), made.stdout
        assert re.fullmatch(r"a read-only link to league 'test'; whoever opens it sees its public pages until "
                            r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC:\n", made.stderr), made.stderr
        code, headers, _ = http(link)
        assert (code, headers["location"]) == (303, "/leagues/test")
        shared = {"Cookie": f"{SHARE_COOKIE}={set_cookie(headers, SHARE_COOKIE)}"}
        path_only = league.league("share", token=league.operator)
        assert path_only.returncode == 0 and path_only.stdout.startswith("/share/"), path_only.stderr
        refused = league.league("share", token=league.tokens["author-greedy"])
        assert (refused.returncode, refused.stderr.strip()) == (
            1, "error: permission denied: author 'author-greedy' may not make a share link: only the operator may")
        refused = league.league("share", "--hours", "721", token=league.operator)
        assert (refused.returncode, refused.stderr.strip()) == (
            1, "error: invalid argument: hours: a share link lasts 1 to 720 hours, got 721")
        refused = league.league("share", "other", token=league.operator)
        assert (refused.returncode, refused.stderr.strip()) == (
            1, "error: not found: no league 'other' on this server (it runs test)")

        # the table's first rotation let through at the gate, its second held: one game recorded
        playing: list[dict] = []
        wait_for(lambda: bool(playing.extend(get_json(f"{web}/api/leagues/test/queue")["playing"]) or playing),
                 TABLE_S, "a table to be played")
        table_id = playing[0]["id"]
        table = tables_folder(league) / str(table_id)
        wait_for(lambda: held_seats(table), TABLE_S, "the gated bot held in its first rotation")
        first = held_seats(table)[0]
        open_gate(gate, str(first))
        wait_for(lambda: len(recorded(table)) == 1 and set(held_seats(table)) == {0, 1}, TABLE_S,
                 "the first rotation recorded and the second held")
        assert playing[0]["games"] == []

        # the attack: either game of the deal set, by its page, for a spectator and a share link's visitor
        for key in ("0", "1"):
            for who in ({}, shared):
                code, _, page = http(f"{web}/leagues/test/tables/{table_id}/games/{key}", headers=who)
                assert code == 409, (key, who, page[:300])
                assert f"table {table_id} is playing: its games are shown once it is done" in page.decode()
        queue = get_json(f"{web}/api/leagues/test/queue")
        assert [t["games"] for t in queue["playing"]] == [[]] and all(t["id"] != table_id for t in queue["recent"])
        for path in ("/leagues/test/queue", "/leagues/test/bots/gated", "/api/leagues/test/bots/gated"):
            assert f"/tables/{table_id}/games/".encode() not in http(f"{web}{path}")[2], path

        # the refusal's way back: the page of this site the visitor came from, never another site's
        game = f"{web}/leagues/test/tables/{table_id}/games/0"
        assert back_link(http(game, headers={"Referer": f"{web}/leagues/test/queue"})[2]) == "/leagues/test/queue"
        for elsewhere in ("https://evil.example/leagues/test/queue", "javascript:alert(1)", f"{web}//evil.example"):
            page = http(game, headers={"Referer": elsewhere})[2]
            assert back_link(page) == "/leagues/test" and b"evil.example" not in page, elsewhere

        # the deal set done: both games open, for both; the queue and the bot's page link them
        open_gate(gate, "0 1")
        wait_for(lambda: any(t["id"] == table_id and t["state"] == "done"
                             for t in get_json(f"{web}/api/leagues/test/queue")["recent"]), TABLE_S,
                 "the table done")
        urls = [f"/leagues/test/tables/{table_id}/games/{key}" for key in ("0", "1")]
        done = next(t for t in get_json(f"{web}/api/leagues/test/queue")["recent"] if t["id"] == table_id)
        assert [g["url"] for g in done["games"]] == urls
        for url in urls:
            for who in ({}, shared):
                code, _, page = http(f"{web}{url}", headers=who)
                assert code == 200 and b"dominoes" in page.lower(), (url, who)
        for path in ("/leagues/test/queue", "/leagues/test/bots/gated"):
            shown = links_of(http(f"{web}{path}", headers=shared)[2])
            assert set(urls) <= set(shown), (path, shown)
        assert re.search(rb'<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">(just now|\d+ min ago)'
                         rb'</time>', http(f"{web}/leagues/test/queue")[2])
    finally:
        league.server.stop()
