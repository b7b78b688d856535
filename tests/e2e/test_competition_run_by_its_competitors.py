"""A competition run by its competitors, once, through a real ``arena serve --league --http`` on SQLite: the operator
makes an invite; team Alpha signs up with it on the command line and team Beta through the web form, each captain
getting its token once; Alpha's captain adds a member who uploads a Perl bot through the stdio kit, Beta uploads a
Python bot, both ready while the league is upcoming; each team sets a webhook to a receiver of its own and reads its
private feed's address. Then the league opens, freezes, plays its finals and publishes their results by itself at
the times its file gives (a timeline seconds long, computed as the test writes the file), through a stop and a start
of the server while frozen. Asserted: each team's feed shows its own version's notice and the public phase notices,
never the other team's; the public feed shows neither team's; each receiver got its team's events only, each signed
with the secret its team was shown; the audit names Alpha's member as the uploader; the published finals rank both
versions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arena.protocol import league_pb2 as lpb
from arena.web.access import SIGNUP_COOKIE
from support.league import (LADDER_LEAGUE, READY, TOKEN_LINE, League, bearer, bot_folder, invite, league_in,
                            perl_folder, restarted, saved, status, wait_phase, web_form, whole_seconds)
from support.notices import Receiver, checked, titles
from support.paths import ROOT
from support.waiting import wait_for
from support.web import http

UPCOMING_S = 75
"""From writing the league file to its opening: two sign-ups, two uploads built and checked in the sandbox."""
FINALS_S = 120
"""Generous: the finals are two games of Block to 1 point between two sandboxed bots, after a server's start."""
DELIVERY_S = 60
NOTICES = "[notices]\nallow_private_webhooks = true\nretry_s = 0.2\nattempts = 5\ntimeout_s = 5\n"


def league_text(opens: datetime, freeze: datetime, finals: datetime, results: datetime) -> str:
    def toml(moment: datetime) -> str:
        return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")

    return ('interpreters = ["python3", "perl"]\n' + LADDER_LEAGUE + '[signup]\nmode = "invite"\n' + NOTICES +
            f"[timeline]\nopens = {toml(opens)}\nfreeze = {toml(freeze)}\nfinals = {toml(finals)}\n"
            f"results = {toml(results)}\n[finals]\ndeal_sets = 1\n")


def feed_path(league: League, token: Path) -> str:
    """The team's private feed's address on the dashboard (its path: a restarted server has another port)."""
    web = league.server.web  # type: ignore[attr-defined]
    done = league.league("feed-url", "--web", web, token=token)
    assert done.returncode == 0 and done.stdout.startswith(web + "/leagues/test/feed/"), done.stdout + done.stderr
    return done.stdout.strip().removeprefix(web)


def test_a_competition_run_by_its_competitors(tmp_path: Path) -> None:
    opens = whole_seconds(UPCOMING_S)
    freeze, finals = opens + timedelta(seconds=15), opens + timedelta(seconds=25)
    results = finals + timedelta(seconds=35)
    league = league_in(tmp_path, league_text(opens, freeze, finals, results), web=True)
    receivers = {"Alpha": Receiver(), "beta": Receiver()}
    try:
        web = league.server.web  # type: ignore[attr-defined]
        # team Alpha signs up on the command line with the operator's invite, team beta through the web form
        done = league.server.cli("league", "sign-up", "Alpha", "--invite", invite(league, "test"), "--league", "test")
        assert done.returncode == 0 and "shown this once" in done.stderr, done.stderr
        alpha = saved(league, "Alpha", done.stdout)
        cookie, csrf = web_form(league, "test")
        code, _, page = http(f"{web}/leagues/test/signup", headers={"Cookie": f"{SIGNUP_COOKIE}={cookie}"},
                             form={"csrf": csrf, "team": "beta", "captain": "bea", "invite": invite(league, "test")})
        shown = TOKEN_LINE.search(page.decode())
        assert code == 200 and shown is not None, page[:500]
        beta = saved(league, "beta", shown.group(1))

        # each team's webhook to a receiver of its own, and its private feed, before anything is told to it
        secrets, feeds = {}, {}
        for team, token in (("Alpha", alpha), ("beta", beta)):
            done = league.league("webhook", "set", receivers[team].url, token=token)
            assert done.returncode == 0, done.stderr
            secrets[team] = done.stdout.strip()
            feeds[team] = feed_path(league, token)

        # Alpha's captain adds bob, who uploads a Perl bot; beta's captain uploads a Python bot
        done = league.league("add-member", "bob", token=alpha)
        assert done.returncode == 0, done.stderr
        bob = saved(league, "Alpha-bob", done.stdout)
        done = league.league("upload", str(perl_folder(tmp_path / "camel")), "--bot", "camel", token=bob)
        assert done.returncode == 0, done.stderr
        league.upload("beta", bot_folder(tmp_path / "snake", ROOT / "bots" / "python" / "random_bot.py"), "snake")

        camel = league.settled(league.token("Alpha-bob"), "camel")
        snake = league.settled(league.token("beta"), "snake")
        assert (camel.state, snake.state) == (READY, READY), (camel.reason, snake.reason)
        assert (camel.author, snake.author) == ("Alpha", "beta")
        assert status(league, league.token("beta")).phase == "upcoming"  # both ready before the opening

        # the timeline moves the league by itself; the server is stopped while frozen and started again
        wait_phase(league, league.token("beta"), "open", UPCOMING_S + 60)
        wait_phase(league, league.token("beta"), "frozen")
        league.server.stop()
        league = restarted(league, None, web=True)
        web = league.server.web  # type: ignore[attr-defined]
        assert status(league, league.token("beta")).phase in ("frozen", "finals")
        wait_phase(league, league.token("beta"), "finals")
        shown_status = league.league("status", token=alpha)
        assert shown_status.returncode == 0 and ", finals;" in shown_status.stdout, shown_status.stdout
        wait_phase(league, league.token("beta"), "done", (results - datetime.now(UTC)).total_seconds() + FINALS_S)

        # the published finals rank both teams' versions
        ranking = league.stub().Finals(lpb.FinalsRequest(), timeout=30, metadata=bearer(league.token("beta"))).ranking
        assert sorted(row.version_id for row in ranking) == sorted((camel.id, snake.id))
        assert sorted(row.rank for row in ranking) in (["1", "2"], ["1–2", "1–2"])  # apart, or tied

        # the feeds: each team's own version and the public notices; the public feed neither team's
        public = titles(f"{web}/leagues/test/feed.atom")
        assert {"test: open", "test: frozen", "test: finals", "the finals of test are published"} <= set(public)
        assert not any(title.startswith(("camel-", "snake-")) for title in public), public
        assert [t for t in titles(web + feeds["Alpha"]) if t not in public] == ["camel-v1 is ready"]
        assert [t for t in titles(web + feeds["beta"]) if t not in public] == ["snake-v1 is ready"]
        assert [t for t in titles(web + feeds["Alpha"]) if t in public] == public
        assert [t for t in titles(web + feeds["beta"]) if t in public] == public

        # each receiver: its own team's events and the public ones, each signed with its team's secret
        for team, version in (("Alpha", "camel-v1 is ready"), ("beta", "snake-v1 is ready")):
            try:
                wait_for(lambda got=receivers[team].got: len(got()) >= len(public) + 1, DELIVERY_S,
                         f"{team}'s deliveries")
            except AssertionError as missing:  # say what did arrive
                raise AssertionError(f"{team} got {[json.loads(body)['title'] for _, body in receivers[team].got()]}"
                                     f", the public feed shows {public}") from missing
            events = [checked(secrets[team], headers, body) for headers, body in receivers[team].got()]
            assert [e["title"] for e in events if e["team"] is not None] == [version]
            assert {e["team"] for e in events} == {team, None}
            assert sorted(e["title"] for e in events if e["team"] is None) == sorted(public)

        # the audit names Alpha's member as the uploader
        done = league.league("audit", token=alpha)
        assert done.returncode == 0, done.stderr
        assert any(line.endswith(f"Alpha/bob: upload bot 'camel' version {camel.id} (number 1)")
                   for line in done.stdout.splitlines()), done.stdout
    finally:
        league.server.stop()
        for receiver in receivers.values():
            receiver.stop()
