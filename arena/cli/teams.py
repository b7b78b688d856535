"""``arena league ...`` for teams: ``sign-up`` (no token needed: the league file's ``[signup]`` decides), the
operator's ``invite``, ``approve`` and ``reject``, a captain's ``add-member``, ``revoke-member`` and
``remove-member``, and ``teams`` and ``audit``, which any member reads for its own team and the operator for every
team. A token the server gives (a captain's, a member's, an invite code) is printed once on stdout, what it is on
stderr, so that ``> FILE`` keeps the token alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

from arena.cli.client import _client, _refused, _with_client, client_command, shown_once
from arena.display import safe_name
from arena.protocol import league_pb2 as lpb
from arena.protocol import league_pb2_grpc as lpb_grpc

SAVE_HINT = ("save it in a private file (umask 077; cat > FILE), and give the file to --token-file; sign in on the "
             "web dashboard with it at /signin")


def _run(args: argparse.Namespace, body: Any) -> int:
    def connect(args: argparse.Namespace) -> Any:
        client = _client(args)
        return dataclasses.replace(client, stub=lpb_grpc.LeagueServiceStub(client.channel))
    return _with_client(args, body, connect=connect)


def cmd_sign_up(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("SignUp", lpb.SignUpRequest(league=args.league, team=args.team, invite=args.invite,
                                                        captain=args.captain))
        team = reply.team
        captain = team.members[0].name if team.members else "captain"
        if team.state == "pending":
            what = ("signed up; it can do nothing until the operator approves it (arena league approve "
                    f"{safe_name(team.name)})")
        else:
            what = "signed up"
        return shown_once(f"team {safe_name(team.name)!r} {what}. The token of its captain {safe_name(captain)!r} "
                          f"(shown this once, the server keeps only its hash; {SAVE_HINT}):", reply.token)

    return _run(args, body)


def cmd_invite(args: argparse.Namespace) -> int:
    for flag, value in (("--uses", args.uses), ("--hours", args.hours)):
        if value < 1:
            return _refused(f"{flag} must be 1 or more, got {value}")

    def body(client: Any) -> int:
        reply = client.call("CreateInvite", lpb.CreateInviteRequest(league=args.league, uses=args.uses,
                                                                    hours=args.hours))
        expires = time.strftime("%Y-%m-%d %H:%M", time.gmtime(reply.expires_at))
        return shown_once(f"invite code to league {safe_name(reply.league)!r}: {reply.uses} "
                          f"{'sign-up' if reply.uses == 1 else 'sign-ups'} until {expires} UTC (shown this once, the "
                          f"server keeps only its hash); a team signs up with: arena league sign-up TEAM --invite CODE",
                          reply.code)

    return _run(args, body)


def cmd_decide(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("DecideTeam", lpb.DecideTeamRequest(team=args.team, approve=args.approve))
        print(f"team {safe_name(reply.team.name)!r} is {'approved' if args.approve else 'rejected'} "
              f"({reply.team.state})")
        return 0

    return _run(args, body)


def cmd_teams(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        teams = client.call("ListTeams", lpb.ListTeamsRequest(league=args.league)).teams
        if not teams:
            print("no teams")
        for team in teams:
            state = team.state + (", revoked" if team.revoked_at else "")
            where = f", signed up through {safe_name(team.league)}" if team.league else ""
            print(f"team {safe_name(team.name)} ({state}{where})")
            for member in team.members:
                marks = [m for m, on in (("captain", member.captain), ("revoked", member.revoked_at > 0)) if on]
                print(f"  {safe_name(member.name)}" + (f" ({', '.join(marks)})" if marks else ""))
        return 0

    return _run(args, body)


def cmd_add_member(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("AddMember", lpb.AddMemberRequest(team=args.team, name=args.name))
        return shown_once(f"member {safe_name(reply.member.name)!r} added to team {safe_name(reply.team)!r}; its token "
                          f"(shown this once, the server keeps only its hash; give it to the member, who should "
                          f"{SAVE_HINT}):", reply.token)

    return _run(args, body)


def cmd_revoke_member(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("RevokeMember", lpb.RevokeMemberRequest(team=args.team, name=args.name,
                                                                    remove=args.remove))
        done = "removed (its token stops working)" if reply.removed else "revoked: its token stops working"
        print(f"member {safe_name(reply.member.name)!r} of team {safe_name(reply.team)!r} {done}")
        if not reply.removed:
            print(f"its name stays listed; to free it: "
                  f"{client_command(args, 'league', 'remove-member', args.name)}")
        return 0

    return _run(args, body)


def cmd_audit(args: argparse.Namespace) -> int:
    if args.limit < 0:
        return _refused(f"--limit must be 1 or more, got {args.limit}")

    def body(client: Any) -> int:
        entries = client.call("GetAudit", lpb.GetAuditRequest(team=args.team, limit=args.limit)).entries
        if not entries:
            print("no entries")
        for e in entries:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(e.at))
            print(f"{when} {safe_name(e.actor)}: {e.action} {safe_name(e.detail, 500)}")
        return 0

    return _run(args, body)
