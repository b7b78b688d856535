"""``arena replay PATH --game ID [--seat K] [--step] [--full | --compact]``: a recorded game in the terminal.

The record is replayed through the rules engine (:func:`~arena.records.replay.positions`) and each position is
written as plain lines of text, coloured by rich when the output is a terminal and plain otherwise. Two layouts:

- **full** (the default on a terminal, ``--full``): after every move, the layout and every hand as they are now.
- **compact** (the default when the output is a file or a pipe, ``--compact``): one line a move; the hands at each
  round's start, and the layout with the hands revealed at each round's end: a Draw game in a fifth of the lines.

Text conventions:

- **Tiles in hands, deals and actions** carry their names, low half first and separated by spaces:
  ``[1|4] [3|5] [6|6]``. Actions print as docs/reference/rules.md#the-line writes them (``[3|4] on [4|4] line B``).
- **Tiles in the layout touch and are turned the way they lie**, so touching halves show the same value and the
  two outer values are the open ends: ``[1‖1][1|4][4‖4][4|3]``. A **double lies crosswise** and is drawn with a
  double bar: ``[4‖4]``. The lead non-double shows its low half on the left.
- **All Fives**: the line through the spinner's long sides left to right, then the spinner with its short sides,
  each arm read outward from the spinner (``side C: [5|1][1|4]``; ``closed`` until both long sides are covered,
  ``open`` when open but empty), then the count.
- **Mexican Train**: the engine, then one line per train read outward from the hub (the seats' trains in seat
  order, then the Mexican train), ``(marker)`` after a train whose owner's marker is on it, then the open doubles.
- **Seat view** (``--seat K``): seat K's own hand, the other hands as counts, the boneyard as a count, and other
  seats' draws without the tile, exactly what ``state.observation(K)`` holds. Round results reveal every hand
  (that is public at the end of a round).
- A move: ``move N · seat S (entrant) · action · think time``; a forced move shows ``(forced)`` instead of a time.
  ``N`` counts the moves of the whole game from 1 (:func:`~arena.records.replay.move_label`), as every other view
  does; the header says so. A fault: ``FAULT · round R, move N · seat S (entrant) · kind: message``, ``N`` the move
  that was being decided.
- A move sent with a belief (:mod:`.beliefs`) is followed by one line: how many tiles it named, its mean Brier score
  and log loss per tile, and each tile with the probability the bot gave the place it really was in
  (``belief: 2 tiles · Brier 1.062 · log loss 3.60 · where each was: [5|5] 75% · [1|6] 0%``). The seat view shows
  only how many tiles: the truth is other seats' hands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from arena.display import move_label, safe_name
from arena.records.beliefs import RecordedBelief, recorded_beliefs
from arena.records.jsonform import index_of
from arena.records.replay import Position, RecordError, game_of, positions
from arena.rules import MEXICAN_TRAIN, Game, Match
from arena.rules.beliefs import QUANTUM, scored
from arena.rules.line import LineView
from arena.rules.spinner import NO_SPINNER, SpinnerView
from arena.rules.tiles import HIGH, LOW, NAMES
from arena.rules.trains import TrainsView

CROSSWISE = "‖"
"""The bar between the halves of a double in the layout (it lies across the line)."""

STYLES = {
    "title": "bold",
    "round": "bold cyan",
    "move": "bold",
    "seat": "magenta",
    "forced": "yellow",
    "time": "dim",
    "layout": "green",
    "label": "dim",
    "hidden": "dim",
    "fault": "bold red",
    "result": "bold",
}

STEP_PROMPT = "Enter: next move · q: quit "

Line = Sequence[str | tuple[str, str]]
"""One line of output: plain strings and (text, style name) pairs."""


# --- the entry point ----------------------------------------------------------------------------------------------


def show_game(record: Mapping[str, Any], seat: int | None = None, step: bool = False,
              console: Console | None = None, compact: bool | None = None) -> None:
    """Print a recorded game move by move; with ``seat``, only what that seat knew at each moment.

    ``compact`` None picks the layout from the output: full on a terminal, compact otherwise (a file or a pipe is
    read or searched, not watched). With ``step`` and a terminal, wait for Enter (or ``q`` to quit) between moves;
    without a terminal, ``step`` is ignored so a pipe never blocks. Raises :class:`RecordError` for a seat the game
    does not have, or a record that does not replay.
    """
    console = console if console is not None else Console()
    game = game_of(record)
    if seat is not None and not 0 <= seat < game.players:
        raise RecordError(f"seat {seat} does not exist: the game has {game.players} seats "
                          f"(0 to {game.players - 1})")
    show = _Show(record, game, seat, console, not console.is_terminal if compact is None else compact)
    pause = _Pause(console) if step and console.is_terminal else None
    show.run(pause)  # a closed pipe (``| head``) is rich's to handle: it exits quietly


# --- the renderer -------------------------------------------------------------------------------------------------


class _Pause:
    """Waits for Enter between moves; ``q`` quits; end of input stops waiting."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.active = True

    def next(self) -> bool:
        """False when the viewer asked to quit."""
        if not self.active:
            return True
        try:
            answer = self.console.input(Text(STEP_PROMPT, style=STYLES["label"]))
        except EOFError:
            self.active = False
            return True
        return answer.strip().lower() not in ("q", "quit")


class _Show:
    """Writes one game: the header, every position, the faults where they happened, the result."""

    def __init__(self, record: Mapping[str, Any], game: Game, seat: int | None, console: Console,
                 compact: bool) -> None:
        self.record = record
        self.game = game
        self.seat = seat
        self.console = console
        self.compact = compact
        seats = list(record.get("seats", ()))
        self.names = [safe_name(seats[s]) if s < len(seats) else "" for s in range(game.players)]
        self.faults = sorted(record.get("faults", ()), key=lambda f: int(f.get("moveNumber", 0)))
        self.beliefs = {item.number: item for item in recorded_beliefs(record)}
        """The beliefs beside the truth, by move number (none without beliefs: the game is then not replayed
        twice)."""

    # --- output ---

    def out(self, *parts: str | tuple[str, str] | Text) -> None:
        """One line from plain strings and (text, style) pairs; never wrapped or cropped."""
        line = Text()
        for part in parts:
            if isinstance(part, tuple):
                line.append(part[0], style=STYLES[part[1]])
            else:
                line.append(part)
        self.console.print(line, soft_wrap=True, highlight=False)

    def block(self, lines: Iterable[Line], gap: bool = True) -> None:
        """Lines, after a blank line unless ``gap`` is False."""
        if gap:
            self.out()
        for line in lines:
            self.out(*line)

    def run(self, pause: _Pause | None) -> None:
        self.block(header_lines(self.record, self.game, self.names, self.seat), gap=False)
        applied = 0  # moves applied over the whole match: a fault's moveNumber counts the same way
        scores: tuple[int, ...] = ()
        first = True
        for position in positions(self.record):
            if not first and pause is not None and not pause.next():
                self.out(("stopped", "label"))
                return
            first = False
            state = position.match.round
            if position.move is None:
                self.block(round_start_lines(position, self.game, self.names, self.seat))
            else:
                applied += 1
                if self.compact:
                    scored = state.scores() != scores
                    self.block([compact_move_line(position, self.game, self.names, self.seat, scored)], gap=False)
                else:
                    self.block(move_lines(position, self.game, self.names, self.seat))
                if position.number in self.beliefs:
                    self.block([belief_line(self.beliefs[position.number], self.seat)], gap=False)
                if state.is_over():
                    self.block(round_end_lines(position.match, position.round, self.game, self.names,
                                               layout=self.compact))
            scores = state.scores()
            if not state.is_over():
                self.show_faults(applied, position.round)
        self.show_faults(None, None)
        self.block(result_lines(self.record, self.game, self.names))

    def show_faults(self, applied: int | None, round_index: int | None) -> None:
        """Print the faults that happened at this point (with ``applied`` None: every fault not printed yet)."""
        while self.faults and (applied is None or int(self.faults[0].get("moveNumber", 0)) <= applied):
            self.block(fault_lines(self.faults.pop(0), self.names, round_index))


# --- names --------------------------------------------------------------------------------------------------------


def seat_label(seat: int, names: Sequence[str]) -> str:
    name = names[seat] if 0 <= seat < len(names) else ""
    return f"seat {seat} ({name})" if name else f"seat {seat}"


def side_label(side: int, game: Game, names: Sequence[str]) -> str:
    if not game.teams:
        return seat_label(side, names)
    seats = [s for s in range(game.players) if game.side_of[s] == side]
    who = ", ".join(names[s] for s in seats if names[s])
    return f"side {side} (seats {'+'.join(map(str, seats))}{': ' + who if who else ''})"


def scores_text(scores: Iterable[Any], game: Game, names: Sequence[str]) -> str:
    return " · ".join(f"{side_label(side, game, names)} {int(score)}" for side, score in enumerate(scores))


def hand_text(tiles: Iterable[int]) -> str:
    return " ".join(NAMES[t] for t in tiles) or "-"


def option_text(value: Any) -> str:
    if isinstance(value, Mapping):
        for key in ("boolValue", "intValue", "stringValue"):
            if key in value:
                return str(value[key]).lower() if key == "boolValue" else safe_name(str(value[key]))
    return safe_name(str(value))


# --- the layout ---------------------------------------------------------------------------------------------------


def face(a: int, b: int) -> str:
    """A tile as it lies in the layout, ``a`` on the left: ``[4|3]``, a double crosswise ``[4‖4]``."""
    return f"[{a}{CROSSWISE if a == b else '|'}{b}]"


def outward(tiles: Iterable[int], value: int) -> list[tuple[int, int]]:
    """Tiles of an arm read outward from a half showing ``value``: (touching half, outer half) of each."""
    halves = []
    for tile in tiles:
        other = HIGH[tile] if LOW[tile] == value else LOW[tile]
        halves.append((value, other))
        value = other
    return halves


def line_text(view: LineView) -> str:
    """The line left to right, each tile turned the way it lies (touching halves equal)."""
    if not view.played:
        return "(empty)"
    lead = view.played[0]
    at = view.line.index(lead)
    left = outward(reversed(view.line[:at]), LOW[lead])
    right = outward(view.line[at + 1:], HIGH[lead])
    faces = [face(b, a) for a, b in reversed(left)] + [face(LOW[lead], HIGH[lead])] + [face(a, b) for a, b in right]
    return "".join(faces)


def arm_text(tiles: Iterable[int], value: int) -> str:
    return "".join(face(a, b) for a, b in outward(tiles, value))


def layout_lines(view: Any, names: Sequence[str]) -> list[Line]:
    """The layout drawn as text, for every kind of layout view."""
    if isinstance(view, TrainsView):
        return trains_lines(view, names)
    lines: list[Line] = [(("line: ", "label"), (line_text(view), "layout"))]
    if isinstance(view, SpinnerView):
        lines.append(spinner_line(view))
        lines.append((("count: ", "label"), str(view.count)))
    return lines


def spinner_line(view: SpinnerView) -> Line:
    if view.spinner == NO_SPINNER:
        return (("spinner: ", "label"), "none yet (the first double played becomes the spinner)")
    value = LOW[view.spinner]
    opened = any(point >= 5 for _, point, _ in view.open_ends) or bool(view.side_c or view.side_d)
    sides: list[str | tuple[str, str]] = [("spinner ", "label"), (face(value, value), "layout")]
    for name, arm in (("C", view.side_c), ("D", view.side_d)):
        sides.append((f"  side {name}: ", "label"))
        sides.append((arm_text(arm, value), "layout") if arm else ("open" if opened else "closed"))
    return sides


def train_name(train: int, names: Sequence[str]) -> str:
    return "Mexican train" if train == MEXICAN_TRAIN else f"train {train}" + (f" ({names[train]})" if 0 <= train < len(
        names) and names[train] else "")


def trains_lines(view: TrainsView, names: Sequence[str]) -> list[Line]:
    value = LOW[view.engine]
    lines: list[Line] = [(("engine ", "label"), (face(value, value), "layout"))]
    labels = [train_name(t.train, names) + ":" for t in view.trains]
    width = max(len(label) for label in labels)
    for label, train in zip(labels, view.trains, strict=True):
        line: list[str | tuple[str, str]] = [(label.ljust(width) + " ", "label"),
                                             (arm_text(train.tiles, value) or "-", "layout")]
        if train.marker:
            line.append(("  (marker)", "forced"))
        lines.append(line)
    doubles = ", ".join(f"{face(LOW[d], LOW[d])} on {'the ' if t == MEXICAN_TRAIN else ''}"
                        f"{train_name(t, names)}" for t, d in view.open_doubles)
    lines.append((("open doubles: ", "label"), doubles or "none"))
    return lines


# --- the blocks ---------------------------------------------------------------------------------------------------


def header_lines(record: Mapping[str, Any], game: Game, names: Sequence[str], seat: int | None) -> list[Line]:
    lines: list[Line] = [(
        (f"Game {index_of(record)}", "title"),
        f" · {game.name}: {game.title} · {game.players} players · seed {safe_name(record.get('seed', ''))}",
    )]
    options = record.get("options", {})
    if options:
        lines.append((("options: ", "label"), ", ".join(f"{k}={option_text(v)}" for k, v in sorted(options.items()))))
    lines.append((("seats: ", "label"), " · ".join(seat_label(s, names) for s in range(game.players))))
    if game.teams:
        lines.append((("sides: ", "label"), " · ".join(side_label(s, game, names) for s in range(game.num_sides))))
    if seat is None:
        lines.append((("view: ", "label"), "every hand"))
    else:
        lines.append((("view: ", "label"), f"{seat_label(seat, names)} only; other hands are hidden until a round "
                                           f"ends"))
    lines.append((("moves: ", "label"), "numbered through the whole game from 1, forced moves included"))
    return lines


def round_start_lines(position: Position, game: Game, names: Sequence[str], seat: int | None) -> list[Line]:
    state = position.match.round
    deal = state.deal
    lines: list[Line] = [((f"Round {position.round + 1}", "round"),
                          f" · {seat_label(deal.leader, names)} leads")]
    if deal.lot:
        lot = ", ".join(f"seat {s} {NAMES[t]}" for s, t in deal.lot)
        lines.append((("lot for the first lead: ", "label"), lot))
    if deal.lead_tile is not None:
        lines.append((("must lead: ", "label"), f"{NAMES[deal.lead_tile]} (its holder leads)"))
    lines.append((("deal:", "label"),))
    lines.extend(hands_lines(position.match, game, names, seat, deal_boneyard=True))
    if isinstance(state.layout.view(), TrainsView):
        lines.extend(_indent(layout_lines(state.layout.view(), names)))
    return lines


def move_header(position: Position, names: Sequence[str], seat: int | None) -> list[str | tuple[str, str]]:
    """``move N · seat S (entrant) · action · time``, the action as ``seat`` saw it (another seat's draw without
    its tile)."""
    state = position.match.round
    action = position.action
    if seat is not None:
        action = state.observation(seat).history[-1][1]
    timing: tuple[str, str] = ("(forced)", "forced") if position.forced else (f"{position.think_ms:.1f} ms", "time")
    return [(move_label(position.number or 0), "move"), " · ", (seat_label(position.seat or 0, names), "seat"),
            f" · {action} · ", timing]


def compact_move_line(position: Position, game: Game, names: Sequence[str], seat: int | None,
                      scored: bool) -> Line:
    """A move on one line; the scores after it when it scored (All Fives scores during play)."""
    line = move_header(position, names, seat)
    if scored and not position.match.round.is_over():
        line += [" · ", ("scores: ", "label"), scores_text(position.match.round.scores(), game, names)]
    return line


def move_lines(position: Position, game: Game, names: Sequence[str], seat: int | None) -> list[Line]:
    state = position.match.round
    lines: list[Line] = [move_header(position, names, seat)]
    lines.extend(_indent(layout_lines(state.layout.view(), names)))
    if any(state.play_points):
        lines.append(("  ", ("scores: ", "label"), scores_text(state.scores(), game, names)))
    if not state.is_over():
        lines.extend(hands_lines(position.match, game, names, seat))
    return lines


def hands_lines(match: Match, game: Game, names: Sequence[str], seat: int | None,
                deal_boneyard: bool = False) -> list[Line]:
    """The hands as the viewer may see them, and the boneyard (its tiles only in the deal of the full view)."""
    state = match.round
    lines: list[Line] = []
    if seat is None:
        hands = {s: hand_text(state.hand(s)) for s in range(game.players)}
        for s in range(game.players):
            lines.append(("  ", (seat_label(s, names), "seat"), f": {hands[s]}"))
        boneyard = len(state.boneyard)
    else:
        observation = state.observation(seat)
        for s in range(game.players):
            if s == seat:
                lines.append(("  ", (seat_label(s, names), "seat"), " (you)", f": {hand_text(observation.hand)}"))
            else:
                count = observation.hand_counts[s]
                lines.append(("  ", (seat_label(s, names), "seat"),
                              (f": {count} tile{'s' if count != 1 else ''}", "hidden")))
        boneyard = observation.boneyard_count
    where = "boneyard" if game.drawing else "set aside, out of play"
    if deal_boneyard and seat is None and state.boneyard:
        lines.append(("  ", (f"{where}, top first: ", "label"), hand_text(reversed(state.boneyard))))
    elif state.deal.boneyard and (game.drawing or deal_boneyard):
        lines.append(("  ", (f"{where}: ", "label"), f"{boneyard} tile{'s' if boneyard != 1 else ''}"))
    return lines


def round_end_lines(match: Match, round_index: int, game: Game, names: Sequence[str],
                    layout: bool = False) -> list[Line]:
    """How the round ended, the points, every hand revealed and the scores; with ``layout``, the layout too (the
    compact view shows it only here)."""
    result = match.round.result()
    if result.out_seat is not None:
        how = f"domino by {seat_label(result.out_seat, names)}" + (" (capicú)" if result.capicu else "")
    else:
        how = "block"
    who = "nobody wins the round" if result.winner is None else f"{side_label(result.winner, game, names)} wins"
    lines: list[Line] = [((f"Round {round_index + 1} ends", "round"), f": {how}; {who}")]
    if layout:
        lines.extend(_indent(layout_lines(match.round.layout.view(), names)))
    lines += [
        ("  ", ("points: ", "label"), scores_text(result.points, game, names)),
        ("  ", ("hands revealed:", "label")),
    ]
    for s, hand in enumerate(result.hands):
        lines.append(("    ", (seat_label(s, names), "seat"), f": {hand_text(hand)} ({result.pips[s]} pips)"))
    lines.append(("  ", ("scores: ", "label"), (scores_text(match.scores, game, names), "result")))
    return lines


def belief_line(item: RecordedBelief, seat: int | None) -> Line:
    """The belief sent with a move, beside the truth: its tiles' scores and, per tile, the probability it gave the
    place the tile was in; in a seat's view, only its size (the truth is other seats' hands)."""
    count = f"{len(item.belief)} tile{'s' if len(item.belief) != 1 else ''}"
    if seat is not None:
        return ("  ", ("belief: ", "label"), f"{count} (beside the truth in the every-hand view)")
    score = scored(item.belief, item.truth)
    where = " · ".join(f"{NAMES[tile]} {_percent(row[place]) if place >= 0 else '?'}"
                       for tile, row, place in zip(item.belief.tiles, item.belief.probabilities, item.truth,
                                                   strict=True))
    return ("  ", ("belief: ", "label"), f"{count} · Brier {score.brier or 0.0:.3f} · log loss "
                                         f"{score.log_loss or 0.0:.2f} · ", ("where each was: ", "label"), where)


def _percent(probability: float) -> str:
    """A recorded probability (whole thousandths) as a percentage: ``75%``, ``0.1%``, ``33.3%``."""
    return f"{round(probability * QUANTUM) / 10:g}%"


def fault_lines(fault: Mapping[str, Any], names: Sequence[str], round_index: int | None) -> list[Line]:
    """The fault where it happened: the move being decided (its record number is the decision's, from 0)."""
    number = int(fault.get("moveNumber", 0))
    where = "before play" if round_index is None else f"round {round_index + 1}, {move_label(number)}"
    seat = int(fault.get("seat", 0))
    return [(("FAULT", "fault"), f" · {where} · ", (seat_label(seat, names), "seat"),
             (f" · {safe_name(fault.get('kind', 'fault'))}: {safe_name(fault.get('message', ''), 1000)}", "fault"))]


def result_lines(record: Mapping[str, Any], game: Game, names: Sequence[str]) -> list[Line]:
    result = record.get("result")
    if not result:
        return [(("Result: ", "result"), "none recorded")]
    winner = result.get("winner")
    verdict = "drawn match" if winner is None else f"{side_label(int(winner), game, names)} wins"
    extra = " (by fault: the faulting side forfeits)" if result.get("byFault") else ""
    rounds = int(result.get("rounds", 0))
    scores = result.get("scores") or [0] * game.num_sides
    lines: list[Line] = [(("Result: ", "result"), (verdict, "result"), extra,
                          f" · {rounds} round{'s' if rounds != 1 else ''}")]
    lines.append(("  ", ("scores: ", "label"), scores_text(scores, game, names)))
    ranking = result.get("ranking") or []
    if ranking:
        lines.append(("  ", ("ranking: ", "label"), ", ".join(side_label(int(s), game, names) for s in ranking)))
    return lines


def _indent(lines: list[Line]) -> list[Line]:
    return [("  ", *line) for line in lines]


__all__ = ["show_game"]
