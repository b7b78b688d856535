"""Rebuilding a round from what one seat saw: the public replay that search bots fill in with guesses.

An observation holds the seat's own hand, the public layout and history, the counts and the scores, never the
other hands or the boneyard. :class:`PublicRound` replays that history through the variant's own transitions (the
code the referee runs, without the legality checks that a hidden hand would fail), so the rebuilt state has the
layout, the turn, the passes, the points in play, and Mexican Train's markers, open doubles and turn structure
exactly as the real one; only the hidden tiles are unknown. On the way it notes every draw and pass that shows
what the mover lacked (:meth:`RoundState.lack_shown_by`). :meth:`PublicRound.determinize` then puts one guess of the
hidden tiles (the other hands, the boneyard in order) into a copy and returns a complete state to search: clone,
apply, play out. Building the replay costs one pass over the history; each guess costs one clone.

Given the real hidden tiles, the determinized state is the real state: same legal actions, and the same future
under the same actions (tests check this over every variant).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, cast

from arena.rules.actions import NO_TILE, Action, Kind
from arena.rules.deal import Deal
from arena.rules.errors import RulesError
from arena.rules.state import Observation, RoundState
from arena.rules.tiles import MAX_DOUBLE, NAMES, mask_of, set_size

if TYPE_CHECKING:
    from arena.rules.game import Game
    from arena.rules.mexican_train import MexicanTrainRound

HIDDEN = 255
"""A tile id outside every set: another seat's draw, whose tile the observer did not see."""
assert HIDDEN >= set_size(MAX_DOUBLE)


class Event(NamedTuple):
    """One entry of the public history, with what it showed."""

    seat: int
    action: Action
    """As the observer saw it (another seat's draw without its tile)."""
    lack: int | None
    """A draw or pass that only a seat without a legal placement may make: the mask of the tiles that would have
    been one, none of which the mover held then. None for placements and for draws and passes that show nothing."""
    fitting: int = 0
    """For a draw or a pass, whether it shows a lack or not: the mask of the tiles that would have been a legal
    placement then (what a voluntary draw suggests the mover lacked, if it draws only when it must); else 0."""


class PublicRound:
    """The round as one seat knows it, replayed: a state with every public fact right and the hidden tiles left out.

    ``state`` holds the observer's hand; the other hands are empty and the boneyard holds placeholders until
    :meth:`determinize` fills them. ``unseen`` is the mask of the tiles the observer cannot locate (in the other
    hands or the boneyard); ``counts`` and ``boneyard_count`` say how many go where; ``dealt`` is each seat's hand
    size at the start of the round; ``events`` is the history with what each draw and pass showed.
    """

    __slots__ = ("game", "seat", "state", "events", "own", "unseen", "table", "counts", "boneyard_count", "dealt")

    def __init__(self, game: Game, observation: Observation) -> None:
        obs = observation
        if obs.variant != game.name or obs.players != game.players:
            raise RulesError(f"expected an observation of {game.name} with {game.players} players, got {obs.variant} "
                             f"with {obs.players}")
        players = game.players
        engine = getattr(obs.layout, "engine", None)
        lead_tile = game.lead_tile(obs.round_index) if not obs.history else None
        deal = Deal(hands=((),) * players, boneyard=(), leader=obs.leader, lead_tile=lead_tile, engine=engine)
        state = game.round_class(game, deal, obs.scores, obs.round_index)
        everything = game.all_tiles & ~(1 << engine if engine is not None else 0)

        placed = [0] * players
        drawn = [0] * players
        draws: list[int] = []
        for seat, action in obs.history:
            if action.kind == Kind.PLACE:
                placed[seat] += 1
            elif action.kind == Kind.DRAW:
                drawn[seat] += 1
                draws.append(action.tile if action.tile != NO_TILE else HIDDEN)
        self.dealt = tuple(obs.hand_counts[s] + placed[s] - drawn[s] for s in range(players))
        # Every seat holds every tile while replaying: each placement is then in the placer's hand, and whatever
        # depends on whether a seat could place (Mexican Train's block) errs towards "it could", as it did for real.
        state.hands = [everything] * players
        state.counts = list(self.dealt)
        state.boneyard = [HIDDEN] * obs.boneyard_count + draws[::-1]
        state._hidden_changed()

        events: list[Event] = []
        for index, (seat, action) in enumerate(obs.history):
            if state.is_over() or state.turn != seat:
                raise RulesError(f"history entry {index} ({action}) by seat {seat} does not follow: "
                                 f"{'the round is over' if state.is_over() else f'seat {state.turn} is to move'}")
            kind = action.kind
            lack = None if kind == Kind.PLACE else state.lack_shown_by(action)
            fitting = 0 if kind == Kind.PLACE else lack if lack is not None else state.fitting_tiles()
            state._legal = None
            if kind == Kind.PLACE:
                state._place(action)
            elif kind == Kind.DRAW:
                state._draw()
            else:
                state._pass()
            events.append(Event(seat, action, lack, fitting))
        if obs.turn >= 0 and state.turn != obs.turn:
            raise RulesError(f"after the history seat {state.turn} is to move, but the observation says {obs.turn}")
        if state.counts != list(obs.hand_counts) or len(state.boneyard) != obs.boneyard_count:
            raise RulesError("the history does not add up to the observation's hand counts and boneyard")

        own = mask_of(obs.hand)
        table = mask_of(state.layout.tiles)
        if own & table:
            raise RulesError("the observer's hand holds a tile that is on the table")
        state.history = list(obs.history)
        state._draws = [i for i, (_, a) in enumerate(obs.history) if a.kind == Kind.DRAW]
        state.start_scores = tuple(s - p for s, p in zip(obs.scores, state.play_points, strict=False))
        state.hands = [own if s == obs.seat else 0 for s in range(players)]
        state._legal = None
        self.game = game
        self.seat = obs.seat
        self.state = state
        self.events = tuple(events)
        self.own = own
        self.table = table
        self.unseen = everything & ~own & ~table
        self.counts = tuple(obs.hand_counts)
        self.boneyard_count = obs.boneyard_count

    def pending_draw(self) -> bool:
        """Whether the seat to move drew a tile this turn that only it may place now and that the observer did not
        see (Mexican Train, observed from another seat): :meth:`determinize` must then be told which it is."""
        return getattr(self.state, "drawn", NO_TILE) == HIDDEN

    def determinize(self, hands: Sequence[int], boneyard: Sequence[int], drawn: int | None = None) -> RoundState:
        """A complete state: a copy of the replay with ``hands`` (a tile mask per seat; the observer's own entry
        is ignored) and ``boneyard`` (tiles, top first). ``drawn``: see :meth:`pending_draw`. Checked: hand sizes,
        boneyard size, and that no guessed tile is one the observer knows is elsewhere."""
        state = self.state.clone()
        guessed = [self.own if s == self.seat else hands[s] for s in range(self.game.players)]
        seen = 0
        for s, hand in enumerate(guessed):
            if hand.bit_count() != self.counts[s]:
                raise RulesError(f"seat {s} holds {self.counts[s]} tiles, got a guess of {hand.bit_count()}")
            if s != self.seat:
                if hand & ~self.unseen or hand & seen:
                    raise RulesError(f"the guess of seat {s}'s hand holds a tile that is elsewhere")
                seen |= hand
        if len(boneyard) != self.boneyard_count:
            raise RulesError(f"the boneyard holds {self.boneyard_count} tiles, got a guess of {len(boneyard)}")
        for tile in boneyard:
            if not (self.unseen >> tile & 1) or seen >> tile & 1:
                raise RulesError(f"the guess of the boneyard holds {NAMES[tile]}, which is elsewhere")
            seen |= 1 << tile
        state.hands = guessed
        state.boneyard = list(reversed(boneyard))
        if self.pending_draw():
            if drawn is None or not guessed[state.turn] >> drawn & 1:
                raise RulesError("the seat to move drew a tile unseen: name it (a tile of its guessed hand)")
            cast("MexicanTrainRound", state).drawn = drawn  # only Mexican Train's round has a drawn tile pending
        state._hidden_changed()
        state._legal = None
        return state
