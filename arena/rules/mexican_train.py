"""Mexican Train (variant ``mexican_train``): a Mexican Train rules guide, completed from Pagat and
common tournament rules (docs/reference/rules.md#mexican-train).

Sets double-9 (2-4 players), double-12 (2-8) and double-15 or double-18 (9-12); option ``set``, default double-12
with 2-8 players and double-15 with 9-12. Hands (option ``hand_size``): double-12 2->16, 3->16, 4->15, 5->14,
6->12, 7->10, 8->9; double-9 2->15, 3->13, 4->10; double-15 11 each with 9-10 players, 10 with 11-12 (boneyard 36,
25, 25, 15); double-18 14 each with 9-10, 13 with 11-12 (boneyard 63, 49, 46, 33).

Rounds: round ``i`` is played with the engine ``[N-i|N-i]`` (N the set's highest double), down to ``[0|0]``:
N + 1 rounds (13 with double-12); option ``rounds`` plays only the first k engines. The engine is taken out of the
set before the shuffle (it lives in ``Deal.engine``, in no hand and not in the boneyard); the other tiles are
shuffled by the stream ``deal/<round index>`` and dealt as in every variant. ``deal`` accepts any round index (the
engine is chosen by the index modulo the number of rounds). The first leader of the match is drawn by lot
(``Rng("lot", seed)``); then the leader moves one seat clockwise each round (the guide: choose a player to start,
then play clockwise).

Decisions taken for the turn, as explicit actions (``DRAW``, ``PASS`` from actions.py):

* A player with no placement draws (the only legal action). After that draw the legal actions are the placements
  of the drawn tile only, or ``PASS`` if it cannot be placed; that pass puts the marker on the player's own train.
  With an empty boneyard and nothing to place the only action is ``PASS`` (marker on).
* Available trains: one's own, the Mexican train (anyone may start it), and every other train carrying its owner's
  marker. A marker comes off only when its owner places a tile on their own train.
* A double keeps the turn going: another tile must follow. After one double it may go on that double or on any
  available train; further doubles may be chained on available trains; after two or more doubles of the turn a
  non-double may only go on the first of them (``satisfy_order = "reverse"``: the last). A non-double ends the turn.
  Unable to follow a double: draw one, place it if possible (a drawn double placed obliges again, and the player
  may draw again), else ``PASS`` with the marker.
* Open doubles (unsatisfied when their player's turn ended) restrict every player, their own player included: the
  only legal placements are on the first of them in the order placed (option: reverse), until it is satisfied. A
  double is unsatisfiable when no other tile of its value is in a hand or the boneyard (tiles missing from an
  explicit deal count as out of play); it then stops restricting and the next open double, if any, applies.
* A round ends at once when a player places their last tile (a double included): a domino. Otherwise it is blocked
  when the boneyard is empty and every player in turn has passed: a pass counts toward the block only while the
  boneyard is empty (a pass after drawing the last tile counts), a placement resets the count, and once every seat
  has passed in a row (so every marker is on and nothing changes any more) the round ends as soon as no seat has a
  placement left.
* ``first_turn_train`` (off by default). On, each seat's first turn of a round is Pagat's: only the seat's own train
  is available (unless an open double restricts play, which makes it a normal one-tile turn); after a tile is placed
  there the seat may go on laying tiles on its own train, and ``PASS`` ends that first turn without a marker (the
  only pass legal beside a placement); it is not offered while a double just laid there awaits its tile. The usual
  draw-once rule applies when the player has placed nothing yet or cannot answer that double.

Scoring: every seat scores the pips left in hand, ``[0|0]`` counting 50 (a seat that went out scores 0); scores
are per seat and lower is better. The round's ``winner`` is the seat that went out (None after a block). After the
last round the lowest cumulative total wins; a tie for lowest is a drawn match.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.rules.actions import DRAW, MEXICAN_TRAIN, NO_TILE, PASS, Action
from arena.rules.deal import Deal, check_deal, deal_hands
from arena.rules.errors import OptionError, RulesError
from arena.rules.game import Game
from arena.rules.options import Option
from arena.rules.registry import register
from arena.rules.results import Ending, MatchResult, RoundResult
from arena.rules.rng import Rng
from arena.rules.scoring import best_or_draw
from arena.rules.state import RoundState
from arena.rules.tiles import DOUBLE_OF, IS_DOUBLE, NAMES, PIPS, VALUE_MASK, full_set, mask_of, mask_pips, set_size
from arena.rules.trains import Trains

# --- the variant's facts ----------------------------------------------------------------------------------------

SET_PLAYERS: dict[int, range] = {9: range(2, 5), 12: range(2, 9), 15: range(9, 13), 18: range(9, 13)}
"""The player counts each set serves (docs/reference/rules.md#mexican-train)."""
HAND_SIZES: dict[int, dict[int, int]] = {
    9: {2: 15, 3: 13, 4: 10},
    12: {2: 16, 3: 16, 4: 15, 5: 14, 6: 12, 7: 10, 8: 9},
    15: {9: 11, 10: 11, 11: 10, 12: 10},
    18: {9: 14, 10: 14, 11: 13, 12: 13},
}
MEXICAN_PIPS: tuple[int, ...] = tuple(50 if t == DOUBLE_OF[0] else p for t, p in enumerate(PIPS))
"""Pip values for scoring: [0|0] counts 50."""
DOUBLES_MASK = mask_of(DOUBLE_OF)

OPTIONS = (
    Option("set", "the domino set: double-9 (2-4 players), double-12 (2-8), double-15 or double-18 (9-12)",
           default=lambda p: 12 if p <= 8 else 15, choices=(9, 12, 15, 18),
           default_doc="12 with 2-8 players, 15 with 9-12"),
    Option("hand_size", "tiles dealt to each player", default=None, minimum=1,
           default_doc="from the table of the set: double-12 2->16 3->16 4->15 5->14 6->12 7->10 8->9; "
                       "double-9 2->15 3->13 4->10; double-15 9-10->11 11-12->10; double-18 9-10->14 11-12->13"),
    Option("first_turn_train", "on each seat's first turn of a round it may lay several tiles on its own train",
           default=False, type=bool),
    Option("satisfy_order", "which of several unsatisfied doubles must be answered first",
           default="placed", type=str, choices=("placed", "reverse")),
    Option("rounds", "rounds in the match: the first k engines, from the highest double down", default=None,
           minimum=1, default_doc="every engine down to [0|0] (the set's highest double + 1)"),
)


# --- the state ----------------------------------------------------------------------------------------------------


class MexicanTrainRound(RoundState):
    """A round of Mexican Train: the shared contract, with the hub-and-trains turn structure."""

    __slots__ = ("doubles", "drawn", "run", "turns", "live", "reverse", "first_turn_train")

    layout: Trains

    def __init__(self, game: MexicanTrainGame, deal: Deal, scores: Sequence[int] | None = None,
                 round_index: int = 0) -> None:
        super().__init__(game, deal, scores, round_index)
        self.doubles = 0
        """Doubles placed in the current turn and not yet satisfied."""
        self.drawn = NO_TILE
        """The tile drawn in the current turn while only it may be placed, else NO_TILE."""
        self.run = False
        """First-turn train: the seat has placed on its own train during its first turn."""
        self.turns = 0
        """Turns completed in this round."""
        live = mask_of(deal.boneyard)
        for hand in self.hands:
            live |= hand
        self.live = live
        """Tiles in a hand or the boneyard: what can still satisfy a double."""
        self.reverse = game.reverse
        self.first_turn_train = game.first_turn_train

    def _clone_extra(self, other: RoundState) -> None:
        for name in MexicanTrainRound.__slots__:
            setattr(other, name, getattr(self, name))

    def _hidden_changed(self) -> None:
        live = mask_of(self.boneyard)
        for hand in self.hands:
            live |= hand
        self.live = live

    # --- legal actions ------------------------------------------------------------------------------------------

    def _on_trains(self, hand: int, trains: int, actions: list[Action]) -> list[Action]:
        """Append the placements of ``hand``'s tiles on the trains whose index bits are set in ``trains``."""
        layout = self.layout
        end_value = layout.end_value
        actions_at = layout.actions_at
        append = actions.append
        while trains:
            bit = trains & -trains
            trains ^= bit
            i = bit.bit_length() - 1
            mask = hand & VALUE_MASK[end_value[i]]
            if mask:
                at = actions_at[i]
                while mask:
                    low = mask & -mask
                    append(at[low.bit_length() - 1])
                    mask ^= low
        return actions

    def _seat_placements(self, seat: int, hand: int, doubles: int, first_turn: bool) -> list[Action]:
        """The placements of ``hand`` for ``seat`` given how many doubles of the turn await a tile."""
        layout = self.layout
        if doubles != 1 and layout.open_doubles:
            target = layout.first_satisfiable(self.live, self.reverse)
            if target >= 0:
                actions = self._on_trains(hand, 1 << target, [])
                if doubles:
                    # Several doubles this turn: more doubles may still go on any available train.
                    avail = layout.marks | 1 << seat | 1 << layout.players
                    self._on_trains(hand & DOUBLES_MASK, avail & ~(1 << target), actions)
                return actions
        if first_turn:
            return self._on_trains(hand, 1 << seat, [])
        return self._on_trains(hand, self.layout.marks | 1 << seat | 1 << self.layout.players, [])

    def _compute_legal(self) -> list[Action]:
        seat = self.turn
        drawn = self.drawn
        hand = self.hands[seat] if drawn == NO_TILE else 1 << drawn
        if self.run:
            actions = self._on_trains(hand, 1 << seat, [])
            if not self.doubles:
                actions.append(PASS)
                return actions
        else:
            first_turn = self.first_turn_train and self.turns < self.game.players
            actions = self._seat_placements(seat, hand, self.doubles, first_turn)
        if actions:
            return actions
        return [DRAW] if drawn == NO_TILE and self.boneyard else [PASS]

    def _legal_for_any_hand(self) -> list[Action]:
        """As the base class, and as if no tile had been drawn this turn: the placements the seat's hand could have
        had (a pass after a draw shows that neither the hand nor the drawn tile fits them)."""
        drawn = self.drawn
        self.drawn = NO_TILE
        try:
            return super()._legal_for_any_hand()
        finally:
            self.drawn = drawn

    def can_place(self, seat: int) -> bool:
        """Whether ``seat`` would have a placement at the start of a turn now (the first turns being over)."""
        return bool(self._seat_placements(seat, self.hands[seat], 0, False))

    # --- applying --------------------------------------------------------------------------------------------------

    def _place(self, action: Action) -> None:
        seat = self.turn
        tile = action.tile
        bit = 1 << tile
        self.hands[seat] ^= bit
        self.counts[seat] -= 1
        self.live ^= bit
        layout = self.layout
        train = action.train
        index = layout.players if train == MEXICAN_TRAIN else train
        layout.extend(index, tile)
        if index == seat:
            layout.marks &= ~(1 << seat)
        self._record(seat, action)
        self.passes = 0
        self.last_placer = seat
        if self.counts[seat] == 0:
            self.out_seat = seat
            self._finish(Ending.DOMINO)
            return
        self.drawn = NO_TILE
        # First-turn train: a tile on one's own train in one's first turn lets the turn go on (own train only).
        # That train is empty and unmarked until then, so such a turn never began under an open double.
        run = self.run or (index == seat and self.first_turn_train and self.turns < self.game.players)
        if IS_DOUBLE[tile]:
            self.doubles += 1
            self.run = run
        elif run:
            self.run = True
            self.doubles = 0
        else:
            self._end_turn()

    def _draw(self) -> None:
        self.drawn = self._take_top(self.turn)

    def _pass(self) -> None:
        seat = self.turn
        self._record(seat, PASS)
        if self.run and not self.doubles:
            self._end_turn()
            return
        self.layout.marks |= 1 << seat
        if self.boneyard:
            self.passes = 0
        else:
            self.passes += 1
            players = self.game.players
            if self.passes >= players and not any(self.can_place(s) for s in range(players)):
                self._finish(Ending.BLOCK)
                return
        self._end_turn()

    def _end_turn(self) -> None:
        self.doubles = 0
        self.drawn = NO_TILE
        self.run = False
        self.turns += 1
        self.turn = (self.turn + 1) % self.game.players


# --- the game -------------------------------------------------------------------------------------------------------


@register
class MexicanTrainGame(Game):
    name = "mexican_train"
    title = "Mexican Train (hub, personal trains and the Mexican train)"
    player_counts = tuple(range(2, 13))
    default_players = 4
    options_declared = OPTIONS
    round_class = MexicanTrainRound
    drawing = True
    voluntary_draw = False
    higher_scores_win = False

    def configure(self) -> None:
        options = self.options
        players = self.players
        double = options["set"]
        if players not in SET_PLAYERS[double]:
            sets = ", ".join(str(s) for s, r in SET_PLAYERS.items() if players in r)
            raise OptionError(
                f"option 'set' of variant {self.name!r} must be one of {sets} with {players} players, got {double}"
            )
        self.double = double
        if options["hand_size"] is None:
            options["hand_size"] = HAND_SIZES[double][players]
        self.hand_size = options["hand_size"]
        self.check_hand_size(reserve=1)
        engines = double + 1
        if options["rounds"] is None:
            options["rounds"] = engines
        elif options["rounds"] > engines:
            raise OptionError(
                f"option 'rounds' of variant {self.name!r} must be between 1 and {engines} with the "
                f"double-{double} set, got {options['rounds']}"
            )
        self.rounds: int = options["rounds"]
        self.first_turn_train: bool = options["first_turn_train"]
        self.reverse: bool = options["satisfy_order"] == "reverse"

    # --- factories -----------------------------------------------------------------------------------------------

    def new_layout(self, deal: Deal) -> Trains:
        if deal.engine is None:
            raise RulesError("expected a mexican train deal with an engine double, got none")
        return Trains(self.players, deal.engine)

    def new_round(self, deal: Deal, scores: tuple[int, ...] | None = None, round_index: int = 0) -> RoundState:
        if deal.engine is None:
            raise RulesError("expected a mexican train deal with an engine double, got none")
        if not IS_DOUBLE[deal.engine] or deal.engine >= set_size(self.double):
            raise RulesError(f"expected an engine double of the double-{self.double} set, got tile id {deal.engine}")
        if deal.lead_tile is not None:
            raise RulesError(f"mexican train has no lead tile, got {NAMES[deal.lead_tile]}")
        check_deal(deal, self.players, self.double)
        return self.round_class(self, deal, scores, round_index)

    def engine_of(self, round_index: int) -> int:
        """The engine of a round: the set's highest double, one lower each round (index modulo the rounds)."""
        return DOUBLE_OF[self.double - round_index % self.rounds]

    def deal(self, seed: int | str, round_index: int, leader: int, lead_tile: int | None = None) -> Deal:
        """The seeded deal of a round: the engine is set aside, the rest shuffled (stream ``deal/<index>``)."""
        engine = self.engine_of(round_index)
        tiles = [t for t in full_set(self.double) if t != engine]
        Rng(f"deal/{round_index}", seed).shuffle(tiles)
        hands, boneyard = deal_hands(tiles, self.players, self.hand_size)
        return Deal(hands, boneyard, leader, None, engine)

    # --- hooks -------------------------------------------------------------------------------------------------------

    def next_leader(self, previous: Deal, result: RoundResult) -> int:
        """One seat clockwise of the previous round's leader."""
        return (previous.leader + 1) % self.players

    def seat_pips(self, state: RoundState) -> tuple[int, ...]:
        return tuple(mask_pips(hand, MEXICAN_PIPS) for hand in state.hands)

    def score_round(self, state: RoundState, ending: Ending) -> RoundResult:
        """Every seat scores its pips left ([0|0] is 50); the winner is the seat that went out."""
        pips = self.seat_pips(state)
        return RoundResult(
            ending=ending,
            winner=state.out_seat if ending is Ending.DOMINO else None,
            points=pips,
            play_points=(0,) * self.players,
            pips=pips,
            hands=tuple(state.hand(s) for s in range(self.players)),
            out_seat=state.out_seat,
            last_placer=state.last_placer,
        )

    def match_result(self, scores: tuple[int, ...], rounds: int) -> MatchResult | None:
        """After the last round, the lowest total wins; a tie for lowest is a drawn match."""
        if rounds < self.rounds:
            return None
        return best_or_draw(scores, rounds, higher_is_better=self.higher_scores_win)
