"""A search player for every variant: determinized Monte Carlo ("perfect information Monte Carlo").

At each decision the seat guesses the hidden tiles many times, each guess consistent with everything it has seen,
and in each guess plays every legal action out to the end of the round with the rules engine (a copy of the
rebuilt round, the action, then a fast greedy playout for every seat); it picks the action with the best mean value
for the match. The same guess serves every action, so the actions are compared on equal deals.

**What the seat knows** (:class:`Belief`). The tiles it cannot locate are the set minus its hand and the table; they
are in the other hands (whose sizes are public) or the boneyard (whose size is public; in Block the tiles out of
play). A draw or a pass that the rules allow only to a seat without a legal placement
(:meth:`~arena.rules.RoundState.lack_shown_by`: every draw in All Fives, La Plaza and Mexican Train, a pass in every
variant) shows that the mover held none of the tiles that would have fitted then: in the line games the tiles showing
an open end's value; in Mexican Train the tiles that fitted a train open to it, or only the open double it had to
answer. Draw allows drawing beside a placement, so a draw there proves nothing; by default it is read as forced all
the same (most players draw only when they must), a reading that yields wherever the seat's later placements
contradict it. Tiles drawn later are not covered by a lack, and which tiles a seat played is public but not which of
its tiles they were, so each hidden hand is modelled as *slots*: one per tile held, each with the mask of tiles it
cannot be. Every lack adds its mask to all the mover's slots; a hidden draw adds a free slot; a placement removes the
most constrained slot that could have held the tile. Since a lack covers every slot held at the time, a seat's slots
nest (older ones forbid more), and removing the most constrained fitting slot keeps the model of what is certain a
relaxation of the truth: the real hands always fit it (a test checks this over every variant).

**Guessing** (:meth:`Belief.sample`): the most constrained slots are filled first, each group of equal slots with a
uniform choice among the tiles it allows, then the free slots and the boneyard (in random order) with the rest; a
dead end retries, and after a few an exact matching (augmenting paths) finds a consistent guess if one exists.

**Playouts** (:func:`greedy_playout`): every seat places its heaviest tile (All Fives: the placement that scores
most, then the heaviest), and draws or passes only when it cannot place (``epsilon`` > 0 mixes in random
placements); the round is played to its end.

**Value** (:func:`round_value`): the seat's side's match score after the round minus the other sides' mean (Mexican
Train: the other way round, fewer pips is better; All Fives' points in play are in the scores; a team's score is
its side's), plus a bonus of the match target (Mexican Train: 100) if the round ends the match won, minus it if it
ends it lost.

**Time** (:class:`SearchPlayer`): the search stops at a deadline (the bot's is half its move time less 4 ms), or
after a cap of playouts, whichever comes first. It looks at the clock before each playout (and starts none that
would likely not end in time) and every 8 moves inside one (a playout cut short is dropped); a guess counts only
once every action was played out in it, and without one whole guess it answers the playout policy's choice. It is
deterministic for a given seed and observation when the cap is reached first.

**What it tells the arena** (:class:`PlaceCounts`): the share of its guesses that put each hidden tile in each other
hand or the boneyard, sent with its choice as its belief (:mod:`arena.rules.beliefs`).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from arena.protocol import bot_pb2
from arena.protocol.convert import belief_pb, observation_from_pb, options_from_pb
from arena.rules import Action, Game, Kind, Observation, RoundState, beliefs, new_game
from arena.rules.all_fives import points_in_play
from arena.rules.restore import PublicRound
from arena.rules.spinner import Spinner
from arena.rules.tiles import PIPS, iter_tiles, tiles_of

PLACE = Kind.PLACE

# --- belief ----------------------------------------------------------------------------------------------------


class Belief:
    """What a seat knows about the hidden tiles: which tiles each hidden slot cannot be (see the module docstring).

    With ``forced_draws`` (the default) a draw the rules allowed beside a placement (Draw's voluntary draw) is read
    as if it were forced, as it is for most players: the mover is taken to lack what fitted then. That is a guess
    about the other players, not a rule, so it yields wherever it is contradicted: a seat that later places a tile it
    was taken to lack is modelled from what is certain only, and a guess that cannot be made with it is made
    without it (``fallbacks``).
    """

    __slots__ = ("public", "unseen", "slots", "certain", "groups", "certain_groups", "broken", "retries",
                 "matched", "fallbacks", "relaxed")

    def __init__(self, public: PublicRound, forced_draws: bool = True) -> None:
        self.public = public
        self.unseen = public.unseen
        self.certain, _ = self._model(assume=False)
        if forced_draws:
            assumed, self.broken = self._model(assume=True)
            self.slots = [self.certain[s] if s in self.broken else assumed[s] for s in range(len(assumed))]
        else:
            self.slots, self.broken = self.certain, set()
        self.groups = self._groups(self.slots)
        self.certain_groups = self.groups if self.slots == self.certain else self._groups(self.certain)
        self.retries = 0
        self.matched = 0
        self.fallbacks = 0
        self.relaxed = 0

    def _model(self, assume: bool) -> tuple[list[list[int]], set[int]]:
        """Each seat's slots (forbidden masks), from certain lacks only or also from voluntary draws; and the seats
        whose placements contradicted the model."""
        public = self.public
        players = public.game.players
        slots: list[list[int]] = [[0] * public.dealt[s] if s != public.seat else [] for s in range(players)]
        broken: set[int] = set()
        for seat, action, lack, fitting in public.events:
            if seat == public.seat:
                continue
            held = slots[seat]
            kind = action.kind
            if lack is None and assume and kind == Kind.DRAW:
                lack = fitting
            if lack:
                for i in range(len(held)):
                    held[i] |= lack
            if kind == Kind.DRAW:
                held.append(0)
            elif kind == PLACE and not _remove_slot(held, action.tile):
                broken.add(seat)
        unseen = self.unseen
        slots = [[f & unseen for f in held] for held in slots]
        for s in range(players):
            if s != public.seat and len(slots[s]) != public.counts[s]:
                raise ValueError(f"seat {s}: {len(slots[s])} slots for {public.counts[s]} tiles")
        return slots, broken

    def _groups(self, slots: list[list[int]]) -> list[tuple[int, int, int]]:
        """Groups of equal slots: (forbidden mask, seat, how many), most constrained first; the boneyard is seat
        -1."""
        by_key: dict[tuple[int, int], int] = {}
        for s, held in enumerate(slots):
            for f in held:
                by_key[(f, s)] = by_key.get((f, s), 0) + 1
        if self.public.boneyard_count:
            by_key[(0, -1)] = by_key.get((0, -1), 0) + self.public.boneyard_count
        unseen = self.unseen
        return sorted(((f, s, k) for (f, s), k in by_key.items()), key=lambda g: ((unseen & ~g[0]).bit_count(), g[1]))

    def lacks(self, seat: int) -> int:
        """The tiles ``seat`` certainly does not hold: those every one of its slots forbids."""
        held = self.slots[seat]
        if not held:
            return self.unseen
        common = self.unseen
        for f in held:
            common &= f
        return common

    def sample(self, rng: random.Random) -> tuple[list[int], list[int]]:
        """One guess of the hidden tiles: a tile mask per seat (0 for the observer) and the boneyard, top first."""
        players = self.public.game.players
        for groups in (self.groups, self.certain_groups) if self.groups is not self.certain_groups else (self.groups,):
            for _ in range(8):
                guess = self._greedy(rng, players, groups)
                if guess is not None:
                    return guess
                self.retries += 1
            guess = self._matching(rng, players, groups, relax=False)
            if guess is not None:
                self.matched += 1
                return guess
            if groups is self.groups and groups is not self.certain_groups:
                self.fallbacks += 1
        self.relaxed += 1  # cannot happen if the model is right; never fail a decision over it
        guess = self._matching(rng, players, self.groups, relax=True)
        assert guess is not None  # with nothing forbidden every slot takes any unseen tile: there are enough of them
        return guess

    def _greedy(self, rng: random.Random, players: int,
                groups: list[tuple[int, int, int]]) -> tuple[list[int], list[int]] | None:
        remaining = self.unseen
        hands = [0] * players
        for forbidden, seat, k in groups:
            if not forbidden:
                break  # the rest are free: dealt at random below
            allowed = tiles_of(remaining & ~forbidden)
            if len(allowed) < k:
                return None
            chosen = rng.sample(allowed, k)
            mask = 0
            for t in chosen:
                mask |= 1 << t
            remaining &= ~mask
            hands[seat] |= mask
        rest = tiles_of(remaining)
        rng.shuffle(rest)
        boneyard: list[int] = []
        position = 0
        for forbidden, seat, k in groups:
            if forbidden:
                continue
            take = rest[position:position + k]
            position += k
            if seat < 0:
                boneyard = take
            else:
                for t in take:
                    hands[seat] |= 1 << t
        return hands, boneyard

    def _matching(self, rng: random.Random, players: int, groups: list[tuple[int, int, int]],
                  relax: bool) -> tuple[list[int], list[int]] | None:
        """Slots to tiles by augmenting paths, in random order: a consistent guess whenever one exists."""
        slots = [(0 if relax else f, s) for f, s, k in groups for _ in range(k)]
        rng.shuffle(slots)
        tiles = tiles_of(self.unseen)
        owner: dict[int, int] = {}

        def augment(i: int, seen: set[int]) -> bool:
            forbidden = slots[i][0]
            options = [t for t in tiles if not forbidden >> t & 1 and t not in seen]
            rng.shuffle(options)
            for t in options:
                seen.add(t)
                if t not in owner or augment(owner[t], seen):
                    owner[t] = i
                    return True
            return False

        for i in range(len(slots)):
            if not augment(i, set()):
                return None
        hands = [0] * players
        boneyard = []
        for t, i in owner.items():
            seat = slots[i][1]
            if seat < 0:
                boneyard.append(t)
            else:
                hands[seat] |= 1 << t
        rng.shuffle(boneyard)
        return hands, boneyard

    def fits(self, seat: int, hand: int, certain: bool = True) -> bool:
        """Whether ``hand`` (a tile mask) could fill ``seat``'s slots, each tile one slot it does not forbid (the
        slots of what is certain, or with ``certain=False`` those guesses are drawn from)."""
        tiles = tiles_of(hand)
        held = self.certain[seat] if certain else self.slots[seat]
        if len(tiles) != len(held):
            return False
        owner: dict[int, int] = {}

        def augment(t: int, seen: set[int]) -> bool:
            for i, f in enumerate(held):
                if not f >> t & 1 and i not in seen:
                    seen.add(i)
                    if i not in owner or augment(owner[i], seen):
                        owner[i] = t
                        return True
            return False

        return all(augment(t, set()) for t in tiles)


def _remove_slot(held: list[int], tile: int) -> bool:
    """A placed tile leaves the most constrained slot that could have held it (see the module docstring). False if
    none could: the least constrained one goes, and the model was wrong about the seat."""
    best = -1
    best_count = -1
    for i, f in enumerate(held):
        if not f >> tile & 1:
            c = f.bit_count()
            if c > best_count:
                best, best_count = i, c
    if best >= 0:
        held.pop(best)
        return True
    if held:
        held.pop(min(range(len(held)), key=lambda i: held[i].bit_count()))
    return False


# --- playouts and value ------------------------------------------------------------------------------------------


def greedy_choice(state: RoundState, legal: Sequence[Action], rng: random.Random, epsilon: float = 0.0) -> Action:
    """The default playout policy: the heaviest placement (All Fives: the one that scores most, then the
    heaviest); a draw or a pass only when nothing can be placed; with probability ``epsilon`` a random placement."""
    best = None
    best_value = -1
    # All Fives plays on the spinner, whose count says what a placement scores
    spinner = cast(Spinner, state.layout) if state.game.name == "all_fives" else None
    placements = 0
    for a in legal:
        if a.kind == PLACE:
            placements += 1
            value = PIPS[a.tile]
            if spinner is not None:
                value += 100 * points_in_play(spinner.count_after(a.tile, a.target, a.point))
            if value > best_value:
                best, best_value = a, value
    if best is None:
        return legal[0]
    if epsilon and placements > 1 and rng.random() < epsilon:
        return rng.choice([a for a in legal if a.kind == PLACE])
    return best


CHECK_EVERY = 8
"""Moves between two looks at the clock inside a playout."""


def greedy_playout(state: RoundState, rng: random.Random, epsilon: float = 0.0,
                   deadline: float = float("inf")) -> RoundState | None:
    """Play the round to its end with :func:`greedy_choice` for every seat; returns the state (now over), or None
    if ``deadline`` (``time.perf_counter``) passed first."""
    clock = time.perf_counter
    moves = 0
    while not state.is_over():
        legal = state.legal_actions()
        state.apply(legal[0] if len(legal) == 1 else greedy_choice(state, legal, rng, epsilon))
        moves += 1
        if moves % CHECK_EVERY == 0 and clock() >= deadline:
            return None
    return state


def random_playout(state: RoundState, rng: random.Random, epsilon: float = 0.0,
                   deadline: float = float("inf")) -> RoundState | None:
    """Play the round to its end with uniformly random actions (None if ``deadline`` passed first)."""
    clock = time.perf_counter
    moves = 0
    while not state.is_over():
        legal = state.legal_actions()
        state.apply(legal[0] if len(legal) == 1 else rng.choice(legal))
        moves += 1
        if moves % CHECK_EVERY == 0 and clock() >= deadline:
            return None
    return state


PLAYOUTS: dict[str, Callable[..., RoundState | None]] = {"greedy": greedy_playout, "random": random_playout}


def match_bonus(game: Game) -> float:
    """What winning (or losing) the match is worth beside points: the target, or 100 in Mexican Train."""
    return float(game.options.get("target") or 100)


def round_value(game: Game, side: int, final: Sequence[int], round_index: int) -> float:
    """The value for ``side`` of a round that ended with match scores ``final``: its score minus the other sides'
    mean (the other way round in Mexican Train), plus or minus :func:`match_bonus` if the match ends there."""
    others = (sum(final) - final[side]) / (len(final) - 1)
    value = final[side] - others if game.higher_scores_win else others - final[side]
    result = game.match_result(tuple(final), round_index + 1)
    if result is not None and result.winner is not None:
        value += match_bonus(game) if result.winner == side else -match_bonus(game)
    return value


# --- the search -------------------------------------------------------------------------------------------------


@dataclass
class SearchStats:
    """What one decision's search did."""

    actions: int = 0
    worlds: int = 0
    playouts: int = 0
    seconds: float = 0.0
    values: list[float] = field(default_factory=list)
    """Mean value per legal action (in the order of the legal actions)."""
    visits: list[int] = field(default_factory=list)
    chosen: int = 0
    retries: int = 0
    """Guesses that hit a dead end and were redrawn; ``matched``: guesses that needed the exact matching;
    ``fallbacks``: guesses made without the reading of voluntary draws; ``relaxed`` (never expected): guesses that
    had to drop what the seat knows."""
    matched: int = 0
    fallbacks: int = 0
    relaxed: int = 0
    belief: beliefs.Belief | None = None
    """Where the guesses put each hidden tile: for each, the share of the guesses that put it at each place (the
    other seats in order, then the boneyard); None when no guess was made (a forced move, or no time)."""


class PlaceCounts:
    """How often the guesses put each hidden tile at each place of the seat (:func:`arena.rules.beliefs.places`):
    the search's belief is these frequencies."""

    __slots__ = ("tiles", "row", "columns", "counts", "guesses")

    def __init__(self, unseen: int, players: int, seat: int) -> None:
        self.tiles = tuple(tiles_of(unseen))
        self.row = {t: i for i, t in enumerate(self.tiles)}
        self.columns = [(column, s) for column, s in enumerate(beliefs.places(players, seat)) if s != beliefs.BONEYARD]
        self.counts = [[0] * (len(self.columns) + 1) for _ in self.tiles]
        self.guesses = 0

    def add(self, hands: Sequence[int], boneyard: Sequence[int]) -> None:
        """Count one guess (a tile mask per seat, the boneyard's tiles)."""
        counts, row = self.counts, self.row
        for column, seat in self.columns:
            for t in iter_tiles(hands[seat]):
                counts[row[t]][column] += 1
        for t in boneyard:
            counts[row[t]][-1] += 1
        self.guesses += 1

    def belief(self) -> beliefs.Belief | None:
        """The frequencies, or None before any guess."""
        if not self.guesses or not self.tiles:
            return None
        return beliefs.belief_from_counts(self.tiles, self.counts)


def search(game: Game, observation: Observation, rng: random.Random, *, deadline: float, max_playouts: int,
           playout: str = "greedy", epsilon: float = 0.0, forced_draws: bool = True) -> tuple[int, SearchStats]:
    """The index of the chosen legal action and what the search did. Stops at ``deadline`` (``time.perf_counter``)
    or after ``max_playouts`` playouts; with no time for a single playout it answers the playout policy's choice."""
    started = time.perf_counter()
    legal = list(observation.legal_actions)
    stats = SearchStats(actions=len(legal))
    if len(legal) <= 1:
        return 0, stats
    public = PublicRound(game, observation)
    belief = Belief(public, forced_draws)
    places = PlaceCounts(belief.unseen, game.players, observation.seat)
    side = game.side_of[observation.seat]
    start = public.state.start_scores
    round_index = observation.round_index
    play = PLAYOUTS[playout]
    n = len(legal)
    totals = [0.0] * n
    visits = [0] * n
    clock = time.perf_counter
    fallback = legal.index(greedy_choice(public.state, legal, rng))
    done = False
    per_playout = 0.0  # the mean playout so far, in seconds: none is started that would likely not end in time
    while not done and stats.playouts + n <= max_playouts:
        hands, boneyard = belief.sample(rng)
        places.add(hands, boneyard)
        world = public.determinize(hands, boneyard)
        values = []
        for action in legal:
            now = clock()
            if now + per_playout >= deadline:
                done = True
                break
            child = world.clone()
            child.apply(action)
            over = play(child, rng, epsilon, deadline)
            if over is None:
                done = True
                break
            result = over.result()
            scores = [s + p for s, p in zip(start, result.points, strict=False)]
            values.append(round_value(game, side, scores, round_index))
            stats.playouts += 1
            per_playout += (clock() - now - per_playout) / stats.playouts
        if len(values) == n:  # a guess counts when every action was played out in it
            for i, v in enumerate(values):
                totals[i] += v
                visits[i] += 1
            stats.worlds += 1
    stats.values = [t / v if v else float("-inf") for t, v in zip(totals, visits, strict=True)]
    stats.visits = visits
    if all(visits):
        best = max(range(n), key=lambda i: (stats.values[i], -i))
    else:  # not one whole guess in time: the playout policy's choice
        best = fallback
    stats.chosen = best
    stats.retries, stats.matched = belief.retries, belief.matched
    stats.fallbacks, stats.relaxed = belief.fallbacks, belief.relaxed
    stats.belief = places.belief()
    stats.seconds = time.perf_counter() - started
    return best, stats


# --- players -------------------------------------------------------------------------------------------------------

TIME_SHARE = 0.5
"""The share of the move time a decision may use."""
TIME_MARGIN_S = 0.004
"""Kept back from that share for answering (and for a playout that runs past the check)."""
DEFAULT_MOVE_MS = 1000
"""The move time assumed for a request that gives none (the referee's default)."""


def think_seconds(move_ms: int, share: float = TIME_SHARE, margin_s: float = TIME_MARGIN_S) -> float:
    """How long to search with ``move_ms`` for the move: ``share`` of it less a margin, never below zero."""
    return max(0.0, move_ms / 1000 * share - margin_s)


def decision_rng(seed: int | str, key: bytes) -> random.Random:
    """The search's random generator for one decision: from the seed and the decision itself (so an answer does
    not depend on what the process did before, nor on other games it serves at the same time)."""
    return random.Random(hashlib.sha256(f"{seed}/".encode() + key).digest())


def observation_key(observation: Observation) -> bytes:
    """A stable digest of what a seat saw: the seed of the decision's generator."""
    text = repr((observation.variant, observation.players, observation.seat, observation.round_index,
                 observation.hand, observation.history, observation.hand_counts, observation.boneyard_count,
                 observation.scores, sorted(observation.options.items())))
    return text.encode()


class SearchPlayer:
    """An in-process player (Observation -> Action) that searches: ``max_playouts`` per decision and, when
    ``move_ms`` is given, at most ``think_seconds(move_ms)`` of wall time."""

    def __init__(self, seed: int | str = 0, name: str = "search", *, max_playouts: int = 1000,
                 move_ms: int | None = None, playout: str = "greedy", epsilon: float = 0.0,
                 forced_draws: bool = True) -> None:
        self.name = name
        self.seed = seed
        self.max_playouts = max_playouts
        self.move_ms = move_ms
        self.playout = playout
        self.epsilon = epsilon
        self.forced_draws = forced_draws
        self.last: SearchStats | None = None
        self._games: dict[Any, Game] = {}

    def game(self, variant: str, players: int, options: dict[str, Any]) -> Game:
        """The configured variant (made once per variant, player count and options)."""
        key = (variant, players, tuple(sorted(options.items())))
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = new_game(variant, players, options)
        return game

    def choose(self, observation: Observation, move_ms: int | None = None, started: float | None = None) -> int:
        """The index of the chosen legal action."""
        started = time.perf_counter() if started is None else started
        move_ms = self.move_ms if move_ms is None else move_ms
        deadline = started + think_seconds(move_ms) if move_ms else float("inf")
        rng = decision_rng(self.seed, observation_key(observation))
        game = self.game(observation.variant, observation.players, observation.options)
        index, self.last = search(game, observation, rng, deadline=deadline,
                                  max_playouts=self.max_playouts, playout=self.playout, epsilon=self.epsilon,
                                  forced_draws=self.forced_draws)
        return index

    def __call__(self, observation: Observation) -> Action:
        return observation.legal_actions[self.choose(observation)]

    def choose_request(self, request: Any) -> int:
        """The index of the chosen legal action for a protocol ``ActRequest``, within ``think_seconds`` of its
        ``time.move_ms`` (counted from this call; a request without one gets the arena's default, 1000 ms). The
        bank (``time.bank_ms``) is left alone: every decision keeps within its own move time."""
        started = time.perf_counter()
        message = request.observation
        game = self.game(request.variant, message.players, options_from_pb(request.options))
        observation = observation_from_pb(message, game)
        return self.choose(observation, move_ms=request.time.move_ms or DEFAULT_MOVE_MS, started=started)

    def reply_request(self, request: Any) -> bot_pb2.ActReply:
        """:meth:`choose_request`'s choice as a whole reply, with the search's belief about the hidden tiles (the
        share of its guesses that put each tile at each place) when it made a guess."""
        index = self.choose_request(request)
        reply = bot_pb2.ActReply(index=index)
        belief = self.last.belief if self.last is not None else None
        if belief is not None:
            reply.belief.CopyFrom(belief_pb(belief))
        return reply
