"""The numeric face of a configured variant, shared by every environment (PettingZoo, Gymnasium, OpenSpiel).

**Actions.** One fixed discrete space per configured game (variant, player count, options): a placement is a tile
and an attachment *slot*, and drawing and passing are the last two indices::

    index = tile * slots + slot        (0 <= tile < tiles, 0 <= slot < slots)
    DRAW  = tiles * slots              PASS = tiles * slots + 1

A slot is a stable position of the layout, not a tile in it (docs/reference/environments.md#actions):

* the line (Draw, Block, La Plaza): slot 0 the lead (empty layout), slot 1 the left end, slot 2 the right end;
* the All Fives spinner: slot 0 the lead, 1 the left end, 2 the right end, 3 side C, 4 side D (the spinner's short
  sides, once they open), the fixed order of :mod:`arena.rules.spinner`;
* Mexican Train: slot ``k`` (``0 <= k < players``) is the train of the seat ``k`` places after the mover (slot 0 its
  own train), slot ``players`` the Mexican train. Relative to the mover, so one policy serves every seat.

:meth:`Encoding.index` and :meth:`Encoding.action` translate between an :class:`~arena.rules.Action` and its index
given the round (a :class:`~arena.rules.RoundState` or the mover's :class:`~arena.rules.Observation`: both know the
open ends); :meth:`Encoding.mask` is the legal-action mask. An index whose slot is not open maps to no action
(:class:`~arena.rules.IllegalActionError`).

**Observations.** :meth:`Encoding.vector` turns one seat's :class:`~arena.rules.Observation` (what the referee
would send that seat, nothing more) into a float32 vector, every seat counted from the observer (relative seat
``r`` is seat ``(observer + r) % players``; sides likewise, the observer's side first). Its parts, in order, are
:attr:`Encoding.parts` (name, size): own hand and tiles on the table (one 0/1 per tile of the set), the open ends
(per end slot, the value it accepts one-hot; Mexican Train adds per train its marker and whether it ends in an
unsatisfied double), the All Fives count, hand counts, boneyard count, scores, and whose turn (one-hot, all zero
once the round is over). Counts and scores are the raw numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.rules.actions import DRAW, MEXICAN_TRAIN, NO_TILE, PASS, Action, Kind, Point, placement
from arena.rules.errors import IllegalActionError
from arena.rules.game import Game
from arena.rules.mexican_train import MexicanTrainGame
from arena.rules.spinner import Spinner, SpinnerView
from arena.rules.state import Observation, RoundState
from arena.rules.tiles import HIGH, LOW, NAMES, set_size
from arena.rules.trains import Trains, TrainsView

Where = RoundState | Observation
"""What an index is read against: the round itself, or the mover's observation of it."""

LINE_ENDS = 2
SPINNER_ENDS = 4


class Encoding:
    """Action indices and observation vectors of one configured game (see the module docstring)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.players = game.players
        self.tiles = set_size(game.double)
        self.values = game.double + 1
        self.trains = isinstance(game, MexicanTrainGame)
        self.spinner = isinstance(game.new_layout(game.deal(0, 0, 0)), Spinner)
        self.ends = self.players + 1 if self.trains else SPINNER_ENDS if self.spinner else LINE_ENDS
        """Open-end positions the observation shows: the line's two, the spinner's four, every train."""
        self.slots = self.ends if self.trains else self.ends + 1
        """Attachment slots per tile: the ends, plus the lead outside Mexican Train."""
        self.draw_index = self.tiles * self.slots
        self.pass_index = self.draw_index + 1
        self.num_actions = self.pass_index + 1
        end_size = self.values + 2 if self.trains else self.values
        self.parts: tuple[tuple[str, int], ...] = (
            ("hand", self.tiles),
            ("table", self.tiles),
            ("ends", self.ends * end_size),
            ("count", 1 if self.spinner else 0),
            ("hand_counts", self.players),
            ("boneyard", 1),
            ("scores", game.num_sides),
            ("turn", self.players),
        )
        self.size = sum(size for _, size in self.parts)
        offsets = np.cumsum([0] + [size for _, size in self.parts])
        self.offsets = {name: int(offsets[i]) for i, (name, _) in enumerate(self.parts)}
        self._end_size = end_size

    def __deepcopy__(self, memo: dict[int, Any]) -> Encoding:
        """The encoding itself: it never changes once made (OpenSpiel deep-copies a state's attributes to clone it)."""
        return self

    # --- actions -------------------------------------------------------------------------------------------------

    def index(self, action: Action, where: Where) -> int:
        """The index of ``action`` in the round ``where`` (its mover's view); refuses a placement at no open end."""
        kind = action.kind
        if kind == Kind.DRAW:
            return self.draw_index
        if kind == Kind.PASS:
            return self.pass_index
        return action.tile * self.slots + self._slot_of(action, where)

    def _slot_of(self, action: Action, where: Where) -> int:
        if self.trains:
            if action.train == MEXICAN_TRAIN:
                return self.players
            return (action.train - _mover(where)) % self.players
        if action.target == NO_TILE:
            return 0
        for i, end in enumerate(_line_ends(where)):
            if end[0] == action.target and end[1] == action.point:
                return i + 1
        raise IllegalActionError(f"expected a placement at an open end, got {action}")

    def action(self, index: int, where: Where) -> Action:
        """The action of ``index`` in the round ``where``; an index outside the space or at a slot that is not open
        now is refused (legality itself is the round's to check when the action is applied)."""
        if index == self.draw_index:
            return DRAW
        if index == self.pass_index:
            return PASS
        if not 0 <= index < self.draw_index:
            raise IllegalActionError(f"expected an action index between 0 and {self.num_actions - 1}, got {index}")
        tile, slot = divmod(int(index), self.slots)
        if self.trains:
            train = MEXICAN_TRAIN if slot == self.players else (_mover(where) + slot) % self.players
            target, point = _train_end(where, train)
            return placement(tile, target, point, train)
        if slot == 0:
            return placement(tile)
        ends = _line_ends(where)
        if slot > len(ends):
            raise IllegalActionError(f"action index {index} places a tile at end slot {slot}, which is not open")
        target, point = ends[slot - 1][0], ends[slot - 1][1]
        return placement(tile, target, point)

    def legal_indices(self, where: Where) -> list[int]:
        """The indices of the mover's legal actions, ascending."""
        actions = where.legal_actions() if isinstance(where, RoundState) else where.legal_actions
        return sorted(self.index(a, where) for a in actions)

    def mask(self, where: Where) -> np.ndarray:
        """The legal-action mask (int8, 1 at every legal index); all zero for a seat that is not to move."""
        mask = np.zeros(self.num_actions, np.int8)
        actions = where.legal_actions() if isinstance(where, RoundState) else where.legal_actions
        for action in actions:
            mask[self.index(action, where)] = 1
        return mask

    def describe(self, index: int) -> str:
        """A person's reading of an index, without a round: ``[3|5] at slot 2``, ``draw``, ``pass``."""
        if index == self.draw_index:
            return "draw"
        if index == self.pass_index:
            return "pass"
        tile, slot = divmod(index, self.slots)
        return f"{NAMES[tile]} at slot {slot}"

    # --- observations --------------------------------------------------------------------------------------------

    def vector(self, observation: Observation, out: np.ndarray | None = None) -> np.ndarray:
        """The observation vector of ``observation`` (float32, :attr:`size` long; written into ``out`` if given).

        The flags are gathered as positions and the numbers as a short list, then written with two numpy calls: one
        numpy assignment per entry would cost more than the rest of an environment step."""
        o = self.offsets
        seat = observation.seat
        n = self.players
        at = o["hand"]
        ones = [at + t for t in observation.hand]
        layout = observation.layout
        at = o["table"]
        ones += [at + t for t in layout.played]
        base = o["ends"]
        size = self._end_size
        if isinstance(layout, TrainsView):
            values = self.values
            open_trains = {train for train, _ in layout.open_doubles}
            for train in layout.trains:
                name = train.train
                at = base + (n if name == MEXICAN_TRAIN else (name - seat) % n) * size
                ones.append(at + train.end[2])
                if train.marker:
                    ones.append(at + values)
                if name in open_trains:
                    ones.append(at + values + 1)
        else:
            ones += [base + i * size + end[2] for i, end in enumerate(layout.open_ends)]
        if observation.turn >= 0:
            ones.append(o["turn"] + (observation.turn - seat) % n)
        counts = observation.hand_counts
        sides = self.game.num_sides
        side = self.game.side_of[seat]
        scores = observation.scores
        numbers = [counts[(seat + r) % n] for r in range(n)]
        numbers.append(observation.boneyard_count)
        numbers += [scores[(side + r) % sides] for r in range(sides)]
        if out is None:
            v = np.zeros(self.size, np.float32)
        else:
            v = out
            v.fill(0)
        v.put(ones, 1)
        v[o["hand_counts"]:o["hand_counts"] + len(numbers)] = numbers
        if isinstance(layout, SpinnerView):
            v[o["count"]] = layout.count
        return v

    def observe(self, observation: Observation) -> dict[str, np.ndarray]:
        """PettingZoo's and Gymnasium's observation of a seat: ``{"observation": the vector, "action_mask": the mask}``
        (all zero for a seat that is not to move)."""
        mask = self.mask(observation) if observation.legal_actions else np.zeros(self.num_actions, np.int8)
        return {"observation": self.vector(observation), "action_mask": mask}

    def high(self) -> np.ndarray:
        """The upper bound of every entry of the vector (for a Box space): 1 for flags, the set's size for counts,
        and for the count and the scores a bound no match reaches (see :meth:`score_bound`)."""
        high = np.ones(self.size, np.float32)
        o = self.offsets
        if self.spinner:
            high[o["count"]] = self.count_bound
        high[o["hand_counts"]:o["hand_counts"] + self.players] = self.tiles
        high[o["boneyard"]] = self.tiles
        high[o["scores"]:o["scores"] + self.game.num_sides] = self.score_bound()
        return high

    @property
    def count_bound(self) -> int:
        """All Fives' count is at most four arm ends showing a double of the highest value."""
        return 4 * 2 * self.game.double

    def score_bound(self) -> int:
        """More than any side's match score: the target (if any) plus, for every round the match may have after it
        (one, or Mexican Train's rounds), every pip of the set ([0|0] as 50) and a count's worth for every tile."""
        game = self.game
        pips = sum(LOW[t] + HIGH[t] for t in range(self.tiles)) + 50
        rounds = int(getattr(game, "rounds", 1))
        return int(game.options.get("target", 0)) + rounds * (pips + self.tiles * self.count_bound)


def _mover(where: Where) -> int:
    return where.turn if isinstance(where, RoundState) else where.seat


def _line_ends(where: Where) -> Sequence[tuple[int, Point, int]]:
    if isinstance(where, RoundState):
        return where.layout.open_ends()  # type: ignore[return-value]  # a line or spinner layout here
    layout: Any = where.layout
    return layout.open_ends  # type: ignore[no-any-return]


def _train_end(where: Where, train: int) -> tuple[int, Point]:
    if isinstance(where, RoundState):
        layout = where.layout
        assert isinstance(layout, Trains)
        tile, point, _ = layout.end(train)
        return tile, point
    view = where.layout
    assert isinstance(view, TrainsView)
    n = len(view.trains) - 1
    end = view.trains[n if train == MEXICAN_TRAIN else train].end
    return end[0], end[1]
