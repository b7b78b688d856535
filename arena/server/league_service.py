"""The ``LeagueService`` gRPC service (proto/dominoes/v1/league.proto): the grpcio handlers of the league's use cases
(:class:`arena.league.core.LeagueCore`).

Each handler runs on a gRPC thread, reads the caller's token from the call's metadata, receives an upload's chunks
(the core counts them against the league's limit as they come, into a private temporary file, and checks the
archive off the loop), hands the call to the trio side with ``trio.from_thread.run``, and converts its answer to
the protocol's message (:mod:`arena.server.league_messages`). Refusals become status codes with their one line
(:mod:`arena.server.status`, shared with the Arena's service); nothing escapes as UNKNOWN with a traceback.

The server's own token check (arena/server/auth.py) lets this service's calls through (:data:`METHOD_PREFIX`): an
author's token is not the server's, and the league resolves tokens itself. The operator's token is the server's.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar, TypeVarTuple

import grpc
import grpc.aio
import trio

from arena.league.core import LeagueCore
from arena.protocol import league_pb2 as lpb
from arena.protocol import league_pb2_grpc as lpb_grpc
from arena.server.auth import AUTH_HEADER, SCHEME
from arena.server.core import ApiError, Refusal
from arena.server.league_messages import (
    added_author_pb,
    audit_pb,
    bots_pb,
    build_log_pb,
    challenged_pb,
    challenges_pb,
    decided_pb,
    dial_in_pb,
    feed_pb,
    finals_pb,
    frozen_pb,
    got_challenge_pb,
    invite_pb,
    leaderboard_pb,
    member_added_pb,
    member_revoked_pb,
    queue_pb,
    reinstated_pb,
    retired_pb,
    revoked_pb,
    signed_up_pb,
    status_pb,
    table_log_pb,
    table_rated_pb,
    teams_pb,
    uploaded_pb,
    versions_pb,
    webhook_pb,
)
from arena.server.status import handled

Args = TypeVarTuple("Args")
Result = TypeVar("Result")

WATCH_WAIT_S = 5.0
"""How long one step of a watch waits for a table to end before it looks whether its client is still there."""


def token_of(context: grpc.ServicerContext) -> str | None:
    """The bearer token of a call's metadata, or None."""
    for key, value in context.invocation_metadata() or ():
        if key == AUTH_HEADER:
            text = value.decode() if isinstance(value, bytes) else value
            return text[len(SCHEME):].strip() if text.startswith(SCHEME) else None
    return None


def client_address(peer: str) -> str:
    """The client's address of a call's peer (``ipv4:10.0.0.1:5000``, ``ipv6:[::1]:5000``, ``unix:PATH``),
    without its port: what the sign-up's rate limit per address counts."""
    kind, _, rest = urllib.parse.unquote(peer).partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    if kind == "ipv6":
        host = rest.rpartition(":")[0] or rest
        return host.strip("[]")
    return kind or "unknown"


def _chunks(requests: Iterator[lpb.UploadRequest]) -> Iterator[bytes]:
    """An upload's archive bytes from its messages after the first (each must be a chunk)."""
    for request in requests:
        if request.WhichOneof("part") != "chunk":
            raise ApiError(Refusal.INVALID_ARGUMENT,
                           "an upload has one UploadStart, first; the rest are chunks")
        yield request.chunk


ShareLinks = Callable[[str, int], tuple[str, int]]
"""The dashboard's share links (:meth:`arena.web.access.Signer.league_link`, given by ``arena serve`` when it serves
one): a league's name and hours (0: the default) to the link's path and its expiry, or a ValueError with the line
saying why not."""


class LeagueServicer(lpb_grpc.LeagueServiceServicer):
    """The grpcio handlers; each runs on a gRPC thread and reaches :class:`LeagueCore` through ``trio.from_thread``."""

    def __init__(self, core: LeagueCore, trio_token: trio.lowlevel.TrioToken, upload_folder: Path,
                 share: ShareLinks | None = None) -> None:
        self.core = core
        self.trio_token = trio_token
        self.upload_folder = upload_folder
        self.share = share

    def _trio(self, function: Callable[[*Args], Awaitable[Result]], *args: *Args) -> Result:
        return trio.from_thread.run(function, *args, trio_token=self.trio_token)

    @handled
    def AddAuthor(self, request: lpb.AddAuthorRequest, context: grpc.ServicerContext) -> Any:
        return added_author_pb(self._trio(self.core.add_author, token_of(context), request.name))

    @handled
    def RevokeToken(self, request: lpb.RevokeTokenRequest, context: grpc.ServicerContext) -> Any:
        return revoked_pb(self._trio(self.core.revoke_token, token_of(context), request.author))

    @handled
    def SignUp(self, request: lpb.SignUpRequest, context: grpc.ServicerContext) -> Any:
        return signed_up_pb(self._trio(self.core.sign_up, request.league, request.team, request.invite,
                                       client_address(context.peer()), request.captain))

    @handled
    def CreateInvite(self, request: lpb.CreateInviteRequest, context: grpc.ServicerContext) -> Any:
        return invite_pb(self._trio(self.core.create_invite, token_of(context), request.league, request.uses,
                                    request.hours))

    @handled
    def DecideTeam(self, request: lpb.DecideTeamRequest, context: grpc.ServicerContext) -> Any:
        return decided_pb(self._trio(self.core.decide_team, token_of(context), request.team, request.approve))

    @handled
    def ListTeams(self, request: lpb.ListTeamsRequest, context: grpc.ServicerContext) -> Any:
        return teams_pb(self._trio(self.core.list_teams, token_of(context), request.league))

    @handled
    def AddMember(self, request: lpb.AddMemberRequest, context: grpc.ServicerContext) -> Any:
        return member_added_pb(self._trio(self.core.add_member, token_of(context), request.team, request.name))

    @handled
    def RevokeMember(self, request: lpb.RevokeMemberRequest, context: grpc.ServicerContext) -> Any:
        return member_revoked_pb(self._trio(self.core.revoke_member, token_of(context), request.team, request.name,
                                            request.remove))

    @handled
    def GetAudit(self, request: lpb.GetAuditRequest, context: grpc.ServicerContext) -> Any:
        return audit_pb(self._trio(self.core.audit, token_of(context), request.team, request.limit))

    @handled
    def GetFeedUrl(self, request: lpb.GetFeedUrlRequest, context: grpc.ServicerContext) -> Any:
        return feed_pb(self._trio(self.core.feed_address, token_of(context), request.league, request.regenerate))

    @handled
    def SetWebhook(self, request: lpb.SetWebhookRequest, context: grpc.ServicerContext) -> Any:
        return webhook_pb(self._trio(self.core.set_webhook, token_of(context), request.league, request.url))

    @handled
    def ShareLeague(self, request: lpb.ShareLeagueRequest, context: grpc.ServicerContext) -> Any:
        name = self._trio(self.core.share_league, token_of(context), request.league)
        if self.share is None:
            raise ApiError(Refusal.FAILED_PRECONDITION, "this server serves no web dashboard (arena serve --http "
                                                        "ADDR): a share link would open nothing")
        try:
            path, expires = self.share(name, request.hours)
        except ValueError as error:
            raise ApiError(Refusal.INVALID_ARGUMENT, str(error)) from None
        return lpb.ShareLeagueResponse(league=name, path=path, expires_at=expires)

    @handled
    def Upload(self, requests: Iterator[lpb.UploadRequest], context: grpc.ServicerContext) -> Any:
        first = next(requests, None)
        if first is None or first.WhichOneof("part") != "start":
            raise ApiError(Refusal.INVALID_ARGUMENT, "an upload starts with a message naming the league "
                                                             "and the bot (UploadStart), then the archive's chunks")
        return uploaded_pb(self._trio(self.core.upload, token_of(context), first.start.league, first.start.bot,
                                      _chunks(requests), self.upload_folder))

    @handled
    def AddDialInVersion(self, request: lpb.AddDialInVersionRequest, context: grpc.ServicerContext) -> Any:
        return dial_in_pb(self._trio(self.core.add_dial_in, token_of(context), request.league, request.bot))

    @handled
    def ListBots(self, request: lpb.ListBotsRequest, context: grpc.ServicerContext) -> Any:
        return bots_pb(self._trio(self.core.list_bots, token_of(context), request.league))

    @handled
    def ListVersions(self, request: lpb.ListVersionsRequest, context: grpc.ServicerContext) -> Any:
        return versions_pb(self._trio(self.core.list_versions, token_of(context), request.league, request.bot))

    @handled
    def GetBuildLog(self, request: lpb.GetBuildLogRequest, context: grpc.ServicerContext) -> Any:
        return build_log_pb(self._trio(self.core.build_log, token_of(context), request.version_id))

    @handled
    def GetTableLog(self, request: lpb.GetTableLogRequest, context: grpc.ServicerContext) -> Any:
        return table_log_pb(self._trio(self.core.table_log, token_of(context), request.table_id,
                                       request.version_id))

    @handled
    def RetireVersion(self, request: lpb.RetireVersionRequest, context: grpc.ServicerContext) -> Any:
        return retired_pb(self._trio(self.core.retire, token_of(context), request.version_id))

    @handled
    def ReinstateVersion(self, request: lpb.ReinstateVersionRequest, context: grpc.ServicerContext) -> Any:
        return reinstated_pb(self._trio(self.core.reinstate, token_of(context), request.version_id))

    @handled
    def GetLadderStandings(self, request: lpb.GetLadderStandingsRequest, context: grpc.ServicerContext) -> Any:
        return leaderboard_pb(self._trio(self.core.ladder_standings, token_of(context), request.league))

    @handled
    def GetLadderQueue(self, request: lpb.GetLadderQueueRequest, context: grpc.ServicerContext) -> Any:
        return queue_pb(self._trio(self.core.ladder_queue, token_of(context), request.league))

    @handled
    def Challenge(self, request: lpb.ChallengeRequest, context: grpc.ServicerContext) -> Any:
        return challenged_pb(self._trio(self.core.challenge, token_of(context), request.league, request.version_id,
                                        request.opponent_id, request.deal_sets))

    @handled
    def ListChallenges(self, request: lpb.ListChallengesRequest, context: grpc.ServicerContext) -> Any:
        return challenges_pb(self._trio(self.core.list_challenges, token_of(context), request.league))

    @handled
    def GetChallenge(self, request: lpb.GetChallengeRequest, context: grpc.ServicerContext) -> Any:
        return got_challenge_pb(self._trio(self.core.get_challenge, token_of(context), request.id))

    @handled
    def Freeze(self, request: lpb.FreezeRequest, context: grpc.ServicerContext) -> Any:
        return frozen_pb(self._trio(self.core.freeze, token_of(context), request.league))

    @handled
    def Finals(self, request: lpb.FinalsRequest, context: grpc.ServicerContext) -> Any:
        return finals_pb(self._trio(self.core.finals, token_of(context), request.league, request.start,
                                    request.deal_sets, request.tables))

    @handled
    def GetStatus(self, request: lpb.GetStatusRequest, context: grpc.ServicerContext) -> Any:
        return status_pb(self._trio(self.core.status, token_of(context), request.league))

    def WatchLadder(self, request: lpb.WatchLadderRequest, context: grpc.ServicerContext) -> Iterator[lpb.WatchLadderResponse]:
        """Each table that ends from now on, while the client listens (refusals as the other calls': the first
        step checks the token before anything is sent)."""
        after, _ = self._watch_step(request, context, None, 0.0)
        while context.is_active():
            after, messages = self._watch_step(request, context, after, WATCH_WAIT_S)
            yield from messages

    @handled
    def _watch_step(self, request: lpb.WatchLadderRequest, context: grpc.ServicerContext, after: int | None,
                    wait_s: float) -> tuple[int, list[lpb.WatchLadderResponse]]:
        serial, ended = self._trio(self.core.watch_ladder, token_of(context), request.league, after, wait_s)
        return serial, [table_rated_pb(rated) for rated in ended]


def add_to_server(server: grpc.Server | grpc.aio.Server, servicer: LeagueServicer) -> None:
    lpb_grpc.add_LeagueServiceServicer_to_server(servicer, server)


SERVICE_NAME = lpb.DESCRIPTOR.services_by_name["LeagueService"].full_name
METHOD_PREFIX = f"/{SERVICE_NAME}/"
"""The path prefix of this service's calls, which the server's own token check lets through."""
