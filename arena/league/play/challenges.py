"""Challenges: an author asks for deal sets of one of its versions against a named version, unrated, and gets a
verdict (:mod:`arena.league.rules.verdict`): the arena's SPRT's when it stops, else, undecided at the cap, what the
Elo difference's 95% interval says (better, worse, or not told apart).

**Who may ask for what** (:func:`request_challenge`, one database call, so the checks and the insert see one
state): the challenger is one of the caller's own versions (the operator may use any), ready; the opponent is any
bot's *active* version, or one of the caller's own that still has its built bot (an older one, say); never itself.
An author asks for at most ``[challenges] per_day`` in any 24 hours and ``max_deal_sets`` deal sets each. A league
takes them while it is open (:mod:`arena.league.rules.timeline`): none before its timeline's ``opens``, none once
frozen.

**How it is played**: as the ladder's tables are, an ordinary tournament run in its own folder,
``<league folder>/challenges/<id>/``: a 2-entrant tournament file of the league's game (the challenger first, so it
is the SPRT's candidate), the challenge's deal sets as its ``games`` (the test's cap) with duplicate deals (fresh
deals for every game, as many games, when a side dials in: :func:`arena.tournament.spec.duplicate_off_notice`), and
an ``[sprt]`` with the league's ``elo0``/``elo1``. The runner stops it as soon as the test decides; the verdict is read
back from its ``standings.json``. Nothing of it reaches the league's games or ratings: a challenge is unrated.

**Beside the ladder, fairly**: challenges have their own slots, ``[challenges] concurrency`` (1 by default), so a
burst of challenges never takes a ladder table's slot and the ladder never starves them; both play their games
through the server's one games-at-once limiter. A free slot takes the oldest queued challenge of an author with
none playing, else the oldest queued one: one author's queue does not hold up another's.

**Survives a restart**: a challenge's row is queued before its run starts; at the next start the unfinished ones
are played again from their run folders (the runner resumes them; a finished run is only read) and end once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import trio

from arena.league.clock import utc_now
from arena.league.play.table_run import (
    CHALLENGES,
    LeagueRuns,
    entrant_name,
    league_tournament_file,
    named,
    rotations,
    table_spec,
)
from arena.league.rules.config import ChallengeSettings, LeagueConfig
from arena.league.rules.errors import LeagueError, PermissionDenied, StateError
from arena.league.rules.lifecycle import PLAYING, QUEUED, READY, active_version
from arena.league.rules.model import ChallengeRow, Version
from arena.league.rules.permissions import Caller, owns, require_owner
from arena.league.rules.timeline import OPEN, UPCOMING, not_open_yet, phase_of, recorded_of
from arena.league.rules.verdict import verdict_of
from arena.league.storage.db import AsyncDatabase, Database
from arena.records.run_folder import RunFolder
from arena.tournament.errors import EntrantsCannotPlay, RunError
from arena.tournament.runner import run_tournament
from arena.tournament.sequential import MatchupTest
from arena.tournament.sprt import SprtError

WINDOW = timedelta(days=1)
"""The rate limit's window: ``per_day`` challenges in any 24 hours."""
IDLE_S = 5.0
"""How often idle challenge slots look again (a challenge is also started as soon as it is asked for)."""


def request_challenge(database: Database, caller: Caller, league_id: int, config: LeagueConfig, version_id: int,
                      opponent_id: int, deal_sets: int) -> ChallengeRow:
    """Check a challenge against the rules above and queue it, or raise the one refusal that applies."""
    settings = config.challenges
    if rotations(config) != 2:
        raise LeagueError(f"league {config.name!r} seats {config.players} sides at a table: a challenge is a match "
                          f"of two sides, so this league takes none")
    deal_sets = deal_sets or settings.max_deal_sets
    if not 1 <= deal_sets <= settings.max_deal_sets:
        raise LeagueError(f"a challenge asks for 1 to {settings.max_deal_sets} deal sets (challenges.max_deal_sets), "
                          f"got {deal_sets}")
    phase = phase_of(config.timeline, utc_now(), recorded_of(database.frozen(league_id)))
    if phase == UPCOMING:
        raise StateError(f"{not_open_yet(config)}: it takes no challenges before")
    if phase != OPEN:
        raise StateError(f"league {config.name!r} is frozen for its finals: it takes no more challenges")
    version = _in_league(database, league_id, version_id, config.name)
    require_owner(caller, version, "challenge with")
    opponent = _in_league(database, league_id, opponent_id, config.name)
    _check_pair(database, caller, version, opponent)
    _require_quota(database, caller, league_id, settings)
    return database.add_challenge(league_id, caller.author.id if caller.author else None, version.id, opponent.id,
                                  deal_sets)


def _in_league(database: Database, league_id: int, version_id: int, league: str) -> Version:
    version = database.version(version_id)
    if version.bot_id not in {bot.id for bot in database.bots(league_id)}:
        raise LeagueError(f"version {version_id} is not a version of league {league!r}")
    return version


def _check_pair(database: Database, caller: Caller, version: Version, opponent: Version) -> None:
    """The challenger is ready; the opponent is another version, active or the caller's own with its built bot."""
    if version.state != READY or version.deleted or version.runnable is None:
        raise LeagueError(f"version {version.id} is {version.state}: only a ready version may challenge")
    if opponent.id == version.id:
        raise LeagueError(f"version {version.id} cannot challenge itself: name another version")
    if owns(caller, opponent.author_id):
        if opponent.deleted or opponent.runnable is None:
            raise LeagueError(f"version {opponent.id} has no built bot (it is {opponent.state}"
                              f"{', deleted' if opponent.deleted else ''}): it cannot play")
        return
    if active_version(database.versions(opponent.bot_id)) != opponent:
        raise PermissionDenied(f"{caller.describe()} may not challenge version {opponent.id}: it is another "
                               f"author's and not its bot's active version (an opponent is any bot's active "
                               f"version, or one of your own)")


def _require_quota(database: Database, caller: Caller, league_id: int, settings: ChallengeSettings) -> None:
    """An author's challenges in any 24 hours (the operator has no limit): each costs bot processes and games."""
    if caller.author is None:
        return
    count = database.challenges_since(caller.author.id, league_id, utc_now() - WINDOW)
    if count >= settings.per_day:
        raise PermissionDenied(f"{caller.describe()} has asked for {count} challenges in the last 24 hours, the "
                               f"league's limit (challenges.per_day = {settings.per_day}); try later")


def next_challenges(queued: Sequence[ChallengeRow], playing: Sequence[ChallengeRow], free: int) -> list[ChallengeRow]:
    """The queued challenges to start in ``free`` slots: oldest first, but an author with a challenge playing (or
    just chosen) waits behind the authors with none."""
    busy = {c.author_id for c in playing}
    chosen: list[ChallengeRow] = []
    waiting = list(queued)
    while waiting and len(chosen) < free:
        pick = next((c for c in waiting if c.author_id not in busy), waiting[0])
        waiting.remove(pick)
        chosen.append(pick)
        busy.add(pick.author_id)
    return chosen


def challenge_result(folder: Path) -> dict[str, Any]:
    """A finished challenge's result, from its run's ``standings.json``: the verdict line and the whole test, whose
    unit is the run's own (a deal set's rotations; a single game when a dial-in version made its deals fresh)."""
    try:
        data = json.loads(RunFolder(folder).standings.read_text())
        test = MatchupTest.from_json(data["sprt"], int(data["group_size"]))
    except (OSError, ValueError, KeyError, TypeError, SprtError) as error:
        raise LeagueError(f"{folder}: the challenge's run holds no SPRT result: {error}") from None
    return {"verdict": test.summary(), "sprt": data["sprt"]}


class Challenges(LeagueRuns):
    """One league's challenges on the trio loop: :meth:`run` until cancelled; :meth:`wake` when one is asked for.
    Its challenges run in ``challenges/`` of the league's folder."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.playing: dict[int, ChallengeRow] = {}
        self._wake = trio.Event()
        self._nursery: trio.Nursery | None = None

    def wake(self) -> None:
        """A challenge was asked for: look now (on the trio thread)."""
        self._wake.set()

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Play the challenges a dead server left playing, then start queued ones in the free slots (only while
        the league is open: none once it is frozen)."""
        (self.folder / CHALLENGES).mkdir(mode=0o700, parents=True, exist_ok=True)
        league_id = self.served.league_id
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for challenge in await self.database.run(Database.challenges_of, league_id, None, (PLAYING,)):
                self.log.info("challenge_resumed", league=self.config.name, challenge=challenge.id)
                self._start(challenge)
            task_status.started()
            while True:
                self._wake = trio.Event()
                free = self.config.challenges.concurrency - len(self.playing)
                frozen = await self.database.run(Database.frozen, league_id)
                if free > 0 and phase_of(self.config.timeline, utc_now(), recorded_of(frozen)) == OPEN:
                    queued = await self.database.run(Database.challenges_of, league_id, None, (QUEUED,))
                    for challenge in next_challenges(queued, list(self.playing.values()), free):
                        self._start(challenge)
                with trio.move_on_after(IDLE_S):
                    await self._wake.wait()

    def _start(self, challenge: ChallengeRow) -> None:
        assert self._nursery is not None
        self.playing[challenge.id] = challenge
        self._nursery.start_soon(self._play, challenge, name=f"challenge {challenge.id}")

    async def _play(self, challenge: ChallengeRow) -> None:
        try:
            await self.play(challenge)
        except LeagueError as error:  # the database refused a step: the challenge stays as it was
            self.log.error("challenge_step_failed", league=self.config.name, challenge=challenge.id, error=str(error))
        finally:
            del self.playing[challenge.id]
            self._wake.set()

    def challenge_folder(self, challenge: ChallengeRow) -> Path:
        return self.folder / CHALLENGES / str(challenge.id)

    async def play(self, challenge: ChallengeRow) -> None:
        """Play (or resume) the challenge's run, then write its result once; a run that cannot be played fails the
        challenge with why."""
        folder = self.challenge_folder(challenge)
        try:
            if not RunFolder(folder).is_finished():
                await self.run_challenge(challenge, folder)
            result = await trio.to_thread.run_sync(challenge_result, folder)
        except (LeagueError, RunError) as error:
            await self.database.run(Database.end_challenge, challenge.id, None, str(error))
            self.log.warning("challenge_failed", league=self.config.name, challenge=challenge.id, error=str(error))
            return
        await self.database.run(Database.end_challenge, challenge.id, result)
        self.log.info("challenge_done", league=self.config.name, challenge=challenge.id,
                      outcome=verdict_of(result["sprt"]).line, verdict=result["verdict"])

    async def run_challenge(self, challenge: ChallengeRow, folder: Path) -> None:
        """The 2-entrant tournament with its [sprt]: the challenger first, the candidate."""
        sides = [await self.database.run(Database.version, v) for v in (challenge.version_id, challenge.opponent_id)]
        names = [await version_name(self.database, self.served.league_id, v) for v in sides]
        bots = [named(self.bot_of(version), name) for version, name in zip(sides, names, strict=True)]
        settings = self.config.challenges
        text = league_tournament_file(self.config, f"{self.config.name} challenge {challenge.id}", bots, folder,
                                      deal_sets=challenge.deal_sets,
                                      tables={"sprt": {"elo0": settings.elo0, "elo1": settings.elo1}})
        spec = table_spec(text)
        await self.database.run(Database.start_challenge, challenge.id)
        self.log.info("challenge_started", league=self.config.name, challenge=challenge.id,
                      versions=" vs ".join(names))
        try:
            await run_tournament(spec, text, folder, resume=RunFolder(folder).keeps_secret(), limiter=self.limiter,
                                 protected=self.protected, backend=self.backend)
        except EntrantsCannotPlay as error:
            raise LeagueError("; ".join(f"{name} cannot play: {why}" for name, why in error.problems)) from None


async def version_name(database: AsyncDatabase, league_id: int, version: Version) -> str:
    """A version's name at a table (``bot-vN``)."""
    for bot in await database.run(Database.bots, league_id):
        if bot.id == version.bot_id:
            return entrant_name(bot.name, version)
    raise LeagueError(f"version {version.id} is of no bot of this league")


__all__ = ["Challenges", "request_challenge", "next_challenges", "challenge_result", "version_name"]
