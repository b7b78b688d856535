"""A variant with its options resolved: the factory of rounds and matches, and the home of the variant's hooks.

A variant module subclasses :class:`Game`, declares its facts (name, player counts, options) as class attributes,
and fills in the hooks: how the first leader is chosen, how a round scores, who leads next, when the match ends.
The turn structure itself is shared (:mod:`arena.rules.state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from arena.rules.deal import Deal, check_deal, deal_hands, shuffled_set
from arena.rules.errors import OptionError
from arena.rules.layout import Layout
from arena.rules.line import Line
from arena.rules.match import Match
from arena.rules.options import Option, resolve_options
from arena.rules.results import Ending, MatchResult, RoundResult
from arena.rules.rng import Rng
from arena.rules.scoring import side_totals, sole_lowest, target_reached
from arena.rules.state import RoundState
from arena.rules.tiles import PIPS, mask_pips, set_size


class Game:
    """A configured variant. Subclasses set the class attributes and override the hooks they need."""

    # --- the variant's facts (class attributes) --------------------------------------------------------
    name: ClassVar[str]
    title: ClassVar[str]
    player_counts: ClassVar[tuple[int, ...]]
    default_players: ClassVar[int] = 2
    options_declared: ClassVar[tuple[Option, ...]] = ()
    teams: ClassVar[bool] = False
    """Seats 0+2 against 1+3 when true."""
    round_class: ClassVar[type[RoundState]] = RoundState
    drawing: ClassVar[bool] = True
    """Whether the boneyard can be drawn from at all (false in Block: the rest is out of play)."""
    voluntary_draw: bool = False
    """Whether a player holding a playable tile may draw anyway (Draw's rule; Draw sets it from its option, so it is
    not a class variable)."""
    higher_scores_win: ClassVar[bool] = True
    """False where the lowest total wins (Mexican Train)."""

    def __init__(self, players: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        players = self.default_players if players is None else players
        if players not in self.player_counts:
            counts = ", ".join(map(str, self.player_counts))
            raise OptionError(f"variant {self.name!r} is played by {counts} players, got {players}")
        self.players = players
        self.options: dict[str, Any] = resolve_options(self.options_declared, options, players, self.name)
        self.double = 6
        self.protected_tiles = 0
        self.side_of: tuple[int, ...] = tuple(s % 2 for s in range(players)) if self.teams else tuple(range(players))
        self.num_sides = 2 if self.teams else players
        self.configure()

    def configure(self) -> None:
        """Read the resolved options into attributes and check the ones that depend on each other."""
        self.hand_size = int(self.options["hand_size"])
        self.check_hand_size(reserve=0)

    def check_hand_size(self, reserve: int) -> None:
        """Refuse a hand size the set cannot serve to every player, leaving ``reserve`` tiles undealt."""
        tiles = set_size(self.double)
        largest = (tiles - reserve) // self.players
        if not 1 <= self.hand_size <= largest:
            kept = f" and {reserve} {'tile' if reserve == 1 else 'tiles'} kept out of the deal" if reserve else ""
            raise OptionError(
                f"option 'hand_size' of variant {self.name!r} must be between 1 and {largest} with "
                f"{self.players} players and the double-{self.double} set ({tiles} tiles){kept}, got {self.hand_size}"
            )

    @property
    def all_tiles(self) -> int:
        """The bit mask of every tile of the set."""
        return (1 << set_size(self.double)) - 1

    def __repr__(self) -> str:
        return f"{type(self).__name__}(players={self.players}, options={self.options})"

    # --- factories ---------------------------------------------------------------------------------------

    def new_layout(self, deal: Deal) -> Layout:
        """The round's empty layout; a variant's override narrows the type to its own (the line by default)."""
        return Line()

    def new_round(self, deal: Deal, scores: tuple[int, ...] | None = None, round_index: int = 0) -> RoundState:
        """A round from an explicit deal (checked against the set and the player count)."""
        check_deal(deal, self.players, self.double)
        return self.round_class(self, deal, scores, round_index)

    def new_match(self, seed: int | str, first_deal: Deal | None = None) -> Match:
        """A match whose every deal comes from ``seed`` (the first one may be given explicitly)."""
        return Match(self, seed, first_deal)

    def deal(self, seed: int | str, round_index: int, leader: int, lead_tile: int | None = None) -> Deal:
        """The seeded deal of a round (stream ``deal/<round_index>``)."""
        tiles = shuffled_set(self.double, seed, f"deal/{round_index}")
        hands, boneyard = deal_hands(tiles, self.players, self.hand_size)
        return Deal(hands, boneyard, leader, lead_tile)

    # --- hooks ---------------------------------------------------------------------------------------------

    def first_deal(self, seed: int | str) -> Deal:
        """The first round's deal. Default: the leader is drawn by fair lot (uniform over seats)."""
        return self.deal(seed, 0, Rng("lot", seed).below(self.players))

    def lead_tile(self, round_index: int) -> int | None:
        """The tile the leader of round ``round_index`` must lead with (La Plaza partnership's first round: [6|6]);
        None: any tile. The deals say it too (``Deal.lead_tile``); this is for rebuilding a round from a seat's view."""
        return None

    def next_deal(self, seed: int | str, round_index: int, previous: Deal, result: RoundResult) -> Deal:
        return self.deal(seed, round_index, self.next_leader(previous, result))

    def next_leader(self, previous: Deal, result: RoundResult) -> int:
        """Default: the round's winner leads; with no sole winner, the seat after the previous leader."""
        if result.winner is not None and not self.teams:
            return result.winner
        return (previous.leader + 1) % self.players

    def seat_pips(self, state: RoundState) -> tuple[int, ...]:
        """Each seat's pips left in hand."""
        return tuple(mask_pips(hand, PIPS) for hand in state.hands)

    def round_winner(self, state: RoundState, ending: Ending, pips: tuple[int, ...]) -> int | None:
        """The side that won the round: the one that dominoed, or the sole lowest side total in a block."""
        if ending is Ending.DOMINO:
            seat = state.out_seat
            assert seat is not None  # a domino: a seat went out
            return self.side_of[seat]
        return sole_lowest(side_totals(pips, self.side_of, self.num_sides))

    def hand_points(self, winner: int, pips: tuple[int, ...]) -> int:
        """What the round's winner scores at the end of the round."""
        raise NotImplementedError

    def score_round(self, state: RoundState, ending: Ending) -> RoundResult:
        pips = self.seat_pips(state)
        winner = self.round_winner(state, ending, pips)
        points = list(state.play_points)
        if winner is not None:
            points[winner] += self.hand_points(winner, pips)
        return RoundResult(
            ending=ending,
            winner=winner,
            points=tuple(points),
            play_points=tuple(state.play_points),
            pips=pips,
            hands=tuple(state.hand(s) for s in range(self.players)),
            out_seat=state.out_seat,
            last_placer=state.last_placer,
            capicu=state.capicu,
        )

    def match_result(self, scores: tuple[int, ...], rounds: int) -> MatchResult | None:
        """After a fully scored round: the result if the match is over, else None. Default: first to target."""
        return target_reached(scores, self.options["target"], rounds)

    # --- description -------------------------------------------------------------------------------------

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The variant's facts for ``arena variants``."""
        return {
            "name": cls.name,
            "title": cls.title,
            "players": list(cls.player_counts),
            "default_players": cls.default_players,
            "teams": cls.teams,
            "options": [
                {
                    "name": o.name,
                    "type": o.type.__name__,
                    "default": o.describe_default(),
                    "allowed": o.allowed(),
                    "doc": o.doc,
                }
                for o in cls.options_declared
            ],
        }


def target_option(doc: str = "points to reach; the match ends after the round in which a side reaches it") -> Option:
    """The ``target`` option shared by Draw and Block: 100 with 2 players, 61 with 3 or 4."""
    return Option(
        "target", doc, default=lambda players: 100 if players == 2 else 61, minimum=1,
        default_doc="100 with 2 players, 61 with 3 or 4",
    )

