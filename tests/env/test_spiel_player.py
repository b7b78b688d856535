"""OpenSpiel bots seated in the arena (arena/env/spiel_player.py): IS-MCTS as builtin:ismcts plays legal moves in a
real tournament run, in-process; the kit bot answers real requests; a missing extra is one line."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from arena.env.spiel_player import SpielPlayer, ismcts_bot, ismcts_player
from arena.errors import ArenaError
from arena.players.builtin import builtin_player
from arena.play import play_once
from arena.records.replay import verify_run
from arena.referee import TimeControl
from arena.records.run_folder import RunFolder
from arena.records.store import iter_records
from arena.rules import new_game
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from support.paths import ROOT
from support.random_matches import CONFIGS, IDS, random_states

TOURNAMENT = '''name = "ismcts"
variant = "block"
games = 2
seed = "ismcts"
[options]
target = 1
[[bots]]
name = "ismcts"
command = "builtin:ismcts"
[[bots]]
name = "random"
command = "builtin:random"
'''


@pytest.mark.fast
async def test_ismcts_plays_a_tournament_in_process(tmp_path: Path) -> None:
    spec = spec_from_dict(tomllib.loads(TOURNAMENT))
    summary = await run_tournament(spec, TOURNAMENT, tmp_path / "run")
    assert summary.played_now == 4  # two deals, each with both seatings
    records = list(iter_records(RunFolder(tmp_path / "run").records))
    assert len(records) == 4
    for record in records:
        assert not record.get("faults"), record["faults"]
        assert "ismcts" in record["seats"]
    verify_run(tmp_path / "run")  # every recorded move replays as a legal one


async def test_the_kit_bot_plays_ismcts_over_grpc(tmp_path: Path) -> None:
    bot = f"{sys.executable} {ROOT / 'bots/python/openspiel_bot.py'} --simulations 8"
    game = new_game("all_fives", 2, {"target": 20})
    record = await play_once(game, [bot, "builtin:greedy"], seed="kit", time_control=TimeControl(move_ms=5000),
                             log_dir=tmp_path, startup_s=30)
    assert record.faults == [], [str(f) for f in record.faults]
    assert record.result is not None and record.seats[0] == "py-openspiel-ismcts"


@pytest.mark.fast
@pytest.mark.parametrize("variant, players, options", CONFIGS[:6] + CONFIGS[7:8], ids=IDS[:6] + IDS[7:8])
def test_ismcts_answers_a_legal_action_from_any_seats_view(variant: str, players: int, options: dict) -> None:
    player = SpielPlayer(lambda game, seat, rng: ismcts_bot(game, seat, rng, simulations=4), seed=1)
    asked = 0
    for game, state in random_states(variant, players, options, seed=2):
        if len(state.legal_actions()) < 2 or asked >= 3 or len(state.history) < 4:
            continue
        observation = state.observation(state.turn)
        assert player(observation) in observation.legal_actions
        asked += 1
    assert asked == 3


@pytest.mark.fast
def test_the_same_seed_and_view_give_the_same_answer() -> None:
    game = new_game("draw", 2)
    state = game.new_match(3).round
    observation = state.observation(state.turn)
    answers = {ismcts_player(seed="s", simulations=16)(observation) for _ in range(3)}
    assert len(answers) == 1


@pytest.mark.fast
def test_ismcts_without_the_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith(("arena.env.openspiel", "arena.env.spiel_player"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    with pytest.raises(ArenaError, match=r"^pyspiel is not installed: pip install 'dominoes-arena\[openspiel\]' "
                                         r"\(or ARENA_WITH_RESEARCH=1 bash scripts/setup.sh\)$"):
        builtin_player("ismcts")
