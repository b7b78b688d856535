"""The league's use cases: authors (teams of members, their sign-ups and the audit log), uploads, bots, versions,
logs, the ladder, challenges, the freeze, the finals and where the league is in its timeline.

:class:`LeagueCore` lives on the trio thread and does each call's work through
:class:`~arena.league.storage.db.AsyncDatabase` (database calls never block the loop). Every call that acts for
someone starts from the caller's credential (:class:`~arena.league.authors.Authenticator`), and every object it
touches is checked against that caller (:mod:`arena.league.authors`' ``require_*`` and ``owned_version``) before
anything is read or changed. It takes and answers the league's own types (:mod:`arena.league.views`) and refuses
with the league's errors (:mod:`arena.league.rules.errors`): each edge, the gRPC service (arena/server/) and the
web (arena/web/), shows them its own way.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import trio

from arena.league.authors import (
    Authenticator,
    add_member,
    audit,
    create_author,
    decide_team,
    new_invite,
    new_token,
    owned_version,
    reinstate_version,
    require_upload_quota,
    retire_version,
    revoke,
    revoke_member,
    sign_up,
)
from arena.league.clock import utc_now
from arena.league.intake.archive import Packed
from arena.league.intake.pipeline import Pipeline, Served
from arena.league.intake.store import Store
from arena.league.intake.upload import checked_upload
from arena.league.play.challenges import Challenges, request_challenge, version_name
from arena.league.play.finals import Finals, freeze_league, games_recorded, settings_json, settings_of
from arena.league.play.ladder import FROZEN, Ladder, left_because, upcoming_note
from arena.league.play.leaderboard import SYSTEM
from arena.league.play.pages import (
    BotHistory,
    FinalsPage,
    bot_history,
    finals_page,
    finished_finals_game,
    finished_table_game,
    games_written,
)
from arena.league.play.table_logs import table_log
from arena.league.play.table_run import RECORD, TABLES, entrant_name, rotations
from arena.league.play.timeline import Timekeeper, league_status
from arena.league.play.webhooks import Webhooks, checked_url
from arena.league.rules.board import BoardEntry, Form, bots_board
from arena.league.rules.config import LeagueConfig, shown_moment
from arena.league.rules.errors import LeagueError, NotFound, PermissionDenied, StateError
from arena.league.rules.lifecycle import DONE, QUEUED, TABLE_FAILED, UNFINISHED, active_version
from arena.league.rules.manifest import NAME_PATTERN as BOT_NAME
from arena.league.rules.model import (
    ACTIVE,
    ONLINE,
    AuditEntry,
    Author,
    Bot,
    ChallengeRow,
    LadderTable,
    Member,
    Notice,
    Version,
)
from arena.league.rules.notices import league_path
from arena.league.rules.permissions import (
    Caller,
    require_bot_owner,
    require_member,
    require_operator,
    sees_finals_results,
)
from arena.league.rules.rating import deal_set_totals
from arena.league.rules.retention import versions_to_delete
from arena.league.rules.timeline import FREEZE_STEP, OPEN, UPCOMING, Status, require_manual
from arena.league.rules.verdict import verdict_of
from arena.league.storage.db import AsyncDatabase, Database
from arena.league.views import (
    AddedAuthor,
    AuditView,
    AuthorView,
    BotPage,
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
from arena.players.dial_in import token_digest
from arena.tournament.likelihood import TIE_RULE

ENDED = (DONE, TABLE_FAILED)
RECENT_SHOWN = 10
"""The ended tables the queue shows, newest first."""


Credential = str | Caller | None
"""What a call starts from: a token (gRPC's metadata, or None), or a caller the web has already resolved."""
AUDIT_MOST = 200
"""The newest audit entries one call gives at most."""


class AuditLog(Protocol):
    """The server's structured log, where each audit entry is written too."""

    def info(self, event: str, **values: Any) -> None: ...


class LeagueCore:
    """The league's calls on the trio thread: each takes the caller's token first."""

    def __init__(self, database: AsyncDatabase, authenticator: Authenticator, store: Store,
                 leagues: dict[str, Served], pipeline: Pipeline, ladders: Mapping[str, Ladder] = {},
                 challenges: Mapping[str, Challenges] = {}, finals: Mapping[str, Finals] = {},
                 timekeepers: Mapping[str, Timekeeper] = {}, log: AuditLog | None = None,
                 webhooks: Mapping[str, Webhooks] = {}) -> None:
        """``ladders``: each league's ladder, by name (the standings, queue and watch calls read them);
        ``challenges``: each league's challenge slots, woken when one is asked for; ``finals``: each league's
        finals; ``timekeepers``: each league's timeline at work, woken when the operator moves its phase; ``log``: the
        server's log, where each audit entry is written too; ``webhooks``: each league's deliveries, woken when a
        notice may have been queued."""
        self.log = log
        self.webhooks = dict(webhooks)
        self.ladders = dict(ladders)
        self.timekeepers = dict(timekeepers)
        self.finals_of = dict(finals)
        self.challenges = dict(challenges)
        self.database = database
        self.authenticator = authenticator
        self.store = store
        self.leagues = leagues
        self.pipeline = pipeline

    async def caller(self, token: Credential) -> Caller:
        """The caller of a token; a :class:`Caller` already resolved is itself (the web's signed-in author, whose
        session cookie names it and never holds its token)."""
        if isinstance(token, Caller):
            return token
        return await self.database.run(lambda _db, given: self.authenticator.caller(given), token)

    def league(self, name: str) -> Served:
        """The league named (or the only one, when the name is empty)."""
        if not name and len(self.leagues) == 1:
            return next(iter(self.leagues.values()))
        if not name:
            raise LeagueError(f"name the league: this server runs {', '.join(sorted(self.leagues))}")
        try:
            return self.leagues[name]
        except KeyError:
            raise NotFound(f"no league {name!r} on this server (it runs {', '.join(sorted(self.leagues))})") from None

    async def add_author(self, token: Credential, name: str) -> AddedAuthor:
        caller = await self.caller(token)
        require_operator(caller, "create an author")
        author, secret = await self.database.run(create_author, name)
        await self._audit(caller, None, "add-author", f"team {author.name!r}", author)
        return AddedAuthor(author_view(author), secret)

    async def revoke_token(self, token: Credential, name: str) -> AuthorView:
        caller = await self.caller(token)
        require_operator(caller, "revoke a token")
        author = await self.database.run(revoke, name)
        await self._audit(caller, None, "revoke", f"team {author.name!r}", author)
        return author_view(author)

    # teams: sign-ups, members and the audit log

    async def sign_up(self, league: str, team: str, invite: str, address: str, captain: str = "") -> SignedUp:
        """A team signs up by itself through a league (no token: the league's ``[signup]`` decides), from the
        client's ``address``; its captain's token, shown once. A refusal is one line and changes nothing."""
        served = self.league(league)
        config = served.config
        author, secret = await self.database.run(sign_up, served.league_id, config.name, config.signup, team,
                                                 captain, address, invite or None)
        member = (await self.database.run(Database.members, author.id))[0]
        await self._audit(Caller(author, member), served.league_id, "sign-up",
                          f"team {author.name!r} from {address} ({author.state})")
        return SignedUp(await self._team_view(author), secret)

    async def create_invite(self, token: Credential, league: str, uses: int, hours: int) -> InviteMade:
        caller = await self.caller(token)
        served = self.league(league)
        invite, code = await self.database.run(new_invite, caller, served.league_id, uses, hours)
        await self._audit(caller, served.league_id, "invite", f"invite {invite.id}: {uses} {'use' if uses == 1 else 'uses'}, "
                                                              f"{hours} {'hour' if hours == 1 else 'hours'}")
        return InviteMade(code, served.config.name, invite.uses, invite.expires_at.timestamp())

    async def decide_team(self, token: Credential, team: str, approve: bool) -> TeamView:
        caller = await self.caller(token)
        author = await self.database.run(decide_team, caller, team, approve)
        await self._audit(caller, author.league_id, "approve" if approve else "reject", f"team {author.name!r}",
                          author)
        return await self._team_view(author)

    async def list_teams(self, token: Credential, league: str) -> list[TeamView]:
        caller = await self.caller(token)
        if caller.author is not None:
            return [await self._team_view(caller.author)]
        league_id = self.league(league).league_id if league else None
        teams = await self.database.run(Database.teams_of, league_id)
        return [await self._team_view(team) for team in teams]

    async def add_member(self, token: Credential, team: str, name: str) -> MemberAdded:
        caller = await self.caller(token)
        author, member, secret = await self.database.run(add_member, caller, team, name)
        await self._audit(caller, None, "add-member", f"member {member.name!r}", author)
        return MemberAdded(author.name, member_view(member), secret)

    async def revoke_member(self, token: Credential, team: str, name: str, remove: bool) -> MemberRevoked:
        caller = await self.caller(token)
        author, member = await self.database.run(revoke_member, caller, team, name, remove)
        await self._audit(caller, None, "remove-member" if remove else "revoke-member", f"member {member.name!r}",
                          author)
        return MemberRevoked(author.name, member_view(member), remove)

    async def audit(self, token: Credential, team: str, limit: int) -> list[AuditView]:
        """The newest entries, oldest first: a member's own team's; the operator's, every one or one team's."""
        caller = await self.caller(token)
        author = caller.author
        if author is None and team:
            author = await self.database.run(Database.author, team)
        limit = AUDIT_MOST if limit <= 0 else min(limit, AUDIT_MOST)
        entries = await self.database.run(Database.audit, None, author.id if author else None, limit)
        names = await self.database.run(Database.authors_by_id, [e.author_id for e in entries if e.author_id])
        return [AuditView(at=e.at.timestamp(), actor=e.actor, action=e.action, detail=e.detail,
                          team=names[e.author_id].name if e.author_id in names else "") for e in entries]

    async def _audit(self, caller: Caller, league_id: int | None, action: str, detail: str,
                     team: Author | None = None) -> AuditEntry:
        entry = await self.database.run(audit, caller, league_id, action, detail, team)
        if self.log is not None:
            self.log.info("league_audit", actor=entry.actor, action=action, detail=detail)
        return entry

    async def _team_view(self, author: Author) -> TeamView:
        members = await self.database.run(Database.members, author.id)
        league = next((s.config.name for s in self.leagues.values() if s.league_id == author.league_id), "")
        return TeamView(name=author.name, state=author.state, created_at=author.created_at.timestamp(),
                        revoked_at=_seconds(author.revoked_at), league=league,
                        members=tuple(member_view(m) for m in members))

    # notices: a team's private feed and its webhook

    async def feed_address(self, token: Credential, league: str, regenerate: bool = False) -> FeedAddress:
        """The caller's team's private feed of the league (members only): its address holds the team's secret feed
        token, made at the first call; ``regenerate`` replaces it (the old address stops working)."""
        caller = await self.caller(token)
        served = self.league(league)
        team = require_member(caller, "have a team's feed")
        secret = None
        if not regenerate:
            try:
                secret = await self.database.run(Database.feed_token, team.id)
            except NotFound:
                pass
        if secret is None:
            secret = await self.database.run(Database.feed_token, team.id, new_token())
            await self._audit(caller, served.league_id, "feed-token", "a new feed token" if regenerate else
                              "the first feed token")
        return FeedAddress(served.config.name, team.name, league_path(served.config.name, "feed", secret) + ".atom")

    async def team_feed(self, league: str, secret: str) -> tuple[Author, list[Notice]]:
        """The notices a private feed shows (its team's and the public ones, newest first) and its team; a
        wrong token, or one of a team that may not act (revoked, pending, rejected), is NotFound."""
        served = self.league(league)
        author_id = await self.database.run(Database.feed_holder, secret) if secret else None
        team = await self.database.run(Database.author_by_id, author_id) if author_id is not None else None
        if team is None or team.revoked or team.state != ACTIVE:
            raise NotFound("no such feed (its address may have been replaced: arena league feed-url)")
        return team, await self.database.run(Database.notices_of, served.league_id, team.id)

    async def public_feed(self, league: str) -> list[Notice]:
        """The league's public notices, newest first."""
        return await self.database.run(Database.notices_of, self.league(league).league_id)

    async def set_webhook(self, token: Credential, league: str, url: str) -> WebhookView:
        """The caller's team's webhook in the league (members only), its address checked and its host resolved now
        (:func:`.play.webhooks.checked_url`); the reply carries its signing secret, shown this once. An empty
        ``url`` clears it. A refusal stores nothing."""
        caller = await self.caller(token)
        served = self.league(league)
        team = require_member(caller, "set a webhook")
        if not url:
            had = await self.database.run(Database.clear_webhook, served.league_id, team.id)
            if had:
                await self._audit(caller, served.league_id, "webhook-clear", "the webhook")
            return WebhookView(served.config.name, team.name, "")
        await checked_url(url, served.config.notices)
        secret = new_token()
        await self.database.run(Database.set_webhook, served.league_id, team.id, url, secret)
        await self._audit(caller, served.league_id, "webhook-set", f"webhook {url[:200]!r}")
        self.wake_webhooks(served.config.name)
        return WebhookView(served.config.name, team.name, url, secret)

    def wake_webhooks(self, league: str) -> None:
        """A notice may have been queued: the league's deliveries look now rather than at their next poll."""
        if league in self.webhooks:
            self.webhooks[league].wake()

    async def start_upload(self, token: Credential, league: str, bot: str) -> tuple[Caller, Served]:
        """Before a byte is received: who uploads, to which league, and whether that bot is theirs to upload to."""
        caller = await self.caller(token)
        served = self.league(league)
        if not BOT_NAME.fullmatch(bot):
            raise LeagueError(f"a bot's name must be 1 to 64 letters, digits, '.', '-' or '_' (starting with a "
                              f"letter or digit), got {bot!r}")
        existing = await self._bot_or_none(served, bot)
        if existing is not None:
            require_bot_owner(caller, existing, "upload to")
        elif caller.author is None:
            raise LeagueError(f"no bot {bot!r} in league {served.config.name!r}: a bot is created by its author's "
                              f"first upload (the operator uploads only to existing bots)")
        return caller, served

    async def finish_upload(self, caller: Caller, served: Served, bot_name: str,
                            packed: Packed) -> Uploaded:
        """A checked archive becomes a version (or is found to be one already); the bot's oldest versions past
        ``authors.versions_kept`` are deleted to make room; the pipeline is woken."""
        config = served.config
        manifest = packed.manifest
        if not config.accepts_kit(manifest.kit):
            raise LeagueError(f"league {config.name!r} does not accept the {manifest.kit} kit (it accepts "
                              f"{', '.join(config.kits)})")
        refusal = config.interpreter_refusal(manifest)
        if refusal is not None:
            raise LeagueError(refusal)
        if config.variant not in manifest.variants:
            raise LeagueError(f"bot.toml's variants ({', '.join(manifest.variants)}) do not include the league's "
                              f"variant {config.variant!r}")
        problem = self.pipeline.builder.problem(manifest.kit)
        if problem is not None:
            raise StateError(f"this server cannot build {manifest.kit} versions yet: {problem}; nothing was stored")
        doomed: list[Version] = []
        bot = await self._bot_or_none(served, bot_name)
        if bot is not None:
            require_bot_owner(caller, bot, "upload to")  # again: it may have been created meanwhile
            versions = await self.database.run(Database.versions, bot.id, include_deleted=True)
            known = [v for v in versions if v.sha256 == packed.sha256]
            if known and known[0].deleted:
                raise StateError(f"this archive is version {known[0].number} of bot {bot.name!r}, deleted to keep "
                                 f"authors.versions_kept = {config.authors.versions_kept}: a deleted version does "
                                 f"not come back (change a file to make a new one); nothing was stored")
            if known:
                await trio.to_thread.run_sync(packed.discard)
                return Uploaded(await self._view(known[0]), created=False)
            doomed = room_for_one_more(bot, versions, config.authors.versions_kept)
        await self.database.run(require_upload_quota, caller, served.league_id, config.authors)
        await trio.to_thread.run_sync(self.store.put, packed)
        if bot is None:
            assert caller.author is not None
            bot = await self.database.run(Database.add_bot, served.league_id, caller.author.id, bot_name)
        version, created = await self.database.run(Database.add_version, bot.id, packed.sha256)
        if created:
            await self._audit(caller, served.league_id, "upload", f"bot {bot.name!r} version {version.id} "
                                                                  f"(number {version.number})", await self._team(bot))
            await self.pipeline.delete_versions(doomed, f"deleted to keep bot {bot.name!r} within "
                                                        f"authors.versions_kept = {config.authors.versions_kept}")
            self.pipeline.wake()
        return Uploaded(await self._view(version), created)

    async def add_dial_in(self, token: Credential, league: str, bot_name: str) -> DialInAdded:
        """A new dial-in version of one of the caller's bots (its author's only: the token it gets plays as it), ready
        at once; the bot's oldest versions past ``authors.versions_kept`` are deleted to make room, as for an
        upload, and the ladders look again (its author may connect now)."""
        caller, served = await self.start_upload(token, league, bot_name)
        config = served.config
        if not config.dial_in:
            raise StateError(f"league {config.name!r} does not accept dial-in versions (its league file would say "
                             f"dial_in = true)")
        if caller.author is None:
            raise PermissionDenied("only a bot's author adds its dial-in versions: the token is the author's to keep")
        await self.database.run(require_upload_quota, caller, served.league_id, config.authors)
        bot = await self._bot_or_none(served, bot_name)
        doomed: list[Version] = []
        if bot is None:
            bot = await self.database.run(Database.add_bot, served.league_id, caller.author.id, bot_name)
        else:
            versions = await self.database.run(Database.versions, bot.id, include_deleted=True)
            doomed = room_for_one_more(bot, versions, config.authors.versions_kept)
        secret = new_token()
        version = await self.database.run(Database.add_dial_in_version, bot.id, token_digest(secret))
        await self._audit(caller, served.league_id, "dial-in", f"bot {bot.name!r} version {version.id} "
                                                               f"(number {version.number})")
        await self.pipeline.delete_versions(doomed, f"deleted to keep bot {bot.name!r} within "
                                                    f"authors.versions_kept = {config.authors.versions_kept}")
        for ladder in self.ladders.values():
            ladder.wake()
        return DialInAdded(await self._view(version), secret, entrant_name(bot.name, version))

    async def upload(self, token: Credential, league: str, bot: str, chunks: Iterable[bytes],
                     folder: Path) -> Uploaded:
        """One upload of the web's form: :meth:`upload_from` with the chunks received and the archive checked on
        a worker thread (slow work stays off the loop)."""
        return await self.upload_from(token, league, bot,
                                      lambda config: trio.to_thread.run_sync(checked_upload, chunks, folder, config))

    async def upload_from(self, token: Credential, league: str, bot: str,
                          receive: Callable[[LeagueConfig], Awaitable[Packed]]) -> Uploaded:
        """One upload, whichever client sends it (the gRPC Upload's chunks, the web's form): who uploads and to
        which bot first, before a byte is read; then ``receive`` takes the bytes within the league's limits
        (``LeagueConfig.upload``) and checks the archive; then the new version."""
        caller, served = await self.start_upload(token, league, bot)
        packed = await receive(served.config)
        try:
            return await self.finish_upload(caller, served, bot, packed)
        finally:
            packed.discard()  # a no-op once the store took it

    async def list_bots(self, token: Credential, league: str) -> list[BotSummary]:
        caller = await self.caller(token)
        served = self.league(league)
        bots = await self.database.run(Database.bots, served.league_id,
                                       None if caller.author is None else caller.author.id)
        listed = []
        for bot in bots:
            versions = await self.database.run(Database.versions, bot.id)
            active = active_version(versions)
            listed.append(BotSummary(league=served.config.name, name=bot.name, author=await self._author(bot),
                                     versions=len(versions), active_version=active.id if active else 0))
        return listed

    async def list_versions(self, token: Credential, league: str, bot_name: str) -> list[VersionView]:
        caller = await self.caller(token)
        served = self.league(league)
        if bot_name:
            bot = await self.database.run(Database.bot, served.league_id, bot_name)
            require_bot_owner(caller, bot, "list the versions of")
            bots = [bot]
        else:
            bots = await self.database.run(Database.bots, served.league_id,
                                           None if caller.author is None else caller.author.id)
        views = []
        for bot in bots:
            for version in await self.database.run(Database.versions, bot.id):
                views.append(await self._view(version))
        return views

    async def build_log(self, token: Credential, version_id: int) -> BuildLog:
        caller = await self.caller(token)
        version = await self.database.run(owned_version, caller, version_id, "read the build log of")
        report = "" if version.check_report is None else json.dumps(version.check_report, indent=2)
        return BuildLog(await self._view(version), build_log=version.build_log or "", check_report=report)

    async def table_log(self, token: Credential, table_id: int, version_id: int) -> TableLogView:
        """A version's bot logs at a ladder table that ended: its author's (or the operator's) to read, with the
        refusals of :func:`.table_logs.table_log`, whichever client asks (gRPC, the web's page of an author's own)."""
        caller = await self.caller(token)
        found = await self.database.run(table_log, caller, table_id, version_id, self._table_folder)
        return TableLogView(await self._table(found.table), found.version, tuple(found.logs))

    def _table_folder(self, table: LadderTable) -> Path:
        """The run folder of a table of one of this server's ladders."""
        for ladder in self.ladders.values():
            if ladder.served.league_id == table.league_id:
                return ladder.table_folder(table)
        raise NotFound(f"table {table.id} is of no ladder this server runs")

    async def retire(self, token: Credential, version_id: int) -> VersionView:
        caller = await self.caller(token)
        version = await self.database.run(retire_version, caller, version_id)
        await self._audit_version(caller, version, "retire")
        for ladder in self.ladders.values():  # a table of it being played goes on without it: its games forfeit
            ladder.withdraw(version.id, left_because(version))
        return await self._view(version)

    async def reinstate(self, token: Credential, version_id: int) -> VersionView:
        """The operator's: a suspended version ready again; the ladders look again now, not at their next idle look."""
        caller = await self.caller(token)
        version = await self.database.run(reinstate_version, caller, version_id)
        await self._audit_version(caller, version, "reinstate")
        for ladder in self.ladders.values():
            ladder.wake()
        return await self._view(version)

    # the ladder: public to every caller with a valid token

    def ladder(self, name: str) -> Ladder:
        served = self.league(name)
        try:
            return self.ladders[served.config.name]
        except KeyError:
            raise NotFound(f"league {served.config.name!r} has no ladder on this server") from None

    async def ladder_standings(self, token: Credential, league: str) -> Leaderboard:
        await self.caller(token)
        return await self.standings(league)

    async def standings(self, league: str) -> Leaderboard:
        """The leaderboard, one row per bot: its active version's (the last refit's rows, then the versions rated
        since), each with its online rating and form, placed among the shown rows (:func:`bots_board`; a replaced
        version's rating stays in its bot's history). Public (no token): the gRPC call checks its caller first, and
        the web's spectators see it as it is."""
        ladder = self.ladder(league)
        league_id = ladder.served.league_id
        board = await self._board(ladder)
        rows = await self.database.run(bot_standing_rows, league_id, board, ladder.leaderboard.form)
        return Leaderboard(league=ladder.config.name, rating=SYSTEM, standings=tuple(rows),
                           deal_sets_fitted=ladder.leaderboard.fitted_results,
                           deal_sets_rated=ladder.leaderboard.tally.results, rank_rule=TIE_RULE,
                           title=ladder.config.title)

    async def _board(self, ladder: Ladder) -> list[BoardEntry]:
        return ladder.leaderboard.board(await self.database.run(Database.ratings, ladder.served.league_id, ONLINE))

    async def ladder_queue(self, token: Credential, league: str) -> LadderQueue:
        await self.caller(token)
        return await self.queue(league)

    async def queue(self, league: str) -> LadderQueue:
        """The tables being played, the ones the matchmaker would choose next (each with its reason) and the
        recently ended. Public (no token), as :meth:`standings`: a table being played shows only its sides and
        reason, never its games."""
        ladder = self.ladder(league)
        league_id = ladder.served.league_id
        playing = await self.database.run(Database.tables_in, league_id, UNFINISHED)
        recent = await self.database.run(Database.tables_in, league_id, ENDED, RECENT_SHOWN)
        plan = await ladder.plan(ladder.config.ladder.concurrency)
        proposed = [TableView(id=0, versions=tuple([await self._entrant(int(v)) for v in t.versions]),
                              version_ids=tuple(int(v) for v in t.versions), reason=t.reason, state=QUEUED)
                    for t in plan.tables]
        note = ladder.note if len(playing) < ladder.config.ladder.concurrency else plan.note
        phase = (await league_status(self.database, ladder.served)).phase
        if phase == UPCOMING:  # nothing is played yet
            proposed, note = [], upcoming_note(ladder.config)
        elif phase != OPEN:  # frozen: nothing comes next
            proposed, note = [], FROZEN
        return LadderQueue(league=ladder.config.name, concurrency=ladder.config.ladder.concurrency,
                           playing=tuple([await self._table(t) for t in playing]), next=tuple(proposed),
                           recent=tuple([await self._table(t) for t in recent]), note=note)

    async def bot_page(self, league: str, bot_name: str) -> BotPage:
        """What anyone may see of a bot: its author's name, its versions (as the service lists them) and its
        newest ended tables (:data:`RECENT_SHOWN`). Public (no token): the web picks the fields it shows from
        the versions (never a build log or check report, which this does not read)."""
        served = self.league(league)
        bot = await self.database.run(Database.bot, served.league_id, bot_name)
        versions = await self.database.run(Database.versions, bot.id)
        tables = await self.database.run(Database.tables_of_versions, served.league_id, [v.id for v in versions],
                                         ENDED, RECENT_SHOWN)
        return BotPage(served.config.name, bot.name, await self._author(bot),
                       tuple([await self._view(v) for v in versions]), tuple([await self._table(t) for t in tables]))

    async def bot_history(self, league: str, bot_name: str) -> BotHistory:
        """A bot's rating history, results by opponent and by seat, and recent games (:mod:`.pages`). Public."""
        served = self.league(league)
        bot = await self.database.run(Database.bot, served.league_id, bot_name)
        return await self.database.run(bot_history, served.league_id, bot.id)

    async def table_game(self, league: str, table_id: int, game_key: str) -> dict[str, Any]:
        """One game's record of a done ladder table, for the viewer. Public: a table still being played shows
        nothing (its deal set's other games hold the same deals)."""
        ladder = self.ladder(league)
        folder = ladder.folder / TABLES
        return await self.database.run(finished_table_game, folder, ladder.served.league_id, table_id, game_key)

    async def finals_game(self, league: str, index: int) -> dict[str, Any]:
        """One game's record of the finals, for the viewer. Public as the finals' page is: nothing before the
        finals' results are published, and no game of a deal set still being played."""
        served = self.league(league)
        runner = self.finals_of.get(served.config.name)
        if runner is None:
            raise NotFound(f"league {served.config.name!r} has no finals on this server")
        withheld = self._withheld_until(served, None)
        if withheld:
            raise StateError(f"the finals' games are shown when their results are published, at "
                             f"{shown_moment(datetime.fromtimestamp(withheld, UTC))}")
        older = rotations(served.config) if served.config.duplicate else 1  # finals that wrote no group_size
        return await self.database.run(finished_finals_game, runner.run_folder, served.league_id, index, older)

    async def finals_page(self, league: str) -> FinalsPage:
        """The finals as a spectator sees them (:func:`.pages.finals_page`: the seed only once they ended)."""
        served = self.league(league)
        runner = self.finals_of.get(served.config.name)
        folder = runner.run_folder if runner is not None else None
        older = rotations(served.config) if served.config.duplicate else 1  # finals that wrote no group_size
        page = await self.database.run(finals_page, served.league_id, folder, older,
                                       settings_json(served.config.finals))
        page.results_at = self._withheld_until(served, None)
        if page.results_at:  # neither the ranking nor the games' scores before the results are published
            page.ranking, page.results, page.event = [], [], None
        return page

    def live_state(self, league: str) -> list[Any]:
        """What changes as the ladder plays, read from memory (no query): tables ended since the start, the
        tables being played, the deal sets the board has fitted, and the finals' state writes and the size of their
        record file (a stat, no read). An event stream sends a change when it differs."""
        ladder = self.ladder(league)
        runner = self.finals_of.get(ladder.config.name)
        finals = [runner.changes, games_written(runner.run_folder)] if runner is not None else []
        keeper = self.timekeepers.get(ladder.config.name)
        phase = [keeper.changes] if keeper is not None else []
        return [ladder.serial, sorted(ladder.playing), ladder.leaderboard.fitted_results, *finals, *phase]

    async def watch_ladder(self, token: Credential, league: str, after: int | None, wait_s: float
                           ) -> tuple[int, list[TableRated]]:
        """The tables that ended after serial ``after`` (waiting up to ``wait_s`` for one), and the serial to ask
        from next; with ``after`` None, only the serial of now (a watch follows what ends from its start)."""
        await self.caller(token)
        ladder = self.ladder(league)
        if after is None:
            return ladder.serial, []
        if ladder.serial <= after:
            with trio.move_on_after(wait_s):
                await ladder.ended.wait()
        ended = [table_id for serial, table_id in ladder.history if serial > after]
        rated_tables = []
        board = {entry.version_id: entry for entry in await self._board(ladder)}
        for table_id in ended:
            table = await self.database.run(Database.table, table_id)
            rated = [board[v] for v in table.versions if v in board and table.state == DONE]
            rows = await self.database.run(standing_rows, ladder.served.league_id, rated, games=False)
            rated_tables.append(TableRated(await self._table(table), tuple(rows),
                                           deal_sets_fitted=ladder.leaderboard.fitted_results))
        return ladder.serial, rated_tables

    # challenges: an author's own; every one for the operator

    async def challenge(self, token: Credential, league: str, version_id: int, opponent_id: int,
                        deal_sets: int) -> ChallengeView:
        caller = await self.caller(token)
        served = self.league(league)
        row = await self.database.run(request_challenge, caller, served.league_id, served.config, version_id,
                                      opponent_id, deal_sets)
        await self._audit(caller, served.league_id, "challenge", f"challenge {row.id}: version {version_id} against "
                                                                 f"version {opponent_id}")
        if served.config.name in self.challenges:
            self.challenges[served.config.name].wake()
        return await self._challenge(served, row)

    async def list_challenges(self, token: Credential, league: str) -> list[ChallengeView]:
        caller = await self.caller(token)
        served = self.league(league)
        rows = await self.database.run(Database.challenges_of, served.league_id,
                                       None if caller.author is None else caller.author.id)
        return [await self._challenge(served, row) for row in rows]

    async def get_challenge(self, token: Credential, challenge_id: int) -> ChallengeView:
        caller = await self.caller(token)
        row = await self.database.run(Database.challenge, challenge_id)
        if caller.author is not None and row.author_id != caller.author.id:
            raise PermissionDenied(f"{caller.describe()} may not read challenge {challenge_id}: it is another "
                                   f"author's")
        served = next((s for s in self.leagues.values() if s.league_id == row.league_id), None)
        if served is None:
            raise NotFound(f"challenge {challenge_id} is of no league this server runs")
        return await self._challenge(served, row)

    async def _challenge(self, served: Served, row: ChallengeRow) -> ChallengeView:
        names = [await version_name(self.database, served.league_id, await self.database.run(Database.version, v))
                 for v in (row.version_id, row.opponent_id)]
        author = "" if row.author_id is None else (await self.database.run(Database.author_by_id, row.author_id)).name
        decided: dict[str, Any] = {}
        if row.result:
            sprt = row.result["sprt"]
            estimate = sprt.get("estimate") or {}
            low, high = estimate.get("elo_interval") or (0.0, 0.0)
            said = verdict_of(sprt)
            decided = {"verdict": row.result["verdict"], "sprt_state": str(sprt["state"]),
                       "elo": estimate.get("elo") or 0.0, "elo_low": low, "elo_high": high,
                       "units": int(sprt["units"]), "outcome": said.outcome, "outcome_why": said.why}
        return ChallengeView(
            id=row.id, league=served.config.name, author=author, version_id=row.version_id, version=names[0],
            opponent_id=row.opponent_id, opponent=names[1], deal_sets=row.deal_sets, state=row.state,
            error=row.error or "", created_at=_seconds(row.created_at), started_at=_seconds(row.started_at),
            ended_at=_seconds(row.ended_at), **decided)

    # the freeze and the finals: the operator's to start, anyone's to read

    async def status(self, token: Credential, league: str) -> LeagueStatus:
        """Where the league is in its timeline: any caller with a valid token (:meth:`league_status`)."""
        await self.caller(token)
        return await self.league_status(league)

    async def league_status(self, league: str) -> LeagueStatus:
        """The league's title, variant, phase and the next one (:mod:`arena.league.rules.timeline`). Public (no
        token): the gRPC call checks its caller first, and every league page shows it in its header."""
        served = self.league(league)
        status: Status = await league_status(self.database, served)
        timeline = served.config.timeline
        return LeagueStatus(
            league=served.config.name, title=served.config.title, variant=served.config.variant, phase=status.phase,
            next_phase=status.next_phase, next_at=_seconds(status.next_at), next=status.next,
            results_published=status.published, opens=_seconds(timeline.opens), freeze=_seconds(timeline.freeze),
            finals=_seconds(timeline.finals), results=_seconds(timeline.results), now=utc_now().timestamp(),
            variant_title=served.config.game().title, players=served.config.players,
            time_control=served.config.time.describe())

    async def share_league(self, token: Credential, league: str) -> str:
        """The operator's leave to share a league's public pages by a read-only link (the web signs it, with the
        server's token): the league's name as the link names it. Anyone else is refused."""
        caller = await self.caller(token)
        served = self.league(league)
        require_operator(caller, "make a share link")
        return served.config.name

    async def freeze(self, token: Credential, league: str) -> Frozen:
        caller = await self.caller(token)
        served = self.league(league)
        require_operator(caller, "freeze a league")
        require_manual(served.config, FREEZE_STEP)
        frozen = await self.database.run(freeze_league, caller, served.league_id)
        self.wake_webhooks(served.config.name)
        if served.config.name in self.ladders:  # it stops choosing tables now, not at its next idle look
            self.ladders[served.config.name].wake()
        self._phase_moved(served)
        names = [await self._entrant(v) for v in frozen.field]
        return Frozen(league=served.config.name, frozen_at=frozen.frozen_at.timestamp(), field=tuple(names),
                      field_ids=tuple(frozen.field))

    async def finals(self, token: Credential, league: str, start: bool, deal_sets: int,
                     tables: int) -> FinalsState:
        caller = await self.caller(token)
        served = self.league(league)
        if start:
            try:
                runner = self.finals_of[served.config.name]
            except KeyError:
                raise NotFound(f"league {served.config.name!r} has no finals on this server") from None
            await runner.begin(caller, deal_sets, tables)
            self._phase_moved(served)
        frozen = await self.database.run(Database.frozen, served.league_id)
        if frozen is None:
            return FinalsState(league=served.config.name, state="not frozen")
        if frozen.finals is None:
            return FinalsState(league=served.config.name, state="frozen")
        finals = frozen.finals
        folder = self.finals_of[served.config.name].run_folder if served.config.name in self.finals_of else None
        games = await trio.to_thread.run_sync(games_recorded, folder) if folder is not None else 0
        withheld = self._withheld_until(served, caller)
        ranking = tuple(FinalsRank(rank=row["rank"], version=row["version"], version_id=row["version_id"],
                                   rating=row.get("rating", 0.0), rating_low=row.get("low", 0.0),
                                   rating_high=row.get("high", 0.0), deal_sets=row["deal_sets"],
                                   tied_with=tuple(row["tied_with"]))
                        for row in finals.get("ranking", ()) if not withheld)
        return FinalsState(league=served.config.name, state=finals["state"], folder=str(folder or ""),
                           games=games, scheduled=finals["scheduled"], ranking=ranking,
                           error=finals.get("error", ""), results_at=withheld, format=settings_of(finals).format)

    def _withheld_until(self, served: Served, caller: Caller | None) -> float:
        """When the finals' results are published, while they are withheld from ``caller`` (None: a spectator of
        the web's pages); 0.0 when the caller sees them (:func:`~arena.league.rules.permissions.sees_finals_results`)."""
        results = served.config.timeline.results
        if results is None or sees_finals_results(caller, utc_now() >= results):
            return 0.0
        return results.timestamp()

    def _phase_moved(self, served: Served) -> None:
        """The operator froze the league or started its finals: its timeline's task notes the new phase now."""
        if served.config.name in self.timekeepers:
            self.timekeepers[served.config.name].wake()

    async def _entrant(self, version_id: int) -> str:
        version = await self.database.run(Database.version, version_id)
        bot, _ = await self._bot_of(version)
        return entrant_name(bot.name, version)

    async def _table(self, table: LadderTable) -> TableView:
        points: list[float] = []
        games: list[str] = []
        if table.state == DONE:
            played = await self.database.run(Database.games_of_record, table.league_id, RECORD.format(id=table.id))
            points = deal_set_totals([seats for _, seats in played], table.versions)
            games = [key for key, _ in played]
        return TableView(id=table.id, versions=tuple([await self._entrant(v) for v in table.versions]),
                         version_ids=tuple(table.versions), reason=table.reason, state=table.state,
                         created_at=_seconds(table.created_at), started_at=_seconds(table.started_at),
                         ended_at=_seconds(table.ended_at), error=table.error or "", points=tuple(points),
                         games=tuple(games))

    async def _bot_or_none(self, served: Served, name: str) -> Bot | None:
        try:
            return await self.database.run(Database.bot, served.league_id, name)
        except NotFound:
            return None

    async def _bot_of(self, version: Version) -> tuple[Bot, str]:
        """A version's bot and the name of its league (of this server's leagues)."""
        for served in self.leagues.values():
            for bot in await self.database.run(Database.bots, served.league_id):
                if bot.id == version.bot_id:
                    return bot, served.config.name
        raise NotFound(f"version {version.id} is of no league this server runs")

    async def _team(self, bot: Bot) -> Author:
        return await self.database.run(Database.author_by_id, bot.author_id)

    async def _audit_version(self, caller: Caller, version: Version, action: str) -> None:
        """An action on a version, recorded for the version's team (the operator's too)."""
        bot, league = await self._bot_of(version)
        await self._audit(caller, self.leagues[league].league_id,
                          action, f"bot {bot.name!r} version {version.id} (number {version.number})",
                          await self._team(bot))

    async def _author(self, bot: Bot) -> str:
        return (await self.database.run(Database.author_by_id, bot.author_id)).name

    async def _view(self, version: Version) -> VersionView:
        """A version as the service lists it, with its bot, league and whether it is its bot's active one."""
        bot, league = await self._bot_of(version)
        siblings = await self.database.run(Database.versions, bot.id)
        active = active_version(siblings)
        return VersionView(id=version.id, league=league, bot=bot.name, author=await self._author(bot),
                           number=version.number, sha256=version.sha256, state=version.state,
                           reason=version.reason or "", created_at=version.created_at.timestamp(),
                           updated_at=version.updated_at.timestamp(),
                           active=active is not None and active.id == version.id, dial_in=version.dial_in)


def bot_standing_rows(database: Database, league_id: int, board: Sequence[BoardEntry], form: Form
                      ) -> list[Standing]:
    """The board's rows of each bot's active version, placed among themselves (:func:`bots_board`), with their
    form, on the database's thread: six queries whatever their number (the league's bots and all their versions,
    to know the active ones; then :func:`standing_rows`'s four)."""
    bot_ids = [bot.id for bot in database.bots(league_id)]
    by_bot: dict[int, list[Version]] = {}
    for version in database.versions_of_bots(bot_ids):
        by_bot.setdefault(version.bot_id, []).append(version)
    active = {found.id for versions in by_bot.values() if (found := active_version(versions)) is not None}
    return standing_rows(database, league_id, bots_board(board, active), form=form)


def standing_rows(database: Database, league_id: int, board: Sequence[BoardEntry], *, games: bool = True,
                  form: Form | None = None) -> list[Standing]:
    """These rows of the leaderboard, on the database's thread: four queries whatever their number (the
    versions, with those they are tied with; the league's bots; their authors; the games per version, unless
    ``games`` is False, when every row says 0), never a few per row; each with its form when ``form`` is
    given."""
    wanted = {entry.version_id for entry in board} | {v for entry in board for v in entry.tied_with}
    found = database.versions_by_id(wanted)
    missing = sorted(wanted - set(found))
    if missing:
        raise NotFound(f"no version number {missing[0]}")
    bots_by_id = {bot.id: bot for bot in database.bots(league_id)}
    if any(version.bot_id not in bots_by_id for version in found.values()):
        stray = next(version for version in found.values() if version.bot_id not in bots_by_id)
        raise NotFound(f"version {stray.id} is of no bot of this league")
    authors = database.authors_by_id(bot.author_id for bot in bots_by_id.values())
    played = database.games_per_version(league_id) if games else {}
    names = {vid: entrant_name(bots_by_id[version.bot_id].name, version) for vid, version in found.items()}
    rows = []
    for entry in board:
        version = found[entry.version_id]
        bot = bots_by_id[version.bot_id]
        online = entry.online
        rows.append(Standing(
            rank=entry.position, version_id=version.id, bot=bot.name, number=version.number,
            author=authors[bot.author_id].name, rating=entry.elo or 0.0, rating_low=entry.low or 0.0,
            rating_high=entry.high or 0.0, sigma=online.sigma if online else 0.0,
            online_mu=online.mu if online else 0.0, deal_sets=rated_deal_sets(entry),
            games=played.get(version.id, 0),
            state=version.state, rank_best=entry.best, rank_worst=entry.worst, fitted=entry.fitted,
            tied_with=tuple(names[v] for v in entry.tied_with),
            form=form.of(version.id) if form is not None else ()))
    return rows


def rated_deal_sets(entry: BoardEntry) -> int:
    """The deal sets a version was rated on: its online rating's count, written with each table's result. The
    fit's count lags it until the next refit (by one when a table is rated while a refit runs, or after it), so it
    serves only a version without an online rating."""
    return entry.online.games if entry.online is not None else entry.deal_sets


def room_for_one_more(bot: Bot, versions: list[Version], kept: int) -> list[Version]:
    """The versions to delete so that the bot keeps ``kept`` with one more; a StateError (nothing stored yet)
    when too few of them may go."""
    doomed = versions_to_delete(versions, kept)
    if doomed is None:
        raise StateError(f"bot {bot.name!r} has {kept} versions, the league's limit (authors.versions_kept = {kept}), "
                         f"and none can be deleted to make room (its active version and those being built or "
                         f"checked stay): retire one (arena league retire VERSION) and upload again; nothing was "
                         f"stored")
    return doomed


def _seconds(moment: Any) -> float:
    return moment.timestamp() if moment is not None else 0.0


def member_view(member: Member) -> MemberView:
    return MemberView(name=member.name, captain=member.captain, created_at=member.created_at.timestamp(),
                      revoked_at=_seconds(member.revoked_at))


def author_view(author: Author) -> AuthorView:
    return AuthorView(name=author.name, created_at=author.created_at.timestamp(),
                      revoked_at=author.revoked_at.timestamp() if author.revoked_at else 0.0)
