"""Authors and share links on the web dashboard: a real ``arena serve --league --http --token-file`` (not the public
site), two authors with real versions built and checked in their sandbox, HTTP from the standard library.

Each thing a client must not do is tried for real and must fail: another author's cookie, no cookie, a forged or
expired cookie reading a build log, retiring or challenging with another author's version, uploading to another
author's bot; a form without its CSRF token, with another session's, or sent from another site; a share link that
is tampered with, expired, or used for another page than its own. The upload form goes through the league's own
upload path: its refusals are the CLI's lines, word for word.

Then the forms as a real headless Chromium sends them (tests/support/chromium.py): what the HTTP requests above
cannot see, that the pages' forms, headers and policies let a browser send what those requests send.
"""

from __future__ import annotations

import html
import io
import json
import re
import secrets
import tarfile
import time
import urllib.parse
import uuid
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from typing import Iterator

import pytest

from arena.league.authors import hash_token
from arena.league.rules.lifecycle import READY, RETIRED
from arena.league.storage.db import open_database, sqlite_url
from arena.protocol import league_pb2 as lpb
from arena.web.access import AUTHOR_COOKIE, COOKIE, SHARE_COOKIE, Signer
from support.chromium import Chromium, needs_chromium
from support.league import GAME, League, bearer, bot_folder, league_in
from support.paths import ROOT
from support.servers import random_bot, registry, submit, tournament
from support.web import WebServer, get_json, http, links_of, multipart, set_cookie, wait_state

LEAGUE = GAME + """[upload]
archive_mb = 1
"""
RANDOM = ROOT / "bots" / "python" / "random_bot.py"
GREEDY = ROOT / "bots" / "python" / "greedy_bot.py"


def archive_of(folder: Path) -> bytes:
    """A folder as a tar.gz an author would upload."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in sorted(folder.iterdir()):
            tar.add(path, arcname=path.name)
    return out.getvalue()


class Site:
    """The module's server, its web address and the authors' cookies and CSRF tokens."""

    def __init__(self, league: League) -> None:
        self.league = league
        self.web = league.server.web  # type: ignore[attr-defined]
        self.operator = league.operator.read_text().strip()
        self.signer = Signer(self.operator)
        self.cookies: dict[str, str] = {}

    def sign_in(self, author: str) -> str:
        code, headers, _ = http(f"{self.web}/signin", form={"token": self.league.token(author), "next": "/"})
        assert code == 303, code
        self.cookies[author] = set_cookie(headers, AUTHOR_COOKIE)
        return self.cookies[author]

    def as_author(self, author: str) -> dict[str, str]:
        return {"Cookie": f"{AUTHOR_COOKIE}={self.cookies[author]}"}

    def csrf(self, author: str) -> str:
        return self.signer.csrf(self.cookies[author])

    def version(self, author: str, bot: str) -> lpb.BotVersion:
        return self.league.versions(self.league.token(author), bot)[-1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    """alice's bot ``ra`` uploaded with the CLI; bob's ``gb`` uploaded with the web's form; both ready."""
    root = tmp_path_factory.mktemp("authors")
    league = league_in(root, LEAGUE, web=True, public=False)
    try:
        site = Site(league)
        for name in ("alice", "bob"):
            league.add_author(name)
            site.sign_in(name)
        league.upload("alice", bot_folder(root / "ra", RANDOM), "ra")
        body, kind = multipart({"bot": "gb"}, "archive", "gb.tar.gz", archive_of(bot_folder(root / "gb", GREEDY)))
        code, _, page = http(f"{site.web}/leagues/test/upload?csrf={site.csrf('bob')}", body=body,
                             headers={**site.as_author("bob"), "Content-Type": kind})
        assert code == 200, page[:500]
        assert "uploaded: version 2 of bot &#x27;gb&#x27; (number 1), uploaded" in page.decode()
        for author, bot in (("alice", "ra"), ("bob", "gb")):
            assert league.settled(league.token(author), bot).state == lpb.VERSION_STATE_READY
        yield site
    finally:
        league.server.stop()


def test_sign_in_by_token_gives_a_cookie_without_the_token(site: Site) -> None:
    code, headers, _ = http(f"{site.web}/signin", form={"token": site.league.token("alice"), "next": "/leagues/test"})
    cookie = headers["set-cookie"]
    assert code == 303 and headers["location"] == "/leagues/test"
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    value = set_cookie(headers, AUTHOR_COOKIE)
    assert value.startswith("alice:") and site.league.token("alice") not in cookie
    assert hash_token(site.league.token("alice")) not in cookie
    code, _, body = http(f"{site.web}/signin", form={"token": "not-a-token", "next": "/"})
    assert code == 401 and "wrong token" in body.decode()
    # a signed-in author sees the spectators' pages of this (non-public) dashboard; no cookie sees the sign-in form
    assert get_json(f"{site.web}/api/tournaments", headers=site.as_author("alice"))["access"] == "public"
    assert http(f"{site.web}/leagues/test")[0] == 401
    assert http(f"{site.web}/leagues/test", headers=site.as_author("alice"))[0] == 200


def signed_out(site: Site, cookie: str, origin: str | None = None) -> tuple[int, str, list[str]]:
    """``POST /signout`` with the cookie header given: its status, where it sends the browser and every cookie it
    sets (each a header of its own, which :func:`http` would fold into one)."""
    connection = HTTPConnection(urllib.parse.urlsplit(site.web).netloc, timeout=30)
    try:
        connection.request("POST", "/signout", body=b"", headers={"Cookie": cookie, **(
            {"Origin": origin} if origin is not None else {})})
        reply = connection.getresponse()
        reply.read()
        return reply.status, reply.getheader("location", ""), reply.headers.get_all("set-cookie") or []
    finally:
        connection.close()


def test_only_this_site_may_sign_out_every_browser_session(site: Site) -> None:
    """The header of a signed-in page has the sign-out button; it clears the operator's, the author's and a share
    link's cookies; another site's page cannot sign a browser out (its Origin)."""
    code, headers, _ = http(f"{site.web}/signin", form={"token": site.league.token("alice"), "next": "/"})
    alice = f"{AUTHOR_COOKIE}={set_cookie(headers, AUTHOR_COOKIE)}"
    for path in ("/leagues/test/mine", "/leagues/test", "/"):
        assert 'action="/signout"' in http(f"{site.web}{path}", headers={"Cookie": alice})[2].decode(), path
    link = share(site, league="test")[1]["url"].rsplit("/", 1)[1]
    assert 'action="/signout"' not in http(f"{site.web}/leagues/test",  # a share link is no sign-in
                                           headers={"Cookie": f"{SHARE_COOKIE}={link}"})[2].decode()
    both = f"{alice}; {SHARE_COOKIE}={link}"
    assert signed_out(site, both, origin="https://elsewhere.example")[0] == 403
    code, location, cookies = signed_out(site, both, origin=site.web)
    assert (code, location) == (303, "/")
    cleared = {c.split("=", 1)[0]: c for c in cookies}
    assert set(cleared) == {COOKIE, AUTHOR_COOKIE, SHARE_COOKIE}
    assert all("Max-Age=0" in c and "Path=/" in c for c in cleared.values()), cookies


def test_an_author_sees_only_its_own_logs_and_reports(site: Site) -> None:
    db = open_database(sqlite_url(site.league.root / "data"))
    try:
        ra, gb = site.version("alice", "ra"), site.version("bob", "gb")
        stored = db.version(ra.id)
        log = get_json(f"{site.web}/api/leagues/test/versions/{ra.id}/log", headers=site.as_author("alice"))
        assert log["build_log"] == (stored.build_log or "") and log["version"]["state"] == "ready"
        assert stored.check_report and log["check_report"] == json.dumps(stored.check_report, indent=2)
        code, _, page = http(f"{site.web}/leagues/test/versions/{ra.id}/log", headers=site.as_author("alice"))
        header = '<b id="league-title">test</b> · Block (no drawing), 2 players · 2 s a move · <b>open</b>'
        startup = f'<dd id="check-startup">{stored.check_report["startup_ms"]:,.0f} ms</dd>'
        assert code == 200 and header in page.decode() and '<dl class="kv" id="check-report">' in page.decode() and startup in page.decode()
        assert '<table id="check-variants">' in page.decode() and '"startup_ms"' not in page.decode()
        code, _, page = http(f"{site.web}/leagues/test/mine", headers=site.as_author("alice"))
        text = page.decode()
        assert code == 200 and f'/leagues/test/versions/{ra.id}/log' in text and header in text
        assert f'/leagues/test/versions/{gb.id}/log' not in text and f"/versions/{gb.id}/retire" not in text

        # another author's cookie: 403 with the league's line; no cookie, a forged or an expired one: 401
        url = f"{site.web}/api/leagues/test/versions/{gb.id}/log"
        assert get_json(url, 403, headers=site.as_author("alice")) == {
            "error": f"author 'alice' may not read the build log of version {gb.id}: it is another author's"}
        bob_hash = hash_token(site.league.token("bob"))
        forged = site.cookies["alice"].replace("alice:", "bob:", 1)      # alice's HMAC under bob's name
        expired = site.signer.author_cookie("bob", bob_hash, time.time() - 8 * 24 * 3600)  # signed, but too old
        guessed = Signer("not-the-servers-secret").author_cookie("bob", bob_hash, time.time())
        for cookie in (None, forged, expired, guessed):
            headers = {"Cookie": f"{AUTHOR_COOKIE}={cookie}"} if cookie else {}
            assert http(url, headers=headers)[0] == 401, cookie
            assert http(f"{site.web}/leagues/test/versions/{gb.id}/log", headers=headers)[0] == 401, cookie
        # the real cookie of bob, for contrast
        assert get_json(url, headers=site.as_author("bob"))["version"]["id"] == gb.id
    finally:
        db.close()


def test_retire_and_challenge_refuse_others_and_other_sites(site: Site) -> None:
    gb, ra = site.version("bob", "gb"), site.version("alice", "ra")
    retire = f"{site.web}/leagues/test/versions/{gb.id}/retire"
    challenge = f"{site.web}/leagues/test/challenges"
    stolen = {"version": str(gb.id), "opponent": str(ra.id), "deal_sets": "2"}

    # alice, with her own valid session and CSRF token, on bob's version: 403, nothing changed
    code, _, page = http(retire, headers=site.as_author("alice"), form={"csrf": site.csrf("alice")})
    assert code == 403 and f"author &#x27;alice&#x27; may not retire version {gb.id}" in page.decode()
    code, _, page = http(challenge, headers=site.as_author("alice"), form={**stolen, "csrf": site.csrf("alice")})
    assert code == 403 and f"may not challenge with version {gb.id}" in page.decode()
    # no cookie, a forged or expired cookie: 401
    expired = site.signer.author_cookie("bob", hash_token(site.league.token("bob")), time.time() - 8 * 24 * 3600)
    for headers in ({}, {"Cookie": f"{AUTHOR_COOKIE}={site.cookies['alice'].replace('alice:', 'bob:', 1)}"},
                    {"Cookie": f"{AUTHOR_COOKIE}={expired}"}):
        assert http(retire, headers=headers, form={"csrf": site.csrf("bob")})[0] == 401
        assert http(challenge, headers=headers, form={**stolen, "csrf": site.csrf("bob")})[0] == 401
    # bob's own session, but no CSRF token, alice's CSRF token, or sent from another site: 403
    for form, extra in (({}, {}), ({"csrf": site.csrf("alice")}, {}),
                        ({"csrf": site.csrf("bob")}, {"Origin": "http://evil.example"})):
        code, _, page = http(retire, headers={**site.as_author("bob"), **extra}, form=form)
        assert code == 403, (form, extra)
    assert site.version("bob", "gb").state == lpb.VERSION_STATE_READY

    # alice challenges bob's active version with her own: queued, as the gRPC call lists it
    code, _, page = http(challenge, headers=site.as_author("alice"),
                         form={"version": str(ra.id), "opponent": str(gb.id), "deal_sets": "2",
                               "csrf": site.csrf("alice")})
    assert code == 200, page[:400]
    listed = site.league.stub().ListChallenges(lpb.ListChallengesRequest(), timeout=30,
                                               metadata=bearer(site.league.token("alice"))).challenges
    assert [(c.version_id, c.opponent_id, c.deal_sets, c.author) for c in listed] == [(ra.id, gb.id, 2, "alice")]
    assert f"challenge {listed[0].id} queued: ra-v1 against gb-v1, 2 deal sets" in page.decode()
    # a bad number is one line, 400
    code, _, page = http(challenge, headers=site.as_author("alice"),
                         form={"version": "x", "opponent": str(gb.id), "csrf": site.csrf("alice")})
    assert code == 400 and "version: expected a whole number, got &#x27;x&#x27;" in page.decode()


def test_a_form_sent_with_origin_null_is_refused(site: Site) -> None:
    """``Origin: null`` is what a sandboxed frame or a ``data:`` page of any site sends: bob's own session and CSRF
    token do not make it his (retire, challenge, upload), and nothing changes."""
    gb, ra = site.version("bob", "gb"), site.version("alice", "ra")
    null = {**site.as_author("bob"), "Origin": "null"}
    line = "refused: this form was sent from another site (its Origin is not this dashboard&#x27;s)"
    code, _, page = http(f"{site.web}/leagues/test/versions/{gb.id}/retire", headers=null,
                         form={"csrf": site.csrf("bob")})
    assert (code, line in page.decode()) == (403, True)
    code, _, page = http(f"{site.web}/leagues/test/challenges", headers=null, form={
        "version": str(gb.id), "opponent": str(ra.id), "deal_sets": "2", "csrf": site.csrf("bob")})
    assert (code, line in page.decode()) == (403, True)
    body, kind = multipart({"bot": "gb"}, "archive", "gb.tar.gz", b"not read")
    code, _, page = http(f"{site.web}/leagues/test/upload?csrf={site.csrf('bob')}", body=body,
                         headers={**null, "Content-Type": kind})
    assert (code, line in page.decode()) == (403, True)
    assert site.version("bob", "gb").state == lpb.VERSION_STATE_READY
    assert [v.id for v in site.league.versions(site.league.token("bob"), "gb")] == [gb.id]
    listed = site.league.stub().ListChallenges(lpb.ListChallengesRequest(), timeout=30,
                                               metadata=bearer(site.league.token("bob"))).challenges
    assert [c.version_id for c in listed if c.author == "bob"] == []


def test_revoking_an_author_ends_its_web_sessions(site: Site) -> None:
    """dora signs in, then the operator revokes her token: the cookie she holds (signed, unexpired) no longer
    signs her in, for pages as for forms."""
    site.league.add_author("dora")
    site.sign_in("dora")
    cookie = site.as_author("dora")
    mine = f"{site.web}/leagues/test/mine"
    assert http(mine, headers=cookie)[0] == 200
    revoked = site.league.league("revoke", "dora", token=site.league.operator)
    assert (revoked.returncode, revoked.stdout) == (0, "the token of author 'dora' is revoked\n"), revoked.stderr
    code, _, page = http(mine, headers=cookie)
    assert code == 401 and '<button type="submit">sign in</button>' in page.decode()  # the sign-in form again
    code, _, _ = http(f"{site.web}/leagues/test/challenges", headers=cookie, form={"csrf": site.csrf("dora")})
    assert code == 401


def test_upload_form_refusals_are_the_clis_lines(site: Site) -> None:
    root = site.league.root
    url = f"{site.web}/leagues/test/upload?csrf={site.csrf('bob')}"

    def web_upload(author: str, bot: str, content: bytes, csrf: str | None = None) -> tuple[int, str]:
        body, kind = multipart({"bot": bot}, "archive", "bot.tar.gz", content)
        address = f"{site.web}/leagues/test/upload?csrf={csrf if csrf is not None else site.csrf(author)}"
        code, _, page = http(address, body=body, headers={**site.as_author(author), "Content-Type": kind})
        return code, page.decode()

    def cli_line(path: Path, bot: str) -> str:
        done = site.league.league("upload", str(path), "--bot", bot, token=site.league.tokens["bob"])
        assert done.returncode == 1 and done.stderr.startswith("error: invalid argument: "), done.stderr
        return done.stderr.removeprefix("error: invalid argument: ").strip()

    # an archive over the league's 1 MiB, and an archive with a '..' member: the CLI's line, in the page
    big = root / "big.tar"
    big.write_bytes(b"\0" * (1024 * 1024 + 10))
    evil = root / "evil.tar"
    with tarfile.open(evil, "w") as tar:
        for name, data in (("bot.toml", b'kit = "python"\nentry = "bot.py"\nvariants = ["block"]\n'),
                           ("../escape.py", b"x\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    for path in (big, evil):
        line = cli_line(path, "gb")
        code, page = web_upload("bob", "gb", path.read_bytes())
        assert code == 400 and html.escape(line) in page, (line, page[:600])
    assert "over the league&#x27;s limit of 1 MiB (upload.archive_mb); nothing was stored" in web_upload(
        "bob", "gb", big.read_bytes())[1]
    assert not (site.league.server.data / "league" / "escape.py").exists()

    # a body past the cap (a small archive behind 1.1 MiB of text) is refused before it is parsed; what is not an
    # upload form is one line each
    padded, kind = multipart({"bot": "gb", "pad": "x" * (1024 * 1024 + 100 * 1024)}, "archive", "a.tar.gz", b"x")
    for sent in (padded, (padded[i:i + 65536] for i in range(0, len(padded), 65536))):  # its length told, or not
        code, _, page = http(url, body=sent, headers={**site.as_author("bob"), "Content-Type": kind})  # type: ignore
        assert code == 400 and b"over the league&#x27;s limit of 1 MiB (upload.archive_mb); nothing was stored" in page
    empty, kind = multipart({"bot": "gb"}, "other", "a.tar.gz", b"x")
    for body, content_type, line in (
            (b"bot=gb", "application/x-www-form-urlencoded",
             "an upload is a multipart/form-data form (the page&#x27;s upload form)"),
            (empty, kind, "the upload form holds no archive (its file field, archive)"),
            (empty[:-40], kind, "the upload form is cut short (a part without its end)")):
        code, _, page = http(url, body=body, headers={**site.as_author("bob"), "Content-Type": content_type})
        assert code == 400 and line in page.decode(), (line, page[:500])

    # bob uploading to alice's bot: 403; no CSRF token or alice's: 403; no cookie: 401; one version each still
    archive = archive_of(bot_folder(root / "again", RANDOM))
    code, page = web_upload("bob", "ra", archive)
    assert code == 403 and "author &#x27;bob&#x27; may not upload to bot &#x27;ra&#x27;" in page
    assert web_upload("bob", "gb", archive, csrf="")[0] == 403
    assert web_upload("bob", "gb", archive, csrf=site.csrf("alice"))[0] == 403
    body, kind = multipart({"bot": "gb"}, "archive", "bot.tar.gz", archive)
    assert http(url, body=body, headers={"Content-Type": kind})[0] == 401
    assert [v.number for v in site.league.versions(site.league.token("bob"), "gb")] == [1]
    assert [v.number for v in site.league.versions(site.league.token("alice"), "ra")] == [1]


def test_an_author_retires_its_own_version(site: Site) -> None:
    db = open_database(sqlite_url(site.league.root / "data"))
    try:
        ra = site.version("alice", "ra")
        assert db.version(ra.id).state == READY
        code, _, page = http(f"{site.web}/leagues/test/versions/{ra.id}/retire", headers=site.as_author("alice"),
                             form={"csrf": site.csrf("alice")})
        assert code == 200 and f"retired: version {ra.id} (ra-v1)" in page.decode()
        assert db.version(ra.id).state == RETIRED
    finally:
        db.close()


# --- the forms in a real browser ------------------------------------------------------------------------------


MY_VERSIONS = ("[...document.querySelectorAll('#my-versions tbody tr')]"
               ".map((r) => [...r.cells].map((c) => c.textContent))")
"""The author's page's versions table as the browser shows it: each row's cells' text."""


def outcome(browser: Chromium) -> str:
    """The one line a form's answer page shows (its ``#outcome``, or the refusal's message)."""
    return browser.js("(document.getElementById('outcome') || document.querySelector('main .message') || "
                      "document.body).textContent")


def open_mine(browser: Chromium) -> None:
    """Back to the author's page by its own link on a form's answer page, as a person goes on."""
    browser.submit("#outcome + p a")
    assert browser.js("location.pathname") == "/leagues/test/mine"


def sign_in_in_the_browser(site: Site, browser: Chromium, author: str) -> None:
    """The author's page asked for without a cookie is the sign-in form, which comes back to it once the token is
    typed in and sent; from then on the cookie the answer set is the browser's own."""
    browser.open_page(f"{site.web}/leagues/test/mine")
    browser.call("Log.enable")
    assert browser.js("document.querySelector('form.signin input[name=next]').value") == "/leagues/test/mine"
    browser.type_into("form.signin input[name=token]", site.league.token(author))
    browser.submit("form.signin button[type=submit]")
    assert browser.js("[location.pathname, (document.querySelector('main .meta') || document.body).textContent]") == [
        "/leagues/test/mine", f"signed in as author '{author}'"], outcome(browser)


def upload_in_the_browser(browser: Chromium, bot: str, archive: Path) -> None:
    """The upload form filled in as a person does: the bot's name typed, the archive picked in its file input."""
    browser.type_into("#upload input[name=bot]", bot)
    browser.choose_files("#upload input[type=file]", archive)
    browser.submit("#upload button[type=submit]")


def choose_option(browser: Chromium, selector: str, label: str) -> None:
    """The option shown as ``label`` chosen in a select, as a person picks it (AssertionError when none is)."""
    chosen = browser.js(f"""(() => {{ const select = document.querySelector({json.dumps(selector)});
        const option = [...select.options].find((o) => o.textContent === {json.dumps(label)});
        if (!option) return false;
        select.value = option.value; select.dispatchEvent(new Event('change', {{bubbles: true}}));
        return true; }})()""")
    assert chosen, f"no option {label!r} in {selector}"


def posted_origins(browser: Chromium) -> list[tuple[str, str | None]]:
    """Each form the browser sent (a POST): its path and the ``Origin:`` it carried, which the dashboard checks
    against its own (a policy that makes the browser send ``null`` breaks every form)."""
    sent = [e["params"]["request"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    return [(urllib.parse.urlsplit(r["url"]).path, r["headers"].get("Origin")) for r in sent if r["method"] == "POST"]


@needs_chromium
def test_sign_in_upload_challenge_and_retire_in_chromium(site: Site, browser: Chromium, tmp_path: Path) -> None:
    """Each of the author's forms as Chromium renders and sends it (its action, method, enctype, hidden CSRF field,
    the page's Content-Security-Policy and Referrer-Policy, the cookie the sign-in set), each answer's exact line,
    and what the league then holds: carol, a new author, signs in with her token, uploads a bot's archive, sees it
    ready, challenges bob's version with it and retires it; no page's CSP refused anything."""
    site.league.add_author("carol")
    archive = tmp_path / "cg.tar.gz"
    archive.write_bytes(archive_of(bot_folder(tmp_path / "cg", GREEDY)))
    sign_in_in_the_browser(site, browser, "carol")
    assert browser.js("document.cookie") == "", "the author's cookie is HttpOnly"
    assert browser.js("document.querySelector('#main').innerText").count("No version yet") == 1

    upload_in_the_browser(browser, "cg", archive)
    versions = site.league.versions(site.league.token("carol"))               # all of carol's, of any bot
    assert [(v.bot, v.number) for v in versions] == [("cg", 1)], outcome(browser)
    uploaded = versions[0]
    assert outcome(browser) == f"uploaded: version {uploaded.id} of bot 'cg' (number 1), uploaded"
    assert site.league.settled(site.league.token("carol"), "cg").state == lpb.VERSION_STATE_READY
    open_mine(browser)
    row = browser.js(MY_VERSIONS)[0]
    assert row[:4] + row[5:] == ["cg-v1", str(uploaded.id), "ready", "yes", "", "build log and check", "retire"]
    assert re.fullmatch(r"just now|\d+ min ago", row[4]), row  # uploaded: its time as a person says it

    gb = site.version("bob", "gb")
    assert browser.js("[...document.querySelectorAll('#challenge select[name=version] option')]"
                      ".map((o) => o.textContent)") == ["cg-v1"]
    choose_option(browser, "#challenge select[name=opponent]", "gb-v1")
    browser.submit("#challenge button[type=submit]")
    listed = site.league.stub().ListChallenges(lpb.ListChallengesRequest(), timeout=30,
                                               metadata=bearer(site.league.token("carol"))).challenges
    assert [(c.version_id, c.opponent_id, c.author) for c in listed] == [(uploaded.id, gb.id, "carol")], outcome(
        browser)
    assert outcome(browser) == f"challenge {listed[0].id} queued: cg-v1 against gb-v1, {listed[0].deal_sets} deal sets"
    open_mine(browser)
    assert browser.js("[...document.querySelector('#my-challenges tbody tr').cells].slice(0, 4).map((c) => "
                      "c.textContent)") == [str(listed[0].id), "cg-v1", "gb-v1", str(listed[0].deal_sets)]

    browser.submit(f"#my-versions form[action='/leagues/test/versions/{uploaded.id}/retire'] button")
    assert outcome(browser) == f"retired: version {uploaded.id} (cg-v1)"
    assert browser.js("!!document.querySelector('header #signout')"), "a form's answer page has it too"
    db = open_database(sqlite_url(site.league.root / "data"))
    try:
        assert db.version(uploaded.id).state == RETIRED
    finally:
        db.close()
    open_mine(browser)
    assert [row[:3] + row[7:] for row in browser.js(MY_VERSIONS)] == [["cg-v1", str(uploaded.id), "retired", ""]]

    browser.submit("header form.signout button")          # every signed-in page has it; it leaves nothing behind
    assert browser.js("[location.pathname, document.querySelector('#signout')]") == ["/", None]
    assert browser.csp_violations() == []
    assert posted_origins(browser) == [(path, site.web) for path in (
        "/signin", "/leagues/test/upload", "/leagues/test/challenges", f"/leagues/test/versions/{uploaded.id}/retire",
        "/signout")]
    browser.goto(f"{site.web}/leagues/test/mine")           # the cookie is gone: the sign-in form again
    assert browser.js("[!!document.querySelector('form.signin'), document.querySelector('#signout')]") == [True, None]


# --- share links ---------------------------------------------------------------------------------------------


def share(site: Site, **fields: str) -> tuple[int, dict]:
    code, _, body = http(f"{site.web}/api/share", form=fields,
                         headers={"Authorization": f"Bearer {site.operator}"})
    return code, json.loads(body)


def test_a_share_link_opens_only_its_league_read_only(site: Site) -> None:
    code, made = share(site, league="test", hours="2")
    assert code == 200 and made["league"] == "test" and made["url"].startswith(f"{site.web}/share/")
    assert int(time.time()) + 2 * 3600 - 60 <= made["expires_at"] <= int(time.time()) + 2 * 3600
    # only the operator makes one: an author's cookie or no token is 401
    assert http(f"{site.web}/api/share", form={"league": "test"}, headers=site.as_author("alice"))[0] == 401
    assert http(f"{site.web}/api/share", form={"league": "test"})[0] == 401
    assert share(site, league="nope") == (404, {"error": "no league 'nope' on this server (it runs test)"})

    code, headers, _ = http(made["url"])
    assert code == 303 and headers["location"] == "/leagues/test"
    link = set_cookie(headers, SHARE_COOKIE)
    assert site.operator not in headers["set-cookie"]
    shared = {"Cookie": f"{SHARE_COOKIE}={link}"}
    for path in ("/leagues/test", "/leagues/test/queue", "/leagues/test/bots/gb", "/api/leagues/test/standings"):
        assert http(f"{site.web}{path}", headers=shared)[0] == 200, path
    # not its pages: an author's page, a build log, the tournaments, a form: 403 with a link back to the league
    gb = site.version("bob", "gb")
    for path in ("/", "/api/tournaments", "/leagues/test/mine", f"/api/leagues/test/versions/{gb.id}/log"):
        code, _, body = http(f"{site.web}{path}", headers=shared)
        assert code == 403 and b"this share link opens league test only, read-only" in body, path
    code, _, body = http(f"{site.web}/", headers=shared)
    assert '<a id="back" href="/leagues/test">← league test</a>' in body.decode()
    assert http(f"{site.web}/leagues/test/versions/{gb.id}/retire", headers=shared, form={})[0] == 403

    # tampered with (another league's name in the payload, or a changed signature): 403, with a way on
    forged = Signer("guess").share_link("l", "test", int(time.time()) + 3600)
    changed = link[:-1] + ("0" if link[-1] != "0" else "1")
    for bad in (forged, changed):
        code, _, body = http(f"{site.web}/share/{bad}")
        assert code == 403 and b"this share link is not valid" in body and b'href="/signin"' in body
        code, _, body = http(f"{site.web}/leagues/test", headers={"Cookie": f"{SHARE_COOKIE}={bad}"})
        assert code == 403 and b"this share link is not valid" in body
    # expired (signed by the server, but its time is past): 410, with a way on
    old = site.signer.share_link("l", "test", int(time.time()) - 60)
    for answer in (http(f"{site.web}/share/{old}"),
                   http(f"{site.web}/leagues/test", headers={"Cookie": f"{SHARE_COOKIE}={old}"})):
        code, _, body = answer
        assert code == 410 and b"this share link of league test expired at" in body and b'href="/signin"' in body


LEAGUE_NAV = ["/leagues/test", "/leagues/test/queue", "/leagues/test/finals"]
"""The links of the league's own pages, on each of them: every viewer of the league may follow them."""
NOT_SHARED = ["/leagues/test/mine", "/"]
"""The league's links to an author's page and to the list of tournaments: a share link may not open them (403)."""


def shared_browser(site: Site, **fields: str) -> dict[str, str]:
    """The headers of a browser that opened the operator's share link (``league=NAME`` or ``tournament=ID``)."""
    code, headers, _ = http(share(site, **fields)[1]["url"])
    assert code == 303, code
    return {"Cookie": f"{SHARE_COOKIE}={set_cookie(headers, SHARE_COOKIE)}"}


def links_seen_at_once(url: str, viewers: dict[str, dict[str, str]]) -> dict[str, list[str] | int]:
    """Each viewer's links on the page at ``url`` (or its refusal's status), all of one moment of the league: the
    ladder plays on, and a table that ends between two viewers' requests adds games to a bot's page. So the first
    viewer's page is asked for again after the others, and the round is taken only when it had not changed."""
    def links(headers: dict[str, str]) -> list[str] | int:
        code, _, page = http(url, headers=headers)
        return links_of(page) if code == 200 else code
    first = next(iter(viewers.values()))
    for _ in range(20):
        seen = {name: links(headers) for name, headers in viewers.items()}
        if links(first) == next(iter(seen.values())):
            return seen
    raise AssertionError(f"{url} changed between every two requests of twenty rounds")


def test_league_pages_offer_only_links_the_viewer_may_follow(site: Site) -> None:
    """The operator and a signed-in author see the header's link to the list of tournaments and the league's links
    with "my bots" and "tournaments"; a share link's browser sees the same page without those two, its header's
    link leading to the league, and every link it is shown opens (what it may not open is still refused when
    typed: :func:`test_a_share_link_opens_only_its_league_read_only`)."""
    operator, shared = {"Authorization": f"Bearer {site.operator}"}, shared_browser(site, league="test")
    viewers = {"operator": operator, "alice": site.as_author("alice"), "share": shared}
    for path in ("/leagues/test", "/leagues/test/queue", "/leagues/test/finals", "/leagues/test/bots/gb",
                 "/leagues/test/mine"):
        seen = links_seen_at_once(site.web + path, viewers)
        assert seen["operator"][:6] == seen["alice"][:6] == ["/", *LEAGUE_NAV, *NOT_SHARED], (path, seen)
        if path.endswith("/mine"):  # an author's page: its own versions only (the operator's are every author's)
            assert seen["share"] == 403, seen
            continue
        assert seen["alice"] == seen["operator"], (path, seen)
        assert seen["share"] == ["/leagues/test"] + [link for link in seen["operator"][1:] if link not in NOT_SHARED]
        for link in seen["share"]:
            assert http(site.web + link, headers=shared)[0] == 200, (path, link)


def test_a_refusal_page_links_only_where_the_viewer_may_go(site: Site) -> None:
    """A share link's refusals, of a page not its own or of an unknown bot of its league, lead back to its league,
    from the header as from the page; the operator's, of a league's page, lead to that league's page (its header to
    the list of tournaments, as before)."""
    shared = shared_browser(site, league="test")
    for path, status in (("/", 403), ("/leagues/test/mine", 403), ("/leagues/test/bots/nope", 404)):
        code, _, page = http(site.web + path, headers=shared)
        assert (code, links_of(page)) == (status, ["/leagues/test", "/leagues/test"]), path
    code, _, page = http(f"{site.web}/leagues/test/bots/nope", headers={"Authorization": f"Bearer {site.operator}"})
    assert (code, links_of(page)) == (404, ["/", "/leagues/test"])


@dataclass(frozen=True)
class Tournaments:
    """A server with a token and no league, and its two finished tournaments: one to share, one other."""

    web: str
    full: dict[str, str]
    """The operator's headers."""
    shared: str
    other: str

    def shared_browser(self) -> dict[str, str]:
        """The headers of a browser that opened the operator's share link to the tournament ``shared``."""
        code, _, body = http(f"{self.web}/api/share", form={"tournament": self.shared}, headers=self.full)
        made = json.loads(body)
        assert code == 200 and made["tournament"] == self.shared, body
        code, headers, _ = http(made["url"])
        assert code == 303 and headers["location"] == f"/t/{self.shared}"
        return {"Cookie": f"{SHARE_COOKIE}={set_cookie(headers, SHARE_COOKIE)}"}


@pytest.fixture(scope="module")
def tournaments(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tournaments]:
    """Two quick tournaments of two random bots, both finished, on a server of their own."""
    tmp_path = tmp_path_factory.mktemp("tournaments")
    token = secrets.token_urlsafe(24)
    token_path = tmp_path / "token"
    token_path.write_text(token + "\n")
    token_path.chmod(0o600)
    tag = uuid.uuid4().hex
    server = WebServer(tmp_path / "data", "--token-file", str(token_path),
                       *registry(tmp_path, random_bot("alpha", tag) + random_bot("beta", tag)))
    full = {"Authorization": f"Bearer {token}"}
    try:
        shared_id, other_id = (submit(server.stub(), tournament(games=2, variant="draw", name=name),
                                      metadata=(("authorization", f"Bearer {token}"),)).id
                               for name in ("shared <one>", "other"))
        for tid in (shared_id, other_id):
            wait_state(server.web, tid, lambda d: d["tournament"]["state"] == "finished", 120,
                       "a finished tournament", headers=full)
        yield Tournaments(server.web, full, shared_id, other_id)
    finally:
        server.stop()


def test_a_shared_tournament_needs_no_javascript(tournaments: Tournaments) -> None:
    web, full, shared_id, other_id = tournaments.web, tournaments.full, tournaments.shared, tournaments.other
    # the tournament's page, as fetched without running its script: its standings rows are in the HTML
    detail = get_json(f"{web}/api/t/{shared_id}", headers=full)
    code, _, page = http(f"{web}/t/{shared_id}", headers=full)
    text = page.decode()
    assert code == 200 and '<table id="standings">' in text and "<h1>shared &lt;one&gt;</h1>" in text
    rows = re.findall(r"<tr><td class=\"\">(\d+)</td><td class=\"l\"><a href=\"[^\"]+\">(\w+)</a></td>"
                      r"((?:<td class=\"\">[^<]*</td>)+)</tr>", text)
    expected = [(str(rank), e["name"], "".join(f'<td class="">{html.escape(str(v))}</td>' for v in (
        e["games"], e["wins"], e["draws"], e["losses"], cells["points"], cells["scored"], cells["conceded"],
        e["faults"], cells["rating"])))
        for rank, (e, cells) in enumerate(zip(detail["standings"]["entrants"], detail["table"]["rows"]), 1)]
    assert rows == expected and {r[1] for r in rows} == {"alpha", "beta"}
    games = detail["tournament"]["games_done"]
    assert games == detail["tournament"]["games_total"] and sum(  # every game, both seats
        int(r[2].split("</td>")[0].rsplit(">", 1)[1]) for r in rows) == 2 * games

    # the operator's link: bad requests are one line; the link opens the one tournament, read-only
    for form, line in (({"tournament": shared_id, "hours": "0"}, "hours: a share link lasts 1 to 720 hours, got 0"),
                       ({}, "name one tournament (tournament=ID) or one league (league=NAME) to share")):
        code, _, body = http(f"{web}/api/share", form=form, headers=full)
        assert (code, json.loads(body)) == (400, {"error": line})
    shared = tournaments.shared_browser()
    code, _, page = http(f"{web}/t/{shared_id}", headers=shared)
    assert code == 200 and all(f">{name}</a>" in page.decode() for name in ("alpha", "beta"))
    assert get_json(f"{web}/api/t/{shared_id}", headers=shared)["access"] == "public"
    assert get_json(f"{web}/api/t/{shared_id}/games", headers=shared)["recorded"] == games
    assert http(f"{web}/t/{shared_id}/games/0", headers=shared)[0] == 200
    # another tournament, the list of tournaments: 403 with a link back to the shared one
    for path in (f"/t/{other_id}", f"/api/t/{other_id}", f"/api/t/{other_id}/games.jsonl", "/"):
        code, _, body = http(f"{web}{path}", headers=shared)
        assert code == 403 and f"this share link opens tournament {shared_id} only".encode() in body, path
    code, _, body = http(f"{web}/t/{other_id}", headers=shared)
    assert f'<a id="back" href="/t/{shared_id}">← tournament {shared_id}</a>' in body.decode()
    # without any credential: the sign-in form, as before
    assert http(f"{web}/t/{shared_id}")[0] == 401


def test_a_share_link_sees_only_tournament_links_it_may_open(tournaments: Tournaments) -> None:
    """A share link's browser sees the tournament's pages as the operator does, but for the header's link, which
    leads to the shared tournament (the list of tournaments would answer it 403); every link it is shown opens,
    and a refusal (a game the schedule has not) links back to the tournament from the header too."""
    web, home, shared = tournaments.web, f"/t/{tournaments.shared}", tournaments.shared_browser()
    for path in (home, f"{home}/games", f"{home}/entrants/alpha", f"{home}/games/0"):
        code, _, page = http(web + path, headers=tournaments.full)
        operator = links_of(page)
        header = not path.endswith("/games/0")  # the game page is the records' viewer, under a bar of its own
        assert code == 200 and operator[:1] == (["/"] if header else [home]), (path, operator)
        code, _, page = http(web + path, headers=shared)
        assert code == 200 and links_of(page) == [home if link == "/" else link for link in operator], path
        for link in links_of(page):
            assert http(urllib.parse.urljoin(web + path, link), headers=shared)[0] == 200, (path, link)
    for headers, links in ((shared, [home, home]), (tournaments.full, ["/", home])):
        code, _, page = http(f"{web}{home}/games/99", headers=headers)
        assert (code, links_of(page)) == (404, links)
