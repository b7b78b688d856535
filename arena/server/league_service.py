"""The ``LeagueService`` gRPC service (proto/dominoes/v1/league.proto): the grpc.aio handlers of the league's use cases
(:class:`arena.league.core.LeagueCore`).

Each handler is a coroutine on the loop that trio runs in as a guest (:mod:`arena.guest`): it reads the caller's
token from the call's metadata, hands the call to the trio side (:func:`arena.guest.await_trio`; the database's
calls run on its worker threads there), and converts the answer to the protocol's message
(:mod:`arena.server.league_messages`). An upload's chunks are read from its request stream on the loop, counted
against the league's limit as they come and written to a private temporary file on a worker thread, and the
archive is checked on one (:func:`arena.league.intake.upload.received_upload`). ``WatchLadder`` waits on the
ladder's own event; grpc.aio cancels it when its client goes away or the server stops. Refusals become status codes
with their one line (:mod:`arena.server.status`, shared with the Arena's service); nothing escapes as UNKNOWN with a
traceback.

The server's own token check (arena/server/auth.py) lets this service's calls through (:data:`METHOD_PREFIX`): an
author's token is not the server's, and the league resolves tokens itself. The operator's token is the server's.
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, TypeVarTuple

import grpc
import grpc.aio

from arena import guest
from arena.league.core import LeagueCore
from arena.league.intake.archive import Packed
from arena.league.intake.upload import received_upload
from arena.league.rules.config import LeagueConfig
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
Context = grpc.aio.ServicerContext[Any, Any]


def token_of(context: Context) -> str | None:
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


async def _chunks(requests: AsyncIterator[lpb.UploadRequest]) -> AsyncIterator[bytes]:
    """An upload's archive bytes from its messages after the first (each must be a chunk)."""
    async for request in requests:
        if request.WhichOneof("part") != "chunk":
            raise ApiError(Refusal.INVALID_ARGUMENT,
                           "an upload has one UploadStart, first; the rest are chunks")
        yield request.chunk


ShareLinks = Callable[[str, int], tuple[str, int]]
"""The dashboard's share links (:meth:`arena.web.access.Signer.league_link`, given by ``arena serve`` when it serves
one): a league's name and hours (0: the default) to the link's path and its expiry, or a ValueError with the line
saying why not."""


class LeagueServicer(lpb_grpc.LeagueServiceServicer):
    """The grpc.aio handlers; each runs on the loop and awaits :class:`LeagueCore` on the trio side."""

    def __init__(self, core: LeagueCore, upload_folder: Path, share: ShareLinks | None = None) -> None:
        self.core = core
        self.upload_folder = upload_folder
        self.share = share

    async def _trio(self, function: Callable[[*Args], Awaitable[Result]], *args: *Args) -> Result:
        return await guest.await_trio(function, *args)

    @handled
    async def AddAuthor(self, request: lpb.AddAuthorRequest, context: Context) -> Any:
        return added_author_pb(await self._trio(self.core.add_author, token_of(context), request.name))

    @handled
    async def RevokeToken(self, request: lpb.RevokeTokenRequest, context: Context) -> Any:
        return revoked_pb(await self._trio(self.core.revoke_token, token_of(context), request.author))

    @handled
    async def SignUp(self, request: lpb.SignUpRequest, context: Context) -> Any:
        return signed_up_pb(await self._trio(self.core.sign_up, request.league, request.team, request.invite,
                                             client_address(context.peer()), request.captain))

    @handled
    async def CreateInvite(self, request: lpb.CreateInviteRequest, context: Context) -> Any:
        return invite_pb(await self._trio(self.core.create_invite, token_of(context), request.league, request.uses,
                                          request.hours))

    @handled
    async def DecideTeam(self, request: lpb.DecideTeamRequest, context: Context) -> Any:
        return decided_pb(await self._trio(self.core.decide_team, token_of(context), request.team, request.approve))

    @handled
    async def ListTeams(self, request: lpb.ListTeamsRequest, context: Context) -> Any:
        return teams_pb(await self._trio(self.core.list_teams, token_of(context), request.league))

    @handled
    async def AddMember(self, request: lpb.AddMemberRequest, context: Context) -> Any:
        return member_added_pb(await self._trio(self.core.add_member, token_of(context), request.team, request.name))

    @handled
    async def RevokeMember(self, request: lpb.RevokeMemberRequest, context: Context) -> Any:
        return member_revoked_pb(await self._trio(self.core.revoke_member, token_of(context), request.team,
                                                  request.name, request.remove))

    @handled
    async def GetAudit(self, request: lpb.GetAuditRequest, context: Context) -> Any:
        return audit_pb(await self._trio(self.core.audit, token_of(context), request.team, request.limit))

    @handled
    async def GetFeedUrl(self, request: lpb.GetFeedUrlRequest, context: Context) -> Any:
        return feed_pb(await self._trio(self.core.feed_address, token_of(context), request.league, request.regenerate))

    @handled
    async def SetWebhook(self, request: lpb.SetWebhookRequest, context: Context) -> Any:
        return webhook_pb(await self._trio(self.core.set_webhook, token_of(context), request.league, request.url))

    @handled
    async def ShareLeague(self, request: lpb.ShareLeagueRequest, context: Context) -> Any:
        name = await self._trio(self.core.share_league, token_of(context), request.league)
        if self.share is None:
            raise ApiError(Refusal.FAILED_PRECONDITION, "this server serves no web dashboard (arena serve --http "
                                                        "ADDR): a share link would open nothing")
        try:
            path, expires = self.share(name, request.hours)
        except ValueError as error:
            raise ApiError(Refusal.INVALID_ARGUMENT, str(error)) from None
        return lpb.ShareLeagueResponse(league=name, path=path, expires_at=expires)

    @handled
    async def Upload(self, requests: AsyncIterable[lpb.UploadRequest], context: Context) -> Any:
        messages = aiter(requests)
        first = await anext(messages, None)
        if first is None or first.WhichOneof("part") != "start":
            raise ApiError(Refusal.INVALID_ARGUMENT, "an upload starts with a message naming the league "
                                                     "and the bot (UploadStart), then the archive's chunks")

        def receive(config: LeagueConfig) -> Awaitable[Packed]:  # from the trio side, once the caller may upload
            return guest.await_loop(received_upload(_chunks(messages), self.upload_folder, config))

        return uploaded_pb(await self._trio(self.core.upload_from, token_of(context), first.start.league,
                                            first.start.bot, receive))

    @handled
    async def AddDialInVersion(self, request: lpb.AddDialInVersionRequest, context: Context) -> Any:
        return dial_in_pb(await self._trio(self.core.add_dial_in, token_of(context), request.league, request.bot))

    @handled
    async def ListBots(self, request: lpb.ListBotsRequest, context: Context) -> Any:
        return bots_pb(await self._trio(self.core.list_bots, token_of(context), request.league))

    @handled
    async def ListVersions(self, request: lpb.ListVersionsRequest, context: Context) -> Any:
        return versions_pb(await self._trio(self.core.list_versions, token_of(context), request.league, request.bot))

    @handled
    async def GetBuildLog(self, request: lpb.GetBuildLogRequest, context: Context) -> Any:
        return build_log_pb(await self._trio(self.core.build_log, token_of(context), request.version_id))

    @handled
    async def GetTableLog(self, request: lpb.GetTableLogRequest, context: Context) -> Any:
        return table_log_pb(await self._trio(self.core.table_log, token_of(context), request.table_id,
                                             request.version_id))

    @handled
    async def RetireVersion(self, request: lpb.RetireVersionRequest, context: Context) -> Any:
        return retired_pb(await self._trio(self.core.retire, token_of(context), request.version_id))

    @handled
    async def ReinstateVersion(self, request: lpb.ReinstateVersionRequest, context: Context) -> Any:
        return reinstated_pb(await self._trio(self.core.reinstate, token_of(context), request.version_id))

    @handled
    async def GetLadderStandings(self, request: lpb.GetLadderStandingsRequest, context: Context) -> Any:
        return leaderboard_pb(await self._trio(self.core.ladder_standings, token_of(context), request.league))

    @handled
    async def GetLadderQueue(self, request: lpb.GetLadderQueueRequest, context: Context) -> Any:
        return queue_pb(await self._trio(self.core.ladder_queue, token_of(context), request.league))

    @handled
    async def Challenge(self, request: lpb.ChallengeRequest, context: Context) -> Any:
        return challenged_pb(await self._trio(self.core.challenge, token_of(context), request.league,
                                              request.version_id, request.opponent_id, request.deal_sets))

    @handled
    async def ListChallenges(self, request: lpb.ListChallengesRequest, context: Context) -> Any:
        return challenges_pb(await self._trio(self.core.list_challenges, token_of(context), request.league))

    @handled
    async def GetChallenge(self, request: lpb.GetChallengeRequest, context: Context) -> Any:
        return got_challenge_pb(await self._trio(self.core.get_challenge, token_of(context), request.id))

    @handled
    async def Freeze(self, request: lpb.FreezeRequest, context: Context) -> Any:
        return frozen_pb(await self._trio(self.core.freeze, token_of(context), request.league))

    @handled
    async def Finals(self, request: lpb.FinalsRequest, context: Context) -> Any:
        return finals_pb(await self._trio(self.core.finals, token_of(context), request.league, request.start,
                                          request.deal_sets, request.tables))

    @handled
    async def GetStatus(self, request: lpb.GetStatusRequest, context: Context) -> Any:
        return status_pb(await self._trio(self.core.status, token_of(context), request.league))

    async def WatchLadder(self, request: lpb.WatchLadderRequest, context: Context
                          ) -> AsyncIterator[lpb.WatchLadderResponse]:
        """Each table that ends from now on, while the client listens (refusals as the other calls': the first
        step checks the token before anything is sent). Each step waits on the ladder until a table ends; grpc.aio
        cancels the wait when the client goes away."""
        after, _ = await self._watch_step(request, context, None)
        while True:
            after, messages = await self._watch_step(request, context, after)
            for message in messages:
                yield message

    @handled
    async def _watch_step(self, request: lpb.WatchLadderRequest, context: Context, after: int | None
                          ) -> tuple[int, list[lpb.WatchLadderResponse]]:
        serial, ended = await self._trio(self.core.watch_ladder, token_of(context), request.league, after, math.inf)
        return serial, [table_rated_pb(rated) for rated in ended]


def add_to_server(server: grpc.aio.Server, servicer: LeagueServicer) -> None:
    lpb_grpc.add_LeagueServiceServicer_to_server(servicer, server)


SERVICE_NAME = lpb.DESCRIPTOR.services_by_name["LeagueService"].full_name
METHOD_PREFIX = f"/{SERVICE_NAME}/"
"""The path prefix of this service's calls, which the server's own token check lets through."""
