"""Every variant as an OpenSpiel game: ``pyspiel.load_game("arena_draw(players=3)")`` once this module is imported.

Each variant is registered with ``pyspiel.register_game`` as ``arena_<variant>`` (``arena_draw``, ``arena_block``,
``arena_la_plaza``, ``arena_la_plaza_teams``, ``arena_all_fives``, ``arena_mexican_train``), with the parameter
``players`` and one parameter per variant option (``arena_draw(players=3,target=50)``); an option whose default
depends on the player count (a target, a hand size, Mexican Train's set and rounds) takes 0 for "the variant's
default". One game is one whole match, its rounds as the arena plays them (:mod:`arena.rules.match`).

* **Chance**: the deal is explicit chance, tile by tile: each round's chance player deals the set's tiles one at a
  time, uniformly among those left, seat 0's hand first, then seat 1's, ..., then the boneyard from the top (Block's
  rest is out of play and not dealt). The first round's leader is one more chance node before it, uniform over the
  seats (the arena's lot is uniform too; La Plaza 1 v 1's reveal lot gives each of two seats the same chance), except
  in La Plaza partnership, where the holder of [6|6] leads. Chance outcomes are tile ids (the lot's: seat numbers).
* **Players' actions**: the shared encoding's indices (:mod:`arena.env.encoding`).
* **Information**: imperfect. The observation tensor is the encoding's vector of the player's view; the
  information-state tensor adds the player's memory of the round: who played each tile (relative seat x tile), the
  tiles it drew, each seat's draws and passes, and the round index. The information-state string is perfect recall:
  every round's leader, the player's hand and the public history as the player saw it (its own draws with their
  tiles), and each finished round's revealed result.
* **Returns**: the match result: +1 to every seat of the winning side, -1/(sides - 1) to the others', 0 to all in a
  drawn match (zero-sum).
* **resample_from_infostate(player, sampler)**: a state the player cannot tell from this one, its hidden tiles
  guessed uniformly among those consistent with everything the player saw (the search player's belief,
  :class:`arena.players.search.Belief`, from what is certain): OpenSpiel's IS-MCTS needs it. The new state's
  ``history()`` is empty (OpenSpiel keeps the history in C++; the sampled chance outcomes are not replayed), so it
  leaks nothing of the real deal.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from arena.env.encoding import Encoding
from arena.env.extras import missing
from arena.players.search import Belief
from arena.rules import VARIANTS, Deal, Game, Match, Observation, RoundResult, RoundState, new_game
from arena.rules.restore import PublicRound
from arena.rules.tiles import NAMES, tiles_of

try:
    import pyspiel
except ImportError:
    raise missing("pyspiel") from None

PREFIX = "arena_"
DEFAULT = 0
"""The parameter value that means "the variant's default" for an option whose default depends on the player count."""
ROUNDS_BOUND = 100
"""Rounds assumed at most for OpenSpiel's ``max_game_length`` in a match played to a target (a bound in practice:
a round that scores nothing, a tied block, is rare)."""


def short_name(variant: str) -> str:
    return PREFIX + variant


def defaulted(variant: str) -> set[str]:
    """The options of ``variant`` whose default depends on the player count: 0 stands for it."""
    return {o.name for o in VARIANTS[variant].options_declared if callable(o.default) or o.default is None}


def parameter_specification(variant: str) -> dict[str, Any]:
    """``players`` and every option of the variant, with its default (0 for one that depends on the players)."""
    cls = VARIANTS[variant]
    spec: dict[str, Any] = {"players": cls.default_players}
    for option in cls.options_declared:
        spec[option.name] = DEFAULT if option.name in defaulted(variant) else option.default
    return spec


def game_of(variant: str, params: Mapping[str, Any]) -> Game:
    """The arena's configured game for OpenSpiel parameters (a 0 option left to the variant)."""
    values = {**parameter_specification(variant), **params}
    players = int(values.pop("players"))
    zero_means_default = defaulted(variant)
    options = {name: value for name, value in values.items() if not (name in zero_means_default and value == DEFAULT)}
    return new_game(variant, players, options)


def match_returns(game: Game, match: Match) -> list[float]:
    """+1 to the winning side's seats, -1/(sides - 1) to the others; 0 to all in a drawn match."""
    result = match.result()
    if result.winner is None:
        return [0.0] * game.players
    lose = -1.0 / (game.num_sides - 1)
    return [1.0 if game.side_of[s] == result.winner else lose for s in range(game.players)]


@functools.lru_cache(maxsize=4096)
def deal_shape(game: Game, index: int, leader: int, lead_tile: int | None) -> Deal:
    """A deal of round ``index`` whose shape (hand sizes, boneyard size, engine, lead tile, the tiles in play) the
    chance player fills: any seeded deal has it. Kept, because OpenSpiel makes a new initial state whenever it asks
    a tensor's shape, which is at every ``observation_tensor()`` call."""
    return game.deal(0, index, leader, lead_tile)


# --- the play: the arena's match plus the deal in progress ---------------------------------------------------------


class Play:
    """What a state holds: the match, the deal being dealt, and each player's memory of the finished rounds.

    Copied by hand (``__deepcopy__``): OpenSpiel clones a Python state by deep-copying its attributes, and the game,
    its encoding and the interned actions are shared, never copied."""

    __slots__ = ("game", "match", "dealt", "leader", "template", "past")

    def __init__(self, game: Game) -> None:
        self.game = game
        self.match: Match | None = None
        self.dealt: list[int] = []
        """The tiles dealt so far in the deal in progress, in dealing order."""
        self.leader: int | None = None
        """The leader of the deal in progress, None while the lot is to be drawn."""
        self.template: Deal | None = None
        """The shape of the deal in progress (hand sizes, boneyard size, engine, lead tile); None when none is."""
        self.past: tuple[str, ...] = ("",) * game.players
        """Per player, its information-state string of the finished rounds."""
        self._start_deal(0)

    def __deepcopy__(self, memo: dict[int, Any]) -> Play:
        other = Play.__new__(Play)
        other.game = self.game
        other.match = self.match.clone() if self.match is not None else None
        other.dealt = self.dealt.copy()
        other.leader = self.leader
        other.template = self.template
        other.past = self.past
        return other

    # --- dealing ---------------------------------------------------------------------------------------------------

    def _start_deal(self, index: int) -> None:
        game = self.game
        lead_tile = game.lead_tile(index)
        if index == 0:
            leader = 0 if lead_tile is not None else None  # the lead tile's holder, once dealt; else a lot
        else:
            match = self.current_match()
            leader = game.next_leader(match.deals[-1], match.results[-1])
        self.leader = leader
        self.template = deal_shape(game, index, leader or 0, lead_tile)
        self.dealt = []

    def dealing(self) -> bool:
        return self.template is not None

    def _to_deal(self) -> int:
        template = self.template
        assert template is not None
        hands = sum(len(h) for h in template.hands)
        return hands + len(template.boneyard) if self.game.drawing else hands

    def _pool(self) -> list[int]:
        template = self.template
        assert template is not None
        return sorted([t for hand in template.hands for t in hand] + list(template.boneyard))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.leader is None:
            n = self.game.players
            return [(s, 1.0 / n) for s in range(n)]
        left = sorted(set(self._pool()) - set(self.dealt))
        p = 1.0 / len(left)
        return [(t, p) for t in left]

    def deal_one(self, outcome: int) -> None:
        if self.leader is None:
            self.leader = outcome
            return
        self.dealt.append(outcome)
        if len(self.dealt) == self._to_deal():
            self._finish_deal()

    def _finish_deal(self) -> None:
        template = self.template
        assert template is not None and self.leader is not None
        sizes = [len(h) for h in template.hands]
        hands: list[tuple[int, ...]] = []
        at = 0
        for size in sizes:
            hands.append(tuple(self.dealt[at:at + size]))
            at += size
        boneyard = tuple(self.dealt[at:]) if self.game.drawing else tuple(sorted(set(self._pool()) - set(self.dealt)))
        leader = self.leader
        if template.lead_tile is not None:
            leader = next(s for s, hand in enumerate(hands) if template.lead_tile in hand)
        deal = Deal(tuple(hands), boneyard, leader, template.lead_tile, template.engine)
        if self.match is None:
            self.match = self.game.new_match(0, deal)
        else:
            self.match.next_round(deal)
        self.template = None
        self.dealt = []

    # --- playing ---------------------------------------------------------------------------------------------------

    def current_match(self) -> Match:
        """The match (once the first deal is done: a state's chance player deals before anyone plays)."""
        assert self.match is not None
        return self.match

    @classmethod
    def resumed(cls, game: Game, state: RoundState) -> Play:
        """A play whose match is at ``state`` (a round rebuilt from a seat's view), the earlier rounds counted and
        scored but not kept: a seat's observation holds only its round, and from here on only their number matters
        (Mexican Train's match ends after a number of rounds)."""
        match = object.__new__(Match)
        match.game = game
        match.seed = 0
        match.scores = state.start_scores
        match.deals = [state.deal] * (state.round_index + 1)
        match.results = cast(list[RoundResult], [None] * state.round_index)
        match._result = None
        match.round = state
        play = cls.__new__(cls)
        play.game = game
        play.match = match
        play.dealt = []
        play.leader = None
        play.template = None
        play.past = ("",) * game.players
        return play

    def round(self) -> RoundState:
        return self.current_match().round

    def apply(self, encoding: Encoding, index: int) -> None:
        match = self.current_match()
        state = match.round
        match.apply(encoding.action(index, state))
        if state.is_over():
            self.past = tuple(self.past[p] + self.round_string(p) for p in range(self.game.players))
            if not match.is_over():
                self._start_deal(match.round_index + 1)

    def is_over(self) -> bool:
        return self.match is not None and self.template is None and self.match.is_over()

    # --- what a player knows ---------------------------------------------------------------------------------------

    def round_string(self, player: int) -> str:
        """The current round as ``player`` knows it: leader, hand, the history it saw; the result once over."""
        state = self.round()
        history = " ".join(f"{seat}:{action}" for seat, action in state.history_seen_by(player))
        text = (f"|r{state.round_index} lead {state.deal.leader} hand {''.join(NAMES[t] for t in state.hand(player))}"
                f" moves {history}")
        if state.is_over():
            result = state.result()
            hands = " ".join("".join(NAMES[t] for t in hand) or "-" for hand in result.hands)
            text += f" end {result.ending.value} points {list(result.points)} hands {hands}"
        return text

    def information_string(self, player: int) -> str:
        text = f"p{player}{self.past[player]}"
        if self.template is not None:
            own = self._own_dealt(player)
            lead = "lot" if self.leader is None else str(self.leader)
            return text + f"|dealing lead {lead} got {''.join(NAMES[t] for t in own)}"
        if self.round().is_over():
            return text  # the match is over: the last round is in the past already
        return text + self.round_string(player)

    def _own_dealt(self, player: int) -> list[int]:
        """The tiles dealt so far to ``player``'s hand in the deal in progress."""
        template = self.template
        assert template is not None
        at = sum(len(h) for h in template.hands[:player])
        return sorted(self.dealt[at:at + len(template.hands[player])])


# --- OpenSpiel's game, state and observer ------------------------------------------------------------------------


def game_type(variant: str) -> Any:
    cls = VARIANTS[variant]
    return pyspiel.GameType(
        short_name=short_name(variant),
        long_name=f"Arena {cls.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(cls.player_counts),
        min_num_players=min(cls.player_counts),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameter_specification(variant),
    )


def game_info(game: Game, encoding: Encoding) -> Any:
    rounds = getattr(game, "rounds", ROUNDS_BOUND)
    per_round = encoding.tiles * (game.players + 3) + 1
    return pyspiel.GameInfo(
        num_distinct_actions=encoding.num_actions,
        max_chance_outcomes=encoding.tiles,
        num_players=game.players,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=rounds * per_round,
    )


class ArenaGame(pyspiel.Game):  # type: ignore[misc]  # pyspiel has no type information
    """One variant, configured by OpenSpiel parameters (see the module docstring)."""

    variant = ""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.arena_game = game_of(self.variant, params)
        self.encoding = Encoding(self.arena_game)
        super().__init__(game_type(self.variant), game_info(self.arena_game, self.encoding), params)

    def new_initial_state(self) -> ArenaState:
        return ArenaState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return Observer(self, perfect_recall)


class ArenaState(pyspiel.State):  # type: ignore[misc]  # pyspiel has no type information
    """A match in progress (see the module docstring)."""

    def __init__(self, game: ArenaGame) -> None:
        super().__init__(game)
        self.play = Play(game.arena_game)
        self.encoding = game.encoding

    def current_player(self) -> int:
        play = self.play
        if play.is_over():
            return int(pyspiel.PlayerId.TERMINAL)
        if play.dealing():
            return int(pyspiel.PlayerId.CHANCE)
        return play.round().turn

    def _legal_actions(self, player: int) -> list[int]:
        return self.encoding.legal_indices(self.play.round())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.play.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        if self.play.dealing():
            self.play.deal_one(int(action))
        else:
            self.play.apply(self.encoding, int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"lot: seat {action} leads" if self.play.leader is None else f"deal {NAMES[action]}"
        if self.play.dealing() or self.play.is_over():
            return self.encoding.describe(action)
        return str(self.encoding.action(action, self.play.round()))

    def is_terminal(self) -> bool:
        return self.play.is_over()

    def returns(self) -> list[float]:
        play = self.play
        if not play.is_over():
            return [0.0] * play.game.players
        return match_returns(play.game, play.current_match())

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> ArenaState:
        """A state ``player_id`` cannot tell from this one, the hidden tiles guessed (see the module docstring)."""
        rng = random.Random(float(probability_sampler()))
        other: ArenaState = self.get_game().new_initial_state()
        play = self.play.__deepcopy__({})
        if play.dealing():
            resample_deal(play, player_id, rng)
        elif not play.is_over():
            resample_round(play, player_id, rng)
        other.play = play
        return other

    def __str__(self) -> str:
        play = self.play
        if play.match is None:
            return f"dealing: {len(play.dealt)} tiles"
        state = play.round()
        hands = " ".join("".join(NAMES[t] for t in state.hand(s)) or "-" for s in range(play.game.players))
        return (f"round {state.round_index}, turn {state.turn}; hands {hands}; "
                f"table {' '.join(NAMES[t] for t in state.layout.tiles)}; scores {list(state.scores())}")


def guess_round(game: Game, observation: Observation, rng: random.Random) -> RoundState:
    """The round of ``observation`` with one guess of the hidden tiles, uniform among those consistent with what the
    seat saw (the search player's belief from what is certain; a tile another seat drew this turn and may alone place,
    in Mexican Train, one of its guessed tiles)."""
    public = PublicRound(game, observation)
    hands, boneyard = Belief(public, forced_draws=False).sample(rng)
    drawn = None
    if public.pending_draw():
        drawn = rng.choice(tiles_of(hands[observation.turn]))
    return public.determinize(hands, boneyard, drawn)


def resample_round(play: Play, player: int, rng: random.Random) -> None:
    """Put one guess of the hidden tiles, consistent with ``player``'s view, into ``play``'s round."""
    match = play.current_match()
    world = guess_round(play.game, match.round.observation(player), rng)
    match.round = world
    match.deals[-1] = world.deal  # the real deal stays behind: nothing in the new state holds it


def resample_deal(play: Play, player: int, rng: random.Random) -> None:
    """Shuffle the tiles dealt so far to the positions ``player`` did not receive."""
    template = play.template
    assert template is not None
    at = sum(len(h) for h in template.hands[:player])
    own = range(at, at + len(template.hands[player]))
    others = [i for i in range(len(play.dealt)) if i not in own]
    pool = sorted(set(play._pool()) - set(play.dealt[i] for i in own if i < len(play.dealt)))
    chosen = rng.sample(pool, len(others))
    for i, tile in zip(others, chosen, strict=True):
        play.dealt[i] = tile


class Observer:
    """OpenSpiel's Python observer: the encoding's vector (and, for the information state, the player's memory)."""

    def __init__(self, game: ArenaGame, perfect_recall: bool) -> None:
        self.encoding = game.encoding
        self.perfect_recall = perfect_recall
        encoding = self.encoding
        n = game.arena_game.players
        pieces = [("observation", encoding.size)]
        if perfect_recall:
            pieces += [("played_by", n * encoding.tiles), ("drawn", encoding.tiles), ("draws", n), ("passes", n),
                       ("round", 1)]
        self.tensor = np.zeros(sum(size for _, size in pieces), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, size in pieces:
            self.dict[name] = self.tensor[at:at + size]
            at += size
        if perfect_recall:
            self.dict["played_by"] = self.dict["played_by"].reshape(n, encoding.tiles)

    def set_from(self, state: ArenaState, player: int) -> None:
        self.tensor.fill(0)
        play = state.play
        if play.match is None:
            return
        round_state = play.round()
        observation = round_state.observation(player)
        self.encoding.vector(observation, self.dict["observation"])
        if not self.perfect_recall:
            return
        n = play.game.players
        played_by, drawn = self.dict["played_by"], self.dict["drawn"]
        draws, passes = self.dict["draws"], self.dict["passes"]
        for seat, action in observation.history:
            relative = (seat - player) % n
            kind = action.kind.name
            if kind == "PLACE":
                played_by[relative, action.tile] = 1
            elif kind == "DRAW":
                draws[relative] += 1
                if seat == player:
                    drawn[action.tile] = 1
            else:
                passes[relative] += 1
        self.dict["round"][0] = observation.round_index

    def string_from(self, state: ArenaState, player: int) -> str:
        play = state.play
        if self.perfect_recall:
            return play.information_string(player)
        if play.match is None:
            return f"p{player} dealing"
        observation = play.round().observation(player)
        layout = observation.layout
        ends = " ".join(str(end[2]) for end in getattr(layout, "open_ends", ())) or " ".join(
            f"{train.train}:{train.end[2]}{'*' if train.marker else ''}" for train in getattr(layout, "trains", ()))
        return (f"p{player} r{observation.round_index} turn {observation.turn} "
                f"hand {''.join(NAMES[t] for t in observation.hand)} "
                f"table {''.join(NAMES[t] for t in layout.played)} ends {ends} counts {list(observation.hand_counts)} "
                f"boneyard {observation.boneyard_count} scores {list(observation.scores)}")


# --- registration ----------------------------------------------------------------------------------------------------


def _game_class(variant: str) -> type[ArenaGame]:
    return type(f"Arena{variant.title().replace('_', '')}Game", (ArenaGame,), {"variant": variant})


GAMES: dict[str, type[ArenaGame]] = {}
"""The registered game class of each variant, by its OpenSpiel short name."""

for _variant in VARIANTS:
    GAMES[short_name(_variant)] = _game_class(_variant)
    pyspiel.register_game(game_type(_variant), GAMES[short_name(_variant)])


def load(variant: str, players: int | None = None, options: Mapping[str, Any] | None = None) -> Any:
    """``pyspiel.load_game`` of the variant's registered game with the arena's way of naming a configuration."""
    params: dict[str, Any] = dict(options or {})
    if players is not None:
        params["players"] = players
    return pyspiel.load_game(short_name(variant), params)


