"""The web dashboard: a Starlette application on the Arena's own state, served by Hypercorn's trio worker inside
``arena serve`` (the same process and the same trio loop as the gRPC server; see :func:`serve_web`).

Pages are small HTML shells (``templates/page.html``) that ``static/dashboard.js`` fills from the JSON routes under
``/api/``, and keeps current from server-sent events (``/api/.../events``): each stream sends a ``change`` event
when what its page shows has changed (the server looks every ``POLL_S``), and the page fetches the JSON again. The
game page is the records' own viewer (:mod:`arena.records.html`) fed from the server, which ``static/game.js``
updates move by move while the game is played. What each route may show is decided in :mod:`arena.web.data` and
:mod:`arena.web.access`.

Routes that change something: the sign-in (its cookies); a team's sign-up to a league (open to anyone the league's
``[signup]`` lets in, its form's CSRF token made from a random cookie of its page); a league author's (or the operator's) upload, retire and
challenge forms, which call the league's own service (:class:`arena.league.core.LeagueCore`, the gRPC calls'
code path, so the same checks, limits and one-line refusals) as the signed-in caller, each POST refused from
another site's page (``Origin:``) and without its session's CSRF token; and the operator's ``POST /api/share``,
which signs a read-only link to one tournament or league (``/share/LINK``, kept as a cookie that opens that one's
pages only, as the public site shows them, until it expires).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import re
import secrets
import socket
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import Any, TypeVar

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.league.authors import caller_of, hash_token
from arena.league.core import LeagueCore
from arena.league.rules.config import archive_limits
from arena.league.rules.errors import LeagueError, NotFound, Unauthenticated
from arena.league.rules.permissions import OPERATOR, Caller
from arena.league.rules.teams import require_open
from arena.league.storage.db import Database
from arena.records.export import GameRow, write_csv
from arena.records.html import page_html, viewer_data
from arena.server.core import ApiError, Arena
from arena.server.tournaments import Tournament
from arena.web import data, feeds, forms, tournament_page
from arena.web import league as league_web
from arena.web.access import (
    AUTHOR_COOKIE,
    AUTHOR_SESSION_S,
    COOKIE,
    DEFAULT_SHARE_HOURS,
    INDEX,
    SHARE_COOKIE,
    SHARE_KINDS,
    SHARE_PATH,
    SIGNUP_COOKIE,
    Access,
    AccessRules,
    HostNames,
    ShareRefused,
    Signer,
    Viewer,
    same_origin,
    session_member,
    session_name,
    share_expiry,
)
from arena.web.data import GameCatalog, NotShown, RatingHistory, TournamentEvent
from arena.web.live import LiveGames, public_view

POLL_S = 0.25
"""How often an event stream looks for a change to send."""
KEEP_ALIVE_S = 15.0
"""A comment line this often on a quiet stream, so proxies and browsers keep it open."""
SHUTDOWN_GRACE_S = 1.0
"""Requests still open this long after the server is told to stop are closed (event streams never end)."""
PACKAGE = "arena.web"
CACHED_TOURNAMENTS = 16
"""Tournaments whose game rows and rating chart the web keeps in memory, the most recently viewed; another one's are
read again from its record file when it is viewed (a long-lived server sees many tournaments)."""
CSP = ("default-src 'none'; script-src 'self'{scripts}; style-src 'self'{styles}; style-src-attr 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""Every page's Content-Security-Policy: scripts and style sheets from the dashboard itself only (the game page adds
the hashes of the viewer's own inline script and style), no plugin, frame or other origin, and no site may frame
it. Style attributes stay allowed: the pages draw bars and colour swatches with them, and they run no code (and
could load nothing: every load other than the dashboard's own is refused)."""
SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY")]
"""Sent with every answer, beside the Content-Security-Policy. The referrer policy is ``same-origin``, not
``no-referrer``: under ``no-referrer`` a browser sends ``Origin: null`` with the page's own forms, which
:func:`_check_form_origin` must refuse (another site's page can send ``null`` too), so no form worked in a browser;
``same-origin`` still sends no address (a share link's, an upload form's ``?csrf=``) to any other site."""


@dataclass
class Web:
    """What the routes share: the Arena, the access rules, the live games and the per-tournament caches."""

    arena: Arena
    rules: AccessRules
    live: LiveGames = field(default_factory=LiveGames)
    catalogs: OrderedDict[str, GameCatalog] = field(default_factory=OrderedDict)
    histories: OrderedDict[str, RatingHistory] = field(default_factory=OrderedDict)
    events: OrderedDict[str, TournamentEvent] = field(default_factory=OrderedDict)
    league: LeagueCore | None = None
    """The leagues' service (:class:`arena.league.core.LeagueCore`) when ``arena serve --league`` runs one."""

    def league_core(self) -> LeagueCore:
        if self.league is None:
            raise NotShown(404, "this server runs no league (arena serve --league FILE)")
        return self.league

    def access(self, request: Request) -> Access:
        """The request's level: as its route's gate decided it (a signed-in author's or a share link's), else from
        its token or session cookie."""
        decided = getattr(request.state, "access", None)
        return decided or self.rules.level(request.headers.get("authorization"), request.cookies.get(COOKIE))

    def viewer(self, request: Request) -> Viewer:
        """Whom the request's page is for: its level, and the share link its route's gate let in (or refused for
        another page: the refusal is rendered for it too), so that the page shows only the links it may follow."""
        return Viewer(self.access(request), getattr(request.state, "share", None))

    @property
    def signer(self) -> Signer | None:
        """The HMACs of authors' sessions, forms and share links (none without a server token: nothing to key)."""
        return Signer(self.rules.token) if self.rules.token is not None else None

    async def author_caller(self, request: Request) -> Caller | None:
        """The member of a team the request's author cookie names, when its HMAC matches the member's current token
        hash and it has not expired; else None (a forged, expired, revoked, removed or re-issued one is nobody, and
        so is a member of a team awaiting approval or rejected)."""
        value = request.cookies.get(AUTHOR_COOKIE)
        if value is None or self.league is None or self.signer is None:
            return None
        session = self.signer.author_session(value, time.time())
        if session is None:
            return None
        try:
            author, member, token_hash = await self.league.database.run(Database.member_with_hash,
                                                                        *session_member(session.name))
        except NotFound:
            return None
        if not self.signer.author_matches(session, token_hash):
            return None
        try:
            return caller_of(author, member)
        except LeagueError:
            return None

    async def league_caller(self, request: Request) -> tuple[Caller, str | None]:
        """Who acts on the league: the operator (its token or session) or a signed-in author, with the session
        value its forms' CSRF token is made from (None when its ``Authorization:`` header says who it is); 401 for
        anyone else."""
        if self.rules.token is not None:
            if self.rules.level(request.headers.get("authorization"), None) is Access.FULL:
                return OPERATOR, None
            if self.rules.level(None, request.cookies.get(COOKIE)) is Access.FULL:
                return OPERATOR, request.cookies[COOKIE]
        caller = await self.author_caller(request)
        if caller is None:
            raise NotShown(401, "sign in with your author token first (at /signin): this page is an author's",
                           (f"/signin?next={urllib.parse.quote(request.url.path)}", "sign in"))
        return caller, request.cookies.get(AUTHOR_COOKIE, "")

    def tournament(self, tournament_id: str) -> Tournament:
        try:
            return self.arena.lookup(tournament_id)
        except ApiError as error:
            raise NotShown(404 if "no tournament" in error.message else 503, error.message) from None

    async def game_rows(self, t: Tournament) -> list[GameRow]:
        """Every recorded game's export row, in schedule order."""
        catalog = _recent(self.catalogs, t.id, GameCatalog)
        return await trio.to_thread.run_sync(catalog.refresh, t)

    async def rows(self, t: Tournament) -> list[dict[str, Any]]:
        return [data.row_json(row, t.withheld_for(row.index)) for row in await self.game_rows(t)]

    async def event(self, t: Tournament) -> tuple[dict[str, Any] | None, str]:
        """A Swiss or knockout tournament's event as JSON and as its page's section (None and "" for another
        format), rebuilt only when a game was recorded since the last look."""
        cache = _recent(self.events, t.id, TournamentEvent)
        event, released = await trio.to_thread.run_sync(cache.refresh, t)
        return event, tournament_page.event_section(t.id, event, released)

    async def chart(self, t: Tournament) -> dict[str, Any]:
        history = _recent(self.histories, t.id, lambda: RatingHistory(t.group_size, t.games_total, expected_kind=t.rating_kind))
        await trio.to_thread.run_sync(history.refresh, t.records.path)
        return history.chart()


Handler = Callable[[Web, Request], Awaitable[Response]]
Cached = TypeVar("Cached")


def _recent(cache: OrderedDict[str, Cached], key: str, make: Callable[[], Cached]) -> Cached:
    """The cached value of ``key`` (made when missing), now the most recent; the least recent beyond
    :data:`CACHED_TOURNAMENTS` are dropped."""
    if key not in cache:
        cache[key] = make()
    cache.move_to_end(key)
    while len(cache) > CACHED_TOURNAMENTS:
        cache.popitem(last=False)
    return cache[key]


def create_app(arena: Arena, rules: AccessRules, league: LeagueCore | None = None) -> Starlette:
    """The application (with the league's pages when ``league``, its LeagueCore, is given); it also registers the
    live-game observer with the Arena."""
    web = Web(arena, rules, league=league)
    arena.game_observers.append(web.live.game_started)

    def route(path: str, handler: Handler, *, api: bool, methods: tuple[str, ...] = ("GET",),
              needs: Access = Access.PUBLIC, shared: bool = True) -> Route:
        """``shared``: whether a share link may open the route (within its own tournament or league only)."""
        async def endpoint(request: Request) -> Response:
            try:
                level = web.access(request)
                if level is Access.NONE and needs is not Access.NONE:
                    if await web.author_caller(request) is not None:
                        level = Access.PUBLIC  # an author sees the spectators' site
                    elif SHARE_COOKIE in request.cookies:
                        level = _shared_access(web, request, shared)
                    else:
                        return _refused(web, request, api)
                request.state.access = level
                if methods != ("GET",):
                    _check_form_origin(request)
                return await handler(web, request)
            except NotShown as refusal:
                return _error(web, request, refusal, api)
        return Route(path, endpoint, methods=list(methods))

    routes = [
        route("/", shell("tournaments"), api=False),
        route("/t/{tid}", shell("tournament"), api=False),
        route("/t/{tid}/games", shell("games"), api=False),
        route("/t/{tid}/entrants/{name:path}", shell("entrant"), api=False),
        route("/t/{tid}/games/{index:int}", game_page, api=False),
        route("/signin", signin_form, api=False, needs=Access.NONE),
        route("/signin", signin, api=False, methods=("POST",), needs=Access.NONE),
        route("/signout", signout, api=False, methods=("POST",), needs=Access.NONE),
        route("/api/tournaments", api_tournaments, api=True),
        route("/api/events", api_list_events, api=True),
        route("/api/t/{tid}", api_tournament, api=True),
        route("/api/t/{tid}/events", api_tournament_events, api=True),
        route("/api/t/{tid}/ratings", api_ratings, api=True),
        route("/api/t/{tid}/standings.json", api_standings_json, api=True),
        route("/api/t/{tid}/standings.csv", api_standings_csv, api=True),
        route("/api/t/{tid}/games", api_games, api=True),
        route("/api/t/{tid}/games.jsonl", api_games_jsonl, api=True),
        route("/api/t/{tid}/games.csv", api_games_csv, api=True),
        route("/api/t/{tid}/games/{index:int}.json", api_game_record, api=True),
        route("/api/t/{tid}/games/{index:int}/view", api_game_view, api=True),
        route("/api/t/{tid}/games/{index:int}/events", api_game_events, api=True),
        route("/api/t/{tid}/entrants/{name:path}", api_entrant, api=True),
        route("/leagues/{league}", league_page(league_web.leaderboard, league_web.leaderboard_html), api=False),
        route("/leagues/{league}/queue", league_page(league_web.queue, league_web.queue_html), api=False),
        route("/leagues/{league}/bots/{bot}", league_page(league_web.bot_full, league_web.bot_full_html), api=False),
        route("/leagues/{league}/finals", league_page(league_web.finals, league_web.finals_html), api=False),
        route("/leagues/{league}/tables/{table:int}/games/{game}", league_game_page, api=False),
        route("/leagues/{league}/finals/games/{index:int}", finals_game_page, api=False),
        route("/api/leagues/{league}/standings", league_api(league_web.leaderboard), api=True),
        route("/api/leagues/{league}/queue", league_api(league_web.queue), api=True),
        route("/api/leagues/{league}/bots/{bot}", league_api(league_web.bot_full), api=True),
        route("/api/leagues/{league}/finals", league_api(league_web.finals), api=True),
        route("/api/leagues/{league}/events", api_league_events, api=True),
        route("/leagues/{league}/feed.atom", public_feed, api=True),
        route("/leagues/{league}/feed/{token}.atom", team_feed, api=True, needs=Access.NONE, shared=False),
        route("/leagues/{league}/feed-token", new_feed_token, api=False, methods=("POST",), shared=False),
        route("/leagues/{league}/mine", author_page, api=False, shared=False),
        route("/leagues/{league}/signup", signup_form, api=False, needs=Access.NONE),
        route("/leagues/{league}/signup", signup, api=False, methods=("POST",), needs=Access.NONE),
        route("/leagues/{league}/versions/{vid:int}/log", version_log_page, api=False, shared=False),
        route("/api/leagues/{league}/versions/{vid:int}/log", api_version_log, api=True, shared=False),
        route("/leagues/{league}/upload", upload, api=False, methods=("POST",), shared=False),
        route("/leagues/{league}/versions/{vid:int}/retire", retire, api=False, methods=("POST",), shared=False),
        route("/leagues/{league}/challenges", challenge, api=False, methods=("POST",), shared=False),
        route("/api/share", api_share, api=True, methods=("POST",), shared=False),
        route("/share/{link}", open_share, api=False, needs=Access.NONE),
        Mount("/static", StaticFiles(packages=[(PACKAGE, "static")]), name="static"),
    ]
    return Starlette(routes=routes)


def content_security_policy(scripts: Sequence[str] = (), styles: Sequence[str] = ()) -> str:
    """:data:`CSP` allowing also the inline scripts and style elements given, by their SHA-256."""
    def sources(blocks: Sequence[str]) -> str:
        return "".join(f" 'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'" for b in blocks)
    return CSP.format(scripts=sources(scripts), styles=sources(styles))


DEFAULT_CSP = content_security_policy().encode()


class OwnNamesOnly:
    """ASGI middleware in front of every route: a request whose ``Host:`` is not one of the dashboard's names gets
    421 and nothing else (DNS rebinding: see :mod:`arena.web.access`), and every answer carries the security headers
    (:data:`SECURITY_HEADERS`, and :data:`CSP` unless the route set its own)."""

    def __init__(self, app: ASGIApp, hosts: HostNames) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"content-security-policy" for k, _ in headers):
                    headers.append((b"content-security-policy", DEFAULT_CSP))
                message = {**message, "headers": headers + SECURITY_HEADERS}
            await send(message)

        if not self.hosts.allows(host):
            shown = json.dumps(host)[1:-1][:200] if host is not None else ""
            refusal = PlainTextResponse(f"unknown host {shown!r}: this dashboard answers only for its own names "
                                        f"(the address it listens on, and those given by arena serve --http-host "
                                        f"NAME)\n", status_code=421)
            await refusal(scope, receive, send_secured)
            return
        await self.app(scope, receive, send_secured)


# --- answers ------------------------------------------------------------------------------------------------------


def _error(web: Web, request: Request, refusal: NotShown, api: bool) -> Response:
    """The refusal as JSON for the API; for a page, the message and a link back to go on from (the refusal's own,
    else :func:`_way_back`), in the viewer's header."""
    if api:
        return JSONResponse({"error": refusal.message}, status_code=refusal.status)
    back = refusal.back or _way_back(web, request)
    return HTMLResponse(_page(web, request, "page.html", title="error", page="error", message=refusal.message,
                              back=back[0], back_label="← " + back[1]), status_code=refusal.status)


def _way_back(web: Web, request: Request) -> tuple[str, str]:
    """Where a refused page links to (where, what): the page the visitor came from when its ``Referer:`` is a page
    of this site (never another site's: a refusal page is no open door to elsewhere), else its tournament's page
    when there is one to see (a game held back while it is played, on the public site), else its league's page,
    else where the viewer's dashboard starts (the list of tournaments, or a share link's own page)."""
    came_from = _own_referer(request)
    if came_from is not None:
        return came_from, "back to the page you came from"
    params = request.path_params
    tid = params.get("tid")
    if tid:
        try:
            t = web.tournament(tid)
        except NotShown:
            pass
        else:
            return f"/t/{urllib.parse.quote(t.id)}", t.name
    league = params.get("league")
    if league and web.league is not None and league in web.league.leagues and not web.viewer(request).confined:
        return f"/leagues/{urllib.parse.quote(league, safe='')}", f"league {league}"
    return web.viewer(request).front()


def _own_referer(request: Request) -> str | None:
    """The path (and query) of the request's ``Referer:`` when it is a page of this site (the host the request
    came to, over http or https) other than the refused one itself; None otherwise."""
    referer = request.headers.get("referer")
    if not referer:
        return None
    parts = urllib.parse.urlsplit(referer)
    host = request.headers.get("host", "")
    if parts.scheme not in ("http", "https") or not host or parts.netloc.lower() != host.strip().lower():
        return None
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return path if _local(parts.path) == parts.path and path != here else None


def _refused(web: Web, request: Request, api: bool) -> Response:
    """Without the token: 401, and for a page the sign-in form (which comes back here once signed in)."""
    if api:
        return JSONResponse({"error": "missing token: send 'Authorization: Bearer <token>' (the server's "
                                      "--token-file), or sign in at /signin"}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})
    return HTMLResponse(_signin_page(web, request, request.url.path, ""), status_code=401,
                        headers={"WWW-Authenticate": "Bearer"})


def _template(name: str, raw: dict[str, str] | None = None, **values: str) -> str:
    """A page template with each ``__KEY__`` replaced by its value, HTML-escaped, and each key of ``raw`` by its
    HTML as it is (markup this module built, its own values escaped); a ``raw`` key not given is left empty, and so
    is a key of :data:`OPTIONAL_VALUES`."""
    text = resources.files(PACKAGE).joinpath("templates", name).read_text(encoding="utf-8")
    for key, value in {**OPTIONAL_VALUES, **values}.items():
        text = text.replace(f"__{key.upper()}__", html.escape(value))
    for key in RAW_SLOTS:
        text = text.replace(f"__{key.upper()}__", (raw or {}).get(key, ""))
    return text


OPTIONAL_VALUES = {"events": ""}
"""The value slots a page may leave out, and what they are then. A league's page without an event stream of its own
(an author's page, a build log, a form's answer) names none, so static/league.js opens none: left as the literal
``__EVENTS__``, it opened that address relative to the page, which answered 404, and the page said "reconnecting"."""
RAW_SLOTS = ("leagues", "content", "signout", "signup", "phase")
"""The templates' slots filled with HTML: the header's links to the leagues, a server-rendered page's content, the
header's sign-out button (:func:`_page`), the sign-in page's links to the leagues' sign-up pages, a league page's
phase (:func:`_league_html`)."""
SIGNOUT_FORM = ('<form class="signout" method="post" action="/signout"><button type="submit" id="signout">sign out'
                '</button></form>')
"""Ends the browser's sessions (``POST /signout``: the operator's, the author's and a share link's cookies). It needs
no CSRF token: like every POST, another site's page is refused by its ``Origin:``, and signing out is all it does."""


def _page(web: Web, request: Request, name: str, raw: dict[str, str] | None = None, **values: str) -> str:
    """The template ``name`` (see :func:`_template`) for the request's viewer, with its header, filled here only:
    the brand link to where the viewer's dashboard starts (:meth:`Viewer.front`: for a share link its own page, not
    the list of tournaments, which would answer it 403), and the sign-out button when the browser signed in (the
    operator's or an author's cookie): a browser shared at a venue or a lab must be able to leave nothing behind."""
    raw = dict(raw or {})
    if COOKIE in request.cookies or AUTHOR_COOKIE in request.cookies:
        raw["signout"] = SIGNOUT_FORM
    return _template(name, raw, home=web.viewer(request).front()[0], **values)


async def _league_phase(web: Web, league: str) -> str:
    """The header's phase of a league's page (empty for a league this server does not run: its page is a 404)."""
    try:
        return league_web.phase_html(await web.league_core().league_status(league))
    except LeagueError:
        return ""


async def _league_html(web: Web, request: Request, league: str, content: str, **values: str) -> Response:
    """A league's page: ``content`` in the league's frame, its header saying the league's phase and the time to the
    next one."""
    raw = {"content": content, "phase": await _league_phase(web, league)}
    return HTMLResponse(_page(web, request, "league.html", raw, **values))


def shell(page: str) -> Handler:
    """A page that the dashboard's script fills in from the API."""
    async def handler(web: Web, request: Request) -> Response:
        params = request.path_params
        viewer = web.viewer(request)
        title, content = page, ""
        if "tid" in params:
            t = web.tournament(params["tid"])
            title = f"{t.name} · {page}" if page != "tournament" else t.name
            if page == "tournament":  # its main content without a script (a link preview, a screenshot)
                content = tournament_page.standings_html(data.tournament_json(t), t.standings_view(),
                                                         (await web.event(t))[1])
        leagues = ""
        if web.league is not None and page == "tournaments":
            leagues = league_web.leagues_nav(list(web.league.leagues))
        return HTMLResponse(_page(web, request, "page.html", {"leagues": leagues, "content": content},
                                  title=title, page=page, tournament=params.get("tid", ""),
                                  entrant=params.get("name", ""), access=viewer.access.value,
                                  message="", back="", back_label=""))
    return handler


LeagueData = Callable[..., Awaitable[dict[str, Any]]]
"""A league's JSON from :mod:`arena.web.league`: (LeagueCore, league name[, bot name]) to its dict."""


async def _league_data(web: Web, request: Request, fetch: LeagueData) -> dict[str, Any]:
    """The league's JSON for a route: its league, and its bot when the route names one."""
    params = request.path_params
    names = [params["league"]] + ([params["bot"]] if "bot" in params else [])
    return await fetch(web.league_core(), *names)


def league_api(fetch: LeagueData) -> Handler:
    """A league's JSON route (public: the same for every level that may see the dashboard)."""
    async def handler(web: Web, request: Request) -> Response:
        return JSONResponse(await _league_data(web, request, fetch))
    return handler


def league_page(fetch: LeagueData, render: Callable[[dict[str, Any], Viewer], str]) -> Handler:
    """A league's page: the same JSON, rendered on the server into the dashboard's frame."""
    async def handler(web: Web, request: Request) -> Response:
        content = render(await _league_data(web, request, fetch), web.viewer(request))
        title = " · ".join(request.path_params[k] for k in ("bot", "league") if k in request.path_params)
        events = f"/api/leagues/{urllib.parse.quote(request.path_params['league'], safe='')}/events"
        return await _league_html(web, request, request.path_params["league"], content, title=title, events=events)
    return handler


async def league_game_page(web: Web, request: Request) -> Response:
    """A done ladder table's game in the records' viewer, with a bar back to the league."""
    params = request.path_params
    record = await league_web.table_game(web.league_core(), params["league"], params["table"], params["game"])
    return await _league_replay(web, params["league"], record, "",
                                f'table {params["table"]} · game {html.escape(params["game"])}')


async def finals_game_page(web: Web, request: Request) -> Response:
    """A game of the finals in the records' viewer (a complete deal set's, once the results are published), with
    a bar back to the finals."""
    params = request.path_params
    record = await league_web.finals_game(web.league_core(), params["league"], params["index"])
    return await _league_replay(web, params["league"], record, "/finals", f'finals · game {params["index"]}')


async def _league_replay(web: Web, league: str, record: dict[str, Any], back: str, label: str) -> Response:
    """A league's game in the records' viewer (every hand shown: its deal set is over; the seed is not shown),
    with a bar back to the league's page at ``back`` (its leaderboard: ""), saying which game (``label``, HTML)."""
    view = public_view(await trio.to_thread.run_sync(viewer_data, record), seed_revealed=False, hands_public=True)
    view["live"] = False
    quoted = html.escape(urllib.parse.quote(league, safe=""))
    bar = (f'<nav id="arena-bar" style="padding:6px 16px;background:#1f4d36;color:#fff;font:14px system-ui,sans-serif">'
           f'<a style="color:#fff" href="/leagues/{quoted}{back}">&larr; {html.escape(league)}{back and " finals"}</a> · '
           f'{label} · {await _league_phase(web, league)}</nav>')
    page = page_html(view).replace("<body>", "<body>\n" + bar, 1)
    csp = content_security_policy(INLINE_SCRIPT.findall(page), INLINE_STYLE.findall(page))
    return HTMLResponse(page, headers={"Content-Security-Policy": csp})


async def game_page(web: Web, request: Request) -> Response:
    """The records' viewer with the game's data, and a bar back to the tournament that follows a live game."""
    t = web.tournament(request.path_params["tid"])
    index = request.path_params["index"]
    view = await data.game_view(t, index, web.access(request), web.live)
    bar = _game_bar(t, index, view["live"])
    page = page_html(view).replace("<body>", "<body>\n" + bar, 1)
    page = page.replace("</body>", '<script src="/static/answer.js"></script>\n<script src="/static/game.js"></script>\n'
                                   '</body>', 1)
    csp = content_security_policy(INLINE_SCRIPT.findall(page), INLINE_STYLE.findall(page))
    return HTMLResponse(page, headers={"Content-Security-Policy": csp})


INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)
"""The viewer's inline script (its data is a JSON block, ``<script type="application/json">``, which never runs)."""
INLINE_STYLE = re.compile(r"<style>(.*?)</style>", re.DOTALL)


def _game_bar(t: Tournament, index: int, live: bool) -> str:
    """The bar above the viewer: back to the tournament and its games, the record, and whether it is live."""
    tid = html.escape(t.id)
    link = 'style="color:#fff"'
    parts = [f'<a {link} href="/t/{tid}">&larr; {html.escape(t.name)}</a>', f'<a {link} href="/t/{tid}/games">games</a>']
    if not live:
        parts.append(f'<a {link} download href="/api/t/{tid}/games/{index}.json">record (JSON line)</a>')
    state = "live: following the game as it is played" if live else "finished"
    parts.append(f'<span id="arena-live">{state}</span>')
    return (f'<nav id="arena-bar" data-tournament="{tid}" data-game="{index}" data-live="{int(live)}" '
            f'style="padding:6px 16px;background:#1f4d36;color:#fff;font:14px system-ui,sans-serif">'
            + " · ".join(parts) + "</nav>")


def _signin_page(web: Web, request: Request, next_path: str, problem: str) -> str:
    open_leagues = [(name, served.config.signup.mode) for name, served in web.league.leagues.items()] if (
        web.league is not None and web.signer is not None) else []
    return _page(web, request, "signin.html", {"signup": league_web.signup_links(open_leagues)}, next=next_path,
                 problem=problem)


async def signin_form(web: Web, request: Request) -> Response:
    return HTMLResponse(_signin_page(web, request, _local(request.query_params.get("next", "/")), ""))


async def signin(web: Web, request: Request) -> Response:
    """Check the token from the form: the server's sets the session cookie; a league author's sets the author's
    cookie (its name, an expiry and an HMAC, never the token); then back to the page asked for."""
    form = await _form(request)
    token = form.get("token", "").strip()
    next_path = _local(form.get("next", "/"))
    if web.rules.token is None:
        return RedirectResponse(next_path, status_code=303)
    response = RedirectResponse(next_path, status_code=303)
    secure = request.url.scheme == "https"
    if web.rules.token_matches(token):
        response.set_cookie(COOKIE, web.rules.session_cookie(), httponly=True, samesite="strict", path="/",
                            secure=secure)
        return response
    who, problem = await _member_of_token(web, token)
    if who is None:
        return HTMLResponse(_signin_page(web, request, next_path, problem), status_code=401)
    assert web.signer is not None
    response.set_cookie(AUTHOR_COOKIE, web.signer.author_cookie(who, hash_token(token), time.time()),
                        max_age=AUTHOR_SESSION_S, httponly=True, samesite="strict", path="/", secure=secure)
    return response


async def _member_of_token(web: Web, token: str) -> tuple[str | None, str]:
    """Who the author cookie of this member's token names (:func:`session_name`), or None and why not ("wrong
    token", its revocation, its team awaiting approval or rejected)."""
    if web.league is None or not token:
        return None, "wrong token"
    try:
        caller = await web.league.caller(token)
    except Unauthenticated as error:
        return None, "wrong token" if str(error).startswith("wrong token") else str(error)
    except LeagueError as error:
        return None, str(error)
    if caller.author is None or caller.member is None:
        return None, "wrong token"
    return session_name(caller.author.name, caller.member.name, caller.member.captain), ""


async def signout(web: Web, request: Request) -> Response:
    response = RedirectResponse("/", status_code=303)
    for name in (COOKIE, AUTHOR_COOKIE, SHARE_COOKIE):
        response.delete_cookie(name, path="/")
    return response


def _local(path: str) -> str:
    """Only a path on this site (``//host`` or a scheme would send the browser elsewhere after signing in)."""
    return path if path.startswith("/") and not path.startswith("//") and "\\" not in path else "/"


# --- gates: share links and forms -----------------------------------------------------------------------------


def _shared_access(web: Web, request: Request, shared: bool) -> Access:
    """A share link's access (the public view) to a route of its own tournament or league; a refusal page that
    links back to its page for any other, 403 for a tampered link and 410 for an expired one. A valid link is kept
    as the request's share: its page, or its refusal, is rendered for it (:meth:`Web.viewer`)."""
    assert web.signer is not None  # no level is NONE without a server token
    try:
        share = web.signer.share(request.cookies[SHARE_COOKIE], time.time())
    except ShareRefused as refusal:
        raise NotShown(refusal.status, refusal.message, ("/signin", "sign in")) from None
    request.state.share = share
    params = request.path_params
    own = params.get("tid") if share.kind == "t" else params.get("league") if "tid" not in params else None
    if not shared or own != share.name:
        raise NotShown(403, f"this share link opens {share.describe()} only, read-only: not this page",
                       (share.home(), share.describe()))
    return Access.PUBLIC


def _check_form_origin(request: Request) -> None:
    """A state-changing request from a page of another site is refused (its ``Origin:`` is not this site's)."""
    if not same_origin(request.headers.get("origin"), request.headers.get("host")):
        raise NotShown(403, "refused: this form was sent from another site (its Origin is not this dashboard's)")


def _check_csrf(web: Web, session: str | None, given: str) -> None:
    """A signed-in browser's form must carry its session's CSRF token (a request authorised by its
    ``Authorization:`` header, which no other site can make a browser send, has no session and needs none)."""
    if session is None:
        return
    assert web.signer is not None
    if not given or not web.signer.csrf_matches(session, given):
        raise NotShown(403, "refused: the form's CSRF token is missing or wrong (reload the page and send it again)")


# --- authors: their bots, build logs, uploads, retirements and challenges --------------------------------------


def _csrf_of(web: Web, session: str | None) -> str:
    return web.signer.csrf(session) if session is not None and web.signer is not None else ""


async def author_page(web: Web, request: Request) -> Response:
    """The signed-in author's (or the operator's) versions with their logs, the upload, retire and challenge
    forms, and its challenges."""
    caller, session = await web.league_caller(request)
    core = web.league_core()
    league = request.path_params["league"]
    try:
        versions = await core.list_versions(caller, league, "")
        challenges = await core.list_challenges(caller, league)
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    try:
        board = await league_web.leaderboard(core, league)
    except NotShown:  # a league without a ladder on this server: its challenges name versions of its own only
        board = {"standings": []}
    feed = ""
    if caller.author is not None:  # the operator has no team, so no team feed
        try:
            feed = _base(request) + (await core.feed_address(caller, league)).path
        except LeagueError as error:
            raise league_web.shown_error(error) from None
    content = league_web.author_html(league, caller.describe(), versions, challenges, board, _csrf_of(web, session),
                                     web.viewer(request), feed)
    return await _league_html(web, request, league, content, title=f"{league} · mine")


def _base(request: Request) -> str:
    """The dashboard's address as the request reached it (no trailing slash): the feeds' links start with it."""
    return str(request.base_url).rstrip("/")


async def public_feed(web: Web, request: Request) -> Response:
    """The league's public notices as an Atom feed (what a spectator of the dashboard may see)."""
    league = request.path_params["league"]
    core = web.league_core()
    try:
        name = core.league(league).config.name
        notices = await core.public_feed(name)
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    body = feeds.atom(id_=feeds.feed_id(name), title=f"{name}: the league's notices", author=name,
                      self_url=str(request.url), base=_base(request), notices=notices, now=datetime.now(UTC))
    return Response(body, media_type=feeds.CONTENT_TYPE)


async def team_feed(web: Web, request: Request) -> Response:
    """A team's private feed, its secret token in its address (a feed reader sends no cookie): the team's notices
    and the league's public ones; 404 for a wrong token, the same as for a league that is not there."""
    league, token = request.path_params["league"], request.path_params["token"]
    core = web.league_core()
    try:
        name = core.league(league).config.name
        team, notices = await core.team_feed(name, token)
    except LeagueError:
        raise NotShown(404, "no such feed (its address may have been replaced: arena league feed-url)") from None
    body = feeds.atom(id_=feeds.feed_id(name, team.id), title=f"{name}: team {team.name}'s notices", author=name,
                      self_url=str(request.url), base=_base(request), notices=notices, now=datetime.now(UTC))
    return Response(body, media_type=feeds.CONTENT_TYPE, headers={"Cache-Control": "private, no-store",
                                                                   "X-Robots-Tag": "noindex"})


async def new_feed_token(web: Web, request: Request) -> Response:
    """A member replaces its team's feed token (the old address stops working) from its page."""
    caller, session = await web.league_caller(request)
    form = await _form(request)
    _check_csrf(web, session, form.get("csrf", ""))
    league = request.path_params["league"]
    try:
        feed = await web.league_core().feed_address(caller, league, regenerate=True)
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    return await _done(web, request, league, f"your team's new feed address: {_base(request)}{feed.path} (the old "
                                             f"one no longer works)")


async def _log(web: Web, request: Request) -> dict[str, Any]:
    caller, _ = await web.league_caller(request)
    try:
        reply = await web.league_core().build_log(caller, request.path_params["vid"])
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    return league_web.log_json(reply)


async def version_log_page(web: Web, request: Request) -> Response:
    log = await _log(web, request)
    content = league_web.log_html(request.path_params["league"], log, web.viewer(request))
    return await _league_html(web, request, request.path_params["league"], content,
                              title=f'{log["version"]["version"]} · build log')


async def api_version_log(web: Web, request: Request) -> Response:
    return JSONResponse(await _log(web, request))


async def _done(web: Web, request: Request, league: str, message: str) -> Response:
    """A form's outcome: its one line and the way back to the author's page (and, as on every signed-in page, the
    sign-out button)."""
    content = league_web.done_html(league, message, web.viewer(request))
    return await _league_html(web, request, league, content, title=league)


async def _form(request: Request) -> dict[str, str]:
    """An urlencoded form's fields (the last of each name); a form is small, so its body is bounded."""
    body = await _bounded_body(request, FORM_BYTES)
    return {k: v[-1] for k, v in urllib.parse.parse_qs(body.decode("utf-8", "replace")).items()}


FORM_BYTES = 16 * 1024
FORM_SLACK = 64 * 1024
"""Room in an upload's body for the form around the archive (its boundaries, headers and bot name)."""


async def _bounded_body(request: Request, limit: int) -> bytes:
    body = b""
    stream = request.stream()
    async for chunk in stream:
        body += chunk
        if len(body) > limit:
            await forms.drained(stream)
            raise NotShown(413, f"refused: a form of more than {limit:,} bytes")
    return body


def _number(form: dict[str, str], name: str, default: int | None = None) -> int:
    text = form.get(name, "").strip()
    if not text and default is not None:
        return default
    if not text.isdigit():
        raise NotShown(400, f"{name}: expected a whole number, got {text[:40]!r}")
    return int(text)


async def retire(web: Web, request: Request) -> Response:
    caller, session = await web.league_caller(request)
    form = await _form(request)
    _check_csrf(web, session, form.get("csrf", ""))
    league = request.path_params["league"]
    try:
        version = await web.league_core().retire(caller, request.path_params["vid"])
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    return await _done(web, request, league, f"retired: version {version.id} ({version.bot}-v{version.number})")


async def challenge(web: Web, request: Request) -> Response:
    caller, session = await web.league_caller(request)
    form = await _form(request)
    _check_csrf(web, session, form.get("csrf", ""))
    league = request.path_params["league"]
    version, opponent, deal_sets = _number(form, "version"), _number(form, "opponent"), _number(form, "deal_sets", 0)
    try:
        made = await web.league_core().challenge(caller, league, version, opponent, deal_sets)
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    return await _done(web, request, league, f"challenge {made.id} queued: {made.version} against {made.opponent}, "
                                  f"{made.deal_sets} deal sets")


async def upload(web: Web, request: Request) -> Response:
    """The form's archive, through the league's own upload (:meth:`LeagueCore.upload`, the gRPC Upload's path:
    the same limits, checks and one-line errors). The body is spooled to a private file, bounded by the league's
    archive limit and :data:`FORM_SLACK`, before a byte of it is parsed; the CSRF token is in the form's address,
    so it is checked before the body is read."""
    caller, session = await web.league_caller(request)
    _check_csrf(web, session, request.query_params.get("csrf", ""))
    core = web.league_core()
    league = request.path_params["league"]
    try:
        served = core.league(league)
        limit_mb = served.config.upload.archive_mb
        spooled = await forms.spooled_body(request, core.store.tmp,
                                           archive_limits(served.config).max_compressed_bytes + FORM_SLACK, limit_mb)
        try:
            fields, archive = await trio.to_thread.run_sync(forms.form_parts, spooled,
                                                            request.headers.get("content-type", ""))
        finally:
            spooled.unlink(missing_ok=True)
        try:
            reply = await core.upload(caller, league, fields.get("bot", "").strip(), forms.part_chunks(archive),
                                      core.store.tmp)
        finally:
            archive.unlink(missing_ok=True)
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    v = reply.version
    what = "uploaded" if reply.created else "already uploaded (the same archive is one version)"
    return await _done(web, request, league, f"{what}: version {v.id} of bot {v.bot!r} (number {v.number}), {v.state}")


# --- a team's sign-up -------------------------------------------------------------------------------------------


def _signup_league(web: Web, request: Request) -> tuple[Signer, Any]:
    """The league a sign-up page is of, open to sign-ups, and the signer of its form's CSRF token."""
    if web.signer is None:
        raise NotShown(404, "this server has no token (arena serve --token-file), so no sign-ins and no sign-up "
                            "page: sign up with arena league sign-up")
    try:
        served = web.league_core().league(request.path_params["league"])
        require_open(served.config.signup, served.config.name)
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    return web.signer, served


async def signup_form(web: Web, request: Request) -> Response:
    """The sign-up form, open to anyone (no token: the league's ``[signup]`` decides), with its CSRF token made from
    a random cookie this page sets (:data:`SIGNUP_COOKIE`)."""
    signer, served = _signup_league(web, request)
    seed = request.cookies.get(SIGNUP_COOKIE) or secrets.token_urlsafe(32)
    league = served.config.name
    content = league_web.signup_html(league, served.config.signup.mode, signer.csrf(f"signup\0{seed}"),
                                     web.viewer(request))
    response = HTMLResponse(_page(web, request, "league.html", {"content": content, "phase": await _league_phase(web, league)},
                                  title=f"{league} · sign up"))
    response.set_cookie(SIGNUP_COOKIE, seed, httponly=True, samesite="strict", path="/",
                        secure=request.url.scheme == "https")
    return response


async def signup(web: Web, request: Request) -> Response:
    """A team's sign-up from the form, through the league's own (:meth:`LeagueCore.sign_up`, the gRPC SignUp's
    path: the same rules and one-line refusals), counted against the client's address; the captain's token shown
    once, on a page no cache keeps."""
    signer, served = _signup_league(web, request)
    form = await _form(request)
    seed = request.cookies.get(SIGNUP_COOKIE, "")
    given = form.get("csrf", "")
    if not seed or not given or not signer.csrf_matches(f"signup\0{seed}", given):
        raise NotShown(403, "refused: the form's CSRF token is missing or wrong (reload the page and send it again)")
    address = request.client.host if request.client is not None else "unknown"
    league = served.config.name
    try:
        signed = await web.league_core().sign_up(league, form.get("team", "").strip(), form.get("invite", "").strip(),
                                                 address, form.get("captain", "").strip())
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    content = league_web.signed_up_html(league, signed.team, signed.token, web.viewer(request))
    return HTMLResponse(_page(web, request, "league.html", {"content": content, "phase": await _league_phase(web, league)},
                              title=f"{league} · signed up"),
                        headers={"Cache-Control": "no-store"})


# --- share links ------------------------------------------------------------------------------------------------


async def api_share(web: Web, request: Request) -> Response:
    """The operator's (``Authorization: Bearer`` its token): a signed read-only link to one tournament
    (``tournament=ID``) or league (``league=NAME``) for ``hours`` (default 24, at most 30 days)."""
    if web.signer is None:
        raise NotShown(400, "this server has no token (arena serve --token-file): its dashboard is open to anyone "
                            "who can reach it, and a share link would have nothing to sign it with")
    authorization = request.headers.get("authorization")
    if web.rules.level(authorization, None) is not Access.FULL:
        raise NotShown(401, "only the operator makes share links: send 'Authorization: Bearer <token>' (the "
                            "server's --token-file)")
    form = await _form(request)
    try:
        expires = share_expiry(_number(form, "hours", DEFAULT_SHARE_HOURS), time.time())
    except ValueError as error:
        raise NotShown(400, str(error)) from None
    tid, league = form.get("tournament", "").strip(), form.get("league", "").strip()
    if bool(tid) == bool(league):
        raise NotShown(400, "name one tournament (tournament=ID) or one league (league=NAME) to share")
    if tid:
        kind, name = "t", web.tournament(tid).id
    else:
        try:
            kind, name = "l", web.league_core().league(league).config.name
        except LeagueError as error:
            raise league_web.shown_error(error) from None
    link = web.signer.share_link(kind, name, expires)
    return JSONResponse({"url": f"{_base(request)}{SHARE_PATH}{link}", SHARE_KINDS[kind]: name,
                         "expires_at": expires})


async def open_share(web: Web, request: Request) -> Response:
    """A share link: checked, then kept as a cookie (the pages' own requests carry it) and on to its page."""
    if web.signer is None:
        raise NotShown(404, "this server has no token, so no share links: its pages are open", INDEX)
    link = request.path_params["link"]
    try:
        share = web.signer.share(link, time.time())
    except ShareRefused as refusal:
        raise NotShown(refusal.status, refusal.message, ("/signin", "sign in")) from None
    response = RedirectResponse(share.home(), status_code=303)
    response.set_cookie(SHARE_COOKIE, link, max_age=max(1, share.expires - int(time.time())), httponly=True,
                        samesite="lax", path="/", secure=request.url.scheme == "https")
    return response


# --- the API --------------------------------------------------------------------------------------------------


async def api_tournaments(web: Web, request: Request) -> Response:
    return JSONResponse({"tournaments": [data.tournament_json(t) for t in web.arena.tournaments.values()],
                         "access": web.access(request).value})


async def api_tournament(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    event, section = await web.event(t)
    return JSONResponse(data.tournament_detail(t, web.access(request), event, section))


async def api_ratings(web: Web, request: Request) -> Response:
    return JSONResponse(await web.chart(web.tournament(request.path_params["tid"])))


async def api_standings_json(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    standings = t.standings_view().to_json()
    event, _ = await web.event(t)
    if event is not None:  # as in the standings.json a run writes
        standings["event"] = event
    return JSONResponse(standings, headers=_attachment(f"{t.id}-standings.json"))


async def api_standings_csv(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    return PlainTextResponse(data.standings_csv(t.standings_view()), media_type="text/csv",
                             headers=_attachment(f"{t.id}-standings.csv"))


async def api_games(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    query = request.query_params
    entrant, result, faults = query.get("entrant", ""), query.get("result", ""), query.get("faults", "")
    data.check_filters(entrant, result, faults, t.entrants)
    rows = await web.rows(t)
    return JSONResponse({"tournament": data.tournament_json(t), "recorded": len(rows),
                         "games": data.filter_games(rows, entrant, result, faults)})


async def api_games_jsonl(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    text = await trio.to_thread.run_sync(lambda: "".join(data.released_lines(t)))
    return PlainTextResponse(text, media_type="application/jsonl", headers=_attachment(f"{t.id}-games.jsonl"))


async def api_games_csv(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    out = io.StringIO()
    write_csv(await web.game_rows(t), out)
    return PlainTextResponse(out.getvalue(), media_type="text/csv", headers=_attachment(f"{t.id}-games.csv"))


async def api_game_record(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    index = request.path_params["index"]
    record = await trio.to_thread.run_sync(data.released_record, t, index)
    return PlainTextResponse(data.record_line(record), media_type="application/json",
                             headers=_attachment(f"{t.id}-game-{index}.json"))


async def api_game_view(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    return JSONResponse(await data.game_view(t, request.path_params["index"], web.access(request), web.live))


async def api_entrant(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    rows = await web.rows(t)
    return JSONResponse(data.entrant_json(t, request.path_params["name"], rows))


def _attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}"'}


# --- live: server-sent events ---------------------------------------------------------------------------------


async def api_list_events(web: Web, request: Request) -> Response:
    return _stream(web, lambda: [(t.id, t.state, t.games_done, len(t.in_progress))
                                 for t in web.arena.tournaments.values()])


async def api_tournament_events(web: Web, request: Request) -> Response:
    t = web.tournament(request.path_params["tid"])
    full = web.access(request) is Access.FULL
    return _stream(web, lambda: [t.state, t.games_done, sorted(t.in_progress) if full else len(t.in_progress)])


async def api_game_events(web: Web, request: Request) -> Response:
    """A change at every move of the game (while it may be followed) and when it is recorded."""
    t = web.tournament(request.path_params["tid"])
    index = request.path_params["index"]
    full = web.access(request) is Access.FULL

    def moves() -> list[Any]:
        live = web.live.get(t, index) if full and data.followable(t, index) else None
        return [index in t.done, live.moves if live is not None else -1]

    return _stream(web, moves)


async def api_league_events(web: Web, request: Request) -> Response:
    """A change whenever a ladder table starts or ends or the board is refitted (the league pages redraw)."""
    core = web.league_core()
    league = request.path_params["league"]
    try:
        core.live_state(league)
    except LeagueError as error:
        raise league_web.shown_error(error) from None
    return _stream(web, lambda: core.live_state(league))


def _stream(web: Web, fingerprint: Callable[[], Any]) -> Response:
    """An event stream that sends ``change`` (with the fingerprint as its data) whenever the fingerprint of what
    the page shows differs from the last one sent; the first is sent at once."""
    async def events() -> AsyncIterator[str]:
        last: Any = None
        quiet = 0.0
        while not web.arena.stopping:
            now = fingerprint()
            if now != last:
                last, quiet = now, 0.0
                yield f"event: change\ndata: {json.dumps(now)}\n\n"
            elif quiet >= KEEP_ALIVE_S:
                quiet = 0.0
                yield ": still here\n\n"
            await trio.sleep(POLL_S)
            quiet += POLL_S

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


# --- serving ----------------------------------------------------------------------------------------------------


@dataclass
class WebServer:
    """The running dashboard: its address and how to stop it."""

    address: str
    stop: trio.Event


async def serve_web(arena: Arena, rules: AccessRules, listener: socket.socket, tls: tuple[str, str] | None = None,
                    hosts: tuple[str, ...] = (), league: LeagueCore | None = None, *,
                    task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the dashboard on an already bound socket until ``stop`` is set (the WebServer given to
    ``task_status``); over HTTPS with ``tls`` (the certificate chain and key files the gRPC server uses), so the
    token and the sign-in cookie never cross the network in plain text when gRPC's do not either. It answers for
    the name of the address it listens on and for ``hosts`` (``--http-host``) only; ``league`` (a LeagueCore) adds
    the league's pages."""

    config = Config()
    config.bind = [f"fd://{listener.fileno()}"]
    config.accesslog = None
    config.loglevel = "WARNING"
    config.graceful_timeout = SHUTDOWN_GRACE_S
    if tls is not None:
        config.certfile, config.keyfile = tls
    host, port = listener.getsockname()[:2]
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    stop = trio.Event()
    app = OwnNamesOnly(create_app(arena, rules, league), HostNames.of(host, hosts))
    async with trio.open_nursery() as nursery:
        # Starlette types ASGI scopes and messages as mutable mappings, hypercorn as TypedDicts: the same protocol,
        # but neither type is assignable to the other
        await nursery.start(lambda task_status: serve(app, config,  # type: ignore[arg-type]
                                                      shutdown_trigger=stop.wait, task_status=task_status))
        task_status.started(WebServer(f"{'https' if tls else 'http'}://{shown}/", stop))
