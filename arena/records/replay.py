"""Replaying records through the rules engine: every position of a game, and verification of whole runs.

``positions(record)`` walks a recorded game move by move with the engine (for the terminal, the HTML viewer and
regression replay). ``verify_game`` re-simulates a game from its seed and recorded actions and lists every
difference: a deal that the seed does not give, an action that was not legal or not the recorded seat's turn, a round
result or a match result that the rules do not give or that is missing, a seed that does not derive from the revealed
master seed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..referee import forfeit_result
from ..rules import DRAW, Game, Kind, Match, RulesError, new_game
from ..tournament.seed import REVEALED_FILE, commitment_of
from .jsonform import (
    RECORD_VERSION, FormatError, action_from, deal_from, index_of, match_result_dict, option_from, round_result_dict,
)
from .store import ReadReport, Record, _incomplete, iter_records

RECORDS = "games.jsonl"


class RecordError(Exception):
    """A record file or game that cannot be used, with a message for people."""


@dataclass(frozen=True)
class Mismatch:
    game: int
    round: int | None
    move: int | None
    problem: str

    def __str__(self) -> str:
        where = f"game {self.game}"
        if self.round is not None:
            where += f", round {self.round + 1}"
        if self.move is not None:
            where += f", move {self.move + 1}"
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
        records = path / RECORDS
        if not records.exists():
            raise RecordError(f"{path}: no {RECORDS} in this folder (is it a run folder?)")
        files = RunFiles(records, path)
    elif path.exists():
        files = RunFiles(path, path.parent if (path.parent / REVEALED_FILE).exists() else None)
    else:
        raise RecordError(f"{path}: no such run folder or record file")
    if files.records.stat().st_size == 0:
        raise RecordError(f"{files.records}: the record file is empty")
    if files.folder is not None:
        revealed = files.folder / REVEALED_FILE
        if revealed.exists():
            try:
                files.revealed = json.loads(revealed.read_text())
            except (ValueError, OSError) as error:
                raise RecordError(f"{revealed}: cannot read the revealed seed: {error}") from None
        commitment = files.folder / "commitment.txt"
        if commitment.exists():
            files.commitment = commitment.read_text().split()[0] if commitment.read_text().split() else None
    return files


def load_games(files: RunFiles, report: ReadReport) -> Iterator[Record]:
    try:
        yield from iter_records(files.records, report)
    except OSError as error:
        raise RecordError(f"{files.records}: cannot read: {error}") from None


def find_game(files: RunFiles, index: int) -> Record:
    report = ReadReport()
    for record in load_games(files, report):
        if index_of(record) == index:
            return record
    known = report.games
    problems = f"; {len(report.bad_lines)} unreadable lines" if report.bad_lines else ""
    raise RecordError(f"{files.records}: no game {index} (the file holds {known} readable games{problems})")


def game_of(record: Record) -> Game:
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
    """The move's number within the match, counting every move (as in fault records)."""
    recorded: dict | None = None
    """The move as recorded (seat, action, thinkMs, forced, comment)."""
    action: Any = None
    """The recorded action, as an engine action (a draw carries its tile)."""


def steps(record: Record) -> Iterator[Step]:
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
                    raise RecordError(f"game {index}, round {r + 1}: seat {seat} moved at move {number}, but it "
                                      f"was seat {match.turn}'s turn")
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
    seat: int | None
    action: Any
    match: Match
    forced: bool = False
    think_ms: float = 0.0


def positions(record: Record) -> Iterator[Position]:
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
                             move.get("forced", False), move.get("thinkMs", 0.0))
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


PARALLEL_FROM = 400
"""Verify in several processes from this many games on (a process costs a fraction of a second to start)."""
CHUNK = 200


def verify_run(path: str | Path, jobs: int | None = None) -> VerifyReport:
    """Verify every game of a run folder or record file; large files in parallel over the machine's cores."""
    files = locate(path)
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if jobs > 1 and files.records.stat().st_size > PARALLEL_FROM * 20_000:
        return _verify_parallel(files, jobs)
    report = VerifyReport()
    master = _check_commitment(files, report)
    seen: set[int] = set()
    for number, raw in _lines(files, report.read):
        record = _record_to_verify(number, raw, report.read)
        if record is None:
            continue
        index = index_of(record)
        if index in seen:
            report.mismatches.append(Mismatch(index, None, None, "recorded twice"))
        seen.add(index)
        report.games += 1
        report.mismatches.extend(verify_game(record, master, report))
    report.read.games = report.games
    _report_read_problems(report)
    return report


def _lines(files: RunFiles, read: ReadReport) -> Iterator[tuple[int, bytes]]:
    """Every complete, non-blank line of the record file with its number; a cut last line is noted in ``read``."""
    try:
        with open(files.records, "rb") as f:
            for number, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):
                    read.torn_tail = True
                    return
                if raw.strip():
                    yield number, raw
    except OSError as error:
        raise RecordError(f"{files.records}: cannot read: {error}") from None


def _record_to_verify(number: int, raw: bytes, read: ReadReport) -> Record | None:
    """The game record on a line, or None with the problem in ``read`` (as :func:`.store.iter_records` reads them).

    A record whose only lack is its match result is returned all the same, so that verification reports the missing
    result with the game's number instead of an anonymous unreadable line.
    """
    try:
        record = json.loads(raw)
    except ValueError as error:
        read.bad_lines.append((number, f"not JSON: {str(error)[:120]}"))
        return None
    if not isinstance(record, dict) or "recordVersion" not in record:
        read.bad_lines.append((number, "not a game record (no recordVersion)"))
        return None
    if record["recordVersion"] != RECORD_VERSION:
        read.bad_lines.append((number, f"record version {record['recordVersion']!r}; this arena reads "
                                       f"version {RECORD_VERSION}"))
        return None
    problem = _incomplete(dict(record, result={}))
    if problem:
        read.bad_lines.append((number, f"not a complete game record: {problem}"))
        return None
    return record


def _verify_parallel(files: RunFiles, jobs: int) -> VerifyReport:
    """Split the complete lines into chunks verified by worker processes (spawned, never forked)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

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
        for part in pool.map(_verify_chunk, chunks, [master] * len(chunks)):
            games, moves, indices, mismatches, bad_lines = part
            report.games += games
            report.moves += moves
            report.mismatches.extend(mismatches)
            report.read.bad_lines.extend(bad_lines)
            for index in indices:
                if index in seen:
                    report.mismatches.append(Mismatch(index, None, None, "recorded twice"))
                seen.add(index)
    report.read.games = report.games
    _report_read_problems(report)
    return report


def _verify_chunk(lines: list[tuple[int, bytes]], master: str | None) -> tuple:
    report = VerifyReport()
    indices = []
    for number, raw in lines:
        record = _record_to_verify(number, raw, report.read)
        if record is None:
            continue
        indices.append(index_of(record))
        report.games += 1
        report.mismatches.extend(verify_game(record, master, report))
    return report.games, report.moves, indices, report.mismatches, report.read.bad_lines


def _check_commitment(files: RunFiles, report: VerifyReport) -> str | None:
    if files.revealed is None:
        return None
    seed, nonce = str(files.revealed.get("seed", "")), str(files.revealed.get("nonce", ""))
    expected = files.commitment or files.revealed.get("commitment")
    if expected != commitment_of(seed, nonce):
        report.mismatches.append(Mismatch(-1, None, None, "the revealed seed and nonce do not match the published "
                                                         "commitment"))
    report.seed_checked = True
    return seed


def _report_read_problems(report: VerifyReport) -> None:
    for number, problem in report.read.bad_lines:
        report.mismatches.append(Mismatch(-1, None, None, f"line {number}: {problem}"))
    if report.read.torn_tail:
        report.mismatches.append(Mismatch(-1, None, None, "the last line is cut short (an interrupted write)"))


def verify_game(record: Record, master_seed: str | None = None, report: VerifyReport | None = None
                ) -> list[Mismatch]:
    """Every difference between the record and what the rules give from its seed and actions."""
    try:
        return _verify(record, master_seed, report)
    except (FormatError, RulesError, KeyError, TypeError, ValueError, AttributeError) as error:
        return [Mismatch(index_of(record) if isinstance(record, dict) else -1, None, None,
                         f"the record does not follow the GameRecord schema: {error}")]


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
    match = game.new_match(seed)
    moves = 0
    for r, rnd in enumerate(record.get("rounds", ())):
        if r > 0:
            if match.is_over():
                problem("a round is recorded after the match was over", r)
                return found
            if not match.round.is_over():
                problem("a round is recorded after a round that did not end", r)
                return found
            match.next_round()
        if deal_from(rnd.get("deal", {})) != match.round.deal:
            problem("the deal is not the one the rules deal from the game's seed", r)
            return found
        state = match.round
        for m, move in enumerate(rnd.get("moves", ())):
            moves += 1
            if state.is_over():
                problem("a move is recorded after the round was over", r, m)
                return found
            seat = move.get("seat", 0)
            if seat != state.turn:
                problem(f"seat {seat} moved, but it was seat {state.turn}'s turn", r, m)
                return found
            action = action_from(move.get("action", {}))
            legal = state.legal_actions()
            if action.kind == Kind.DRAW:
                if DRAW not in legal:
                    problem("draw was not legal", r, m)
                    return found
                if action.tile != state.boneyard[-1]:
                    problem(f"the recorded draw ({action}) is not the boneyard's top tile", r, m)
                    return found
                action = DRAW
            elif action not in legal:
                problem(f"{action} was not legal; legal: {', '.join(map(str, legal))}", r, m)
                return found
            if move.get("forced", False) and len(legal) != 1:
                problem("recorded as forced, but there was a choice", r, m)
            match.apply(action)
        if "result" in rnd:
            if not state.is_over():
                problem("a round result is recorded for a round that is not over", r)
                return found
            expected = round_result_dict(state.result(), r, match.scores)
            if expected != rnd["result"]:
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


def _short(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))[:300]
