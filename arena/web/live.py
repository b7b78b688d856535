"""Games being played, followed move by move for the web: what the game page shows before the game is recorded.

The server's :class:`~arena.server.core.Arena` calls :meth:`LiveGames.game_started` as each game starts (its
``game_observers`` hook) and the returned callback with every move and every finished round, on the trio thread.
A :class:`LiveGame` only keeps the moves as the referee applied them (cheap: nobody may be looking); when a page asks,
:meth:`LiveGame.record` rebuilds the partial record the way the referee made it (the game's deals come from its
seed, which the server holds and never shows) and :func:`public_view` turns the viewer's data of that record into
what any spectator may see: the layout, hand counts, boneyard count, scores and the public text of each move (a
draw without its tile), and the hands only once their round has ended. No hand, no seat's own view and no seed
leaves the server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.records.jsonform import game_record_dict
from arena.referee import MatchRecord, MoveRecord, RoundRecord
from arena.rules import DRAW, Kind
from arena.rules.game import Game
from arena.tournament.schedule import ScheduledGame


@dataclass
class LiveGame:
    """One game in progress: its schedule entry and the moves applied so far, per round."""

    tournament: str
    """Its name, as records carry it."""
    game: Game
    scheduled: ScheduledGame
    seats: tuple[str, ...]
    rounds: list[list[MoveRecord]] = field(default_factory=list)
    rounds_over: int = 0
    """Rounds whose result the referee reported."""

    @property
    def moves(self) -> int:
        return sum(len(r) for r in self.rounds)

    def progress(self, round_index: int, item: Any) -> None:
        """The referee's ``on_progress``: a MoveRecord (a draw with its tile, kept here only) or a RoundRecord."""
        if isinstance(item, MoveRecord):
            while len(self.rounds) <= round_index:
                self.rounds.append([])
            self.rounds[round_index].append(item)
        else:
            self.rounds_over = round_index + 1

    def record(self) -> dict[str, Any]:
        """The partial record of the game so far, in the stored form (:func:`game_record_dict`), deals included:
        the deals are the ones the referee dealt from the game's seed, rebuilt by the same match."""
        match = self.game.new_match(self.scheduled.seed)
        partial = MatchRecord("", self.game.name, self.game.players, dict(self.game.options), self.scheduled.seed,
                              self.seats)
        for number, moves in enumerate(self.rounds or [[]]):
            if number:
                match.next_round()
            current = RoundRecord(match.round.deal)
            partial.rounds.append(current)
            for move in moves:
                match.apply(DRAW if move.action.kind == Kind.DRAW else move.action)
                current.moves.append(move)
        return game_record_dict(partial, index=self.scheduled.index, tournament=self.tournament,
                                deal_key=self.scheduled.deal_key, rotation=self.scheduled.rotation,
                                side_of=self.game.side_of)


def public_view(data: dict[str, Any], *, seed_revealed: bool, hands_public: bool) -> dict[str, Any]:
    """The viewer's data (:func:`~arena.records.html.viewer_data`) cut to what a spectator may see.

    ``hands_public``: the whole game is over and its record released, so every hand may be shown (as ``arena fetch``
    shows the record); otherwise the hands and each seat's own view of its draws are dropped (the page then shows
    the backs of the tiles, and the hands revealed at each round's end), and so are the bots' beliefs, shown beside
    the truth. The seed is dropped until revealed."""
    shown = dict(data)
    if not hands_public:
        shown["hands"] = None
        shown["seen"] = [{} for _ in data["seen"]]
        shown["beliefs"] = {}  # beside the truth: the hidden hands
    if not seed_revealed:
        shown["seed"] = ""
    return shown


class LiveGames:
    """Every game in progress, by tournament id and game index; the web reads it on the trio thread."""

    def __init__(self) -> None:
        self.games: dict[tuple[str, int], LiveGame] = {}

    def game_started(self, t: Any, scheduled: ScheduledGame, seats: tuple[str, ...]) -> Callable[[int, Any], None]:
        """The Arena's game observer: forget the tournament's games that are no longer in progress, follow this one."""
        for key in [k for k in self.games if k[0] == t.id and k[1] not in t.in_progress]:
            del self.games[key]
        assert t.spec is not None
        live = LiveGame(t.name, t.spec.game(), scheduled, seats)
        self.games[(t.id, scheduled.index)] = live
        return live.progress

    def get(self, t: Any, index: int) -> LiveGame | None:
        """The game, while the tournament says it is in progress."""
        live = self.games.get((t.id, index))
        return live if live is not None and index in t.in_progress else None
