"""Teams in a real ``arena serve --league`` (six leagues, one per ``[signup]`` rule tried) with its web dashboard:
teams sign up with an invite on the command line and through the web's form (a real HTTP client), captains add
members who upload and appear in the audit log by name, a member's revoked token stops working while the captain's
keeps working, a member of one team never touches another team's bots over gRPC, and every refusal of a sign-up is
its one exact line with nothing changed in the database."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from pathlib import Path

import grpc
import pytest
import sqlalchemy as sa

from arena.league.authors import hash_token
from arena.league.clock import utc_now
from arena.league.storage.db import open_database, sqlite_url
from arena.protocol import league_pb2 as lpb
from arena.web.access import AUTHOR_COOKIE, SIGNUP_COOKIE
from support.league import GAME, TOKEN_LINE, League, bearer, bot_folder, invite, league_in, saved, web_form
from support.paths import ROOT
from support.web import http, set_cookie

RANDOM = ROOT / "bots" / "python" / "random_bot.py"
LEAGUES = {
    "test": '[signup]\nmode = "invite"\nmax_teams = 2\nper_address_per_hour = 10\n',
    "closed": "",
    "inv": '[signup]\nmode = "invite"\nper_address_per_hour = 10\n',
    "capped": '[signup]\nmode = "approval"\nmax_teams = 1\nper_address_per_hour = 10\n',
    "open": '[signup]\nmode = "approval"\nper_address_per_hour = 1\n',
    "busy": '[signup]\nmode = "approval"\nper_address_per_hour = 10\nper_league_per_hour = 1\n',
}
"""Each league's ``[signup]`` (the game is the test league's): ``closed`` keeps the default, the operator's mode."""


def league_text(name: str) -> str:
    return GAME.replace('name = "test"', f'name = "{name}"', 1) + LEAGUES[name]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("teams")
    extra: list[str] = []
    for name in LEAGUES:
        if name != "test":
            path = root / f"{name}.toml"
            path.write_text(league_text(name))
            extra += ["--league", str(path)]
    league = league_in(root, league_text("test"), web=True, public=False, extra=tuple(extra))
    try:
        yield league
    finally:
        league.server.stop()


WRITTEN = {"authors": "*", "members": "*", "invites": "*", "audit": "*", "bots": "*",
           "versions": "id, bot_id, number, sha256"}
"""What :func:`written` compares: every column, but a version's state (the pipeline moves it on meanwhile)."""


def written(league: League) -> dict[str, list[tuple]]:
    """The rows a sign-up or a team's change may write (equal before and after: nothing changed), read from the
    server's own database."""
    database = open_database(sqlite_url(league.root / "data"))
    try:
        with database.engine.connect() as connection:
            return {name: [tuple(row) for row in connection.execute(sa.text(f"SELECT {columns} FROM {name} ORDER BY "
                                                                            f"id"))]
                    for name, columns in WRITTEN.items()}
    finally:
        database.close()


def sign_up(league: League, team: str, *more: str) -> tuple[int, str, str]:
    """``arena league sign-up TEAM ...`` without a token: its status, stdout and stderr."""
    done = league.server.cli("league", "sign-up", team, *more)
    return done.returncode, done.stdout, done.stderr


def versions(league: League, token: str, bot: str = "") -> list[lpb.BotVersion]:
    return list(league.stub().ListVersions(lpb.ListVersionsRequest(league="test", bot=bot), timeout=30,
                                           metadata=bearer(token)).versions)


def refused(league: League, args: tuple[str, ...], line: str, token: Path | None = None) -> None:
    """The command is refused with exactly this line, and nothing of the league's database changed."""
    before = written(league)
    done = league.league(*args, token=token) if token else league.server.cli(*args)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: {line}\n")
    assert written(league) == before


def test_teams_sign_up_by_cli_and_web_and_a_members_upload_is_audited(served: League) -> None:
    league = served
    web = league.server.web  # type: ignore[attr-defined]
    code, out, err = sign_up(league, "Alpha", "--invite", invite(league, "test"), "--league", "test")
    assert code == 0, err
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}\n", out)
    assert err == ("team 'Alpha' signed up. The token of its captain 'captain' (shown this once, the server keeps only "
                   "its hash; save it in a private file (umask 077; cat > FILE), and give the file to --token-file; "
                   "sign in on the web dashboard with it at /signin):\n")
    alpha = saved(league, "Alpha", out)

    # another team through the web's form, whose page shows the captain's token once and is never cached
    cookie, csrf = web_form(league, "test")
    code, headers, page = http(f"{web}/leagues/test/signup", headers={"Cookie": f"{SIGNUP_COOKIE}={cookie}"},
                               form={"csrf": csrf, "team": "beta", "captain": "bea", "invite": invite(league, "test")})
    text = page.decode()
    assert code == 200 and headers["cache-control"] == "no-store", text[:500]
    assert '<p class="message" id="outcome">team beta signed up; the token of its captain bea:</p>' in text
    header = '<b id="league-title">test</b> · Block (no drawing), 2 players · 2 s a move · <b>open</b>'
    assert header in text and header in http(f"{web}/leagues/test/signup")[2].decode()  # the form's page too
    beta_token = TOKEN_LINE.search(text).group(1)
    code, headers, _ = http(f"{web}/signin", form={"token": beta_token, "next": "/leagues/test/mine"})
    assert code == 303 and headers["location"] == "/leagues/test/mine"
    session = {"Cookie": f"{AUTHOR_COOKIE}={set_cookie(headers, AUTHOR_COOKIE)}"}
    code, _, page = http(f"{web}/leagues/test/mine", headers=session)
    assert code == 200 and "signed in as author &#x27;beta&#x27;" in page.decode()
    teams = league.stub().ListTeams(lpb.ListTeamsRequest(), metadata=bearer(beta_token), timeout=30).teams
    assert [(t.name, t.state, t.league, [(m.name, m.captain) for m in t.members]) for t in teams] == [
        ("beta", "active", "test", [("bea", True)])]

    # the league's cap: a third team is refused, whatever its invite
    refused(league, ("league", "sign-up", "gamma", "--invite", invite(league, "test"), "--league", "test"),
            "permission denied: sign-up refused: league 'test' has 2 teams signed up, its cap (signup.max_teams = 2)")

    # Alpha's captain adds bob, who uploads: the audit names bob
    done = league.league("add-member", "bob", token=alpha)
    assert done.returncode == 0 and done.stderr.startswith("member 'bob' added to team 'Alpha'; its token (shown")
    bob = saved(league, "Alpha-bob", done.stdout)
    done = league.league("upload", str(bot_folder(league.root / "alpha-bot", RANDOM)), "--bot", "alpha-bot",
                         "--league", "test", token=bob)
    assert done.returncode == 0, done.stderr
    version = versions(league, league.token("Alpha-bob"))[-1]
    assert (version.bot, version.author) == ("alpha-bot", "Alpha")
    upload = f"Alpha/bob: upload bot 'alpha-bot' version {version.id} (number 1)"
    for token in (alpha, bob):  # any member reads its team's audit
        done = league.league("audit", token=token)
        lines = [line.split(" ", 2)[2] for line in done.stdout.splitlines()]
        assert lines == ["Alpha/captain: sign-up team 'Alpha' from 127.0.0.1 (active)",
                         "Alpha/captain: add-member member 'bob'", upload], done.stdout
    done = league.league("audit", "--team", "Alpha", token=league.operator)
    assert done.stdout.splitlines()[-1].endswith(upload)
    league.server.wait_line(r"league audit \(actor=Alpha/bob action=upload detail=bot .alpha-bot. version", 30)


def test_a_revoked_members_token_stops_working_while_the_captains_keeps(served: League) -> None:
    league = served
    web = league.server.web  # type: ignore[attr-defined]
    captain = league.add_author("delta")
    done = league.league("add-member", "dan", token=captain)
    dan = saved(league, "delta-dan", done.stdout)
    code, headers, _ = http(f"{web}/signin", form={"token": league.token("delta-dan"), "next": "/"})
    assert code == 303
    assert set_cookie(headers, AUTHOR_COOKIE).startswith("delta/dan:")
    session = {"Cookie": f"{AUTHOR_COOKIE}={set_cookie(headers, AUTHOR_COOKIE)}"}
    assert http(f"{web}/leagues/test/mine", headers=session)[0] == 200
    assert league.league("bots", "--league", "test", token=dan).returncode == 0

    done = league.league("revoke-member", "dan", token=captain)
    assert done.returncode == 0 and done.stdout.splitlines()[0] == (
        "member 'dan' of team 'delta' revoked: its token stops working")
    refused(league, ("bots", "--league", "test"), "unauthenticated: the token of member 'dan' of team 'delta' was "
                                                  "revoked (ask its captain to add you again)", token=dan)
    assert http(f"{web}/leagues/test/mine", headers=session)[0] == 401  # its web session ended too
    assert league.league("bots", "--league", "test", token=captain).returncode == 0
    teams = league.league("teams", token=captain).stdout
    assert teams == "team delta (active)\n  captain (captain)\n  dan (revoked)\n"
    # only the captain revokes, and never itself
    done = league.league("add-member", "dora", token=captain)
    dora = saved(league, "delta-dora", done.stdout)
    refused(league, ("revoke-member", "captain"), "permission denied: member 'captain' is the captain of team 'delta', who stays: the "
                                                  "operator revokes the whole team (arena league revoke delta)",
            token=captain)
    refused(league, ("add-member", "eve"), "permission denied: member 'dora' of team 'delta' may not add a member to its team: only its "
                                           "captain may", token=dora)


def test_a_member_of_one_team_never_touches_another_teams_bots(served: League) -> None:
    league = served
    stub = league.stub()
    league.add_author("team-a")
    b_captain = league.add_author("team-b")
    done = league.league("add-member", "a2", token=league.tokens["team-a"])
    a2 = bearer(saved(league, "team-a-a2", done.stdout).read_text().strip())
    assert league.league("upload", str(bot_folder(league.root / "b-bot", RANDOM)), "--bot", "b-bot",
                         "--league", "test", token=b_captain).returncode == 0
    theirs = versions(league, league.token("team-b"))[-1]
    assert league.league("upload", str(bot_folder(league.root / "a-bot", RANDOM)), "--bot", "a-bot",
                         "--league", "test", token=league.tokens["team-a"]).returncode == 0
    a_version = versions(league, league.token("team-a"))[-1]
    before = written(league)

    attempts = {
        "retire": (lambda: stub.RetireVersion(lpb.RetireVersionRequest(version_id=theirs.id), metadata=a2, timeout=30),
                   f"author 'team-a' may not retire version {theirs.id}: it is another author's"),
        "build log": (lambda: stub.GetBuildLog(lpb.GetBuildLogRequest(version_id=theirs.id), metadata=a2, timeout=30),
                      f"author 'team-a' may not read the build log of version {theirs.id}: it is another author's"),
        "table log": (lambda: stub.GetTableLog(lpb.GetTableLogRequest(table_id=1, version_id=theirs.id),
                                               metadata=a2, timeout=30),  # refused before the table is looked at
                      f"author 'team-a' may not read the table logs of version {theirs.id}: it is another author's"),
        "versions": (lambda: stub.ListVersions(lpb.ListVersionsRequest(league="test", bot="b-bot"), metadata=a2,
                                               timeout=30),
                     "author 'team-a' may not list the versions of bot 'b-bot': it is another author's"),
        "challenge": (lambda: stub.Challenge(lpb.ChallengeRequest(league="test", version_id=theirs.id,
                                                                  opponent_id=a_version.id), metadata=a2, timeout=30),
                      f"author 'team-a' may not challenge with version {theirs.id}: it is another author's"),
        "add member": (lambda: stub.AddMember(lpb.AddMemberRequest(team="team-b", name="mole"), metadata=a2,
                                              timeout=30),
                       "author 'team-a' may not add a member to team 'team-b': it is another team"),
        "revoke member": (lambda: stub.RevokeMember(lpb.RevokeMemberRequest(team="team-b", name="captain"),
                                                    metadata=a2, timeout=30),
                          "author 'team-a' may not revoke a member of team 'team-b': it is another team"),
    }
    for what, (call, line) in attempts.items():
        with pytest.raises(grpc.RpcError) as caught:
            call()
        assert (caught.value.code(), caught.value.details()) == (grpc.StatusCode.PERMISSION_DENIED, line), what
    # its audit is its own team's only, whatever team it names
    entries = stub.GetAudit(lpb.GetAuditRequest(team="team-b"), metadata=a2, timeout=30).entries
    assert {e.team for e in entries} == {"team-a"}
    assert written(league) == before
    assert versions(league, league.token("team-b"), "b-bot")[-1].state != lpb.VERSION_STATE_RETIRED


def test_every_refused_sign_up_is_one_line_and_changes_nothing(served: League) -> None:
    league = served
    web = league.server.web  # type: ignore[attr-defined]
    refused(league, ("league", "sign-up", "x1", "--league", "closed"),
            "permission denied: sign-up is closed in league 'closed': its operator adds each team (arena league add-author)")
    code, _, page = http(f"{web}/leagues/closed/signup")
    assert code == 403 and html.escape("sign-up is closed in league 'closed'") in page.decode()

    refused(league, ("league", "sign-up", "x1", "--league", "inv"),
            "permission denied: sign-up refused: league 'inv' asks for an invite code (--invite CODE, from its operator)")
    refused(league, ("league", "sign-up", "x1", "--league", "inv", "--invite", "not-a-code"),
            "permission denied: sign-up refused: that invite code is not one of league 'inv'")
    refused(league, ("league", "sign-up", "x1", "--league", "inv", "--invite", invite(league, "test")),
            "permission denied: sign-up refused: that invite code is not one of league 'inv'")  # another league's code
    once = invite(league, "inv")
    assert sign_up(league, "first", "--league", "inv", "--invite", once)[0] == 0
    refused(league, ("league", "sign-up", "x1", "--league", "inv", "--invite", once),
            "permission denied: sign-up refused: that invite code is used up (its 1 use)")
    database = open_database(sqlite_url(league.root / "data"))
    try:  # a code made two hours ago for one hour
        database.add_invite(database.league("inv").id, hash_token("old-code"), 5, 1, now=utc_now() - timedelta(hours=2))
        expiry = (utc_now() - timedelta(hours=1)).strftime("%Y-%m-%d %H:")
    finally:
        database.close()
    before = written(league)
    code, out, err = sign_up(league, "x1", "--league", "inv", "--invite", "old-code")
    assert (code, out) == (1, "") and re.fullmatch(
        rf"error: permission denied: sign-up refused: that invite code expired at {re.escape(expiry)}\d\d UTC\n", err), err
    assert written(league) == before
    league.add_author("Omega")
    for name, line in (("OMEGA", "invalid argument: sign-up refused: the name 'OMEGA' is taken by team 'Omega' (names are unique "
                                 "regardless of case)"),
                       ("FIRST", "invalid argument: sign-up refused: the name 'FIRST' is taken by team 'first' (names are unique "
                                 "regardless of case)"),
                       ("Omega", "invalid argument: sign-up refused: the name 'Omega' is taken")):
        refused(league, ("league", "sign-up", name, "--league", "inv", "--invite", invite(league, "inv")), line)

    assert sign_up(league, "c1", "--league", "capped")[0] == 0
    refused(league, ("league", "sign-up", "c2", "--league", "capped"),
            "permission denied: sign-up refused: league 'capped' has 1 teams signed up, its cap (signup.max_teams = 1)")
    assert sign_up(league, "b1", "--league", "busy")[0] == 0
    refused(league, ("league", "sign-up", "b2", "--league", "busy"),
            "permission denied: sign-up refused: 1 teams signed up to league 'busy' in the last hour, its limit "
            "(signup.per_league_per_hour = 1); try later")

    # approval: the team can do nothing until approved; the address's rate is then spent
    code, out, err = sign_up(league, "waiting", "--league", "open")
    assert code == 0 and err.startswith("team 'waiting' signed up; it can do nothing until the operator approves it "
                                        "(arena league approve waiting). The token of its captain 'captain'")
    waiting = saved(league, "waiting", out)
    refused(league, ("league", "sign-up", "w2", "--league", "open"),
            "permission denied: sign-up refused: 1 teams signed up from your address in the last hour, the limit of league 'open' "
            "(signup.per_address_per_hour = 1); try later")
    store = sorted((league.root / "data" / "league" / "store").rglob("*"))
    refused(league, ("upload", str(bot_folder(league.root / "early", RANDOM)), "--bot", "early", "--league", "open"),
            "permission denied: team 'waiting' is awaiting the operator's approval: it can do nothing until then", token=waiting)
    assert sorted((league.root / "data" / "league" / "store").rglob("*")) == store
    code, _, page = http(f"{web}/signin", form={"token": league.token("waiting"), "next": "/"})
    assert code == 401 and html.escape("team 'waiting' is awaiting the operator's approval") in page.decode()
    done = league.league("approve", "waiting", token=league.operator)
    assert (done.returncode, done.stdout) == (0, "team 'waiting' is approved (active)\n")
    assert league.league("bots", "--league", "open", token=waiting).returncode == 0
    refused(league, ("reject", "waiting"), "failed precondition: team 'waiting' is not awaiting approval (it is active)",
            token=league.operator)


def test_the_web_sign_up_refuses_a_form_without_its_csrf_token_or_from_another_site(served: League) -> None:
    league = served
    web = league.server.web  # type: ignore[attr-defined]
    cookie, csrf = web_form(league, "capped")
    other_cookie, _ = web_form(league, "capped")  # another visitor's: its page's token is not this one's
    url = f"{web}/leagues/capped/signup"
    before = written(league)
    for headers, form in (({}, {"team": "sneaky", "csrf": csrf}),                                   # no cookie
                          ({"Cookie": f"{SIGNUP_COOKIE}={cookie}"}, {"team": "sneaky"}),             # no token
                          ({"Cookie": f"{SIGNUP_COOKIE}={other_cookie}"}, {"team": "sneaky", "csrf": csrf}),
                          ({"Cookie": f"{SIGNUP_COOKIE}={cookie}", "Origin": "http://evil.example"},
                           {"team": "sneaky", "csrf": csrf})):
        code, _, page = http(url, headers=headers, form=form)
        assert code == 403, (headers, form)
        assert "refused: " in page.decode()
    assert written(league) == before
