"""The games as a data set: ``arena export RUN --parquet DIR`` writes typed Parquet tables that pandas, polars or
DuckDB load as they are, instead of JSON lines to parse.

Three files go into ``DIR``:

- ``games.parquet``: one row per game (its facts are the CSV export's, :func:`.export.row_from_record`, with the
  variant, the moves and the opening added);
- ``decisions.parquet``: one row per recorded move, forced moves included, with what the seat to move saw when it
  chose: its hand, the layout's open ends, its legal actions; then what it chose, how long it thought, and how the
  round and the game ended for its side;
- ``beliefs.parquet``: one row per tile named in a belief a bot sent with its move (:mod:`.beliefs`), with where
  the tile really was and the tile's scores; join it to ``decisions.parquet`` on (run, game, move);
- ``tiles.parquet``: the tile encoding as a table (id, low, high, name, pips, double), to join on.

The hands, open ends and legal actions are not in the records: they come from re-simulating each record with the
rules (:func:`.replay.steps`, the walk that the terminal and HTML replays use), so a record that does not replay is
skipped with a warning, like a line that is not a record (:func:`.store.iter_records` reports those).

**Encodings.** A *tile* is its engine id, ``high * (high + 1) / 2 + low`` (``[0|0]`` 0, ``[0|1]`` 1, ``[1|1]`` 2,
``[0|2]`` 3 ... ``[6|6]`` 27, ``[18|18]`` 189): one small integer, ordered as the double-N sets are, so ``[0|0]`` ..
``[6|6]`` are exactly the ids 0 .. 27; ``tiles.parquet`` holds each id's halves and name. An *action* is a struct
(``kind`` ``place`` / ``draw`` / ``pass``; ``tile``, the tile placed; ``target``, the tile it joins, null for a lead;
``point``, the target's side it joins, ``high_end`` / ``low_end`` / ``line_a`` / ``line_b`` / ``side_c`` / ``side_d``,
null for a lead and in Mexican Train at the hub; ``train``, the owner's seat of a personal train or -2 for the Mexican
train, null outside Mexican Train). An *open end* is a struct (``tile`` at the end, ``point``, the ``value`` it
accepts, ``train`` as above). Rounds, moves and seats count from 0, as the records and the bot protocol do (people
see ``round 1``, ``move 1``). Scores and points are per side (a seat, or a team in La Plaza for teams).

games.parquet:

=================  ==========================  ===========================================================
column             type                        meaning
=================  ==========================  ===========================================================
run                string                      the run folder, relative to what was exported (``.`` for a run
                                               folder; ``tables/7``, ``challenges/2``, ``finals`` in a league)
game               int64                       the game's index in the run's schedule
deal_key           string                      the duplicate deal it was dealt from
rotation           int64                       the seat rotation of that deal
variant            string                      ``draw``, ``block``, ``la_plaza``, ``la_plaza_teams``, ...
players            int8                        seats at the table
seats              list<string>                the entrant at each seat
side_of_seat       list<int8>                  each seat's side
seed               string                      the game's seed; empty while the run's master seed is secret
scores             list<int64>                 the final score of each side
winner             int8 (null: a drawn match)  the winning side
winner_names       string                      its entrants, ``+`` between team mates
ranking            list<int8>                  the sides from best to worst
rounds             int16                       rounds played
moves              int32                       moves recorded (the decisions table's rows of this game)
by_fault           bool                        a fault ended the match
faults             list<struct<kind: string,   every fault, with its seat
                   seat: int8>>
duration_s         float64                     the game's wall-clock seconds
opening_tile       int16 (null: none placed)   the first tile placed in the game
opening_seat       int8 (null: none placed)    the seat that placed it
=================  ==========================  ===========================================================

decisions.parquet (the state is the one just before the move):

=================  ==========================  ===========================================================
column             type                        meaning
=================  ==========================  ===========================================================
run, game          string, int64               the game, as in games.parquet
round              int16                       the round, from 0
move               int32                       the move's number in the game, from 0 (``ActRequest.move_number``)
move_in_round      int16                       the move's number in its round, from 0
seat, side         int8, int8                  the seat to move and its side
entrant            string                      the entrant at that seat
hand               list<int16>                 the seat's tiles, ascending
hand_counts        list<int8>                  every seat's number of tiles
boneyard           int16                       tiles left to draw
open_ends          list<struct<tile: int16,    the layout's open attachment points (empty before the lead)
                   point: string, value: int8,
                   train: int16>>
open_values        list<int8>                  the values those ends accept, in the same order
scores             list<int64>                 the match score of each side before the move
legal              list<action>                the seat's legal actions, in the rules' order
choice             int16                       the index in ``legal`` of the action taken
action_kind ...    string, int16, int16,       the action taken (``action_kind``, ``action_tile``,
                   string, int16               ``action_target``, ``action_point``, ``action_train``)
action_text        string                      the action as the replays print it (``[3|5] on [5|5] line A``)
drawn              int16 (null: not a draw)    the tile a draw took (the seat sees it once drawn)
forced             bool                        the only legal action, applied without asking the bot
think_ms           float64                     the bot's thinking time as recorded (0 for a forced move)
round_points       int64 (null: round cut)     what the seat's side scored in the round (null when a fault
                                               ended the match in that round)
round_won          bool (null: round cut)      the seat's side won the round (false when nobody did)
round_ending       string (null: round cut)    ``domino`` or ``block``
game_points        int64                       the side's final match score
game_won           bool                        the side won the match (false for a drawn match)
game_rank          int8                        the side's place in the match's ranking, 1 the best
=================  ==========================  ===========================================================

beliefs.parquet (the truth is where the tile was just before the move; the scores are the standings', per tile):

=================  ==========================  ===========================================================
column             type                        meaning
=================  ==========================  ===========================================================
run, game, move    string, int64, int32        the move the belief came with, as in decisions.parquet
round              int16                       the round, from 0
seat, entrant      int8, string                the seat that sent it and its entrant
tile               int16                       a tile the belief names
places             list<int8>                  the belief's places in order: the other seats, then -1 for
                                               the boneyard (the same for every tile of a belief)
probabilities      list<float64>               the tile's probability of each place, as recorded (whole
                                               thousandths, summing to 1)
truth              int8                        the place the tile really was in: a seat, -1 the boneyard
p_truth            float64                     the probability the belief gave that place
brier              float64                     the tile's Brier score (0 to 2)
log_loss           float64                     the tile's log loss in nats (at most ln 1000)
=================  ==========================  ===========================================================
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.display import move_label
from arena.records.beliefs import RecordedBelief, belief_at
from arena.records.export import ExportError, GameRow, row_from_record, seeds_revealed
from arena.records.jsonform import FormatError, index_of
from arena.records.replay import RecordError, Step, check_record_file, game_of, locate, steps
from arena.records.schema import Record
from arena.records.store import ReadReport, iter_records
from arena.rules import DRAW, NO_TILE, NO_TRAIN, Action, Kind, Point
from arena.rules.beliefs import brier, log_loss, places
from arena.rules.line import End
from arena.rules.tiles import HIGH, IS_DOUBLE, LOW, NAMES, PIPS
from arena.rules.trains import TrainEnd

GAMES_FILE = "games.parquet"
DECISIONS_FILE = "decisions.parquet"
BELIEFS_FILE = "beliefs.parquet"
TILES_FILE = "tiles.parquet"
PARQUET_FILES = (GAMES_FILE, DECISIONS_FILE, BELIEFS_FILE, TILES_FILE)
BATCH_ROWS = 20_000
"""Decision rows held in memory before they are written as a row group (a league's export stays small in memory)."""
KIND_TEXT = {Kind.PLACE: "place", Kind.DRAW: "draw", Kind.PASS: "pass"}
POINT_TEXT: dict[Point, str] = {p: p.name.lower() for p in Point if p is not Point.NONE}


class ParquetUnavailable(ExportError):
    """pyarrow is not installed (it is the ``parquet`` extra: ``pip install -e '.[parquet]'``, which
    scripts/setup.sh does)."""


def _pyarrow() -> Any:
    """pyarrow, imported only by the export that needs it (the arena starts without it)."""
    try:
        # the optional extra (`[parquet]`), loaded by the export alone: the arena starts without it
        import pyarrow.parquet  # noqa: PLC0415
    except ImportError:
        raise ParquetUnavailable("pyarrow is not installed: run scripts/setup.sh, or pip install "
                                 "'dominoes-arena[parquet]'") from None
    return pyarrow


def schemas() -> tuple[Any, Any, Any, Any]:
    """The games, decisions, beliefs and tiles schemas (the module docstring's tables, as pyarrow types)."""
    pa = _pyarrow()
    action = pa.struct([("kind", pa.string()), ("tile", pa.int16()), ("target", pa.int16()),
                        ("point", pa.string()), ("train", pa.int16())])
    end = pa.struct([("tile", pa.int16()), ("point", pa.string()), ("value", pa.int8()), ("train", pa.int16())])
    games = pa.schema([
        ("run", pa.string()), ("game", pa.int64()), ("deal_key", pa.string()), ("rotation", pa.int64()),
        ("variant", pa.string()), ("players", pa.int8()), ("seats", pa.list_(pa.string())),
        ("side_of_seat", pa.list_(pa.int8())), ("seed", pa.string()), ("scores", pa.list_(pa.int64())),
        ("winner", pa.int8()), ("winner_names", pa.string()), ("ranking", pa.list_(pa.int8())),
        ("rounds", pa.int16()), ("moves", pa.int32()), ("by_fault", pa.bool_()),
        ("faults", pa.list_(pa.struct([("kind", pa.string()), ("seat", pa.int8())]))),
        ("duration_s", pa.float64()), ("opening_tile", pa.int16()), ("opening_seat", pa.int8()),
    ])
    decisions = pa.schema([
        ("run", pa.string()), ("game", pa.int64()), ("round", pa.int16()), ("move", pa.int32()),
        ("move_in_round", pa.int16()), ("seat", pa.int8()), ("side", pa.int8()), ("entrant", pa.string()),
        ("hand", pa.list_(pa.int16())), ("hand_counts", pa.list_(pa.int8())), ("boneyard", pa.int16()),
        ("open_ends", pa.list_(end)), ("open_values", pa.list_(pa.int8())), ("scores", pa.list_(pa.int64())),
        ("legal", pa.list_(action)), ("choice", pa.int16()), ("action_kind", pa.string()),
        ("action_tile", pa.int16()), ("action_target", pa.int16()), ("action_point", pa.string()),
        ("action_train", pa.int16()), ("action_text", pa.string()), ("drawn", pa.int16()), ("forced", pa.bool_()),
        ("think_ms", pa.float64()), ("round_points", pa.int64()), ("round_won", pa.bool_()),
        ("round_ending", pa.string()), ("game_points", pa.int64()), ("game_won", pa.bool_()),
        ("game_rank", pa.int8()),
    ])
    beliefs = pa.schema([
        ("run", pa.string()), ("game", pa.int64()), ("move", pa.int32()), ("round", pa.int16()), ("seat", pa.int8()),
        ("entrant", pa.string()), ("tile", pa.int16()), ("places", pa.list_(pa.int8())),
        ("probabilities", pa.list_(pa.float64())), ("truth", pa.int8()), ("p_truth", pa.float64()),
        ("brier", pa.float64()), ("log_loss", pa.float64()),
    ])
    tiles = pa.schema([("id", pa.int16()), ("low", pa.int8()), ("high", pa.int8()), ("name", pa.string()),
                       ("pips", pa.int8()), ("double", pa.bool_())])
    return games, decisions, beliefs, tiles


def action_struct(action: Action) -> dict[str, Any]:
    """An engine action as the tables' ``action`` struct (a draw without its tile: the tile is ``drawn``)."""
    return {"kind": KIND_TEXT[action.kind],
            "tile": action.tile if action.kind == Kind.PLACE else None,
            "target": None if action.target == NO_TILE else action.target,
            "point": POINT_TEXT.get(action.point),
            "train": None if action.train == NO_TRAIN else action.train}


def open_end_struct(end: End | TrainEnd) -> dict[str, Any]:
    """A layout's open end, ``(tile, point, value)`` or Mexican Train's ``(tile, point, value, train)``."""
    tile, point, value = end[:3]
    return {"tile": tile, "point": POINT_TEXT.get(point), "value": value,
            "train": end[3] if len(end) > 3 else None}


def decision_row(run: str, game: int, step: Step, seats: list[str], side_of: tuple[int, ...]) -> dict[str, Any]:
    """What the seat to move saw at ``step`` (a ``move`` step: the match is the position before the move), and
    what it chose; the round's and the game's result are filled in once known."""
    state = step.match.round
    move = step.recorded or {}
    seat = state.turn
    legal = state.legal_actions()
    taken = DRAW if step.action.kind == Kind.DRAW else step.action
    if taken not in legal:  # the walk would refuse it on applying; say so before the index is looked up
        raise RecordError(f"{move_label(step.number)}: {taken} was not legal")
    ends = state.layout.open_ends()
    chosen = action_struct(taken)
    return {
        "run": run, "game": game, "round": step.round, "move": step.number, "move_in_round": step.move,
        "seat": seat, "side": side_of[seat], "entrant": seats[seat] if seat < len(seats) else "",
        "hand": list(state.hand(seat)), "hand_counts": list(state.counts), "boneyard": len(state.boneyard),
        "open_ends": [open_end_struct(e) for e in ends], "open_values": [e[2] for e in ends],
        "scores": list(state.scores()), "legal": [action_struct(a) for a in legal], "choice": legal.index(taken),
        "action_kind": chosen["kind"], "action_tile": chosen["tile"], "action_target": chosen["target"],
        "action_point": chosen["point"], "action_train": chosen["train"], "action_text": str(taken),
        "drawn": step.action.tile if step.action.kind == Kind.DRAW and step.action.tile != NO_TILE else None,
        "forced": bool(move.get("forced", False)), "think_ms": float(move.get("thinkMs", 0.0)),
        "round_points": None, "round_won": None, "round_ending": None,
        "game_points": None, "game_won": None, "game_rank": None,
    }


def belief_rows(run: str, game: int, round_index: int, item: RecordedBelief, seats: list[str]) -> list[dict[str, Any]]:
    """One row per tile of a recorded belief, beside where the tile was (a tile that was not hidden, which a
    verified record never holds, has no truth and no scores)."""
    players = len(seats)
    order = list(places(players, item.seat))
    rows = []
    for tile, row, where in zip(item.belief.tiles, item.belief.probabilities, item.truth, strict=True):
        known = where >= 0
        rows.append({
            "run": run, "game": game, "move": item.number, "round": round_index, "seat": item.seat,
            "entrant": seats[item.seat] if item.seat < players else "", "tile": tile, "places": order,
            "probabilities": list(row), "truth": order[where] if known else None,
            "p_truth": row[where] if known else None, "brier": brier(row, where) if known else None,
            "log_loss": log_loss(row, where) if known else None,
        })
    return rows


@dataclass
class GameRows:
    """One game's row, its decision rows and its belief rows."""

    game: dict[str, Any]
    decisions: list[dict[str, Any]]
    beliefs: list[dict[str, Any]] = field(default_factory=list)


def rows_of_record(record: Record, run: str, show_seed: bool) -> GameRows:
    """The game's row and its decisions, re-simulated with the rules; :class:`RecordError` for a record that does
    not replay, :class:`ExportError` for one whose fields do not fit a row."""
    row = row_from_record(record, show_seed=show_seed)
    game = game_of(record)
    if len(row.seats) != game.players:
        raise ExportError(f"the record has {len(row.seats)} seats; a {game.name} game has {game.players}")
    decisions: list[dict[str, Any]] = []
    beliefs: list[dict[str, Any]] = []
    round_start = 0
    opening: tuple[int, int] | None = None
    rounds = 0
    for step in steps(record):
        if step.kind == "start":
            round_start, rounds = len(decisions), step.round + 1
        elif step.kind == "move":
            decisions.append(decision_row(run, row.index, step, list(row.seats), game.side_of))
            belief = belief_at(step)
            if belief is not None:
                beliefs.extend(belief_rows(run, row.index, step.round, belief, list(row.seats)))
            if opening is None and step.action.kind == Kind.PLACE:
                opening = (step.action.tile, step.match.round.turn)
        else:
            _round_result(decisions[round_start:], step.match.round.result())
    _game_result(decisions, row)
    return GameRows(_game_row(row, run, game.name, game.players, rounds, len(decisions), opening), decisions,
                    beliefs)


def _round_result(rows: list[dict[str, Any]], result: Any) -> None:
    """The round's result, per the side of each row's seat."""
    for row in rows:
        side = row["side"]
        row["round_points"] = result.points[side]
        row["round_won"] = result.winner == side
        row["round_ending"] = result.ending.value


def _game_result(rows: list[dict[str, Any]], game: GameRow) -> None:
    """The match's result, per the side of each row's seat (the recorded one: verification checks it)."""
    for row in rows:
        side = row["side"]
        row["game_points"] = game.scores[side] if side < len(game.scores) else None
        row["game_won"] = game.winner == side
        row["game_rank"] = game.ranking.index(side) + 1 if side in game.ranking else None


def _game_row(row: GameRow, run: str, variant: str, players: int, rounds: int, moves: int,
              opening: tuple[int, int] | None) -> dict[str, Any]:
    return {
        "run": run, "game": row.index, "deal_key": row.deal_key, "rotation": row.rotation, "variant": variant,
        "players": players, "seats": list(row.seats), "side_of_seat": list(row.side_of_seat or range(players)),
        "seed": row.seed, "scores": list(row.scores), "winner": row.winner, "winner_names": row.winner_names(),
        "ranking": list(row.ranking), "rounds": rounds, "moves": moves, "by_fault": bool(row.faults),
        "faults": [{"kind": kind, "seat": seat} for kind, seat in row.faults], "duration_s": row.duration_s,
        "opening_tile": opening[0] if opening else None, "opening_seat": opening[1] if opening else None,
    }


def tile_rows() -> list[dict[str, Any]]:
    """Every tile of the double-18 set (every smaller set is a prefix of it)."""
    return [{"id": t, "low": LOW[t], "high": HIGH[t], "name": NAMES[t], "pips": PIPS[t], "double": IS_DOUBLE[t]}
            for t in range(len(LOW))]


# --- writing ------------------------------------------------------------------------------------------------------


@dataclass
class DatasetReport:
    """What an export wrote, and what it skipped (as lines for stderr)."""

    games: int = 0
    decisions: int = 0
    beliefs: int = 0
    """Rows of ``beliefs.parquet``: tiles named in beliefs."""
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """This process's processor time (the machine may be busy with other work: wall time alone would say so)."""


def _records_of(records: Path, run: str, report: DatasetReport) -> Iterator[GameRows]:
    """Every exportable game of one record file, each index once (the first record, as the CSV export and resume
    count them); what cannot be exported is a warning."""
    show_seed = seeds_revealed(records)
    read = ReadReport()
    seen: set[int] = set()
    try:
        for record in iter_records(records, read):
            index = index_of(record)
            if index in seen:
                report.warnings.append(f"{records}: game {index} is recorded twice; the first record is exported")
                continue
            try:
                rows = rows_of_record(record, run, show_seed)
            except (ExportError, RecordError, FormatError) as error:
                report.warnings.append(f"{records}: game {index}: {error}; skipped")
                continue
            seen.add(index)
            yield rows
    except OSError as error:
        raise ExportError(f"{records}: cannot read: {error.strerror or error}") from None
    for number, problem in read.bad_lines:
        report.warnings.append(f"{records} line {number}: {problem}; skipped")
    if read.torn_tail:
        report.warnings.append(f"{records}: the last line is cut short (a game being written, or a crash); skipped")


def record_files(sources: Iterable[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """Each (run name, run folder or record file) as (run name, record file), checked before anything is written:
    a missing folder or a file that is no record file is one :class:`RecordError` line."""
    found = []
    for run, path in sources:
        files = locate(path)
        report = ReadReport()
        for _ in iter_records(files.records, report):
            break
        else:
            check_record_file(files, report)
        found.append((run, files.records))
    return found


def prepare_output(out: Path) -> None:
    """``out`` is created, or is an empty folder: an export never mixes its files with others or overwrites them."""
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        raise ExportError(f"{out}: the folder is not empty (an export writes into a new or empty folder)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ExportError(f"cannot create {out}: {error.strerror or error}") from None


def write_dataset(sources: Iterable[tuple[str, Path]], out: str | Path) -> DatasetReport:
    """Export every game of ``sources`` ((run name, run folder or record file) pairs) into the folder ``out``:
    games, decisions and tiles as Parquet. The files appear whole or not at all (written as ``.part`` files and
    renamed at the end); a folder that is not new or empty is refused."""
    pa = _pyarrow()
    pq = pa.parquet

    started, cpu = time.perf_counter(), time.process_time()
    files = record_files(sources)
    out = Path(out)
    created = not out.exists()
    prepare_output(out)
    games_schema, decisions_schema, beliefs_schema, tiles_schema = schemas()
    report = DatasetReport()
    parts = {name: out / f".{name}.part" for name in PARQUET_FILES}
    try:
        with pq.ParquetWriter(parts[GAMES_FILE], games_schema) as games_out, \
                pq.ParquetWriter(parts[DECISIONS_FILE], decisions_schema) as decisions_out, \
                pq.ParquetWriter(parts[BELIEFS_FILE], beliefs_schema) as beliefs_out:
            tables = _Batches(pa, [_Batch(games_out, games_schema), _Batch(decisions_out, decisions_schema),
                                   _Batch(beliefs_out, beliefs_schema)])
            for run, records in files:
                for rows in _records_of(records, run, report):
                    tables.add(rows, report)
            tables.flush(report)
        pq.write_table(_table(pa, tile_rows(), tiles_schema), parts[TILES_FILE])
        for name, part in parts.items():
            os.replace(part, out / name)
    except OSError as error:
        _remove(parts.values(), out if created else None)
        raise ExportError(f"cannot write {out}: {error.strerror or error}") from None
    except (pa.ArrowException, OverflowError) as error:  # a value beyond its column's type: a record made by hand
        _remove(parts.values(), out if created else None)
        raise ExportError(f"cannot write {out}: a value does not fit its column: {str(error)[:200]}") from None
    except BaseException:
        _remove(parts.values(), out if created else None)
        raise
    report.seconds, report.cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    return report


def _remove(parts: Iterable[Path], folder: Path | None) -> None:
    """What a failed export leaves: its ``.part`` files, and the folder when the export made it."""
    for part in parts:
        part.unlink(missing_ok=True)
    if folder is not None:
        try:
            folder.rmdir()
        except OSError:
            pass


def _table(pa: Any, rows: list[dict[str, Any]], schema: Any) -> Any:
    """Row dicts as a pyarrow table of ``schema``."""
    return pa.Table.from_pydict({name: [row[name] for row in rows] for name in schema.names}, schema=schema)


@dataclass
class _Batch:
    """One table's writer and the rows held for it."""

    out: Any
    schema: Any
    rows: list[dict[str, Any]] = field(default_factory=list)


class _Batches:
    """The games, decisions and beliefs rows held before they are written as one row group of each table."""

    def __init__(self, pa: Any, batches: list[_Batch]) -> None:
        self.pa = pa
        self.games, self.decisions, self.beliefs = batches

    def add(self, rows: GameRows, report: DatasetReport) -> None:
        """One game's rows; written once :data:`BATCH_ROWS` decisions are held."""
        self.games.rows.append(rows.game)
        self.decisions.rows.extend(rows.decisions)
        self.beliefs.rows.extend(rows.beliefs)
        if len(self.decisions.rows) >= BATCH_ROWS:
            self.flush(report)

    def flush(self, report: DatasetReport) -> None:
        """Write the rows held so far as one row group of each table, and forget them (column by column: pyarrow
        converts lists of values four times faster than lists of row dicts)."""
        report.games += len(self.games.rows)
        report.decisions += len(self.decisions.rows)
        report.beliefs += len(self.beliefs.rows)
        for batch in (self.games, self.decisions, self.beliefs):
            if batch.rows:
                batch.out.write_table(_table(self.pa, batch.rows, batch.schema))
                batch.rows.clear()


__all__ = ["GAMES_FILE", "DECISIONS_FILE", "BELIEFS_FILE", "TILES_FILE", "PARQUET_FILES", "DatasetReport",
           "ParquetUnavailable",
           "schemas", "rows_of_record", "belief_rows", "tile_rows",
           "write_dataset"]
