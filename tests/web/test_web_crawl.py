"""Every kind of page of the dashboard, visited in a real headless Chromium (tests/support/chromium.py) as each kind
of visitor that may see it, and every kind of link on those pages followed once: what HTTP tests cannot see, since
they send what a page should send, not what a browser does.

One ``arena serve --league --http --token-file`` (not the public site) runs a ladder of two real bots in their
sandbox and, from a registry, two quick tournaments: one finished, one whose game the gated bot keeps live. Its
visitors: the operator (signed in with the server's token through the sign-in form), a league author (signed in
with its own token), and share links (one to the finished tournament, one to the league), which see what the public
site shows. On each page: no Content-Security-Policy refusal, no uncaught script exception, no request to the
dashboard answered 4xx or 5xx, its event stream open, and its main content drawn (not empty, not an error page, not
the sign-in form). No visitor is shown a link it may not follow: a share link's pages link to its own tournament or
league only (what it may not open is refused when typed by hand: tests/web/test_web_authors.py).

The same visitors' pages on a phone's screen (390 CSS pixels, a phone's browser): none wider than the screen, and
every link on them (all of them, not one of each kind) answered below 400 when the page fetches it.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Iterator

import pytest

from support.chromium import Chromium, needs_chromium
from support.league import LADDER_LEAGUE, League, bearer, games_on_board, ladder_uploaded, league_in
from support.servers import gated_bot, named, open_gate, random_bot, registry, submit, tournament
from support.waiting import wait_for
from support.web import get_json, http, sign_in, wait_state

LADDER_S = 600
"""Generous: the bots are built and checked in their sandbox, then a table is played, on a busy 2-core machine."""
SETTLE_S = 30
"""How long a page may take to draw and to get every answer it asked for (generous, on a busy machine)."""
LINKS_PER_VISITOR = 30
"""At most this many links followed for each visitor (one of each kind: see :func:`link_kind`)."""
LEAGUE_PATH = "/leagues/test"
STREAMED = "['tournaments', 'tournament', 'games', 'entrant'].includes(document.body.dataset.page) || " \
           "!!document.body.dataset.events"
"""Whether the page follows an event stream: the dashboard's pages drawn by dashboard.js, and a league's page
whose body names its stream (league.js)."""
SETTLED = f"""(() => {{
    if (document.readyState !== 'complete') return false;
    const main = document.getElementById('main');
    if (main && main.querySelector('a#back[href=""]')) return false;   // a dashboard page its script has not drawn
    const state = document.getElementById('live-state');
    return !({STREAMED}) || !state || ['live', 'reconnecting'].includes(state.textContent);
}})()"""
"""Whether the page is done loading: drawn (a dashboard page's shell replaced), and its event stream, if it has
one, open or failed."""
NOT_SHOWN = rf"""(() => {{
    const text = document.body ? document.body.innerText.trimStart() : '';  // a feed: data for a reader, not a page
    if (document.documentElement.localName === 'feed' || text.startsWith('<?xml'))  // shown as XML, or as its text
        return document.documentElement.localName === 'feed' || /<feed xmlns="http:\/\/www\.w3\.org\/2005\/Atom"><id>/.test(text)
            ? '' : 'not an Atom feed: ' + text.slice(0, 300);
    const page = document.body.dataset.page;
    if (page === 'error' || page === 'signin') return `the ${{page}} page: ${{document.body.innerText.slice(0, 300)}}`;
    const main = document.getElementById('main') || document.querySelector('main');
    if (!main || !main.textContent.trim()) return 'no main content: ' + document.body.innerText.slice(0, 300);
    if (main.children.length === 1 && main.firstElementChild.matches('p.message'))
        return 'its script could not draw it: ' + main.textContent;
    const state = document.getElementById('live-state');
    if (({STREAMED}) && state && state.textContent !== 'live')
        return `its event stream is not open (the page says ${{JSON.stringify(state.textContent)}})`;
    return '';
}})()"""
"""What is wrong with what the page shows (empty when nothing is)."""
LINKS = """[...document.querySelectorAll('a[href]')].filter((a) => a.origin === location.origin)
    .map((a) => [a.pathname + a.search, a.hasAttribute('download')])"""
"""The page's links to the dashboard: each one's path and query, and whether it is a download."""
FETCHED = """Promise.all(%s.map((href) => fetch(href, {credentials: 'same-origin'})
    .then((reply) => reply.arrayBuffer())))"""
"""The downloads fetched whole by the page itself, with its cookies, as a click would (their answers are the page's
network events, checked with its others)."""
PHONE = {"width": 390, "height": 844, "scale": 3, "mobile": True}
"""A phone's screen: 390 CSS pixels wide (an iPhone's 12 to 15), three device pixels to one, a phone's browser."""
WIDER = """(() => {
    const width = document.documentElement.clientWidth, wide = document.documentElement.scrollWidth;
    if (wide <= width) return '';
    const scrolls = (el) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
    const inside = (el) => { for (let up = el.parentElement; up; up = up.parentElement) if (scrolls(up)) return true;
                             return false; };
    const name = (el) => el.localName + (el.id ? '#' + el.id : '') + [...el.classList].map((c) => '.' + c).join('');
    const out = [...document.body.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > width + 1
        && !inside(el) && !(el.parentElement.getBoundingClientRect().right > width + 1));
    return `${wide} CSS pixels wide on a screen of ${width}: ` +
        out.slice(0, 4).map((el) => `${name(el)} ends at ${Math.round(el.getBoundingClientRect().right)}`).join(', ');
})()"""
"""What makes the page wider than its screen (empty when nothing does): the outermost elements that end past its
right edge, outside any box that scrolls or clips them, each with where it ends. The screen's width is the root's
``clientWidth``: a phone's browser widens ``window.innerWidth`` to the page's when the page is wider (it zooms out to
show it all), so that a page that pans sideways would never be seen to."""
ANSWERS = """Promise.all([...new Set([...document.querySelectorAll('a[href]')].filter((a) => a.origin === location.origin)
    .map((a) => a.pathname + a.search))].map((href) => fetch(href, {credentials: 'same-origin'})
    .then((reply) => [href, reply.status], (error) => [href, String(error)])))"""
"""Every link of the page to the dashboard, fetched by the page itself with its cookies, as a click would follow
it: each one's path and query, and its answer's status (or why it got none)."""


@dataclass(frozen=True)
class Page:
    """A page to visit, and what its main content has once drawn (CSS selectors, each matching something)."""

    path: str
    shows: tuple[str, ...]


@dataclass
class Visitor:
    """Who visits, how it comes in (``entry``: its token, typed into the sign-in form, or its share link), and the
    pages it may see."""

    name: str
    entry: str
    pages: list[Page]


@dataclass
class Site:
    """The module's server and what its pages are about."""

    league: League
    web: str
    operator: str
    done: str
    """The finished tournament's id."""
    live: str
    """The tournament whose game ``live_game`` is being played (the gated bot answers no more)."""
    live_game: int
    table_game: str
    """A done ladder table's game in the viewer (its address)."""
    version: int
    """author-rand's version (its build log's page)."""

    def share(self, **fields: str) -> str:
        """A share link the operator made (``tournament=ID`` or ``league=NAME``)."""
        code, _, body = http(f"{self.web}/api/share", form=fields, headers={"Authorization": f"Bearer {self.operator}"})
        assert code == 200, body
        return json.loads(body)["url"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The league's two bots ready and a first table rated (then the league is frozen: no more tables to load the
    machine), a finished tournament of two random bots, and one whose game is kept live by the gated bot."""
    root = tmp_path_factory.mktemp("crawl")
    tag = uuid.uuid4().hex
    gate = root / "gated" / "gate"
    bots = random_bot("alpha", tag) + random_bot("beta", tag) + gated_bot(gate.parent, tag)
    league = league_in(root, LADDER_LEAGUE, web=True, public=False, extra=registry(root, bots))
    web = league.server.web  # type: ignore[attr-defined]
    operator = league.operator.read_text().strip()
    full = {"Authorization": f"Bearer {operator}"}
    try:
        stub = league.server.stub()
        done = submit(stub, tournament(games=2, variant="draw", name="done"), metadata=bearer(operator)).id
        open_gate(gate, 1)
        live = submit(stub, tournament(games=1, variant="draw", duplicate=False, concurrency=1, name="live",
                                       bots=named("alpha", "gated"), extra="[time]\nmove_ms = 600000\n"),
                      metadata=bearer(operator)).id
        ladder_uploaded(league)
        wait_for(lambda: games_on_board(web, full) > 0, LADDER_S, "a first table rated on the board")
        frozen = league.league("freeze", token=league.operator)
        assert frozen.returncode == 0, frozen.stderr
        wait_state(web, done, lambda d: d["tournament"]["state"] == "finished", 120, "the tournament to finish",
                   headers=full)
        playing = wait_state(web, live, lambda d: any(g["live"] for g in d["in_progress"]), 120, "a live game",
                             headers=full)
        recent = get_json(f"{web}/api/leagues/test/bots/rand", headers=full)["history"]["recent"]
        version = league.versions(league.token("author-rand"), "rand")[-1].id
        yield Site(league, web, operator, done, live, playing["in_progress"][0]["index"], recent[0]["url"], version)
    finally:
        league.server.stop()


# --- a visit ------------------------------------------------------------------------------------------------------


def settle(browser: Chromium, origin: str) -> str:
    """Wait until the page is drawn and every request it sent to the dashboard was answered; what it still waits
    for when that does not come (an uncaught exception ends the wait: the page will not draw)."""
    deadline = time.monotonic() + SETTLE_S
    while not browser.exceptions():
        if browser.js(SETTLED) and not browser.unanswered(origin):
            return ""
        if time.monotonic() > deadline:
            return (f"not drawn within {SETTLE_S} s (requests unanswered: {browser.unanswered(origin)}; "
                    f"the page: {browser.js('document.body.innerText.slice(0, 300)')!r})")
        time.sleep(0.05)
    return ""


def fetch_downloads(browser: Chromium, paths: list[str]) -> None:
    """The page's download links fetched by the page itself (:data:`FETCHED`): a navigation to one would be a
    download, not a page."""
    if paths:
        browser.call("Runtime.evaluate", {"expression": FETCHED % json.dumps(paths), "awaitPromise": True,
                                          "returnByValue": True})


def problems_of(browser: Chromium, origin: str, shows: tuple[str, ...]) -> list[str]:
    """What went wrong on the page just loaded: CSP refusals, uncaught exceptions, requests answered 4xx or 5xx
    (the page itself among them: a link the visitor may not follow), and what its main content lacks."""
    found = [f"CSP refused: {text}" for text in browser.csp_violations()]
    found += [f"uncaught exception: {text}" for text in browser.exceptions()]
    found += [f"{url.removeprefix(origin)} answered {status}" for url, status in browser.answers(origin)
              if status >= 400]
    found += [f"nothing matches {selector}" for selector in shows
              if not browser.js(f"!!document.querySelector({json.dumps(selector)})")]
    wrong = browser.js(NOT_SHOWN)
    return found + ([wrong] if wrong else [])


def visit(browser: Chromium, origin: str, path: str, shows: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """One page loaded in the tab (its download links fetched): what went wrong there, and its links to follow."""
    browser.goto(origin + path)
    waited = settle(browser, origin)
    links = browser.js(LINKS) if not waited else []
    fetch_downloads(browser, [href for href, download in links if download])
    waited = waited or settle(browser, origin)
    problems = ([waited] if waited else []) + problems_of(browser, origin, shows)
    unique = list(dict.fromkeys(problems))  # once each: a page redrawn asks again
    return unique, [href for href, download in links if not download]


def link_kind(path: str) -> str:
    """A link's kind: its path and query with every number as N, so that game 3 and game 4 of a list, or table 7's
    and table 8's games, are one kind, followed once."""
    return re.sub(r"\d+", "N", path)


@dataclass
class Crawled:
    """What a visitor's crawl found: every problem, each said with the visitor and the page, and the links it
    followed."""

    problems: list[str] = field(default_factory=list)
    followed: list[str] = field(default_factory=list)


def crawl(browser: Chromium, origin: str, visitor: Visitor) -> Crawled:
    """The visitor's pages, then each kind of link they show once (as many as :data:`LINKS_PER_VISITOR`), and
    the links on the pages those lead to."""
    crawled = Crawled()
    seen = {link_kind(page.path) for page in visitor.pages}
    links: list[str] = []
    for page in visitor.pages:
        found, shown = visit(browser, origin, page.path, page.shows)
        crawled.problems += [f"{visitor.name}, {page.path}: {p}" for p in found]
        links += shown
    while links and len(crawled.followed) < LINKS_PER_VISITOR:
        link = links.pop(0)
        if link_kind(link) in seen:
            continue
        seen.add(link_kind(link))
        crawled.followed.append(link)
        found, shown = visit(browser, origin, link)
        crawled.problems += [f"{visitor.name}, link {link}: {p}" for p in found]
        links += shown
    return crawled


# --- the visitors -------------------------------------------------------------------------------------------------


ROWS = "tbody tr"


def tournament_pages(tid: str) -> list[Page]:
    """A finished tournament's pages, as anyone who may see it sees them."""
    return [Page(f"/t/{tid}", (f"#standings {ROWS}", "#pairwise", "section.chart > *")),
            Page(f"/t/{tid}/games", (f"#games {ROWS}",)),
            Page(f"/t/{tid}/entrants/alpha", (f"#by-seat {ROWS}", f"#games {ROWS}")),
            Page(f"/t/{tid}/games/0", ("#moves .move", '#arena-bar[data-live="0"]'))]


def league_pages(site: Site) -> list[Page]:
    """The league's public pages: its leaderboard, queue, a bot's page, the finals and a done table's game."""
    return [Page(LEAGUE_PATH, (f"#leaderboard {ROWS}",)), Page(f"{LEAGUE_PATH}/queue", (f"#recent {ROWS}",)),
            Page(f"{LEAGUE_PATH}/bots/rand", (f"#by-opponent {ROWS}", f"#games {ROWS}")),
            Page(f"{LEAGUE_PATH}/finals", ("#finals-state",)), Page(site.table_game, ("#moves .move", "#arena-bar"))]


def author_pages(site: Site) -> list[Page]:
    """A signed-in author's own pages (the operator sees them too): its versions and forms, a build log."""
    return [Page(f"{LEAGUE_PATH}/mine", (f"#my-versions {ROWS}", "#upload", "#challenge")),
            Page(f"{LEAGUE_PATH}/versions/{site.version}/log", ("#build-log", "#check-report"))]


def visitors(site: Site) -> list[Visitor]:
    """Each kind of visitor with the pages it may see, the sign-in or share link it comes through first."""
    live = Page(f"/t/{site.live}/games/{site.live_game}", ("#moves .move", '#arena-bar[data-live="1"]'))
    spectator = [Page("/", (f"#tournaments {ROWS}",)), *tournament_pages(site.done), *league_pages(site)]
    return [
        Visitor("the operator", site.operator, [*spectator, live, *author_pages(site)]),
        Visitor("author-rand", site.league.token("author-rand"), [*spectator, *author_pages(site)]),
        Visitor("a share link to the finished tournament", site.share(tournament=site.done),
                tournament_pages(site.done)),
        Visitor("a share link to the league", site.share(league="test"), league_pages(site)),
    ]


def come_in(browser: Chromium, site: Site, visitor: Visitor) -> None:
    """The visitor's browser with no cookie, then signed in (the sign-in form, its token typed in) or through its
    share link (which sets its cookie)."""
    browser.call("Network.clearBrowserCookies")
    if visitor.entry.startswith(site.web + "/share/"):
        browser.goto(visitor.entry)
        return
    sign_in(browser, site.web, visitor.entry)


def phone_problems(browser: Chromium, origin: str, path: str, links: bool = True) -> list[str]:
    """The page at ``path`` on the phone's screen: what makes it wider than the screen, and (with ``links``) its
    links to the dashboard that answer 400 or more (all of them, not one of each kind: a dead link hides among its
    kind)."""
    browser.goto(origin + path)
    waited = settle(browser, origin)
    if waited:
        return [waited]
    wider = browser.js(WIDER)
    if not links:
        return [wider] if wider else []
    answers = browser.call("Runtime.evaluate", {"expression": ANSWERS, "awaitPromise": True,
                                                "returnByValue": True})["result"]["value"]
    return ([wider] if wider else []) + [f"its link {href} answered {status}" for href, status in answers
                                         if not isinstance(status, int) or status >= 400]


@needs_chromium
def test_no_page_is_wider_than_a_phone_nor_links_nowhere(site: Site, browser: Chromium) -> None:
    """Each visitor's pages on a phone (:data:`PHONE`), and the sign-in form and a refusal's page: none is wider
    than the screen (a wide table scrolls inside its card, a long word breaks), so the page never pans sideways;
    and every link on them to the dashboard answers below 400."""
    browser.open_page("about:blank")
    browser.emulate(PHONE["width"], PHONE["height"], scale=PHONE["scale"], mobile=PHONE["mobile"])
    browser.call("Network.clearBrowserCookies")
    # its one link, the brand's to the front page, answers a visitor not signed in the sign-in form itself (401)
    problems = [f"nobody signed in, /signin on a phone: {p}" for p in phone_problems(browser, site.web, "/signin",
                                                                                     links=False)]
    for visitor in visitors(site):
        come_in(browser, site, visitor)
        refused = [f"{LEAGUE_PATH}/bots/nobody"] if visitor.entry == site.operator else []
        for path in [page.path for page in visitor.pages] + refused:
            problems += [f"{visitor.name}, {path} on a phone: {p}" for p in phone_problems(browser, site.web, path)]
    assert problems == [], "\n".join(problems)


@needs_chromium
def test_every_page_and_link_works_for_each_visitor(site: Site, browser: Chromium) -> None:
    """Each visitor's pages and links, in one tab (the cookies cleared between visitors); every problem of every
    page is reported at once. Each visitor followed some links, and none answered it 4xx: not even a share link
    meets a refusal by following what its pages show."""
    browser.open_page("about:blank")
    browser.call("Log.enable")  # the CSP's refusals are log entries (csp_violations)
    problems: list[str] = []
    for visitor in visitors(site):
        come_in(browser, site, visitor)
        crawled = crawl(browser, site.web, visitor)
        problems += crawled.problems
        assert crawled.followed, visitor.name
    assert problems == [], "\n".join(problems)
