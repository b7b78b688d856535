"""Teams of members in the league's database, on SQLite and a real PostgreSQL: the migration that makes each author a
team whose captain keeps its token, sign-ups under each ``[signup]`` rule (each refusal's exact line, nothing
written), invite codes, members' own tokens revoked alone, the operator's approval, and the audit log."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from alembic import command

from arena.league.authors import (Authenticator, add_member, audit, create_author, decide_team, hash_token,
                                  issue_token, new_invite, revoke, revoke_member, sign_up)
from arena.league.clock import utc_now
from arena.league.rules.config import SignupSettings
from arena.league.rules.errors import LeagueError, NotFound, PermissionDenied, StateError, Unauthenticated
from arena.league.rules.permissions import OPERATOR, Caller
from arena.league.storage.db import (Database, alembic_config, create_engine, newest_revision, open_database,
                                     schema_revision)

from support.league import database, database_url, league  # noqa: F401 - the fixtures, on both databases

OPERATOR_TOKEN = "operator-token-0123456789abcdef"
INVITE = SignupSettings(mode="invite", max_teams=3, per_address_per_hour=2, per_league_per_hour=3)
APPROVAL = SignupSettings(mode="approval")


def written(database: Database) -> dict[str, list[tuple]]:
    """Every row a sign-up or a member's change may write: equal before and after means nothing changed."""
    with database.engine.connect() as connection:
        return {name: [tuple(row) for row in connection.execute(sa.text(f"SELECT * FROM {name} ORDER BY id"))]
                for name in ("authors", "members", "invites", "audit")}


def signed(database: Database, league_id: int, name: str, settings: SignupSettings = INVITE,
           address: str = "10.0.0.1", invite: str | None = None) -> tuple:
    return sign_up(database, league_id, "ladder", settings, name, "", address, invite)


# --- the migration ------------------------------------------------------------------------------------------------

def test_each_author_becomes_a_team_whose_captain_keeps_its_token(database_url: str) -> None:
    engine = create_engine(database_url)
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0006")
        now = utc_now()
        connection.execute(sa.text("INSERT INTO leagues (id, name, title, variant, created_at) VALUES "
                                   "(1, 'ladder', 'Ladder', 'draw', :now)"), {"now": now})
        for author_id, name in ((1, "alice"), (2, "bob"), (3, "ALICE")):  # two names apart only in case, as allowed
            connection.execute(sa.text("INSERT INTO authors (id, name, token_hash, created_at) VALUES "
                                       "(:id, :name, :hash, :now)"),
                               {"id": author_id, "name": name, "hash": hash_token(f"old-token-{name}"), "now": now})
        connection.execute(sa.text("INSERT INTO bots (id, league_id, author_id, name, created_at) VALUES "
                                   "(1, 1, 2, 'bobbot', :now)"), {"now": now})
    engine.dispose()
    database = open_database(database_url)  # migrates to the newest revision
    try:
        assert schema_revision(database.engine) == newest_revision()
        gate = Authenticator(database, OPERATOR_TOKEN)
        for name in ("alice", "bob", "ALICE"):
            caller = gate.caller(f"old-token-{name}")  # every old token keeps working, as its team's captain
            assert caller.author is not None and caller.author.name == name and caller.author.state == "active"
            assert caller.member is not None and (caller.member.name, caller.member.captain) == ("captain", True)
            assert [m.name for m in database.members(caller.author.id)] == ["captain"]
        with database.engine.connect() as connection:
            keys = dict(connection.execute(sa.text("SELECT name, name_key FROM authors")).all())
            assert not connection.execute(sa.text("SELECT count(*) FROM audit")).scalar_one()
        assert keys == {"alice": "alice", "bob": "bob", "ALICE": None}  # the older one keeps the key
        assert database.bots(1)[0].author_id == database.author("bob").id
        with pytest.raises(LeagueError, match=r"^sign-up refused: the name 'Alice' is taken by team 'alice' \(names "
                                              r"are unique regardless of case\)$"):
            signed(database, 1, "Alice", SignupSettings(mode="approval"))
    finally:
        database.close()


# --- sign-ups -----------------------------------------------------------------------------------------------------

def test_a_team_signs_up_with_an_invite_until_it_is_used_up(database: Database, league) -> None:
    invite, code = new_invite(database, OPERATOR, league.id, 2, 24)
    assert (invite.uses, invite.used) == (2, 0) and len(code) >= 22
    team, token = signed(database, league.id, "Team-One", invite=code)
    assert (team.name, team.state, team.league_id) == ("Team-One", "active", league.id)
    caller = Authenticator(database, OPERATOR_TOKEN).caller(token)
    assert caller.author == team and caller.is_captain and caller.member.name == "captain"
    signed(database, league.id, "team-two", address="10.0.0.2", invite=code)
    assert database.invites(league.id)[0].used == 2
    before = written(database)
    with pytest.raises(PermissionDenied, match=r"^sign-up refused: that invite code is used up \(its 2 uses\)$"):
        signed(database, league.id, "team-three", address="10.0.0.3", invite=code)
    assert written(database) == before
    with database.engine.connect() as connection:  # only the code's hash is stored
        assert code not in str(connection.execute(sa.text("SELECT * FROM invites")).all())


@pytest.mark.parametrize("settings, invite, message", [
    (SignupSettings(), None, r"^sign-up is closed in league 'ladder': its operator adds each team \(arena league "
                             r"add-author\)$"),
    (INVITE, None, r"^sign-up refused: league 'ladder' asks for an invite code \(--invite CODE, from its "
                   r"operator\)$"),
    (INVITE, "not-a-code", r"^sign-up refused: that invite code is not one of league 'ladder'$"),
])
def test_a_closed_league_or_a_wrong_invite_writes_nothing(database: Database, league, settings, invite,
                                                          message: str) -> None:
    new_invite(database, OPERATOR, league.id, 5, 24)
    before = written(database)
    with pytest.raises(PermissionDenied, match=message):
        signed(database, league.id, "newcomers", settings, invite=invite)
    assert written(database) == before


def test_an_expired_invite_is_refused(database: Database, league) -> None:
    _, code = new_invite(database, OPERATOR, league.id, 5, 1)
    database.sign_up(league.id, "ladder", INVITE, "early", "captain", hash_token("t1"), "10.0.0.1",
                     hash_token(code))
    before = written(database)
    later = utc_now() + timedelta(hours=2)
    with pytest.raises(PermissionDenied, match=r"^sign-up refused: that invite code expired at \d{4}-\d\d-\d\d "
                                               r"\d\d:\d\d UTC$"):
        database.sign_up(league.id, "ladder", INVITE, "late", "captain", hash_token("t2"), "10.0.0.2",
                         hash_token(code), now=later)
    assert written(database) == before


def test_names_are_unique_regardless_of_case_and_checked(database: Database, league) -> None:
    create_author(database, "alice")
    before = written(database)
    for name, message in (
            ("ALICE", r"^sign-up refused: the name 'ALICE' is taken by team 'alice' \(names are unique regardless "
                      r"of case\)$"),
            ("alice", r"^sign-up refused: the name 'alice' is taken$"),
            ("../root", r"^a team's name must be 1 to 64 letters, digits, '\.', '-' or '_' \(starting with a letter "
                        r"or digit\), got '\.\./root'$")):
        with pytest.raises(LeagueError, match=message):
            signed(database, league.id, name, APPROVAL)
        assert written(database) == before
    with pytest.raises(LeagueError, match=r"^the name 'Alice' is taken by author 'alice' \(names are unique "
                                          r"regardless of case\)$"):
        create_author(database, "Alice")  # the operator's too


def test_the_cap_and_the_rate_limits_refuse_and_write_nothing(database: Database, league) -> None:
    _, code = new_invite(database, OPERATOR, league.id, 100, 24)
    signed(database, league.id, "a1", invite=code, address="10.0.0.1")
    signed(database, league.id, "a2", invite=code, address="10.0.0.1")
    before = written(database)
    with pytest.raises(PermissionDenied, match=r"^sign-up refused: 2 teams signed up from your address in the last "
                                               r"hour, the limit of league 'ladder' \(signup.per_address_per_hour = 2\); "
                                               r"try later$"):
        signed(database, league.id, "a3", invite=code, address="10.0.0.1")
    assert written(database) == before
    signed(database, league.id, "b1", invite=code, address="10.0.0.2")
    before = written(database)
    with pytest.raises(PermissionDenied, match=r"^sign-up refused: 3 teams signed up to league 'ladder' in the last "
                                               r"hour, its limit \(signup.per_league_per_hour = 3\); try later$"):
        signed(database, league.id, "c1", invite=code, address="10.0.0.3")
    assert written(database) == before
    roomy = SignupSettings(mode="invite", max_teams=3, per_address_per_hour=10, per_league_per_hour=10)
    with pytest.raises(PermissionDenied, match=r"^sign-up refused: league 'ladder' has 3 teams signed up, its cap "
                                               r"\(signup.max_teams = 3\)$"):
        signed(database, league.id, "c1", roomy, invite=code, address="10.0.0.3")
    assert written(database) == before
    # an hour later the rates allow it again: only the cap stays
    later = utc_now() + timedelta(hours=1, minutes=1)
    database.sign_up(league.id, "ladder", SignupSettings(mode="invite", per_address_per_hour=2,
                                                         per_league_per_hour=3), "d1", "captain", hash_token("d1"),
                     "10.0.0.1", hash_token(code), now=later)


def test_a_team_awaiting_approval_can_do_nothing_until_approved(database: Database, league) -> None:
    team, token = signed(database, league.id, "waiting", APPROVAL)
    gate = Authenticator(database, OPERATOR_TOKEN)
    assert team.state == "pending"
    with pytest.raises(PermissionDenied, match=r"^team 'waiting' is awaiting the operator's approval: it can do "
                                               r"nothing until then$"):
        gate.caller(token)
    with pytest.raises(PermissionDenied, match=r"only the operator may"):
        decide_team(database, Caller(create_author(database, "someone")[0]),
                    "waiting", True)
    assert decide_team(database, OPERATOR, "waiting", True).state == "active"
    assert gate.caller(token).author.name == "waiting"
    with pytest.raises(StateError, match=r"^team 'waiting' is not awaiting approval \(it is active\)$"):
        decide_team(database, OPERATOR, "waiting", False)
    rejected, rejected_token = signed(database, league.id, "spam", APPROVAL, address="10.0.0.9")
    assert decide_team(database, OPERATOR, "spam", False).state == "rejected"
    with pytest.raises(PermissionDenied, match=r"^team 'spam' was rejected by the operator: it can do nothing$"):
        gate.caller(rejected_token)


# --- members ------------------------------------------------------------------------------------------------------

def test_members_have_their_own_tokens_revoked_alone(database: Database, league) -> None:
    gate = Authenticator(database, OPERATOR_TOKEN)
    team, captain_token = create_author(database, "alpha")
    captain = gate.caller(captain_token)
    _, bob, bob_token = add_member(database, captain, "", "bob")
    as_bob = gate.caller(bob_token)
    assert as_bob == captain and as_bob.member.name == "bob" and not as_bob.is_captain  # the same team
    with pytest.raises(PermissionDenied, match=r"^member 'bob' of team 'alpha' may not add a member to its team: only "
                                               r"its captain may$"):
        add_member(database, as_bob, "", "carol")
    with pytest.raises(LeagueError, match=r"^team 'alpha' has a member 'bob' already"):
        add_member(database, captain, "", "BOB")
    other = gate.caller(create_author(database, "beta")[1])
    with pytest.raises(PermissionDenied, match=r"^author 'beta' may not revoke a member of team 'alpha': it is another "
                                               r"team$"):
        revoke_member(database, other, "alpha", "bob", False)
    with pytest.raises(PermissionDenied, match=r"^member 'captain' is the captain of team 'alpha', who stays"):
        revoke_member(database, captain, "", "captain", False)
    _, revoked = revoke_member(database, captain, "", "bob", False)
    assert revoked.revoked
    with pytest.raises(Unauthenticated, match=r"^the token of member 'bob' of team 'alpha' was revoked"):
        gate.caller(bob_token)
    assert gate.caller(captain_token) == captain  # the captain's keeps working
    _, carol, carol_token = add_member(database, OPERATOR, "alpha", "carol")  # the operator names the team
    revoke_member(database, OPERATOR, "alpha", "carol", True)
    with pytest.raises(Unauthenticated, match="wrong token"):
        gate.caller(carol_token)
    with pytest.raises(NotFound, match=r"^team 'alpha' has no member 'carol'$"):
        database.member(team.id, "carol")
    # the whole team revoked: every member's token refused; a new captain's token brings the team back
    _, _, dave_token = add_member(database, captain, "", "dave")
    revoke(database, "alpha")
    for token in (captain_token, dave_token):
        with pytest.raises(Unauthenticated, match=r"^the token of author 'alpha' was revoked"):
            gate.caller(token)
    fresh = issue_token(database, "alpha")
    assert gate.caller(fresh).is_captain and gate.caller(dave_token).member.name == "dave"


def test_the_audit_names_the_member(database: Database, league) -> None:
    gate = Authenticator(database, OPERATOR_TOKEN)
    team, captain_token = create_author(database, "alpha")
    _, _, bob_token = add_member(database, gate.caller(captain_token), "", "bob")
    audit(database, gate.caller(bob_token), league.id, "upload", "bot 'b' version 1 (number 1)")
    audit(database, OPERATOR, None, "revoke", "team 'alpha'", team)
    entries = database.audit(league_id=league.id, author_id=team.id)
    assert [(e.actor, e.action, e.detail, e.author_id) for e in entries] == [
        ("alpha/bob", "upload", "bot 'b' version 1 (number 1)", team.id),
        ("the operator", "revoke", "team 'alpha'", team.id)]
