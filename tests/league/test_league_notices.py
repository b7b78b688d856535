"""A team's notices from a real ``arena serve --league`` with its dashboard: a team uploads a version that fails to
build and one that succeeds; its private Atom feed shows both (the failure with its build log's last lines), the
other team's feed shows neither, the public feed shows neither but shows the freeze; a wrong or replaced feed token
is 404. Its webhook, a local HTTP receiver here (the league file allows private webhooks), gets each event signed,
and the test checks the signature; a receiver that fails twice gets the event on the third try. The refusals: an
``http://`` URL, a host resolving to 127.0.0.1 or 10.0.0.1 in a league without the allowance, and the operator,
who has no team; each one line, nothing stored."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest
import sqlalchemy as sa

from arena.league.storage.db import open_database, sqlite_url
from support.league import GAME, League, bot_folder, league_in
from support.notices import Receiver, checked, feed, titles
from support.paths import ROOT
from support.waiting import wait_for
from arena.web.access import AUTHOR_COOKIE
from support.web import http, set_cookie

NOTICES = "[notices]\nallow_private_webhooks = true\nretry_s = 0.2\nattempts = 5\ntimeout_s = 5\n"
BROKEN = "def broken(:\n    pass\n"
"""A bot whose build fails: the python kit's build parses it."""
DELIVERY_S = 60


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    root = tmp_path_factory.mktemp("notices")
    league = league_in(root, GAME + NOTICES, web=True)
    try:
        league.add_author("alpha")
        league.add_author("beta")
        yield league
    finally:
        league.server.stop()


def stored_webhooks(league: League) -> list[tuple]:
    database = open_database(sqlite_url(league.root / "data"))
    try:
        with database.engine.connect() as connection:
            return [tuple(row) for row in connection.execute(sa.text("SELECT * FROM webhooks ORDER BY league_id"))]
    finally:
        database.close()


def cli(league: League, who: str, *args: str) -> tuple[int, str, str]:
    token = league.operator if who == "operator" else league.tokens[who]
    done = league.league(*args, token=token)
    return done.returncode, done.stdout, done.stderr


def test_refused_webhooks_are_one_line_and_store_nothing(tmp_path: Path) -> None:
    """In a league whose file keeps the default: webhooks to public addresses only."""
    league = league_in(tmp_path, GAME)
    try:
        league.add_author("alpha")
        refused(league)
    finally:
        league.server.stop()


def refused(league: League) -> None:
    refusals = [
        ("alpha", ("webhook", "set", "http://hooks.example.org/x"),
         "error: invalid argument: a webhook's URL must start with https:// (got http scheme); plain http is allowed "
         "only with [notices] allow_private_webhooks\n"),
        ("alpha", ("webhook", "set", "https://localhost:8443/x"),
         "error: invalid argument: the webhook's host 'localhost' resolves to "),
        ("alpha", ("webhook", "set", "https://127.0.0.1/x"),
         "error: invalid argument: the webhook's host '127.0.0.1' resolves to 127.0.0.1, a loopback address: a "
         "webhook must reach a public address (a league file may allow others: [notices] allow_private_webhooks)\n"),
        ("alpha", ("webhook", "set", "https://10.0.0.1/x"),
         "error: invalid argument: the webhook's host '10.0.0.1' resolves to 10.0.0.1, a private address: a webhook "
         "must reach a public address (a league file may allow others: [notices] allow_private_webhooks)\n"),
        ("operator", ("webhook", "set", "https://hooks.example.org/x"),
         "error: permission denied: the operator may not set a webhook: only a member of a team may (for its own "
         "team)\n"),
    ]
    for who, args, line in refusals:
        code, out, err = cli(league, who, *args)
        assert (code, out) == (1, ""), err
        assert err.startswith(line) and err.count("\n") == 1, err
    assert "a loopback address" in cli(league, "alpha", *refusals[1][1])[2]
    assert stored_webhooks(league) == []
    code, out, err = cli(league, "operator", "feed-url")
    assert (code, out, err) == (1, "", "error: permission denied: the operator may not have a team's feed: only a "
                                       "member of a team may (for its own team)\n")


def test_a_teams_notices_reach_its_feed_and_webhook_and_no_one_elses(served: League) -> None:
    league = served
    web = league.server.web  # type: ignore[attr-defined]
    good, flaky = Receiver(), Receiver(failures=2)
    try:
        code, secret, err = cli(league, "alpha", "webhook", "set", good.url)
        assert code == 0, err
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}\n", secret) and "shown this once" in err
        secret = secret.strip()
        code, flaky_secret, err = cli(league, "beta", "webhook", "set", flaky.url)
        assert code == 0, err
        flaky_secret = flaky_secret.strip()

        league.upload("alpha", bot_folder(league.root / "broken-bot", BROKEN), "broken")
        league.upload("alpha", bot_folder(league.root / "rand-bot", ROOT / "bots" / "python" / "random_bot.py"),
                      "rand")
        broken = league.settled(league.token("alpha"), "broken")
        rand = league.settled(league.token("alpha"), "rand")
        assert (broken.state, rand.state) == (5, 4)  # failed, ready

        feeds = {}
        for team in ("alpha", "beta"):
            code, out, err = cli(league, team, "feed-url", "--web", web)
            assert code == 0, err
            assert re.fullmatch(re.escape(web) + r"/leagues/test/feed/[A-Za-z0-9_-]{43}\.atom\n", out), out
            feeds[team] = out.strip()
        again = cli(league, "alpha", "feed-url")[1].strip()
        assert web + again == feeds["alpha"]  # the same address each time

        alpha = feed(feeds["alpha"])
        assert [e["title"] for e in alpha] == ["rand-v1 is ready", "broken-v1 failed"]
        failed = alpha[1]["content"]
        assert failed.startswith(f"Version {broken.id} (broken-v1) of league test failed: build failed: ")
        assert "The build log's last lines:" in failed and "SyntaxError" in failed
        assert alpha[1]["link"] == f"{web}/leagues/test/versions/{broken.id}/log"
        assert titles(feeds["beta"]) == []  # another team's feed shows none of alpha's
        public = f"{web}/leagues/test/feed.atom"
        assert titles(public) == []

        wait_for(lambda: len(good.got()) >= 2, DELIVERY_S, "alpha's two deliveries")
        events = [checked(secret, headers, body) for headers, body in good.got()]
        assert [(e["kind"], e["title"], e["team"], e["league"]) for e in events] == [
            ("failed", "broken-v1 failed", "alpha", "test"), ("ready", "rand-v1 is ready", "alpha", "test")]
        assert [e["id"] for e in events] == [entry["id"].removeprefix("urn:uuid:") for entry in reversed(alpha)]
        assert flaky.got() == []  # nothing of alpha's went to beta's receiver

        code, out, err = cli(league, "operator", "freeze")
        assert code == 0, err
        assert titles(public) == ["test: frozen"]
        assert titles(feeds["alpha"])[0] == titles(feeds["beta"])[0] == "test: frozen"

        wait_for(lambda: len(good.got()) >= 3, DELIVERY_S, "the freeze delivered to alpha")
        frozen = checked(secret, *good.got()[2])
        assert (frozen["kind"], frozen["team"], frozen["link"]) == ("phase", None, "/leagues/test")
        wait_for(lambda: len(flaky.got()) >= 3, DELIVERY_S, "the freeze's third try at beta's receiver")
        tries = flaky.got()
        assert len({headers["x-arena-delivery"] for headers, _ in tries}) == 1  # one delivery, tried three times
        assert [checked(flaky_secret, headers, body)["title"] for headers, body in tries] == ["test: frozen"] * 3
        assert len(good.got()) == 3 and len(flaky.got()) == 3  # delivered once: no more tries
    finally:
        good.stop()
        flaky.stop()


def test_a_wrong_or_replaced_feed_token_is_not_found(served: League) -> None:
    league = served
    web = league.server.web  # type: ignore[attr-defined]
    old = web + cli(league, "beta", "feed-url")[1].strip()
    assert http(old)[0] == 200
    code, new, err = cli(league, "beta", "feed-url", "--regenerate")
    assert code == 0 and "the old address no longer works" in err
    assert web + new.strip() != old
    for url in (old, f"{web}/leagues/test/feed/{'x' * 43}.atom", f"{web}/leagues/test/feed/.atom"):
        code, _, body = http(url)
        assert code == 404, (url, body[:200])
        assert b"test: frozen" not in body
    assert titles(web + new.strip()) == ["test: frozen"]


def test_a_members_page_shows_its_feed_and_replaces_it(served: League) -> None:
    league = served
    web = league.server.web  # type: ignore[attr-defined]
    code, headers, _ = http(f"{web}/signin", form={"token": league.token("beta"), "next": "/"})
    assert code == 303
    cookie = {"Cookie": f"{AUTHOR_COOKIE}={set_cookie(headers, AUTHOR_COOKIE)}"}
    code, _, page = http(f"{web}/leagues/test/mine", headers=cookie)
    shown = re.search(r'<a id="team-feed" href="([^"]+)"', page.decode())
    assert code == 200 and shown is not None
    assert shown.group(1) == web + cli(league, "beta", "feed-url")[1].strip()
    csrf = re.search(r'<form id="feed-token" [^>]*><input type="hidden" name="csrf" value="([^"]+)"',
                     page.decode()).group(1)
    code, _, body = http(f"{web}/leagues/test/feed-token", headers={**cookie, "Origin": web}, form={"csrf": csrf})
    assert code == 200 and b"your team&#x27;s new feed address: " in body
    assert http(shown.group(1))[0] == 404  # the old address is gone
    new = web + cli(league, "beta", "feed-url")[1].strip()
    assert new != shown.group(1) and new.encode() in body
    code, _, _ = http(f"{web}/leagues/test/feed-token", headers={**cookie, "Origin": web}, form={"csrf": "forged"})
    assert code == 403
    assert http(new)[0] == 200  # a forged form replaced nothing


def test_clearing_a_webhook(served: League) -> None:
    league = served
    code, out, err = cli(league, "beta", "webhook", "clear")
    assert (code, out, err) == (0, "team 'beta' has no webhook in league 'test'\n", "")
    assert [row[1] for row in stored_webhooks(league)] == [league_author(league, "alpha")]


def league_author(league: League, name: str) -> int:
    database = open_database(sqlite_url(league.root / "data"))
    try:
        return database.author(name).id
    finally:
        database.close()


def test_the_public_feed_follows_the_dashboards_access(tmp_path: Path) -> None:
    league = league_in(tmp_path, GAME, web=True, public=False)
    try:
        web = league.server.web  # type: ignore[attr-defined]
        assert http(f"{web}/leagues/test/feed.atom")[0] == 401  # a private dashboard's feed needs its token
        token = league.operator.read_text().strip()
        code, _, body = http(f"{web}/leagues/test/feed.atom", headers={"Authorization": f"Bearer {token}"})
        assert code == 200 and b"<feed" in body
    finally:
        league.server.stop()


