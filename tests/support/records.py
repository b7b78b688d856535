"""Records and run folders made by real games between in-process players, and ``arena replay --verify`` run
in-process (serial or parallel) with its output split into mismatches and summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import trio

from arena import cli
from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.records import replay
from arena.records.format import to_json_line
from arena.records.jsonform import game_record_dict
from arena.records.run_folder import commitment_of
from arena.referee import play_match
from arena.rules import new_game

from support.players import fails_after as failing_player


async def recorded_game(variant: str, seed: str, index: int = 0, players: int | None = None):
    game = new_game(variant, players)
    record = await play_match(game, [LocalPlayer(RandomPlayer(f"{seed}/{s}")) for s in range(game.players)],
                              seed=seed, match_id=f"m{index}")
    return game, record


async def write_run(folder: Path, variant: str = "draw", games: int = 6, master: str = "master") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nonce = "00ff"
    (folder / "seed.json").write_text(json.dumps({"seed": master, "nonce": nonce,
                                                  "commitment": commitment_of(master, nonce)}))
    (folder / "commitment.txt").write_text(commitment_of(master, nonce) + "\n")
    with open(folder / "games.jsonl", "w") as f:
        for i in range(games):
            game, record = await recorded_game(variant, f"{master}/0/{i}", i)
            line = to_json_line(game_record_dict(record, index=i, tournament="t", deal_key=f"0/{i}", rotation=0,
                                                 side_of=game.side_of))
            f.write(line + "\n")
    return folder


MASTER = "hardening"


def played(variant: str, seed: str, index: int, players: int | None = None, options: dict | None = None,
           fails_after: int | None = None) -> dict[str, Any]:
    """One game between random players (seat 1 faulting at its decision ``fails_after``), as the runner records
    it."""
    game = new_game(variant, players, options)
    seats: list[LocalPlayer] = [LocalPlayer(RandomPlayer(f"{seed}/{s}"), name=f"bot{s}") for s in range(game.players)]
    if fails_after is not None:
        seats[1] = failing_player(f"{seed}/1", fails_after)
    record = trio.run(lambda: play_match(game, seats, seed=seed, match_id=f"m{index}"))
    return game_record_dict(record, index=index, tournament="t", deal_key=seed.split("/", 1)[1], rotation=0,
                            side_of=game.side_of)


def run_of(folder: Path, records: list[dict], lines: dict[int, str] | None = None, revealed: bool = True) -> Path:
    """A run folder holding ``records``, one a line, line N (from 1) replaced by ``lines[N]`` when given."""
    folder.mkdir(parents=True, exist_ok=True)
    if revealed:
        nonce = "00ff"
        (folder / "seed.json").write_text(json.dumps({"seed": MASTER, "nonce": nonce,
                                                      "commitment": commitment_of(MASTER, nonce)}))
        (folder / "commitment.txt").write_text(commitment_of(MASTER, nonce) + "\n")
    text = [to_json_line(r) for r in records]
    for number, line in (lines or {}).items():
        text[number - 1] = line
    (folder / "games.jsonl").write_text("".join(line + "\n" for line in text), encoding="utf-8")
    return folder


_GAMES: dict[int, dict] = {}


def draw_game(index: int) -> dict:
    """Game ``index`` of a Draw run with the master seed ``MASTER`` (made once per test session)."""
    if index not in _GAMES:
        _GAMES[index] = played("draw", f"{MASTER}/0/{index}", index, options={"target": 30})
    return json.loads(json.dumps(_GAMES[index]))


def won_by(winner: str, loser: str, deal_set: str, index: int) -> dict:
    """A two-player Block game ``index`` of deal set ``deal_set`` (its ``dealKey``) in which the entrant named
    ``winner`` beat ``loser``: a real game's record, its seats named after the fact (the winning seat ``winner``)."""
    for attempt in range(100):
        record = played("block", f"{MASTER}/{deal_set}/{index}/{attempt}", index, options={"target": 1})
        if "winner" in record["result"]:
            break
    else:
        raise AssertionError("no game with a winner")
    record["dealKey"] = deal_set
    record["seats"] = [winner, loser] if record["result"]["winner"] == 0 else [loser, winner]
    return record


def verify_cli(run: Path, jobs: int, capsys, monkeypatch) -> tuple[int, list[str], str, bool]:
    """``arena replay RUN --verify --jobs N``: exit status, the MISMATCH lines, the summary (its lines joined: the
    console wraps it), whether it went parallel. With two jobs the file is verified in parallel however small, in
    chunks of two games."""
    went_parallel = []
    parallel = replay._verify_parallel
    monkeypatch.setattr(replay, "_verify_parallel", lambda *a: went_parallel.append(True) or parallel(*a))
    if jobs > 1:
        monkeypatch.setattr(replay, "PARALLEL_FROM", 0)
        monkeypatch.setattr(replay, "CHUNK", 2)
    capsys.readouterr()
    status = cli.main(["replay", str(run), "--verify", "--jobs", str(jobs)])
    out = capsys.readouterr().out.splitlines()
    mismatches = [line for line in out if line.startswith("MISMATCH ")]
    summary = " ".join(line.strip() for line in out if not line.startswith("MISMATCH "))
    return status, mismatches, summary, bool(went_parallel)


def changed(change: Callable[[dict], Any]) -> Callable[[dict], str]:
    def make(record: dict) -> str:
        change(record)
        return to_json_line(record)
    return make


def compact_copy(folder: Path) -> Path:
    """Turn the run folder's ``games.jsonl`` into the compact ``games.jsonl.zst`` (each line's record, in order);
    returns the compact file. For comparing what the two formats give every reader."""
    from arena.records.store import RecordWriter

    lines = (folder / "games.jsonl").read_text(encoding="utf-8").splitlines()
    target = folder / "games.jsonl.zst"
    writer = RecordWriter(target)
    for line in lines:
        writer.write(json.loads(line))
    writer.close()
    (folder / "games.jsonl").unlink()
    return target
