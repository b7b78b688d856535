"""The web dashboard (``arena serve --http``): real servers on free ports, real bots, HTTP from the standard library,
and a real headless Chromium (tests/support/chromium.py, the DevTools pipe) that watches a tournament live.

Every route is asked for and its answer checked against the run folder the server wrote; the access rules are tried
with and without the token (header and sign-in cookie) and on the public site; a running duplicate tournament is
checked for what it must not show (held-back moves, withheld records, seeds, hands). Screenshots of the main pages
go to /tmp/arena-web-shots (outside the repository)."""

from __future__ import annotations

import csv
import io
import json
import re
import secrets
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.client import HTTPException
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.tournament.standings import skill_cell
from arena.web.access import SHARE_COOKIE
from arena.web.data import CHART_POINTS, RatingHistory
from support.outcomes import outcome
from support.chromium import Chromium, needs_chromium
from support.waiting import wait_for
from support.paths import ROOT
from support.servers import (Server, WATCHED_BOT, bot_entry, gated_bot, named, open_gate, random_bot, registry,
                             self_signed, submit, tournament)
from support.web import NoRedirect, SHOTS, WebServer, get_json, http, set_cookie, wait_state

BEARER = "Bearer "
OWN_NAME = "arena.example.test"
"""The name the module's server is given with --http-host."""


# --- helpers ----------------------------------------------------------------------------------------------------


def finished(detail: dict) -> bool:
    return detail["tournament"]["state"] == "finished"


def run_records(server: Server, tid: str) -> dict[int, dict]:
    path = server.data / "tournaments" / tid / "games.jsonl"
    return {int(r.get("index", 0)): r for r in map(json.loads, path.read_text().splitlines())}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """One server with the dashboard, for the tests that need no special flags: alpha and beta (random) and slow
    (a move every 0.15 s)."""
    folder = tmp_path_factory.mktemp("web")
    tag = uuid.uuid4().hex
    bots = (random_bot("alpha", tag) + random_bot("beta", tag)
            + bot_entry("slow", str(WATCHED_BOT), "--mode", "slow", "--delay", "0.15", "--tag", tag)
            + gated_bot(folder / "gated", tag))
    running = WebServer(folder / "data", "--concurrency", "2", "--http-host", OWN_NAME, *registry(folder, bots))
    running.gate = folder / "gated" / "gate"
    yield running
    running.stop()


# --- every route, on a finished tournament ------------------------------------------------------------------------


def test_every_route_answers_from_the_run_folder(server: WebServer) -> None:
    info = submit(server.stub(), tournament(games=3, variant="draw", name="routes <b>&"))
    web, tid = server.web, info.id
    wait_state(web, tid, finished, 120, "the tournament to finish")
    folder = server.data / "tournaments" / tid
    records = run_records(server, tid)
    standings = json.loads((folder / "standings.json").read_text())
    assert len(records) == info.games_total == 6

    for path, page in [("/", "tournaments"), (f"/t/{tid}", "tournament"), (f"/t/{tid}/games", "games"),
                       (f"/t/{tid}/entrants/alpha", "entrant")]:
        code, headers, body = http(web + path)
        assert code == 200 and headers["content-type"].startswith("text/html"), path
        assert f'data-page="{page}"' in body.decode() and '<script src="/static/dashboard.js">' in body.decode()
    assert "routes &lt;b&gt;&amp;" in http(f"{web}/t/{tid}")[2].decode()       # names are escaped in pages
    for asset in ("dashboard.js", "dashboard.css", "game.js"):
        assert http(f"{web}/static/{asset}")[0] == 200

    listed = get_json(f"{web}/api/tournaments")
    mine = next(t for t in listed["tournaments"] if t["id"] == tid)
    assert (mine["state"], mine["games_done"], mine["entrants"]) == ("finished", 6, ["alpha", "beta"])
    assert mine["master_seed"] == json.loads((folder / "seed.json").read_text())["seed"]

    detail = get_json(f"{web}/api/t/{tid}")
    assert detail["standings"] == standings and detail["sprt"] is None and detail["in_progress"] == []
    assert [row["name"] for row in detail["table"]["rows"]] == [e["name"] for e in standings["entrants"]]
    assert detail["table"]["rating_header"] == "Elo [95% by deal set]"

    code, headers, body = http(f"{web}/api/t/{tid}/standings.json")
    assert code == 200 and json.loads(body) == standings and "attachment" in headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(http(f"{web}/api/t/{tid}/standings.csv")[2].decode())))
    assert [(r["entrant"], int(r["wins"]), int(r["games"])) for r in rows] == [
        (e["name"], e["wins"], e["games"]) for e in standings["entrants"]]

    lines = http(f"{web}/api/t/{tid}/games.jsonl")[2].decode().splitlines()
    assert {int(json.loads(line).get("index", 0)): json.loads(line) for line in lines} == records
    games_csv = list(csv.DictReader(io.StringIO(http(f"{web}/api/t/{tid}/games.csv")[2].decode())))
    assert [int(r["index"]) for r in games_csv] == list(range(6))
    assert [r["seed"] for r in games_csv] == [records[i]["seed"] for i in range(6)]   # revealed: shown
    code, headers, body = http(f"{web}/api/t/{tid}/games/3.json")
    assert code == 200 and json.loads(body) == records[3] and body.endswith(b"\n") and body.count(b"\n") == 1

    games = get_json(f"{web}/api/t/{tid}/games")
    assert [g["index"] for g in games["games"]] == list(range(6)) and games["recorded"] == 6
    alpha = next(e for e in standings["entrants"] if e["name"] == "alpha")
    wins = get_json(f"{web}/api/t/{tid}/games?entrant=alpha&result=win")["games"]
    assert len(wins) == alpha["wins"] and all(g["winner_names"] == "alpha" for g in wins)
    assert {g["result"] for g in get_json(f"{web}/api/t/{tid}/games?entrant=alpha")["games"]} <= {"win", "draw", "loss"}
    assert [g["result"] for g in wins] == ["win"] * len(wins) and "result" not in games["games"][0]
    assert len(get_json(f"{web}/api/t/{tid}/games?entrant=alpha&result=loss")["games"]) == alpha["losses"]
    assert get_json(f"{web}/api/t/{tid}/games?faults=yes")["games"] == []
    assert len(get_json(f"{web}/api/t/{tid}/games?faults=no")["games"]) == 6
    assert get_json(f"{web}/api/t/{tid}/games?result=won", 400) == {
        "error": "expected result to be one of win, draw, loss, decided, drawn, got 'won'"}
    assert get_json(f"{web}/api/t/{tid}/games?entrant=zed", 400)["error"].startswith(
        "expected an entrant of this tournament (alpha, beta), got 'zed'")

    view = get_json(f"{web}/api/t/{tid}/games/3/view")
    assert view["live"] is False and view["seed"] == records[3]["seed"] and view["hands"] is not None
    assert len(view["moves"]) == sum(len(r.get("moves", ())) for r in records[3]["rounds"])
    code, _, body = http(f"{web}/t/{tid}/games/3")
    page = body.decode()
    assert code == 200 and 'id="arena-bar"' in page and 'data-live="0"' in page and "window.arenaViewer" in page

    entrant = get_json(f"{web}/api/t/{tid}/entrants/alpha")
    assert entrant["by_opponent"] == standings["pairwise"]["alpha"]
    assert sum(r["win"] + r["draw"] + r["loss"] for r in entrant["by_seat"]) == alpha["games"]
    assert [r["seat"] for r in entrant["by_seat"]] == [0, 1]                    # seats rotate between games
    assert entrant["handshake"]["hello"]["name"] and entrant["standing"] == alpha
    assert "command" not in entrant["handshake"] and "containment" not in entrant["handshake"]

    chart = get_json(f"{web}/api/t/{tid}/ratings")
    assert chart["rating"] == "Elo" and [p["games"] for p in chart["points"]] == list(range(1, 7))

    assert get_json(f"{web}/api/t/nope", 404)["error"].startswith("no tournament 'nope' on this server")
    assert get_json(f"{web}/api/t/{tid}/games/6/view", 404) == {"error": f"tournament {tid} has games 0 to 5, not 6"}
    assert http(f"{web}/t/{tid}/games/9")[0] == 404 and http(f"{web}/t/nope")[0] == 404
    assert get_json(f"{web}/api/t/{tid}/entrants/zed", 404)["error"].startswith("expected an entrant of tournament")


# --- what a running tournament shows -------------------------------------------------------------------------------


def test_a_running_duplicate_shows_only_what_watch_may(server: WebServer) -> None:
    """One game at a time, so each deal set's first game is played while its second is still to come (held back,
    its record withheld) and its second can be followed live (move by move, no hand, no seed). The run's phases
    play both deal sets' first rotation (games 0 and 2) before their second (1 and 3)."""
    info = submit(server.stub(), tournament(games=2, variant="draw", concurrency=1, name="dup",
                                            bots=named("slow", "alpha")).replace("target = 1", "target = 20"))
    web, tid = server.web, info.id
    first = wait_state(web, tid, lambda d: [g["index"] for g in d["in_progress"]] == [0], 60, "game 0 to start")
    assert first["in_progress"] == [{"index": 0, "seats": ["slow", "alpha"], "live": False}]
    assert get_json(f"{web}/api/t/{tid}/games/0/view", 403)["error"] == (
        "game 0 is being played, and other games of its deal set are still to finish: its moves are held back "
        "until they have")

    wait_state(web, tid, lambda d: [g["index"] for g in d["in_progress"]] == [1], 60, "game 1 to start")
    assert get_json(f"{web}/api/t/{tid}/games/0.json", 403)["error"] == (
        "game 0 shares its deals with game(s) 1, still to finish; its record is withheld until then")
    assert http(f"{web}/api/t/{tid}/games.jsonl")[2] == b""                   # nothing released yet
    assert [g["index"] for g in get_json(f"{web}/api/t/{tid}/games")["games"]] == [0, 2]  # summaries are public
    assert get_json(f"{web}/api/t/{tid}/games")["games"][0]["seed"] == ""
    live = get_json(f"{web}/api/t/{tid}/games/1/view")
    assert live["live"] is True and live["hands"] is None and live["seed"] == ""
    assert live["seen"] == [{}, {}] and live["tournament"] == "dup"
    assert all(not re.search(r"draw \[", m["t"]) for m in live["moves"])        # a draw never names its tile
    ended = [r for r in live["rounds"] if "result" in r]
    assert all(len(r["result"]["hands"]) == 2 for r in ended)                 # hands only once their round ended
    code, _, body = http(f"{web}/t/{tid}/games/1")
    assert code == 200 and 'data-live="1"' in body.decode() and "seed withheld" in body.decode()

    detail = wait_state(web, tid, finished, 120, "the tournament to finish")
    assert detail["tournament"]["master_seed"] != ""
    records = run_records(server, tid)
    lines = http(f"{web}/api/t/{tid}/games.jsonl")[2].decode().splitlines()
    assert [json.loads(line)["seed"] for line in lines] == [records[i]["seed"] for i in range(4)]


def test_event_streams_announce_each_change(server: WebServer) -> None:
    info = submit(server.stub(), tournament(games=2, variant="block", duplicate=False, name="events"))
    request = urllib.request.Request(f"{server.web}/api/t/{info.id}/events")
    seen = []
    with urllib.request.urlopen(request, timeout=60) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                seen.append(json.loads(line[6:]))
                if seen[-1][0] == 3:          # TOURNAMENT_STATE_FINISHED
                    break
    done = [games for _, games, _ in seen]
    assert done == sorted(done) and done[-1] == 2 and len(set(map(json.dumps, seen))) == len(seen)


def test_a_deal_set_cut_by_a_write_error_stays_withheld(tmp_path: Path) -> None:
    """A tournament FAILED by a write error is resumable: its deal sets' other rotations are still to be played, so
    a game whose partner was not recorded stays withheld (GetGame and every route of the web), however the
    tournament ended; once the restarted server has played the partner, the record is given."""
    import resource

    from arena.protocol import arena_pb2 as apb

    tag = uuid.uuid4().hex
    gate = tmp_path / "gated" / "gate"
    bots = random_bot("alpha", tag) + gated_bot(gate.parent, tag, "--gate-unit", "seat")
    arguments = registry(tmp_path, bots)
    server = WebServer(tmp_path / "data", *arguments)
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=1, concurrency=1, bots=named("alpha", "gated"), name="cut",
                                       extra="[time]\nmove_ms = 600000\n").replace("target = 1", "target = 40"))
        web, tid = server.web, info.id
        folder = server.data / "tournaments" / tid
        first = wait_state(web, tid, lambda d: [g["index"] for g in d["in_progress"]] == [0], 60, "game 0 to start")
        open_gate(gate, first["in_progress"][0]["seats"].index("gated"))        # game 0 only: the other seat waits
        wait_state(web, tid, lambda d: [g["index"] for g in d["in_progress"]] == [1], 120,
                   "game 0 recorded and game 1 held at the gate")
        limit = (folder / "games.jsonl").stat().st_size
        others = {p.name: p.stat().st_size for p in (server.data / "arena.log", folder / "server.json")}
        assert all(size < limit // 2 for size in others.values()), (limit, others)   # only games.jsonl fails
        resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE, (limit, limit))  # game 1's write: EFBIG
        open_gate(gate, "0 1")

        def failed() -> apb.TournamentInfo | None:
            found = stub.ListTournaments(apb.ListTournamentsRequest(), timeout=30).tournaments[0]
            return found if found.state == apb.TOURNAMENT_STATE_FAILED else None
        wait_for(failed, 120, "the write error to fail the tournament")
        ended = failed()
        assert ended is not None and ended.resumable and "File too large" in ended.error, ended
        assert sorted(run_records(server, tid)) == [0]

        withheld = "game 0 shares its deals with game(s) 1, still to finish; its record is withheld until then"
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetGame(apb.GetGameRequest(id=tid, index=0), timeout=30)
        assert (refused.value.code(), refused.value.details()) == (grpc.StatusCode.FAILED_PRECONDITION, withheld)
        assert get_json(f"{web}/api/t/{tid}/games/0.json", 403) == {"error": withheld}
        assert get_json(f"{web}/api/t/{tid}/games/0/view", 403) == {"error": withheld}
        assert http(f"{web}/t/{tid}/games/0")[0] == 403
        assert http(f"{web}/api/t/{tid}/games.jsonl")[2] == b""
        assert [g["index"] for g in get_json(f"{web}/api/t/{tid}/games")["games"]] == [0]   # its summary is public
    finally:
        server.stop()

    again = WebServer(tmp_path / "data", *arguments)                           # no limit: it resumes
    try:
        wait_state(again.web, tid, finished, 120, "the resumed tournament to finish")
        records = run_records(again, tid)
        assert sorted(records) == [0, 1]
        assert again.stub().GetGame(apb.GetGameRequest(id=tid, index=0), timeout=30).record.index == 0
        assert json.loads(http(f"{again.web}/api/t/{tid}/games/0.json")[2])["rounds"] == records[0]["rounds"]
    finally:
        again.stop()


# --- access -------------------------------------------------------------------------------------------------------


def every_route(tid: str) -> list[str]:
    """One path of every route of the dashboard, on a finished tournament ``tid`` (pages, JSON, downloads, event
    streams, static files, sign-in)."""
    return ["/", f"/t/{tid}", f"/t/{tid}/games", f"/t/{tid}/entrants/alpha", f"/t/{tid}/games/0", "/signin",
            "/api/tournaments", "/api/events", f"/api/t/{tid}", f"/api/t/{tid}/events", f"/api/t/{tid}/ratings",
            f"/api/t/{tid}/standings.json", f"/api/t/{tid}/standings.csv", f"/api/t/{tid}/games",
            f"/api/t/{tid}/games.jsonl", f"/api/t/{tid}/games.csv", f"/api/t/{tid}/games/0.json",
            f"/api/t/{tid}/games/0/view", f"/api/t/{tid}/games/0/events", f"/api/t/{tid}/entrants/alpha",
            "/static/dashboard.js", "/static/dashboard.css", "/static/game.js", "/nowhere"]


def head_of(url: str, host: str | None, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """Status, headers and the start of the body of one request sent with ``Host: host`` (an event stream is not
    read to its end)."""
    import http.client

    where = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        connection.putrequest(method, where.path or "/", skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        reply = connection.getresponse()
        streaming = reply.getheader("content-type", "").startswith("text/event-stream")
        body = reply.readline() if streaming else reply.read()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, body
    finally:
        connection.close()


FOREIGN_HOSTS = ["rebound.example.com", "rebound.example.com:{port}", "127.0.0.1.rebound.example.com:{port}",
                 "localhost.rebound.example.com", "arena.example.test.rebound.example.com", "[::2]:{port}",
                 "10.1.2.3:{port}", "127.0.0.1:{port}@rebound.example.com", ""]
"""Names a page on another site could make a browser send (DNS rebinding), and malformed or missing ones."""


def test_the_dashboard_answers_only_its_own_hosts(server: WebServer) -> None:
    """DNS rebinding: a site the operator visits points its own name at 127.0.0.1 and reads the dashboard with
    the operator's browser, which sends that site's name as Host. Every route refuses a Host that is not one of the
    dashboard's names (421 with a line saying why), event streams and downloads included; its own names are
    served, on any route, with the security headers."""
    info = submit(server.stub(), tournament(games=1, variant="block", duplicate=False, name="names"))
    web, tid = server.web, info.id
    wait_state(web, tid, finished, 120, "the tournament to finish")
    port = urllib.parse.urlsplit(web).port
    for path in every_route(tid):
        for foreign in FOREIGN_HOSTS:
            host = foreign.format(port=port)
            code, headers, body = head_of(web + path, host)
            assert code == 421, (path, host, code, body[:200])
            assert body.decode().startswith("unknown host ") and "answers only for its own names" in body.decode()
            assert "alpha" not in body.decode() and tid not in body.decode()
            assert headers["x-content-type-options"] == "nosniff"
        for own in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", f"{OWN_NAME}:{port}",
                    OWN_NAME.upper() + "."):
            code, headers, body = head_of(web + path, own)
            assert code == (404 if path == "/nowhere" else 200), (path, own, code, body[:200])
            assert not path.endswith("/events") or body == b"event: change\n", (path, body)
            assert headers["x-content-type-options"] == "nosniff", (path, headers)
            assert "frame-ancestors 'none'" in headers["content-security-policy"], (path, headers)
            assert "default-src 'none'" in headers["content-security-policy"]
            assert "'unsafe-inline'" not in headers["content-security-policy"].split("style-src-attr")[0]
    code, _, _ = head_of(f"{web}/signin", f"rebound.example.com:{port}", method="POST")
    assert code == 421
    assert head_of(f"{web}/api/tournaments", None)[0] == 400      # no Host at all: HTTP/1.1 says 400 (h11 does)


@pytest.mark.fast
def test_the_game_page_runs_only_its_inline_code() -> None:
    """The viewer's inline script and style are allowed by their hashes (so a script injected into the page, which
    has another hash, would not run); nothing else inline."""
    import base64
    import hashlib

    from arena.web.app import INLINE_SCRIPT, INLINE_STYLE, content_security_policy

    page = "<style>b{}</style><script>go()</script><script type=\"application/json\">{}</script>"
    csp = content_security_policy(INLINE_SCRIPT.findall(page), INLINE_STYLE.findall(page))
    digest = base64.b64encode(hashlib.sha256(b"go()").digest()).decode()
    style = base64.b64encode(hashlib.sha256(b"b{}").digest()).decode()
    assert f"script-src 'self' 'sha256-{digest}';" in csp and f"style-src 'self' 'sha256-{style}';" in csp


@pytest.mark.parametrize("args, message", [
    (["--http-host", "a.example"], "error: --http-host goes with --http [ADDR]"),
    (["--http", "127.0.0.1:0", "--http-host", "a.example:80"], "error: --http-host 'a.example:80': expected a host "
                                                               "name or an IP address, without a port"),
])
def test_bad_http_host_flags_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data",
                           str(tmp_path / "d"), *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr


def token_file(folder: Path) -> tuple[Path, str]:
    token = secrets.token_urlsafe(24)
    path = folder / "token"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path, token


def test_a_token_is_needed_by_header_or_sign_in_cookie(tmp_path: Path) -> None:
    path, token = token_file(tmp_path)
    server = WebServer(tmp_path / "data", "--token-file", str(path))
    try:
        web = server.web
        code, headers, body = http(f"{web}/api/tournaments")
        assert code == 401 and json.loads(body)["error"].startswith("missing token") and headers["www-authenticate"]
        code, _, body = http(f"{web}/t/anything/games")
        assert code == 401 and 'action="/signin"' in body.decode() and 'value="/t/anything/games"' in body.decode()
        assert http(f"{web}/api/tournaments", headers={"Authorization": BEARER + "x" * 32})[0] == 401
        assert http(f"{web}/api/tournaments", headers={"Authorization": token})[0] == 401
        assert get_json(f"{web}/api/tournaments", headers={"Authorization": BEARER + token})["access"] == "full"

        code, _, body = http(f"{web}/signin", form={"token": "nope", "next": "/"})
        assert code == 401 and "wrong token" in body.decode()
        code, headers, _ = http(f"{web}/signin", form={"token": token, "next": "//elsewhere.example/"})
        assert code == 303 and headers["location"] == "/"                       # never sent off this site
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and token not in cookie
        session = cookie.split(";")[0]
        assert get_json(f"{web}/api/tournaments", headers={"Cookie": session})["access"] == "full"
        assert http(f"{web}/api/tournaments", headers={"Cookie": session[:-2] + "00"})[0] == 401
    finally:
        server.stop()


def test_the_public_site_shows_finished_public_data_only(tmp_path: Path) -> None:
    path, token = token_file(tmp_path)
    tag = uuid.uuid4().hex
    # a slow bot (0.6 s a decision, so a one-round game lasts seconds): the checks below, made while the game is in
    # progress, finish long before it does even on a busy machine
    bots = random_bot("alpha", tag) + bot_entry("slow", str(WATCHED_BOT), "--mode", "slow", "--delay", "0.6")
    server = WebServer(tmp_path / "data", "--token-file", str(path), "--http-public", *registry(tmp_path, bots))
    full = {"Authorization": BEARER + token}
    try:
        web = server.web
        info = submit(server.stub(), tournament(games=1, variant="draw", duplicate=False, bots=named("slow", "alpha"),
                                                extra="", name="public"),
                      metadata=(("authorization", BEARER + token),))
        detail = wait_state(web, info.id, lambda d: d["in_progress"], 60, "a game in progress", headers=full)
        index = detail["in_progress"][0]["index"]
        public = get_json(f"{web}/api/t/{info.id}")
        assert public["access"] == "public" and public["in_progress"] == []
        assert get_json(f"{web}/api/t/{info.id}/games/{index}/view", 403)["error"] == (
            f"game {index} is being played; this public site shows it once it has finished")
        assert get_json(f"{web}/api/t/{info.id}/games/{index}/view", headers=full)["live"] is True
        code, _, page = http(f"{web}/t/{info.id}/games/{index}")                # the page says so, with a way back
        assert code == 403 and f"game {index} is being played; this public site shows it once it has finished" in \
            page.decode()
        assert f'<a id="back" href="/t/{info.id}">← public</a>' in page.decode()
        assert 'data-access="public"' in http(f"{web}/")[2].decode()
        wait_state(web, info.id, finished, 120, "the tournament to finish")
        assert get_json(f"{web}/api/t/{info.id}/games/{index}/view")["live"] is False
    finally:
        server.stop()


@needs_chromium
def test_a_share_link_hides_live_games_and_the_deal_partner(tmp_path: Path, browser: Chromium) -> None:
    """A share link sees what the public site shows: game 1 is being played, and game 0, finished, was dealt the
    same deals (the other rotation of the deal set), so its record would show game 1's hidden hands. Both stay
    closed to the link until game 1 is recorded; then both open. Meanwhile the games list (the operator's too, in
    a real browser) names game 0 without a link to it: its page would refuse everyone."""
    path, token = token_file(tmp_path)
    tag = uuid.uuid4().hex
    gate = tmp_path / "gated" / "gate"
    bots = random_bot("alpha", tag) + gated_bot(gate.parent, tag, "--gate-unit", "seat")
    server = WebServer(tmp_path / "data", "--token-file", str(path), *registry(tmp_path, bots))
    full = {"Authorization": BEARER + token}
    try:
        web = server.web
        info = submit(server.stub(), tournament(games=1, concurrency=1, variant="draw", bots=named("alpha", "gated"),
                                                extra="[time]\nmove_ms = 600000\n", name="shared"),
                      metadata=(("authorization", BEARER + token),))
        tid = info.id
        first = wait_state(web, tid, lambda d: [g["index"] for g in d["in_progress"]] == [0], 60, "game 0 to start",
                           headers=full)
        open_gate(gate, first["in_progress"][0]["seats"].index("gated"))        # game 0 only: game 1 waits
        wait_state(web, tid, lambda d: [g["index"] for g in d["in_progress"]] == [1], 120,
                   "game 0 recorded and game 1 held at the gate", headers=full)
        code, _, body = http(f"{web}/api/share", form={"tournament": tid}, headers=full)
        assert code == 200, body
        code, headers, _ = http(json.loads(body)["url"])
        assert code == 303
        shared = {"Cookie": f"{SHARE_COOKIE}={set_cookie(headers, SHARE_COOKIE)}"}

        detail = get_json(f"{web}/api/t/{tid}", headers=shared)
        assert (detail["access"], detail["in_progress"], detail["tournament"]["games_done"]) == ("public", [], 1)
        withheld = "game 0 shares its deals with game(s) 1, still to finish; its record is withheld until then"
        assert get_json(f"{web}/api/t/{tid}/games/0.json", 403, headers=shared)["error"] == withheld
        assert get_json(f"{web}/api/t/{tid}/games/0/view", 403, headers=shared)["error"] == withheld
        live = "game 1 is being played; this public site shows it once it has finished"
        assert get_json(f"{web}/api/t/{tid}/games/1/view", 403, headers=shared)["error"] == live
        for page, line in ((f"/t/{tid}/games/0", withheld), (f"/t/{tid}/games/1", live)):
            code, _, body = http(web + page, headers=shared)
            assert code == 403 and line in body.decode(), page
        code, _, body = http(f"{web}/api/t/{tid}/games.jsonl", headers=shared)
        assert (code, body) == (200, b"")
        for who in (shared, full):
            rows = get_json(f"{web}/api/t/{tid}/games", headers=who)["games"]
            assert [(row["index"], row["withheld"]) for row in rows] == [(0, [1])]
        browser.open_page(f"{web}/signin?next=/t/{tid}/games")
        browser.type_into("form.signin input[name=token]", token)
        browser.submit("form.signin button[type=submit]")
        browser.wait_js("!!document.querySelector('#games tbody tr')", 30, "the games list")
        assert browser.js("[...document.querySelectorAll('#games a')].map((a) => a.getAttribute('href'))") == []
        assert browser.js("document.querySelector('#games tbody td .held').textContent") == "game 0"

        open_gate(gate, "0 1")
        wait_state(web, tid, finished, 120, "the tournament to finish", headers=full)
        for index in (0, 1):  # the same link opens both once the deal set is over: it was the game's state, not
            assert get_json(f"{web}/api/t/{tid}/games/{index}/view", headers=shared)["live"] is False  # the link
        code, _, body = http(f"{web}/api/t/{tid}/games.jsonl", headers=shared)
        assert code == 200 and [int(json.loads(line).get("index", 0)) for line in body.decode().splitlines()] == [0, 1]
        rows = get_json(f"{web}/api/t/{tid}/games", headers=shared)["games"]
        assert [(row["index"], row["withheld"]) for row in rows] == [(0, []), (1, [])]
        browser.goto(f"{web}/t/{tid}/games")
        browser.wait_js("document.querySelectorAll('#games tbody tr').length === 2", 30, "both games listed")
        assert browser.js("[...document.querySelectorAll('#games a')].map((a) => a.getAttribute('href'))") == [
            f"/t/{tid}/games/0", f"/t/{tid}/games/1"]
        assert browser.csp_violations() == [] and browser.exceptions() == []
    finally:
        server.stop()


@needs_chromium
def test_being_played_names_a_held_back_game_without_a_link(tmp_path: Path, browser: Chromium) -> None:
    """The first game of one deal set in flight (the gated bot answers in no seat; the second rotation waits for it,
    the run's phases): it may not be followed while its deal set is still to finish, so the operator's "Being
    played" names it and links nothing."""
    tag = uuid.uuid4().hex
    gate = tmp_path / "gated" / "gate"
    bots = random_bot("alpha", tag) + gated_bot(gate.parent, tag, "--gate-unit", "seat")
    server = WebServer(tmp_path / "data", *registry(tmp_path, bots))
    try:
        web = server.web
        tid = submit(server.stub(), tournament(games=1, concurrency=2, variant="draw", bots=named("alpha", "gated"),
                                               extra="[time]\nmove_ms = 600000\n", name="held")).id
        detail = wait_state(web, tid, lambda d: len(d["in_progress"]) == 1, 60, "the deal set's first game")
        assert [g["live"] for g in detail["in_progress"]] == [False]
        browser.open_page(f"{web}/t/{tid}")
        browser.wait_js("document.querySelectorAll('#in-progress tbody tr').length === 1", 30, "Being played")
        assert browser.js("[...document.querySelectorAll('#in-progress a')].length") == 0
        assert browser.js("[...document.querySelectorAll('#in-progress .held')].map((s) => s.textContent)") == [
            "game 0"]
        assert browser.csp_violations() == [] and browser.exceptions() == []
        open_gate(gate, "0 1")
        wait_state(web, tid, finished, 120, "the tournament to finish")
    finally:
        server.stop()


@pytest.mark.parametrize("args, message", [
    (["--http", "0.0.0.0:0"], "error: refusing to serve the web dashboard on 0.0.0.0:0 without a token"),
    (["--http-public"], "error: --http-public goes with --http [ADDR]"),
    (["--http", "localhost"], "error: cannot serve the web dashboard on localhost: expected HOST:PORT"),
])
def test_bad_http_flags_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data",
                           str(tmp_path / "d"), *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr


def test_a_busy_http_port_is_one_line(server: WebServer, tmp_path: Path) -> None:
    busy = server.web.removeprefix("http://")
    done = subprocess.run([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data",
                           str(tmp_path / "d"), "--http", busy], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert done.returncode == 2 and done.stderr == (
        f"error: cannot serve the web dashboard on {busy}: address already in use\n")


def test_with_tls_the_dashboard_is_https_too(tmp_path: Path) -> None:
    """--tls-cert/--tls-key serve the dashboard over HTTPS with the same certificate (plain HTTP gets nothing), and
    the sign-in cookie is then Secure."""
    cert, key = self_signed(tmp_path)
    path, token = token_file(tmp_path)
    server = WebServer(tmp_path / "data", "--tls-cert", str(cert), "--tls-key", str(key), "--token-file", str(path))
    try:
        assert re.fullmatch(r"https://127\.0\.0\.1:\d+", server.web), server.web
        trusted = urllib.request.build_opener(NoRedirect, urllib.request.HTTPSHandler(
            context=ssl.create_default_context(cafile=str(cert))))
        request = urllib.request.Request(f"{server.web}/api/tournaments", headers={"Authorization": BEARER + token})
        with trusted.open(request, timeout=30) as reply:
            assert reply.status == 200 and json.loads(reply.read()) == {"tournaments": [], "access": "full"}
        signin = urllib.request.Request(f"{server.web}/signin", data=urllib.parse.urlencode(
            {"token": token, "next": "/"}).encode())
        with pytest.raises(urllib.error.HTTPError) as redirect:  # NoRedirect: the 303 comes back as an error
            trusted.open(signin, timeout=30)
        assert redirect.value.code == 303 and "Secure" in redirect.value.headers["set-cookie"]
        with pytest.raises((HTTPException, OSError)):
            urllib.request.urlopen(server.web.replace("https://", "http://") + "/api/tournaments", timeout=30)
    finally:
        server.stop()


def test_the_openskill_column_is_the_standings_own_cell(server: WebServer) -> None:
    info = submit(server.stub(), tournament(games=2, variant="draw", duplicate=False, name="three",
                                            bots=named("alpha", "beta", "slow"), extra="players = 3"))
    detail = wait_state(server.web, info.id, finished, 120, "the three-player tournament to finish")
    saved = json.loads((server.data / "tournaments" / info.id / "standings.json").read_text())
    assert detail["table"]["rating_header"] == "ordinal (μ, σ)" and saved["rating"] == "openskill"
    assert [row["rating"] for row in detail["table"]["rows"]] == [
        skill_cell(e["openskill"]["ordinal"], e["openskill"]["mu"], e["openskill"]["sigma"])
        for e in saved["entrants"]]
    shown = server.cli("status", info.id)
    assert all(row["rating"] in shown.stdout for row in detail["table"]["rows"]), shown.stdout


def history_of(winners: list[int], total: int = 5000) -> RatingHistory:
    """A chart fed games of two entrants, a and b, one per winner (0: a won, 1: b won)."""
    history = RatingHistory(group_size=1, games_total=total)
    for index, winner in enumerate(winners):
        history.add(index, outcome(f"{index}/0", ("a", "b"), winner))
    return history


@pytest.mark.fast
def test_the_chart_thins_out_and_keeps_the_latest() -> None:
    history = RatingHistory(group_size=1, games_total=5000)
    most = 0
    for index in range(1000):
        history.add(index, outcome(f"{index}/0", ("a", "b"), index % 3 == 0))
        most = max(most, len(history.points))
    history.add(999, outcome("999/0", ("a", "b"), 0))  # the same game again (played again on resume): once
    assert most == CHART_POINTS and (history.counted, history.stride) == (1000, 8)
    games = [p["games"] for p in history.chart()["points"]]
    assert games == list(range(8, 1000, 8)) + [1000], "evenly spaced, and the latest game always shown"


@pytest.mark.fast
def test_the_chart_omits_infinite_elo_and_says_so() -> None:
    first = history_of([0, 0]).chart()  # a won both: +inf and -inf, nothing finite to draw
    assert [p["values"] for p in first["points"]] == [{"a": None, "b": None}] * 2
    assert [p["infinite"] for p in first["points"]] == [{"a": "+", "b": "-"}] * 2
    assert (first["axis"], first["left_out"]) == (None, {"a": 2, "b": 2})
    later = history_of([0, 0, 1, 0, 0]).chart()
    assert later["left_out"] == {"a": 2, "b": 2}
    finite = [v for p in later["points"] for v in p["values"].values() if v is not None]
    assert [p["values"]["a"] for p in later["points"]] == [None, None, 120.4, 190.8, 240.8]  # 400 log10(w / l)
    ticks = [t["value"] for t in later["axis"]["ticks"]]
    assert ticks == [-300, -200, -100, 0, 100, 200, 300] and min(finite) >= ticks[0] and max(finite) <= ticks[-1]
    assert [t["label"] for t in later["axis"]["ticks"]] == ["-300", "-200", "-100", "0", "+100", "+200", "+300"]


# --- a real browser -----------------------------------------------------------------------------------------------


@needs_chromium
def test_chromium_follows_a_game_and_the_standings_live(server: WebServer, browser: Chromium) -> None:
    """The gated bot plays only as far as the test lets it (the file its gate reads), so the game is still being
    played at every step below however busy the machine: the page opens at its latest position, then follows the
    moves the test lets through, each arriving without a reload; the dashboard's own scripts and styles run under
    its Content-Security-Policy (Chromium reports no refusal)."""
    SHOTS.mkdir(exist_ok=True)
    open_gate(server.gate, 1)
    info = submit(server.stub(), tournament(games=1, variant="draw", duplicate=False, concurrency=1, name="live",
                                            bots=named("alpha", "beta", "gated"),
                                            extra="[time]\nmove_ms = 600000\n").replace("target = 1", "target = 15"))
    web, tid = server.web, info.id
    detail = wait_state(web, tid, lambda d: any(g["live"] and "gated" in g["seats"] for g in d["in_progress"]),
                        90, "a live game of the gated bot")
    index = next(g["index"] for g in detail["in_progress"] if "gated" in g["seats"])

    browser.open_page(f"{web}/t/{tid}/games/{index}")
    browser.call("Log.enable")
    browser.js("window.unreloaded = true")
    moves = browser.wait_js("document.querySelectorAll('#moves .move').length", 60, "the first moves")
    open_gate(server.gate, 4)                                                 # three more answers of the bot
    browser.wait_js(f"document.querySelectorAll('#moves .move').length >= {moves + 3}", 60, "three more moves")
    assert browser.js("document.getElementById('arena-live').textContent").startswith("live")
    assert index in [g["index"] for g in get_json(f"{web}/api/t/{tid}")["in_progress"]], "still being played"
    assert browser.js("document.body.getAttribute('data-frame') == document.getElementById('slider').max")
    hidden, round_over = browser.js("[[...document.querySelectorAll('.hand')].every((h) => h.dataset.hidden === '1'), "
                                    "!!document.querySelector('#moves .result.current')]")
    assert hidden or round_over                                               # no hand before its round ends
    assert browser.js("window.unreloaded") is True
    browser.screenshot(SHOTS / "game-live.png")
    assert browser.csp_violations() == []
    open_gate(server.gate, 10 ** 9)                                           # the rest of the tournament freely

    browser.goto(f"{web}/t/{tid}")
    browser.js("window.unreloaded = true")
    games = int(browser.wait_js("document.getElementById('standings-games') && "
                                 "document.getElementById('standings-games').textContent", 30, "the standings"))
    assert browser.js("document.querySelectorAll('#standings tbody tr').length") >= 2
    browser.wait_js(f"Number(document.getElementById('standings-games').textContent) > {games}", 90,
            "the standings to count another game")
    browser.wait_js(f"document.getElementById('rating-chart') && "
                     f"Number(document.getElementById('rating-chart').dataset.points) > {games}", 30, "the chart")
    assert browser.js("document.querySelectorAll('#rating-chart path').length") == 3
    assert browser.js("window.unreloaded") is True
    browser.screenshot(SHOTS / "tournament.png")

    assert browser.csp_violations() == []

    for path, shot in [("/", "tournaments.png"), (f"/t/{tid}/games?entrant=gated", "games.png"),
                       (f"/t/{tid}/entrants/gated", "entrant.png"), (f"/t/{tid}/games/{index}", "game-finished.png"),
                       ("/signin", "signin.png")]:
        browser.goto(web + path)
        browser.wait_js("!document.querySelector('main .message:not(:empty)') && "
                         "!!(document.querySelector('table') || document.getElementById('layout') || "
                         "document.querySelector('form.signin'))", 30, path)
        browser.screenshot(SHOTS / shot)
        assert browser.csp_violations() == [], path

    # one tab through more live pages than a browser opens connections to one site (six): each loads, since a page
    # left closes its event stream (the back-forward cache would keep it open and the seventh page would never load)
    for path in ["/", f"/t/{tid}", f"/t/{tid}/games", f"/t/{tid}/entrants/gated"] * 2 + [f"/t/{tid}/games/{index}"]:
        browser.goto(web + path)
        browser.wait_js("!!(document.querySelector('#main table') || document.getElementById('layout'))", 30, path)


@pytest.mark.fast
def test_only_recently_viewed_tournaments_stay_cached() -> None:
    from arena.web import app

    cache: Any = app.OrderedDict()
    made: list[str] = []
    for key in [f"t{i}" for i in range(app.CACHED_TOURNAMENTS)] + ["t0", "new"]:
        app._recent(cache, key, lambda key=key: made.append(key) or key)
    assert len(cache) == app.CACHED_TOURNAMENTS and "t1" not in cache, "the least recently viewed one is dropped"
    assert list(cache)[-2:] == ["t0", "new"] and made.count("t0") == 1, "a cached one is not made again"
