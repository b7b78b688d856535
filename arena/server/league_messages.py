"""The league's answers (:mod:`arena.league.views`) as the LeagueService's messages (proto/dominoes/v1/league.proto):
each shape converted once, here. States go from their names to the protocol's enums; every other field keeps its
value (a time not come yet is 0.0 in both).
"""

from __future__ import annotations

from arena.league.play.table_logs import BotLog
from arena.league.views import (
    AddedAuthor,
    AuditView,
    AuthorView,
    BotSummary,
    BuildLog,
    ChallengeView,
    DialInAdded,
    FeedAddress,
    FinalsRank,
    FinalsState,
    Frozen,
    InviteMade,
    LadderQueue,
    Leaderboard,
    LeagueStatus,
    MemberAdded,
    MemberRevoked,
    MemberView,
    SignedUp,
    Standing,
    TableLogView,
    TableRated,
    TableView,
    TeamView,
    Uploaded,
    VersionView,
    WebhookView,
)
from arena.protocol import league_pb2 as lpb

VERSION_STATES = {name: lpb.VersionState.Value(f"VERSION_STATE_{name.upper()}") for name in
                  ("uploaded", "building", "checking", "ready", "failed", "suspended", "retired")}
"""A version's state by name, as the protocol's enum."""
TABLE_STATES = {name: lpb.TableState.Value(f"TABLE_STATE_{name.upper()}") for name in
                ("queued", "playing", "done", "failed")}
"""A table's (or a challenge's) state by name, as the protocol's enum."""


def author_pb(author: AuthorView) -> lpb.LeagueAuthor:
    return lpb.LeagueAuthor(name=author.name, created_at=author.created_at, revoked_at=author.revoked_at)


def added_author_pb(added: AddedAuthor) -> lpb.AddAuthorResponse:
    return lpb.AddAuthorResponse(author=author_pb(added.author), token=added.token)


def revoked_pb(author: AuthorView) -> lpb.RevokeTokenResponse:
    return lpb.RevokeTokenResponse(author=author_pb(author))


def member_pb(member: MemberView) -> lpb.TeamMember:
    return lpb.TeamMember(name=member.name, captain=member.captain, created_at=member.created_at,
                          revoked_at=member.revoked_at)


def team_pb(team: TeamView) -> lpb.LeagueTeam:
    return lpb.LeagueTeam(name=team.name, state=team.state, created_at=team.created_at, revoked_at=team.revoked_at,
                          league=team.league, members=[member_pb(m) for m in team.members])


def signed_up_pb(signed: SignedUp) -> lpb.SignUpResponse:
    return lpb.SignUpResponse(team=team_pb(signed.team), token=signed.token)


def invite_pb(made: InviteMade) -> lpb.CreateInviteResponse:
    return lpb.CreateInviteResponse(code=made.code, league=made.league, uses=made.uses, expires_at=made.expires_at)


def decided_pb(team: TeamView) -> lpb.DecideTeamResponse:
    return lpb.DecideTeamResponse(team=team_pb(team))


def teams_pb(teams: list[TeamView]) -> lpb.ListTeamsResponse:
    return lpb.ListTeamsResponse(teams=[team_pb(t) for t in teams])


def member_added_pb(added: MemberAdded) -> lpb.AddMemberResponse:
    return lpb.AddMemberResponse(team=added.team, member=member_pb(added.member), token=added.token)


def member_revoked_pb(revoked: MemberRevoked) -> lpb.RevokeMemberResponse:
    return lpb.RevokeMemberResponse(team=revoked.team, member=member_pb(revoked.member), removed=revoked.removed)


def audit_pb(entries: list[AuditView]) -> lpb.GetAuditResponse:
    return lpb.GetAuditResponse(entries=[lpb.AuditEntry(at=e.at, actor=e.actor, action=e.action, detail=e.detail,
                                                        team=e.team) for e in entries])


def version_pb(version: VersionView) -> lpb.BotVersion:
    return lpb.BotVersion(id=version.id, league=version.league, bot=version.bot, author=version.author,
                          number=version.number, sha256=version.sha256, state=VERSION_STATES[version.state],
                          reason=version.reason, created_at=version.created_at, updated_at=version.updated_at,
                          active=version.active, dial_in=version.dial_in)


def uploaded_pb(uploaded: Uploaded) -> lpb.UploadResponse:
    return lpb.UploadResponse(version=version_pb(uploaded.version), created=uploaded.created)


def dial_in_pb(added: DialInAdded) -> lpb.AddDialInVersionResponse:
    return lpb.AddDialInVersionResponse(version=version_pb(added.version), token=added.token,
                                        connect_as=added.connect_as)


def bots_pb(bots: list[BotSummary]) -> lpb.ListBotsResponse:
    return lpb.ListBotsResponse(bots=[lpb.LeagueBot(league=b.league, name=b.name, author=b.author,
                                                    versions=b.versions, active_version=b.active_version)
                                      for b in bots])


def versions_pb(versions: list[VersionView]) -> lpb.ListVersionsResponse:
    return lpb.ListVersionsResponse(versions=[version_pb(v) for v in versions])


def build_log_pb(log: BuildLog) -> lpb.GetBuildLogResponse:
    return lpb.GetBuildLogResponse(version=version_pb(log.version), build_log=log.build_log,
                                   check_report=log.check_report)


def table_pb(table: TableView) -> lpb.LadderTable:
    return lpb.LadderTable(id=table.id, versions=table.versions, version_ids=table.version_ids,
                           reason=table.reason, state=TABLE_STATES[table.state], created_at=table.created_at,
                           started_at=table.started_at, ended_at=table.ended_at, error=table.error,
                           points=table.points)


def bot_log_pb(log: BotLog) -> lpb.BotLog:
    return lpb.BotLog(name=log.name, tail=log.tail, size=log.size, truncated=log.truncated)


def table_log_pb(found: TableLogView) -> lpb.GetTableLogResponse:
    return lpb.GetTableLogResponse(table=table_pb(found.table), version=found.version,
                                   logs=[bot_log_pb(log) for log in found.logs])


def retired_pb(version: VersionView) -> lpb.RetireVersionResponse:
    return lpb.RetireVersionResponse(version=version_pb(version))


def reinstated_pb(version: VersionView) -> lpb.ReinstateVersionResponse:
    return lpb.ReinstateVersionResponse(version=version_pb(version))


def standing_pb(row: Standing) -> lpb.LadderStanding:
    return lpb.LadderStanding(
        rank=row.rank, version_id=row.version_id, bot=row.bot, number=row.number, author=row.author,
        rating=row.rating, rating_low=row.rating_low, rating_high=row.rating_high, sigma=row.sigma,
        online_mu=row.online_mu, deal_sets=row.deal_sets, games=row.games, state=VERSION_STATES[row.state],
        rank_best=row.rank_best, rank_worst=row.rank_worst, fitted=row.fitted, tied_with=row.tied_with,
        form=row.form)


def leaderboard_pb(board: Leaderboard) -> lpb.GetLadderStandingsResponse:
    return lpb.GetLadderStandingsResponse(league=board.league, rating=board.rating,
                                          standings=[standing_pb(row) for row in board.standings],
                                          deal_sets_fitted=board.deal_sets_fitted,
                                          deal_sets_rated=board.deal_sets_rated, rank_rule=board.rank_rule)


def queue_pb(queue: LadderQueue) -> lpb.GetLadderQueueResponse:
    return lpb.GetLadderQueueResponse(league=queue.league, concurrency=queue.concurrency,
                                      playing=[table_pb(t) for t in queue.playing],
                                      next=[table_pb(t) for t in queue.next],
                                      recent=[table_pb(t) for t in queue.recent], note=queue.note)


def table_rated_pb(rated: TableRated) -> lpb.WatchLadderResponse:
    return lpb.WatchLadderResponse(table=table_pb(rated.table), ratings=[standing_pb(row) for row in rated.ratings],
                                   deal_sets_fitted=rated.deal_sets_fitted)


def challenge_pb(challenge: ChallengeView) -> lpb.LeagueChallenge:
    return lpb.LeagueChallenge(
        id=challenge.id, league=challenge.league, author=challenge.author, version_id=challenge.version_id,
        version=challenge.version, opponent_id=challenge.opponent_id, opponent=challenge.opponent,
        deal_sets=challenge.deal_sets, state=TABLE_STATES[challenge.state], verdict=challenge.verdict,
        sprt_state=challenge.sprt_state, elo=challenge.elo, elo_low=challenge.elo_low, elo_high=challenge.elo_high,
        units=challenge.units, error=challenge.error, created_at=challenge.created_at,
        started_at=challenge.started_at, ended_at=challenge.ended_at, outcome=challenge.outcome,
        outcome_why=challenge.outcome_why)


def challenged_pb(challenge: ChallengeView) -> lpb.ChallengeResponse:
    return lpb.ChallengeResponse(challenge=challenge_pb(challenge))


def challenges_pb(challenges: list[ChallengeView]) -> lpb.ListChallengesResponse:
    return lpb.ListChallengesResponse(challenges=[challenge_pb(c) for c in challenges])


def got_challenge_pb(challenge: ChallengeView) -> lpb.GetChallengeResponse:
    return lpb.GetChallengeResponse(challenge=challenge_pb(challenge))


def frozen_pb(frozen: Frozen) -> lpb.FreezeResponse:
    return lpb.FreezeResponse(league=frozen.league, frozen_at=frozen.frozen_at, field=frozen.field,
                              field_ids=frozen.field_ids)


def finals_rank_pb(row: FinalsRank) -> lpb.FinalsRank:
    return lpb.FinalsRank(rank=row.rank, version=row.version, version_id=row.version_id, rating=row.rating,
                          rating_low=row.rating_low, rating_high=row.rating_high, deal_sets=row.deal_sets,
                          tied_with=row.tied_with)


def finals_pb(finals: FinalsState) -> lpb.FinalsResponse:
    return lpb.FinalsResponse(league=finals.league, state=finals.state, folder=finals.folder, games=finals.games,
                              scheduled=finals.scheduled, ranking=[finals_rank_pb(row) for row in finals.ranking],
                              error=finals.error, results_at=finals.results_at, format=finals.format)


def status_pb(status: LeagueStatus) -> lpb.GetStatusResponse:
    return lpb.GetStatusResponse(league=status.league, title=status.title, variant=status.variant,
                                 phase=status.phase, next_phase=status.next_phase, next_at=status.next_at,
                                 next=status.next, results_published=status.results_published, opens=status.opens,
                                 freeze=status.freeze, finals=status.finals, results=status.results, now=status.now,
                                 variant_title=status.variant_title, players=status.players,
                                 time_control=status.time_control)


def feed_pb(feed: FeedAddress) -> lpb.GetFeedUrlResponse:
    return lpb.GetFeedUrlResponse(league=feed.league, team=feed.team, path=feed.path)


def webhook_pb(webhook: WebhookView) -> lpb.SetWebhookResponse:
    return lpb.SetWebhookResponse(league=webhook.league, team=webhook.team, url=webhook.url, secret=webhook.secret)
