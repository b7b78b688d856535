"""``arena replay --game ID [--seat K] [--step]``: a recorded game in the terminal, checked line by line against the
rules engine: the layout after each move, the seat view that never shows a hidden tile, forced moves, faults, the
result, stepping, and the command line end to end."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from arena import cli
from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.players.faults import Fault, FaultKind
from arena.records.format import to_json_line
from arena.records.jsonform import game_record_dict
from arena.records.replay import RecordError, positions
from arena.records.terminal import show_game
from arena.referee import forfeit_before_start, play_match
from arena.rules import VARIANTS, Deal, Kind, new_game, parse_tile
from arena.rules.spinner import NO_SPINNER
from arena.rules.tiles import IS_DOUBLE, LOW, NAMES, full_set
from support.players import fails_after
from support.records import draw_game, run_of

# --- making records -----------------------------------------------------------------------------------------------


def names_of(players: int) -> list[str]:
    return [f"bot{s}" for s in range(players)]


def as_dict(game, record, index: int = 0) -> dict:
    return game_record_dict(record, index=index, tournament="t", deal_key=f"0/{index}", rotation=0,
                            side_of=game.side_of)


async def random_record(variant: str, seed: str = "tv/0/0", players: int | None = None, index: int = 0,
                        options: dict | None = None) -> dict:
    game = new_game(variant, players, options)
    seats = [LocalPlayer(RandomPlayer(f"{seed}/{s}"), name=name) for s, name in enumerate(names_of(game.players))]
    record = await play_match(game, seats, seed=seed, match_id=f"m{index}")
    return as_dict(game, record, index)


class Scripted:
    """Plays the first round's first moves as written (each must be legal), then the first legal action."""

    def __init__(self, script: list[str]) -> None:
        self.script = script

    def __call__(self, observation):
        legal = observation.legal_actions
        done = len(observation.history)
        if observation.round_index == 0 and done < len(self.script):
            wanted = [a for a in legal if str(a) == self.script[done]]
            assert wanted, f"{self.script[done]!r} is not legal; legal: {[str(a) for a in legal]}"
            return wanted[0]
        return legal[0]


def full_deal(variant_double: int, hand_size: int, *must: str) -> Deal:
    """Two hands holding the named tiles (filled up with the lowest tiles left), the rest as the boneyard."""
    wanted = [[parse_tile(t) for t in hand.split()] for hand in must]
    left = [t for t in full_set(variant_double) if all(t not in hand for hand in wanted)]
    hands = []
    for hand in wanted:
        extra = hand_size - len(hand)
        hands.append(tuple(hand + left[:extra]))
        left = left[extra:]
    return Deal(tuple(hands), tuple(left), leader=0)


async def scripted_record(variant: str, deal: Deal, script: list[str]) -> dict:
    game = new_game(variant, 2)
    seats = [LocalPlayer(Scripted(script), name=name) for name in names_of(2)]
    record = await play_match(game, seats, seed="scripted/0/0", match_id="m0", first_deal=deal)
    return as_dict(game, record)


# --- reading the output -------------------------------------------------------------------------------------------


def render(record: dict, **kwargs) -> str:
    """The full view unless ``compact=True`` is given (the default of ``show_game`` would be compact: no terminal)."""
    console = Console(file=io.StringIO(), width=120)
    show_game(record, console=console, **{"compact": False, **kwargs})
    return console.file.getvalue()


def blocks(text: str) -> list[list[str]]:
    """The output's blocks (separated by blank lines): the header, round starts, moves, round ends, faults, result."""
    return [block.splitlines() for block in text.split("\n\n") if block.strip()]


def move_blocks(text: str) -> dict[tuple[int, int], list[str]]:
    """Move blocks by (round, move), both counted from 1 as printed (moves through the whole game)."""
    found: dict[tuple[int, int], list[str]] = {}
    round_number = 0
    for block in blocks(text):
        start = re.match(r"Round (\d+) · ", block[0])
        if start:
            round_number = int(start.group(1))
        move = re.match(r"move (\d+) · ", block[0])
        if move:
            found[(round_number, int(move.group(1)))] = block
    return found


def field(block: list[str], label: str) -> str:
    """The text after ``label`` on the block's line that starts with it (indented)."""
    matches = [line.strip()[len(label):] for line in block if line.strip().startswith(label)]
    assert len(matches) == 1, (label, block)
    return matches[0]


FACE = re.compile(r"\[(\d+)([|‖])(\d+)\]")


def faces(text: str) -> list[tuple[int, int, str]]:
    """Tiles as drawn in the layout: (left half, right half, bar)."""
    assert FACE.sub("", text) == "", f"not only tiles: {text!r}"
    return [(int(a), int(b), bar) for a, bar, b in FACE.findall(text)]


def check_drawn(text: str, tiles, first: int | None, last: int | None) -> None:
    """Tiles drawn as they lie: the tiles named, doubles crosswise, touching halves equal, given outer values."""
    drawn = faces(text)
    assert ["[%d|%d]" % tuple(sorted((a, b))) for a, b, _ in drawn] == [NAMES[t] for t in tiles]
    assert [bar == "‖" for _, _, bar in drawn] == [IS_DOUBLE[t] for t in tiles]
    assert all(drawn[i][1] == drawn[i + 1][0] for i in range(len(drawn) - 1)), text
    if first is not None:
        assert drawn[0][0] == first, text
    if last is not None:
        assert drawn[-1][1] == last, text


# --- the layout after each move -----------------------------------------------------------------------------------


@pytest.mark.fast
async def test_draw_shows_doubles_crosswise_and_tiles_as_they_lie() -> None:
    deal = full_deal(6, 7, "[1|4] [3|4]", "[4|4] [1|1]")
    script = ["lead [1|4]", "[4|4] on [1|4] high end", "[3|4] on [4|4] line B", "[1|1] on [1|4] low end"]
    out = move_blocks(render(await scripted_record("draw", deal, script)))
    assert field(out[(1, 1)], "line: ") == "[1|4]"
    assert field(out[(1, 2)], "line: ") == "[1|4][4‖4]"
    assert field(out[(1, 3)], "line: ") == "[1|4][4‖4][4|3]"
    assert field(out[(1, 4)], "line: ") == "[1‖1][1|4][4‖4][4|3]"
    assert out[(1, 3)][0].startswith("move 3 · seat 0 (bot0) · [3|4] on [4|4] line B · ")


@pytest.mark.fast
async def test_all_fives_shows_four_spinner_arms_and_the_count() -> None:
    deal = full_deal(6, 7, "[5|5] [5|6]", "[2|5] [1|5]")
    script = ["lead [5|5]", "[2|5] on [5|5] line A", "[5|6] on [5|5] line B", "[1|5] on [5|5] side C"]
    out = move_blocks(render(await scripted_record("all_fives", deal, script)))
    assert field(out[(1, 1)], "line: ") == "[5‖5]"
    assert field(out[(1, 1)], "count: ") == "10"
    assert field(out[(1, 1)], "scores: ") == "seat 0 (bot0) 10 · seat 1 (bot1) 0"
    assert [line.strip() for line in out[(1, 2)][1:4]] == [
        "line: [2|5][5‖5]", "spinner [5‖5]  side C: closed  side D: closed", "count: 12"]
    assert [line.strip() for line in out[(1, 3)][1:4]] == [
        "line: [2|5][5‖5][5|6]", "spinner [5‖5]  side C: open  side D: open", "count: 8"]
    assert [line.strip() for line in out[(1, 4)][1:4]] == [
        "line: [2|5][5‖5][5|6]", "spinner [5‖5]  side C: [5|1]  side D: open", "count: 9"]


LINE_VARIANTS = ["draw", "block", "la_plaza", "la_plaza_teams", "all_fives"]


@pytest.mark.parametrize("variant", LINE_VARIANTS)
@pytest.mark.fast
async def test_the_line_after_every_move_is_the_engines(variant: str) -> None:
    record = await random_record(variant)
    out = move_blocks(render(record))
    checked = 0
    for position in positions(record):
        if position.move is None:
            continue
        view = position.match.round.layout.view()
        block = out[(position.round + 1, position.number + 1)]
        ends = [value for _, _, value in view.open_ends]
        check_drawn(field(block, "line: "), view.line, ends[0], ends[1])
        if variant == "all_fives":
            assert field(block, "count: ") == str(view.count)
            if view.spinner == NO_SPINNER:
                assert field(block, "spinner: ").startswith("none yet")
            else:
                spinner = field(block, "spinner ")
                for side, arm, end in (("C", view.side_c, 2), ("D", view.side_d, 3)):
                    shown = re.search(rf"side {side}: (\S+)", spinner).group(1)
                    if arm:
                        check_drawn(shown, arm, None, ends[end])
                    else:
                        assert shown == ("open" if len(ends) > end else "closed")
        checked += 1
    assert checked == sum(len(r.get("moves", ())) for r in record["rounds"]) > 3


@pytest.mark.fast
async def test_mexican_train_shows_trains_markers_and_open_doubles() -> None:
    record = await random_record("mexican_train", players=3, options={"rounds": 2})
    out = move_blocks(render(record))
    markers = doubles = 0
    for position in positions(record):
        if position.move is None:
            continue
        view = position.match.round.layout.view()
        block = out[(position.round + 1, position.number + 1)]
        hub = LOW[view.engine]
        assert field(block, "engine ") == f"[{hub}‖{hub}]"
        for train in view.trains:
            label = "Mexican train:" if train.train < 0 else f"train {train.train} (bot{train.train}):"
            shown = field(block, label).strip()
            assert shown.endswith("(marker)") == train.marker
            markers += train.marker
            tiles = shown.removesuffix("(marker)").strip()
            if train.tiles:
                check_drawn(tiles, train.tiles, hub, train.end[2])
            else:
                assert tiles == "-"
        expected = ", ".join(f"[{LOW[d]}‖{LOW[d]}] on " + ("the Mexican train" if t < 0 else f"train {t} (bot{t})")
                             for t, d in view.open_doubles) or "none"
        assert field(block, "open doubles: ") == expected
        doubles += bool(view.open_doubles)
    assert markers and doubles, "the game should show at least one marker and one open double"


# --- what a seat may see ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.fast
async def test_the_seat_view_hides_tiles_until_the_round_ends(variant: str) -> None:
    options = {"rounds": 2} if variant == "mexican_train" else None
    record = await random_record(variant, seed="hide/0/0", options=options)
    viewer = 1
    text = render(record, seat=viewer)
    out = move_blocks(text)
    starts = [b for b in blocks(text) if re.match(r"Round \d+ · ", b[0])]
    for position in positions(record):
        state = position.match.round
        hidden = {t for s in range(state.game.players) if s != viewer for t in state.hand(s)} | set(state.boneyard)
        if position.move is None:
            # public by the rules: the lot's reveals (a separate shuffle) and the tile the leader must lead
            block = [line for line in starts[position.round] if not line.startswith(("lot for the first lead",
                                                                                     "must lead: "))]
            assert field(block, f"seat {viewer} (bot{viewer}) (you): ") == " ".join(NAMES[t] for t in
                                                                                    state.hand(viewer))
        else:
            block = out[(position.round + 1, position.number + 1)]
        shown = "\n".join(block)
        leaks = [NAMES[t] for t in hidden if NAMES[t] in shown]
        assert not leaks, (position.round, position.move, leaks, shown)
        if position.move is not None and position.action.kind == Kind.DRAW and position.seat != viewer:
            assert " · draw · " in block[0]
    assert "hands revealed:" in text  # round ends reveal every hand: that is public


@pytest.mark.fast
async def test_the_full_view_shows_all_hands_and_results() -> None:
    record = await random_record("draw", seed="full/0/0")
    text = render(record)
    out = move_blocks(text)
    first = next(p for p in positions(record) if p.move == 0)
    for s in range(2):
        assert field(out[(1, 1)], f"seat {s} (bot{s}): ") == " ".join(NAMES[t] for t in first.match.round.hand(s))
    ends = [b for b in blocks(text) if b[0].startswith("Round 1 ends")]
    assert len(ends) == 1
    scores = record["rounds"][0]["result"]["scores"]
    assert field(ends[0], "scores: ") == f"seat 0 (bot0) {int(scores[0])} · seat 1 (bot1) {int(scores[1])}"
    result = blocks(text)[-1]
    winner = record["result"]["winner"]
    assert result[0].startswith(f"Result: seat {winner} (bot{winner}) wins · {record['result']['rounds']} round")


# --- forced moves and faults --------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["draw", "mexican_train"])
@pytest.mark.fast
async def test_forced_moves_are_marked(variant: str) -> None:
    record = await random_record(variant, seed="forced/0/0", options={"rounds": 1} if variant == "mexican_train"
                                 else None)
    out = move_blocks(render(record))
    forced = number = 0
    for r, rnd in enumerate(record["rounds"]):
        for move in rnd.get("moves", ()):
            number += 1
            header = out[(r + 1, number)][0]
            if move.get("forced"):
                forced += 1
                assert header.endswith(" · (forced)"), header
            else:
                assert re.search(r" · \d+\.\d ms$", header), header
    assert forced > 0


@pytest.mark.fast
async def test_a_fault_is_shown_where_it_happened_and_play_stops() -> None:
    game = new_game("draw", 2)
    seats = [LocalPlayer(RandomPlayer("f/0"), name="bot0"), fails_after("f/1", 4, "bot1")]
    record = as_dict(game, await play_match(game, seats, seed="fault/0/0", match_id="m0"))
    assert record["faults"] and record["result"]["byFault"]
    text = render(record)
    parts = blocks(text)
    last_round = len(record["rounds"])
    in_last = len(record["rounds"][-1].get("moves", ()))
    moves = sum(len(rnd.get("moves", ())) for rnd in record["rounds"])  # moves are numbered through the game
    assert record["faults"][0]["moveNumber"] == moves  # the record counts from 0: the fault was at the next move
    assert parts[-2] == [f"FAULT · round {last_round}, move {moves + 1} · seat 1 (bot1) · timeout: no reply within "
                         f"2250 ms"]
    assert parts[-3][0].startswith(f"move {moves} · " if in_last else f"Round {last_round} · ")
    assert parts[-1][0].startswith("Result: seat 0 (bot0) wins (by fault: the faulting side forfeits)")
    assert (last_round, moves + 1) not in move_blocks(text)
    assert text.count("FAULT") == 1
    seat_text = render(record, seat=0)
    assert f"FAULT · round {last_round}, move {moves + 1} · seat 1 (bot1) · timeout" in seat_text
    compact = render(record, compact=True)
    assert f"\nFAULT · round {last_round}, move {moves + 1} · seat 1 (bot1) · timeout" in compact


@pytest.mark.fast
def test_a_fault_before_play_is_shown_before_the_result() -> None:
    game = new_game("block", 2)
    fault = Fault(FaultKind.START_FAILED, 1, 0, "the bot did not start: exit status 1")
    record = as_dict(game, forfeit_before_start(game, ("bot0", "bot1"), [fault], seed="s/0/0", match_id="m0"))
    parts = blocks(render(record))
    assert parts[-2] == ["FAULT · before play · seat 1 (bot1) · start_failed: the bot did not start: exit status 1"]
    assert parts[-1][0] == "Result: seat 0 (bot0) wins (by fault: the faulting side forfeits) · 0 rounds"


# --- bad input and stepping ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seat", [2, 5, -1])
@pytest.mark.fast
async def test_a_seat_the_game_lacks_is_one_clear_error(seat: int) -> None:
    record = await random_record("block", seed="bad/0/0")
    console = Console(file=io.StringIO(), width=120)
    with pytest.raises(RecordError, match=rf"^seat {seat} does not exist: the game has 2 seats \(0 to 1\)$"):
        show_game(record, seat=seat, console=console)
    assert console.file.getvalue() == ""


@pytest.mark.fast
async def test_step_is_ignored_without_a_terminal(monkeypatch) -> None:
    record = await random_record("block", seed="step/0/0")
    console = Console(file=io.StringIO(), width=120)

    def never(*args, **kwargs):
        raise AssertionError("stepping must not read input without a terminal")

    monkeypatch.setattr(console, "input", never)
    show_game(record, seat=0, step=True, console=console)
    assert console.file.getvalue() == render(record, seat=0, compact=True)  # no terminal: the compact view


ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.fast
async def test_step_on_a_terminal_waits_between_moves_and_q_quits(monkeypatch) -> None:
    record = await random_record("draw", seed="step/0/1")
    console = Console(file=io.StringIO(), width=120, force_terminal=True)
    answers = iter(["", "", "q"])
    prompts = []

    def answer(prompt="", **kwargs):
        prompts.append(str(prompt))
        return next(answers)

    monkeypatch.setattr(console, "input", answer)
    show_game(record, step=True, console=console)
    text = ANSI.sub("", console.file.getvalue())
    assert len(prompts) == 3 and "q: quit" in prompts[0]
    assert "move 2 · " in text and "move 3 · " not in text and text.rstrip().endswith("stopped")


@pytest.mark.fast
async def test_step_stops_waiting_at_the_end_of_input(monkeypatch) -> None:
    record = await random_record("block", seed="step/0/2")
    console = Console(file=io.StringIO(), width=120, force_terminal=True)
    calls = []

    def eof(*args, **kwargs):
        calls.append(1)
        raise EOFError

    monkeypatch.setattr(console, "input", eof)
    show_game(record, step=True, console=console)
    assert len(calls) == 1 and "Result: " in ANSI.sub("", console.file.getvalue())


# --- the command line ---------------------------------------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.PIPE, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


async def test_the_command_line_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    records = [await random_record("draw", seed=f"cli/0/{i}", index=i) for i in range(2)]
    path.write_text("".join(to_json_line(r) + "\n" for r in records))

    out = run_cli("replay", str(path), "--game", "1", "--seat", "1", "--step")
    assert out.returncode == 0, out.stderr
    assert out.stdout == render(records[1], seat=1, compact=True)  # not a terminal: compact
    assert "\x1b[" not in out.stdout and "view: seat 1 (bot1) only" in out.stdout

    out = run_cli("replay", str(path), "--game", "1", "--seat", "1", "--full")
    assert out.returncode == 0, out.stderr
    assert out.stdout == render(records[1], seat=1)

    out = run_cli("replay", str(tmp_path), "--game", "0")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Game 0 · draw: ") and "view: every hand" in out.stdout

    out = run_cli("replay", str(path), "--game", "0", "--seat", "5")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == ["error: seat 5 does not exist: the game has 2 seats (0 to 1)"]


# --- the compact view ------------------------------------------------------------------------------------


@pytest.mark.fast
def test_the_compact_view_is_a_line_per_move_and_round_layouts(tmp_path: Path, capsys) -> None:
    """Guards: point 9, compact (one line a move, the layout at round ends) is the default when the output is not
    a terminal; ``--full`` gives the full view, and ``--compact`` the compact one on a terminal."""
    record = draw_game(1)
    run = run_of(tmp_path / "run", [record])
    assert cli.main(["replay", str(run), "--game", "1"]) == 0
    compact = capsys.readouterr().out
    moves = sum(len(r.get("moves", ())) for r in record["rounds"])
    lines = compact.splitlines()
    assert sum(1 for line in lines if line.startswith("move ")) == moves
    assert sum(1 for line in lines if line.startswith("  line: ")) == len(record["rounds"])  # at round ends only
    ends = [i for i, line in enumerate(lines) if line.startswith("Round ") and " ends: " in line]
    assert len(ends) == len(record["rounds"]) and all(lines[i + 1].startswith("  line: [") for i in ends)
    assert cli.main(["replay", str(run), "--game", "1", "--full"]) == 0
    full = capsys.readouterr().out
    assert full.count("\n  line: ") == moves and len(full.splitlines()) > 3 * len(lines)
    console = Console(file=io.StringIO(), width=120, force_terminal=True)
    show_game(record, console=console)
    assert console.file.getvalue().count("line: ") == moves  # a terminal: full by default
    console = Console(file=io.StringIO(), width=120, force_terminal=True)
    show_game(record, console=console, compact=True)
    assert console.file.getvalue().count("line: ") == len(record["rounds"])
    with pytest.raises(SystemExit):
        cli.main(["replay", str(run), "--game", "1", "--full", "--compact"])
    assert "not allowed with argument" in capsys.readouterr().err
