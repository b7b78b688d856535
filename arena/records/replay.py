"""Replaying records through the rules engine: every position of a game, and verification of whole runs.

``positions(record)`` walks a recorded game move by move with the engine (for the terminal, the HTML viewer and
regression replay). ``verify_game`` re-simulates a game from its seed and recorded actions and lists every
difference: a deal that the seed does not give, an action that was not legal or not the recorded seat's turn, a round
result or a match result that the rules do not give or that is missing, a seed that does not derive from the revealed
master seed. A record without its seed (one fetched from a server while its tournament runs: the seed is withheld
until the master seed is revealed) is verified against its own recorded deals: everything but the shuffle is checked,
and the report says how many games that was.

**Move numbers.** People see moves numbered through the whole game from 1, forced moves, draws and passes included
(``move 37`` is the game's 37th move, in whatever round): the terminal replay, the HTML viewer, ``--against`` reports,
fault lines and verification mismatches all say it this way (:func:`move_label`). Records and the bot protocol count
the same moves from 0 (a fault's ``moveNumber`` is the ``ActRequest.move_number`` of the decision that faulted), and
keep doing so: only the display adds one.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.display import move_label
from arena.errors import ArenaError
from arena.records.jsonform import (
    FormatError,
    action_from,
    belief_from,
    deal_from,
    index_of,
    match_result_dict,
    option_from,
    round_result_dict,
)
from arena.records.run_folder import COMPACT_RECORDS, RECORDS, REVEALED, RunFolder, commitment_of
from arena.records.schema import Record, RecordFormatError, parse_record
from arena.records.store import (
    TYPICAL_GAME_BYTES,
    ReadReport,
    RepairReport,
    complete_lines,
    is_compact,
    iter_records,
    looks_like_records,
    repair,
)
from arena.referee import forfeit_result
from arena.rules import DRAW, Deal, Game, Kind, Match, RoundState, RulesError, new_game
from arena.rules.beliefs import belief_problem


class RecordError(ArenaError):
    """A record file or game that cannot be used, with a message for people."""


NO_GAME = -1
"""The game of a mismatch that belongs to no game (an unreadable line, the seed's commitment)."""


@dataclass(frozen=True)
class Mismatch:
    game: int
    """The game's index, or :data:`NO_GAME`."""
    round: int | None
    """From 0 (shown from 1)."""
    move: int | None
    """The move's number in the game, from 0 as records count it (shown from 1 by :func:`move_label`)."""
    problem: str

    def __str__(self) -> str:
        if self.game == NO_GAME:
            return self.problem
        where = f"game {self.game}"
        if self.round is not None:
            where += f", round {self.round + 1}"
        if self.move is not None:
            where += f", {move_label(self.move)}"
        return f"{where}: {self.problem}"


@dataclass
class RunFiles:
    """Where a run's files are, given a run folder or a record file."""

    records: Path
    folder: Path | None
    revealed: dict[str, str] | None = None
    commitment: str | None = None


def locate(path: str | Path) -> RunFiles:
    path = Path(path)
    if path.is_dir():
        records = RunFolder(path).records
        if not records.exists():
            raise RecordError(f"{path}: no {records.name} in this folder (is it a run folder?)")
        files = RunFiles(records, path)
    elif path.exists():
        files = RunFiles(path, path.parent if RunFolder(path.parent).revealed_file.exists() else None)
    else:
        raise RecordError(f"{path}: no such run folder or record file")
    if files.records.stat().st_size == 0:
        raise RecordError(f"{files.records}: the record file is empty")
    if files.folder is not None:
        folder = RunFolder(files.folder)
        try:
            files.revealed = folder.revealed()
            files.commitment = folder.commitment()
        except (ValueError, OSError, RecursionError) as error:
            problem = "nested too deep" if isinstance(error, RecursionError) else str(error)[:200]
            raise RecordError(f"{files.folder}: cannot read the revealed seed or its commitment: {problem}") from None
    return files


def load_games(files: RunFiles, report: ReadReport) -> Iterator[Record]:
    try:
        yield from iter_records(files.records, report)
    except OSError as error:
        raise RecordError(f"{files.records}: cannot read: {error}") from None


def find_game(files: RunFiles, index: int) -> Record:
    """The first readable record of game ``index``; a :class:`RecordError` names the unreadable lines (with their
    numbers) when it is not there."""
    report = ReadReport()
    for record in load_games(files, report):
        if index_of(record) == index:
            return record
    check_record_file(files, report)
    known = report.games
    problems = ""
    if report.bad_lines:
        several = len(report.bad_lines) > 1
        numbers = ", ".join(str(number) for number, _ in report.bad_lines[:10])
        numbers += ", ..." if len(report.bad_lines) > 10 else ""
        problems = (f"; line{'s' if several else ''} {numbers} cannot be read: arena replay "
                    f"{files.folder or files.records} --verify says why, --repair moves {'them' if several else 'it'} "
                    f"aside")
    raise RecordError(f"{files.records}: no game {index} (the file holds {known} readable games{problems})")


def repair_run(path: str | Path) -> RepairReport:
    """``arena replay RUN --repair``: move the lines of the record file that are not records to its side file
    (:func:`.store.repair`). Refused for a file in which no line is a record (a tournament file given by mistake
    would otherwise be moved aside whole) and while a tournament is writing the file."""
    files = locate(path)
    report = ReadReport()
    for _ in load_games(files, report):
        pass
    check_record_file(files, report)
    try:
        return repair(files.records)
    except BlockingIOError:
        raise RecordError(f"{files.records}: a tournament is writing to this file; stop it (Ctrl-C), repair, then "
                          f"continue it with --resume") from None
    except OSError as error:
        raise RecordError(f"{files.records}: cannot repair: {error.strerror or error}") from None


def check_record_file(files: RunFiles, report: ReadReport) -> None:
    """Raise :class:`RecordError` for a file in which no line is a record and that does not even start like one
    (a tournament file given by mistake, a log, a binary): one line instead of one per unreadable line."""
    if report.games or not report.bad_lines:
        return
    try:
        fits = looks_like_records(files.records)
    except OSError as error:
        raise RecordError(f"{files.records}: cannot read: {error}") from None
    if not fits:
        expected = COMPACT_RECORDS if is_compact(files.records) else RECORDS
        raise RecordError(f"{files.records}: not a record file (no line of it is a game record); expected a run "
                          f"folder or its {expected}")


def game_of(record: Mapping[str, Any]) -> Game:
    try:
        options = {key: option_from(value) for key, value in record.get("options", {}).items()}
        return new_game(record.get("variant", ""), record.get("players") or None, options)
    except (RulesError, FormatError, AttributeError) as error:
        raise RecordError(f"game {index_of(record)}: {error}") from None


@dataclass
class Step:
    """One point of a recorded game's walk: a round's start, a recorded move about to be applied, a round's end."""

    kind: str
    """``"start"``, ``"move"`` (``match`` is the position before the move) or ``"end"`` (the round just ended)."""
    round: int
    match: Match
    move: int | None = None
    """The move's index within its round."""
    number: int = 0
    """The move's number within the match from 0, counting every move (as fault records and the protocol do)."""
    recorded: dict[str, Any] | None = None
    """The move as recorded (seat, action, thinkMs, forced, comment)."""
    action: Any = None
    """The recorded action, as an engine action (a draw carries its tile)."""


def steps(record: Mapping[str, Any]) -> Iterator[Step]:
    """Walk a recorded game through the rules engine; each move is applied when the consumer asks for the next step.

    The same ``Match`` object is in every step, advanced in place. Deals are checked against the rules'.
    """
    game = game_of(record)
    index = index_of(record)
    match: Match | None = None
    number = 0
    try:
        for r, rnd in enumerate(record.get("rounds", ())):
            deal = deal_from(rnd.get("deal", {}))
            if match is None:
                match = game.new_match(record.get("seed", ""), first_deal=deal)
            else:
                match.next_round()
                if match.round.deal != deal:
                    raise RecordError(f"game {index}, round {r + 1}: the recorded deal is not the one the rules "
                                      f"deal from its seed")
            yield Step("start", r, match)
            for m, move in enumerate(rnd.get("moves", ())):
                seat = move.get("seat", 0)
                if seat != match.turn:
                    raise RecordError(f"game {index}, round {r + 1}: seat {seat} moved at {move_label(number)}, "
                                      f"but it was seat {match.turn}'s turn")
                action = action_from(move.get("action", {}))
                yield Step("move", r, match, m, number, move, action)
                match.apply(DRAW if action.kind == Kind.DRAW else action)
                number += 1
            if match.round.is_over():
                yield Step("end", r, match)
    except (RulesError, FormatError) as error:
        raise RecordError(f"game {index}: the record does not replay: {error}") from None


@dataclass
class Position:
    """The match right after a move (or at the start of a round, with ``move`` None)."""

    round: int
    move: int | None
    """The move's index within its round; None at a round's start."""
    seat: int | None
    action: Any
    match: Match
    forced: bool = False
    think_ms: float = 0.0
    number: int | None = None
    """The move's number within the game from 0 (shown with :func:`move_label`); None at a round's start."""


def positions(record: Mapping[str, Any]) -> Iterator[Position]:
    """Every position of a recorded game: each round's start, then the match after each move.

    The same ``Match`` object is yielded each time, advanced in place: copy what you keep.
    """
    after: Position | None = None
    for step in steps(record):
        if after is not None:  # the step generator has applied that move by now
            yield after
            after = None
        if step.kind == "start":
            yield Position(step.round, None, None, None, step.match)
        elif step.kind == "move":
            move = step.recorded or {}
            after = Position(step.round, step.move, move.get("seat", 0), step.action, step.match,
                             move.get("forced", False), move.get("thinkMs", 0.0), step.number)
    if after is not None:
        yield after


# --- verification -------------------------------------------------------------------------------------------------


@dataclass
class VerifyReport:
    games: int = 0
    moves: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    read: ReadReport = field(default_factory=ReadReport)
    seed_checked: bool = False
    unseeded: int = 0
    """Games whose record carries no seed (withheld until the tournament's end): their deals were taken as recorded,
    and everything else verified."""


@dataclass
class _Part:
    """What verifying some lines found (a chunk in a worker process, or the whole file); picklable."""

    games: int = 0
    moves: int = 0
    unseeded: int = 0
    indices: list[int] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    bad_lines: list[tuple[int, str]] = field(default_factory=list)


PARALLEL_FROM = 400
"""Verify in several processes from this many games on (a process costs a fraction of a second to start)."""
CHUNK = 200


def verify_run(path: str | Path, jobs: int | None = None) -> VerifyReport:
    """Verify every game of a run folder or record file; large files in parallel over the machine's cores.

    Raises :class:`RecordError` for a path that is not a record file; every problem of a record file, unreadable
    lines included, is a mismatch in the report.
    """
    files = locate(path)
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if jobs > 1 and files.records.stat().st_size > PARALLEL_FROM * TYPICAL_GAME_BYTES[is_compact(files.records)]:
        return _verify_parallel(files, jobs)
    report = VerifyReport()
    master = _check_commitment(files, report)
    _merge(report, _verify_lines(_lines(files, report.read), master), set())
    return _finish(files, report)


def _finish(files: RunFiles, report: VerifyReport) -> VerifyReport:
    """The file's reading problems as mismatches (a file that is no record file at all as an error)."""
    check_record_file(files, report.read)
    report.read.games = report.games
    for number, problem in report.read.bad_lines:
        report.mismatches.append(Mismatch(NO_GAME, None, None, f"line {number}: {problem}"))
    if report.read.torn_tail:
        report.mismatches.append(Mismatch(NO_GAME, None, None, "the last line is cut short (an interrupted write)"))
    return report


def _lines(files: RunFiles, read: ReadReport) -> Iterator[tuple[int, bytes]]:
    """Every complete, non-blank line of the record file with its number; a cut last line is noted in ``read``."""
    try:
        yield from complete_lines(files.records, read)
    except OSError as error:
        raise RecordError(f"{files.records}: cannot read: {error}") from None


def _verify_parallel(files: RunFiles, jobs: int) -> VerifyReport:
    """Split the complete lines into chunks verified by worker processes (spawned, never forked)."""
    report = VerifyReport()
    master = _check_commitment(files, report)
    chunks: list[list[tuple[int, bytes]]] = [[]]
    for line in _lines(files, report.read):
        chunks[-1].append(line)
        if len(chunks[-1]) == CHUNK:
            chunks.append([])
    seen: set[int] = set()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for part in pool.map(_verify_lines, chunks, [master] * len(chunks)):
            _merge(report, part, seen)
    return _finish(files, report)


def _verify_lines(lines: Iterable[tuple[int, bytes]], master: str | None) -> _Part:
    """Verify every record among ``lines``; a line that is not one is a bad line (with its number)."""
    part = _Part()
    report = VerifyReport()
    for number, raw in lines:
        try:
            record = parse_record(raw, complete=False)
        except RecordFormatError as error:
            part.bad_lines.append((number, str(error)))
            continue
        part.indices.append(index_of(record))
        part.games += 1
        part.mismatches.extend(verify_game(record, master, report))
    part.moves, part.unseeded = report.moves, report.unseeded
    return part


def _merge(report: VerifyReport, part: _Part, seen: set[int]) -> None:
    """Add a part's findings to the report, and a mismatch for each game recorded a second time."""
    report.games += part.games
    report.moves += part.moves
    report.unseeded += part.unseeded
    report.mismatches.extend(part.mismatches)
    report.read.bad_lines.extend(part.bad_lines)
    for index in part.indices:
        if index in seen:
            report.mismatches.append(Mismatch(index, None, None, "recorded twice"))
        seen.add(index)


def _check_commitment(files: RunFiles, report: VerifyReport) -> str | None:
    if files.revealed is None:
        return None
    if not isinstance(files.revealed, dict):
        report.mismatches.append(Mismatch(NO_GAME, None, None, f"{REVEALED} does not hold a seed and a nonce"))
        return None
    seed, nonce = str(files.revealed.get("seed", "")), str(files.revealed.get("nonce", ""))
    expected = files.commitment or files.revealed.get("commitment")
    if expected != commitment_of(seed, nonce):
        report.mismatches.append(Mismatch(NO_GAME, None, None, "the revealed seed and nonce do not match the "
                                                              "published commitment"))
    report.seed_checked = True
    return seed


def verify_game(record: Record, master_seed: str | None = None, report: VerifyReport | None = None
                ) -> list[Mismatch]:
    """Every difference between the record and what the rules give from its seed and actions."""
    try:
        return _verify(record, master_seed, report)
    except (FormatError, RulesError, KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        return [Mismatch(index_of(record) if isinstance(record, dict) else NO_GAME, None, None,
                         f"the record does not follow the GameRecord schema: {error}")]


STAND_IN_SEED = "dominoes/no-seed"
"""What a seedless record is dealt from to learn what the rules fix whatever the seed (the seed is never used)."""


class _DealsFromRecord:
    """A game that deals every round as the record says: for a record whose seed is not revealed yet.

    A ``Match`` asks its game for each deal (``first_deal``, ``next_deal``); this wrapper answers with the recorded
    deal, and keeps what the rules deal from a stand-in seed in ``expected``, so that verification can still compare
    every fact of a deal that does not depend on the seed (:func:`_seedless_difference`). Everything else is the
    game's own.
    """

    def __init__(self, game: Game, deals: list[Deal]) -> None:
        self._game = game
        self._deals = deals
        self.expected: list[Deal] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def first_deal(self, seed: int | str) -> Deal:
        self.expected.append(self._game.first_deal(STAND_IN_SEED))
        return self._deals[0]

    def next_deal(self, seed: int | str, round_index: int, previous: Deal, result: Any) -> Deal:
        self.expected.append(self._game.next_deal(STAND_IN_SEED, round_index, previous, result))
        return self._deals[round_index]


def _seedless_difference(recorded: Deal, expected: Deal, round_index: int) -> str | None:
    """How a recorded deal differs from the rules' in what the seed does not decide: the hand and boneyard sizes,
    the engine, the lead tile and, after the first round (whose leader the seed draws), the leader."""
    if tuple(map(len, recorded.hands)) != tuple(map(len, expected.hands)):
        return (f"the hands hold {', '.join(str(len(h)) for h in recorded.hands)} tiles; the rules deal "
                f"{', '.join(str(len(h)) for h in expected.hands)}")
    if len(recorded.boneyard) != len(expected.boneyard):
        return f"the boneyard holds {len(recorded.boneyard)} tiles; the rules leave {len(expected.boneyard)}"
    if recorded.engine != expected.engine or recorded.lead_tile != expected.lead_tile:
        return "the engine or the tile to lead is not the one the rules give"
    if round_index > 0 and recorded.leader != expected.leader:
        return f"seat {recorded.leader} leads; the rules give seat {expected.leader}"
    return None


def _verify(record: Record, master_seed: str | None, report: VerifyReport | None) -> list[Mismatch]:
    found: list[Mismatch] = []
    index = index_of(record)

    def problem(text: str, r: int | None = None, m: int | None = None) -> None:
        found.append(Mismatch(index, r, m, text))

    seed = record.get("seed", "")
    if master_seed is not None and seed != f"{master_seed}/{record.get('dealKey', '')}":
        problem(f"seed {seed!r} is not derived from the revealed master seed and deal {record.get('dealKey')!r}")
    try:
        game = game_of(record)
    except RecordError as error:
        problem(str(error))
        return found
    seats = record.get("seats", [])
    side_of = record.get("sideOfSeat", [0] * len(seats))
    if len(seats) != game.players or list(side_of) != list(game.side_of):
        problem(f"expected {game.players} seats on sides {list(game.side_of)}, got {len(seats)} on {list(side_of)}")
        return found
    rounds = record.get("rounds", ())
    dealer: _DealsFromRecord | None = None
    if not seed and master_seed is None and rounds:
        dealer = _DealsFromRecord(game, [deal_from(rnd.get("deal", {})) for rnd in rounds])
        if report is not None:
            report.unseeded += 1
    try:
        # The dealer stands in for the game (it answers the deal hooks and hands every other attribute to the game),
        # without being a Game subclass: a subclass would find Game's methods on itself instead of the game's.
        match = game.new_match(seed) if dealer is None else Match(dealer, seed)  # type: ignore[arg-type]
    except RulesError as error:
        problem(f"the recorded deal is not a deal of this game: {error}", 0)
        return found
    moves = 0
    for r, rnd in enumerate(rounds):
        if r > 0:
            if match.is_over():
                problem("a round is recorded after the match was over", r)
                return found
            if not match.round.is_over():
                problem("a round is recorded after a round that did not end", r)
                return found
            try:
                match.next_round()
            except RulesError as error:
                problem(f"the recorded deal is not a deal of this game: {error}", r)
                return found
        if dealer is not None:
            difference = _seedless_difference(match.round.deal, dealer.expected[r], r)
            if difference:
                problem(f"the deal is not one the rules deal: {difference}", r)
                return found
        elif deal_from(rnd.get("deal", {})) != match.round.deal:
            problem("the deal is not the one the rules deal from the game's seed", r)
            return found
        state = match.round
        for move in rnd.get("moves", ()):
            number = moves
            moves += 1
            if state.is_over():
                problem("a move is recorded after the round was over", r, number)
                return found
            seat = move.get("seat", 0)
            if seat != state.turn:
                problem(f"seat {seat} moved, but it was seat {state.turn}'s turn", r, number)
                return found
            action = action_from(move.get("action", {}))
            legal = state.legal_actions()
            if action.kind == Kind.DRAW:
                if DRAW not in legal:
                    problem("draw was not legal", r, number)
                    return found
                if action.tile != state.boneyard[-1]:
                    problem(f"the recorded draw ({action}) is not the boneyard's top tile", r, number)
                    return found
                action = DRAW
            elif action not in legal:
                problem(f"{action} was not legal; legal: {', '.join(map(str, legal))}", r, number)
                return found
            if move.get("forced", False) and len(legal) != 1:
                problem("recorded as forced, but there was a choice", r, number)
            if "belief" in move:
                wrong = _belief_mismatch(move["belief"], state, seat)
                if wrong:
                    problem(wrong, r, number)
            match.apply(action)
        if "result" in rnd:
            if not state.is_over():
                problem("a round result is recorded for a round that is not over", r)
                return found
            expected = round_result_dict(state.result(), r, match.scores)
            if expected != _every_tile_field(rnd["result"]):
                problem(f"the round result differs from the rules: recorded {_short(rnd['result'])}, "
                        f"rules give {_short(expected)}", r)
        elif state.is_over():
            problem("the round is over but its result is not recorded", r)
    if report is not None:
        report.moves += moves
    faults = record.get("faults", ())
    by_fault = bool(faults)
    if by_fault:
        faulting = {game.side_of[f.get("seat", 0)] for f in faults if f.get("seat", 0) < game.players}
        expected_result = forfeit_result(game, match.scores, faulting, len(match.results))
    elif match.is_over():
        expected_result = match.result()
    else:
        problem("the match is not over at the end of the record and no fault ended it")
        return found
    expected = match_result_dict(expected_result, by_fault)
    recorded = record.get("result")
    if not isinstance(recorded, dict):
        problem("the match result is not recorded")
    elif expected != recorded:
        problem(f"the match result differs from the rules: recorded {_short(recorded)}, rules give {_short(expected)}")
    return found


def _belief_mismatch(data: Mapping[str, Any], state: RoundState, seat: int) -> str | None:
    """What is wrong with a recorded belief, sent by ``seat`` in ``state`` before its move: values that do not fit
    its tiles, or a belief the referee would have refused (:func:`arena.rules.beliefs.belief_problem`)."""
    try:
        belief = belief_from(data, state.game.players)
    except FormatError as error:
        return str(error)
    refused = belief_problem(belief, state, seat)
    return f"the recorded belief would have been refused: {refused}" if refused else None


def _every_tile_field(result: dict[str, Any]) -> dict[str, Any]:
    """A recorded round result with every tile of its hands written in full. Older records left out a tile's zero
    halves, as protobuf's JSON mapping does (``[0|0]`` as ``{}``); both forms are the same tile."""
    hands = result.get("hands")
    if not hands:
        return result
    full = [({"tiles": [{"low": t.get("low", 0), "high": t.get("high", 0)} for t in hand["tiles"]]}
             if hand.get("tiles") else hand) for hand in hands]
    return dict(result, hands=full)


def _short(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))[:300]
