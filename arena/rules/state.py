"""The round state: the one small contract every variant shares (OpenSpiel's state API, in dominoes words).

``turn`` (whose turn), ``legal_actions()``, ``apply(action)``, ``is_over()``, ``result()``,
``observation(seat)``, ``clone()``. The turn structure common to the line and spinner games lives here:
place a tile, draw (voluntary or forced, with protected tiles), pass only when nothing else is legal, a domino
when a hand empties, a block when every player in turn has passed. Variants plug in the layout, their scoring
and, for Mexican Train, their own legal moves.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, fields
from operator import add
from typing import TYPE_CHECKING, Any, cast

from arena.rules.actions import DRAW, NO_TILE, PASS, Action, Kind, Point, drawn, placement
from arena.rules.deal import Deal
from arena.rules.errors import IllegalActionError, RulesError
from arena.rules.layout import Layout, LineLayout
from arena.rules.results import Ending, RoundResult
from arena.rules.tiles import HIGH, IS_DOUBLE, LOW, NAMES, VALUE_MASK, mask_of, tiles_of

if TYPE_CHECKING:
    from arena.rules.game import Game

_PLACE, _DRAW = Kind.PLACE, Kind.DRAW
"""The kinds the hot paths compare with, as module names: an enum member read through its class takes five times
as long."""

History = tuple[tuple[int, Action], ...]
"""(seat, action) pairs in play order. In the full history a draw carries the drawn tile."""


@dataclass(frozen=True)
class Observation:
    """Everything one seat may know, and nothing more (docs/reference/rules.md#common-ground)."""

    variant: str
    players: int
    seat: int
    round_index: int
    turn: int
    """The seat to move, or -1 when the round is over."""
    leader: int
    hand: tuple[int, ...]
    layout: Any
    """The public layout view of the variant (see the layout module's ``view()``)."""
    history: History
    """The round's public history: plays, passes, and draws (with the tile only for this seat's own draws)."""
    hand_counts: tuple[int, ...]
    boneyard_count: int
    scores: tuple[int, ...]
    """Match scores per side, including points scored so far in this round."""
    legal_actions: tuple[Action, ...]
    """The seat's legal actions when it is its turn, else empty."""
    options: dict[str, Any]


_OBSERVATION_FIELDS = tuple(f.name for f in fields(Observation))


def _observation(*values: Any) -> Observation:
    """An Observation from its fields in declaration order, with exactly the attributes its ``__init__`` would set
    (it has no defaults and no ``__post_init__``) at a third of the cost: the frozen dataclass's ``__init__`` sets
    its fourteen fields one ``object.__setattr__`` at a time, some 2 µs of every decision a referee asks."""
    observation = object.__new__(Observation)
    observation.__dict__.update(zip(_OBSERVATION_FIELDS, values, strict=True))
    return observation


class RoundState:
    """One round of a variant: hands as bit masks, the layout, the boneyard, the public history."""

    __slots__ = (
        "game", "deal", "round_index", "hands", "counts", "boneyard", "layout", "turn", "history",
        "passes", "last_placer", "out_seat", "capicu", "start_scores", "play_points", "_legal", "_result",
        "_lead_tile", "_draws",
    )

    layout: Layout
    """The variant's layout (:meth:`Game.new_layout`); a variant's round narrows the type to its own."""

    def __init__(self, game: Game, deal: Deal, scores: Sequence[int] | None = None, round_index: int = 0) -> None:
        self.game = game
        self.deal = deal
        self.round_index = round_index
        self.hands: list[int] = [mask_of(h) for h in deal.hands]
        self.counts: list[int] = [len(h) for h in deal.hands]
        self.boneyard: list[int] = list(reversed(deal.boneyard))
        """Drawn from the end (the deal lists it top first)."""
        self.layout = game.new_layout(deal)
        self.turn = deal.leader
        self.history: list[tuple[int, Action]] = []
        self._draws: list[int] = []
        """Where the draws are in the history: the entries another seat's view must hide the tile of."""
        self.passes = 0
        self.last_placer: int | None = None
        self.out_seat: int | None = None
        self.capicu = False
        self.start_scores = tuple(scores) if scores is not None else (0,) * game.num_sides
        self.play_points = [0] * game.num_sides
        self._legal: list[Action] | None = None
        self._result: RoundResult | None = None
        self._lead_tile = deal.lead_tile

    # --- the contract -------------------------------------------------------------------------------------

    def is_over(self) -> bool:
        return self._result is not None

    def legal_actions(self) -> list[Action]:
        """The actions the seat to move may take (empty when the round is over). Do not mutate the list."""
        if self._legal is None:
            self._legal = [] if self._result is not None else self._compute_legal()
        return self._legal

    def apply(self, action: Action) -> None:
        """Apply one legal action; an illegal one raises :class:`IllegalActionError` and changes nothing."""
        legal = self._legal if self._legal is not None else self.legal_actions()
        if action not in legal:
            raise IllegalActionError(self._illegal_message(action, legal))
        self._legal = None
        kind = action.kind
        if kind == _PLACE:
            self._place(action)
        elif kind == _DRAW:
            self._draw()
        else:
            self._pass()

    def result(self) -> RoundResult:
        """How the round ended and what each side scored."""
        if self._result is None:
            raise RulesError("the round is not over yet")
        return self._result

    def scores(self) -> tuple[int, ...]:
        """Match scores per side as they stand now (start of round plus points scored during play)."""
        return tuple(map(add, self.start_scores, self.play_points))

    def clone(self) -> RoundState:
        """An independent copy, for search bots that roll out futures."""
        other = object.__new__(type(self))
        for name in RoundState.__slots__:
            setattr(other, name, getattr(self, name))
        other.hands = self.hands.copy()
        other.counts = self.counts.copy()
        other.boneyard = self.boneyard.copy()
        other.layout = self.layout.copy()
        other.history = self.history.copy()
        other._draws = self._draws.copy()
        other.play_points = self.play_points.copy()
        other._legal = None
        self._clone_extra(other)
        return other

    def lack_shown_by(self, action: Action) -> int | None:
        """What the seat to move shows it lacks by taking ``action`` (a draw or a pass), as a tile mask.

        A draw or a pass that the rules allow only to a seat without a legal placement shows that the seat holds
        none of the tiles that would have been one: their mask is returned (whatever the seat's real hand; tiles on
        the table may be in it). None when the action is legal beside a placement (Draw's voluntary draw, the pass
        that ends a first-turn train in Mexican Train), so it shows nothing. For search bots' beliefs
        (:mod:`arena.rules.restore`); the state is left as it was.
        """
        legal = self._legal_for_any_hand()
        if action.kind == Kind.PLACE or any(a.kind == action.kind for a in legal):
            return None
        return _tiles_placed_by(legal)

    def fitting_tiles(self) -> int:
        """The mask of every tile the seat to move could place now if it held it (tiles on the table included)."""
        return _tiles_placed_by(self._legal_for_any_hand())

    def _legal_for_any_hand(self) -> list[Action]:
        """The legal actions of the seat to move if it held every tile of the set (its hand is put back)."""
        seat = self.turn
        saved = self.hands[seat]
        self.hands[seat] = self.game.all_tiles
        try:
            return self._compute_legal()
        finally:
            self.hands[seat] = saved

    def hand(self, seat: int) -> tuple[int, ...]:
        """A seat's tiles (ids, ascending). Hidden information: only for the referee, tests and that seat."""
        return tuple(tiles_of(self.hands[seat]))

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know: own hand, the public layout and history, counts, scores, own legal actions."""
        history = self.history_seen_by(seat)
        legal = tuple(self.legal_actions()) if self.turn == seat else ()
        game = self.game
        return _observation(game.name, game.players, seat, self.round_index, self.turn, self.deal.leader,
                            self.hand(seat), self.layout.view(), history, tuple(self.counts), len(self.boneyard),
                            self.scores(), legal, dict(game.options))

    # --- the shared turn structure -----------------------------------------------------------------------

    def _placements(self) -> list[Action]:
        """Every placement of the seat to move: any tile on an empty layout, else each matching open end."""
        hand = self.hands[self.turn]
        # The shared turn structure plays on a line layout; Mexican Train's round replaces the methods that use it.
        layout = self.layout
        actions: list[Action] = []
        if not layout.tiles:  # empty
            if self._lead_tile is not None:
                return [placement(self._lead_tile)] if hand >> self._lead_tile & 1 else []
            mask = hand
            while mask:
                low = mask & -mask
                actions.append(placement(low.bit_length() - 1))
                mask ^= low
            return actions
        for end in layout.open_ends():
            mask = hand & VALUE_MASK[end[2]]
            if mask:
                actions += _PLACEMENTS_AT[end][mask]
        return actions

    def _compute_legal(self) -> list[Action]:
        """Placements, plus drawing under the variant's drawing rule; pass only when nothing else is legal."""
        actions = self._placements()
        game = self.game
        can_draw = game.drawing and len(self.boneyard) > game.protected_tiles
        if actions:
            if can_draw and game.voluntary_draw and self.layout.tiles:  # drawing beside a placement, but not to lead
                actions.append(DRAW)
            return actions
        return [DRAW] if can_draw else [PASS]

    def _place(self, action: Action) -> None:
        seat = self.turn
        tile = action.tile
        self.hands[seat] ^= 1 << tile
        left = self.counts[seat] - 1
        self.counts[seat] = left
        last_tile = left == 0
        layout = cast(LineLayout, self.layout)  # a line layout, as in _placements
        ends_before = [e[2] for e in layout.open_ends()] if last_tile else None
        if action.target == NO_TILE:
            layout.lead(tile)
            self._lead_tile = None
        else:
            layout.place(tile, action.target, action.point)
        self.history.append((seat, action))  # a placement: no draw to note (_record)
        self.passes = 0
        self.last_placer = seat
        self._after_place(seat, action)
        if last_tile:
            self.out_seat = seat
            self.capicu = _is_capicu(tile, ends_before)
            self._finish(Ending.DOMINO)
        else:
            self.turn = (seat + 1) % self.game.players

    def _draw(self) -> None:
        self._take_top(self.turn)
        self.passes = 0

    def _take_top(self, seat: int) -> int:
        """Move the boneyard's top tile into ``seat``'s hand and record the draw; returns the tile."""
        tile = self.boneyard.pop()
        self.hands[seat] |= 1 << tile
        self.counts[seat] += 1
        self._record(seat, drawn(tile))
        return tile

    def _pass(self) -> None:
        self._record(self.turn, PASS)
        self.passes += 1
        if self.passes >= self.game.players:
            self._finish(Ending.BLOCK)
        else:
            self.turn = (self.turn + 1) % self.game.players

    def _finish(self, ending: Ending) -> None:
        self._result = self.game.score_round(self, ending)
        self.turn = -1
        self._legal = []

    def _record(self, seat: int, action: Action) -> None:
        """Append to the history, noting where the draws are (other seats see a draw without its tile)."""
        if action.kind == _DRAW:
            self._draws.append(len(self.history))
        self.history.append((seat, action))

    def history_seen_by(self, seat: int, start: int = 0) -> History:
        """The history from entry ``start`` on as ``seat`` may know it: every other seat's draw without the tile.
        An encoder that sent the entries before ``start`` asks only for the new ones (the history only grows)."""
        history = self.history[start:]
        draws = self._draws
        if draws and draws[-1] >= start:  # a draw among the entries asked for
            for index in draws[bisect_left(draws, start):]:
                drawer = history[index - start][0]
                if drawer != seat:
                    history[index - start] = (drawer, DRAW)
        return tuple(history)

    # --- hooks for variants ------------------------------------------------------------------------------

    def _after_place(self, seat: int, action: Action) -> None:
        """Called after every placement, before the domino check (All Fives scores here)."""

    def _clone_extra(self, other: RoundState) -> None:
        """Copy variant-specific mutable state into a clone."""

    def _hidden_changed(self) -> None:
        """The hands or the boneyard were set from outside (a rebuilt round, :mod:`arena.rules.restore`): recompute
        what the variant derives from them (Mexican Train's tiles that can still satisfy a double)."""

    # --- messages ----------------------------------------------------------------------------------------

    def _illegal_message(self, action: Any, legal: list[Action]) -> str:
        if self._result is not None:
            return f"the round is over; no action is legal, got {action}"
        shown = ", ".join(str(a) for a in legal[:12]) + (" ..." if len(legal) > 12 else "")
        return f"illegal action for seat {self.turn}: expected one of {shown}; got {action}"


class _PlacementsAtEnd(dict[int, tuple[Action, ...]]):
    """The placements at one open end, by the mask of the tiles that fit it, each tuple made on first use (its
    actions in tile order, as :func:`~arena.rules.actions.placement` interns them)."""

    __slots__ = ("target", "point")

    def __init__(self, target: int, point: Point) -> None:
        super().__init__()
        self.target, self.point = target, point

    def __missing__(self, mask: int) -> tuple[Action, ...]:
        found = self[mask] = tuple(placement(tile, self.target, self.point) for tile in tiles_of(mask))
        return found


class _PlacementsAt(dict[tuple[int, ...], _PlacementsAtEnd]):
    """:class:`_PlacementsAtEnd` by the open end (tile, point, value): a seat's placements at an end are one lookup
    of the end and one of the fitting tiles' mask, not a step and an interning per tile (some 40% of the legal
    moves' time). A double-six layout has at most 70 ends (a line's and the spinner's sides), each with at most 128
    masks (seven tiles show a value)."""

    def __missing__(self, end: tuple[int, ...]) -> _PlacementsAtEnd:
        found = self[end] = _PlacementsAtEnd(end[0], Point(end[1]))
        return found


_PLACEMENTS_AT = _PlacementsAt()


def _tiles_placed_by(actions: list[Action]) -> int:
    mask = 0
    for a in actions:
        if a.kind == Kind.PLACE:
            mask |= 1 << a.tile
    return mask


def _is_capicu(tile: int, ends_before: list[int] | None) -> bool:
    """A domino with a non-double that fitted both open ends, which showed different values."""
    if ends_before is None or len(ends_before) != 2 or IS_DOUBLE[tile]:
        return False
    a, b = ends_before
    return a != b and {a, b} == {LOW[tile], HIGH[tile]}


__all__ = ["History", "Observation", "RoundState", "NAMES"]
