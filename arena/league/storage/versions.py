"""The versions' rows: each distinct archive of a bot, its state in its lifecycle, how its built bot
runs, its failed starts and its deletion to make room.

Every change of state is checked against the lifecycle (:mod:`arena.league.rules.lifecycle`) and written as a
compare-and-set on the state read, so two workers cannot both move one version.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.errors import LeagueError, NotFound, StateError
from arena.league.rules.lifecycle import (
    INTERRUPTED,
    READY,
    RETIRED,
    START_FAILURES,
    SUSPENDED,
    UPLOADED,
    active_version,
    check_target,
    check_transition,
    suspension,
)
from arena.league.rules.model import Bot, Runnable, Version
from arena.league.rules.notices import version_notice
from arena.league.rules.retention import DELETABLE
from arena.league.storage.bots import BotsGateway
from arena.league.storage.gateway import aware_utc, first_line
from arena.league.storage.notices import league_name, record_notice
from arena.league.storage.tables import bots, versions

SHA256 = re.compile(r"[0-9a-f]{64}")


class VersionsGateway(BotsGateway):
    """The calls on the ``versions`` table (a version's owner is its bot's author, so these read the bots too)."""

    def add_version(self, bot_id: int, sha256: str) -> tuple[Version, bool]:
        """The version of this archive (by its SHA-256), created ``uploaded`` unless the bot has it already; and
        whether it was created. The same archive twice is one version."""
        if not SHA256.fullmatch(sha256):
            raise LeagueError(f"a version's SHA-256 must be 64 lowercase hexadecimal digits, got {sha256!r}")
        existing = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == sha256)
        if existing is not None:
            return existing, False
        now = utc_now()
        try:
            with self.engine.begin() as connection:
                number = connection.execute(sa.select(sa.func.coalesce(sa.func.max(versions.c.number), 0))
                                            .where(versions.c.bot_id == bot_id)).scalar_one() + 1
                connection.execute(sa.insert(versions).values(bot_id=bot_id, number=number, sha256=sha256,
                                                              state=UPLOADED, created_at=now, updated_at=now))
        except sa.exc.IntegrityError as error:  # the same archive inserted meanwhile, or no such bot
            existing = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == sha256)
            if existing is None:
                raise LeagueError(f"cannot add a version to bot number {bot_id}: {first_line(error)} (no such "
                                  f"bot, or a second writer: the league writes through one)") from None
            return existing, False
        created = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == sha256)
        assert created is not None
        return created, True

    def add_dial_in_version(self, bot_id: int, token_sha256: str) -> Version:
        """A new dial-in version of the bot, ``ready`` at once (there is nothing to build: its author's machine
        plays it); ``token_sha256`` is its bot token's SHA-256. Its ``sha256`` (what a version is) is the SHA-256 of
        ``dial-in/<token_sha256>``, unique per token and telling nothing of it."""
        if not SHA256.fullmatch(token_sha256):
            raise LeagueError(f"a token's SHA-256 must be 64 lowercase hexadecimal digits, got {token_sha256!r}")
        identity = hashlib.sha256(f"dial-in/{token_sha256}".encode()).hexdigest()
        now = utc_now()
        with self.engine.begin() as connection:
            number = connection.execute(sa.select(sa.func.coalesce(sa.func.max(versions.c.number), 0))
                                        .where(versions.c.bot_id == bot_id)).scalar_one() + 1
            connection.execute(sa.insert(versions).values(
                bot_id=bot_id, number=number, sha256=identity, state=READY, created_at=now, updated_at=now,
                reason="dial-in: plays while its author's machine is connected", dial_in_sha256=token_sha256))
        created = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == identity)
        assert created is not None
        return created

    def version(self, version_id: int) -> Version:
        found = self._version_where(versions.c.id == version_id)
        if found is None:
            raise NotFound(f"no version number {version_id}")
        return found

    def versions_by_id(self, version_ids: Iterable[int]) -> dict[int, Version]:
        """These versions by id, in one query (those that exist)."""
        return {v.id: v for v in self._versions_where(versions.c.id.in_(sorted(set(version_ids))))}

    def versions(self, bot_id: int, include_deleted: bool = False) -> list[Version]:
        """A bot's versions, oldest first; those deleted to respect ``versions_kept`` only when asked for."""
        where = [versions.c.bot_id == bot_id]
        if not include_deleted:
            where.append(versions.c.deleted_at.is_(None))
        return self._versions_where(*where)

    def versions_of_bots(self, bot_ids: Sequence[int]) -> list[Version]:
        """Every version of these bots, deleted ones too (their games keep them), in one query: a page naming each
        version of a league."""
        return self._versions_where(versions.c.bot_id.in_(sorted(set(bot_ids))))

    def active_versions(self, league_id: int) -> list[tuple[Bot, Version]]:
        """Each bot of the league with its active version (its newest ready one), bots without one left out: who
        plays on the ladder."""
        found = []
        for bot in self.bots(league_id):
            active = active_version(self.versions(bot.id))
            if active is not None:
                found.append((bot, active))
        return found

    def dial_in_versions(self, league_id: int) -> list[tuple[str, Version]]:
        """The league's dial-in versions that may play (ready, not deleted), each with its bot's name: those whose
        streams the server accepts."""
        found = self._versions_where(bots.c.league_id == league_id, versions.c.dial_in_sha256.is_not(None),
                                     versions.c.state == READY, versions.c.deleted_at.is_(None))
        names = {bot.id: bot.name for bot in self.bots(league_id)} if found else {}
        return [(names[version.bot_id], version) for version in found]

    def versions_in(self, state: str) -> list[Version]:
        return self._versions_where(versions.c.state == state, versions.c.deleted_at.is_(None))

    def mark_deleted(self, version_ids: Sequence[int], reason: str) -> list[Version]:
        """Delete versions to make room (their files are the caller's to remove): each becomes retired with
        ``reason``, marked deleted, and forgets how it ran; the rows stay, so their games and ratings keep their
        version. Only versions in :data:`DELETABLE` states change (one transaction); the changed ones."""
        if not version_ids:
            return []
        now = utc_now()
        with self.engine.begin() as connection:
            ids = connection.execute(sa.select(versions.c.id).where(
                versions.c.id.in_(version_ids), versions.c.state.in_(DELETABLE),
                versions.c.deleted_at.is_(None))).scalars().all()
            if ids:
                connection.execute(sa.update(versions).where(versions.c.id.in_(ids)).values(
                    state=RETIRED, reason=reason, deleted_at=now, updated_at=now, run_command=None,
                    run_folder=None, run_protocol=None))
        return [self.version(version_id) for version_id in ids]

    def archive_in_use(self, sha256: str) -> bool:
        """Whether a version not deleted (of any bot) still has this archive: the store keeps it while one does."""
        query = sa.select(versions.c.id).where(versions.c.sha256 == sha256, versions.c.deleted_at.is_(None))
        with self.engine.connect() as connection:
            return connection.execute(query.limit(1)).first() is not None

    def uploads_since(self, author_id: int, league_id: int, since: datetime) -> int:
        """How many versions the author's bots in a league gained since ``since`` (what the league's uploads-per-day
        limit counts)."""
        query = (sa.select(sa.func.count()).select_from(versions.join(bots))
                 .where(bots.c.author_id == author_id, bots.c.league_id == league_id,
                        versions.c.created_at >= since))
        with self.engine.connect() as connection:
            return connection.execute(query).scalar_one()

    def transition(self, version_id: int, to: str, reason: str | None = None, *, build_log: str | None = None,
                   check_report: Any = None, runnable: Runnable | None = None) -> Version:
        """Move a version to state ``to``, if its lifecycle allows it from the state it is in
        (:data:`arena.league.rules.lifecycle.TRANSITIONS`);
        otherwise one :class:`StateError`. ``failed`` and ``suspended`` need a reason. The change is a
        compare-and-set on the state read, so two workers cannot both move one version."""
        check_target(to, reason)
        current = self.version(version_id)
        check_transition(current, to)
        values: dict[str, Any] = {"state": to, "reason": reason, "updated_at": utc_now()}
        if build_log is not None:
            values["build_log"] = build_log
        if check_report is not None:
            values["check_report"] = check_report
        if runnable is not None:
            values.update(run_command=list(runnable.command), run_folder=runnable.folder,
                          run_protocol=runnable.protocol)
        if to == READY:
            values["start_failures"] = 0
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(versions)
                                      .where(versions.c.id == version_id, versions.c.state == current.state)
                                      .values(**values))
            if done.rowcount != 1:
                raise StateError(f"version {current.number} of its bot changed state meanwhile (it was "
                                 f"{current.state})")
            bot = connection.execute(sa.select(bots.c.name, bots.c.league_id).where(bots.c.id == current.bot_id)).one()
            draft = version_notice(league_name(connection, bot.league_id), current.author_id, bot.name,
                                   current.number, current.id, current.state, to, reason, build_log)
            if draft is not None:  # told in the transaction of the change: both are there, or neither
                record_notice(connection, bot.league_id, draft, values["updated_at"])
        return self.version(version_id)

    def record_start(self, version_id: int, failure: str | None, limit: int = START_FAILURES) -> Version:
        """A ready version started (``failure`` None: its count of failures in a row is reset) or failed to start
        (counted); ``limit`` failures in a row suspend it with the last one as the reason, as a tournament gives up
        on an entrant."""
        if failure is None:
            with self.engine.begin() as connection:
                connection.execute(sa.update(versions).where(versions.c.id == version_id)
                                   .values(start_failures=0))
            return self.version(version_id)
        with self.engine.begin() as connection:
            connection.execute(sa.update(versions).where(versions.c.id == version_id, versions.c.state == READY)
                               .values(start_failures=versions.c.start_failures + 1))
        version = self.version(version_id)
        reason = suspension(version, failure, limit)
        return version if reason is None else self.transition(version_id, SUSPENDED, reason)

    def requeue_interrupted(self) -> list[Version]:
        """At a server's start: versions left building or checking by a server that died are uploaded again, to be
        rebuilt from their archive (never lost, never half-ready)."""
        with self.engine.begin() as connection:
            ids = connection.execute(sa.select(versions.c.id).where(versions.c.state.in_(INTERRUPTED))).scalars().all()
            if ids:
                connection.execute(sa.update(versions).where(versions.c.id.in_(ids))
                                   .values(state=UPLOADED, reason="interrupted by a restart", updated_at=utc_now()))
        return [self.version(version_id) for version_id in ids]

    def _version_where(self, *where: Any) -> Version | None:
        found = self._versions_where(*where)
        return found[0] if found else None

    def _versions_where(self, *where: Any) -> list[Version]:
        query = (sa.select(versions, bots.c.author_id).select_from(versions.join(bots)).where(*where)
                 .order_by(versions.c.bot_id, versions.c.number))
        with self.engine.connect() as connection:
            return [_version(row) for row in connection.execute(query)]


def _version(row: Any) -> Version:
    return Version(id=row.id, bot_id=row.bot_id, author_id=row.author_id, number=row.number, sha256=row.sha256,
                   state=row.state, reason=row.reason, created_at=aware_utc(row.created_at),
                   updated_at=aware_utc(row.updated_at), build_log=row.build_log, check_report=row.check_report,
                   start_failures=row.start_failures, deleted_at=aware_utc(row.deleted_at),
                   dial_in_sha256=row.dial_in_sha256,
                   runnable=None if row.run_folder is None else Runnable(tuple(row.run_command), row.run_folder,
                                                                         row.run_protocol))
