"""The stdio protocol with real processes: JSON lines on stdin and stdout, the same deadlines and fault kinds as
gRPC, the kit bot passing check-bot, and a late answer never taken for the next one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.players.faults import BotFailure, FaultKind
from arena.players.process import BotProcess, BotSpec
from arena.referee import TimeControl, play_match
from arena.rules import VARIANTS, new_game
from support.paths import ROOT

BAD = str(ROOT / "tests" / "bots" / "stdio_bad_bot.py")
KIT = str(ROOT / "bots" / "stdio" / "bot.py")


def stdio_bot(mode: str) -> BotSpec:
    return BotSpec(name=f"stdio-{mode}", command=(sys.executable, BAD, "--mode", mode), protocol="stdio")


async def match_against_random(spec: BotSpec, tmp_path: Path, move_ms: int = 2000):
    process = BotProcess(spec, tmp_path, startup_s=15)
    try:
        bot = await process.ensure_running()
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=5,
                                  match_id=f"stdio-{spec.name}", time_control=TimeControl(move_ms=move_ms))
    finally:
        await process.stop()
    return record


@pytest.mark.parametrize(("mode", "kind", "text"), [
    ("garbage", FaultKind.MALFORMED_REPLY, "the line is not an ActReply: not JSON"),
    ("not_reply", FaultKind.MALFORMED_REPLY, 'has no field named "move"'),
    ("illegal_index", FaultKind.ILLEGAL_ACTION, "chose index 999 of"),
    ("hang", FaultKind.TIMEOUT, "no reply within 550 ms"),
    ("exit_mid", FaultKind.CRASHED, "its stdout ended (the bot exited)"),
])
async def test_a_misbehaving_bot_is_the_right_fault(mode: str, kind: FaultKind, text: str, tmp_path: Path) -> None:
    record = await match_against_random(stdio_bot(mode), tmp_path, move_ms=300 if mode == "hang" else 2000)
    assert [(f.kind, f.seat) for f in record.faults] == [(kind, 0)]
    assert text in record.faults[0].message
    assert record.result is not None and record.result.winner == 1


@pytest.mark.parametrize(("mode", "kind", "text"), [
    ("never_start", FaultKind.START_FAILED, "exited with status 4 before the handshake"),
    ("bad_version", FaultKind.HANDSHAKE_FAILED, "expected protocol version 1, got 99"),
])
async def test_a_bot_that_does_not_start_properly(mode: str, kind: FaultKind, text: str, tmp_path: Path) -> None:
    process = BotProcess(stdio_bot(mode), tmp_path, startup_s=10)
    with pytest.raises(BotFailure) as failure:
        await process.ensure_running()
    await process.stop()
    assert failure.value.kind is kind and text in str(failure.value)


async def test_a_late_answer_is_never_taken_for_the_next(tmp_path: Path) -> None:
    """The 2nd decision times out; its answer comes later and must not answer the 3rd: the comments show which
    answer each move got."""
    process = BotProcess(stdio_bot("late_once"), tmp_path, startup_s=15)
    try:
        bot = await process.ensure_running()
        first = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=5, match_id="a",
                                 time_control=TimeControl(move_ms=300))
        second = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=6, match_id="b",
                                  time_control=TimeControl(move_ms=2000))
    finally:
        await process.stop()
    assert [f.kind for f in first.faults] == [FaultKind.TIMEOUT]
    assert second.faults == []
    comments = [m.comment for r in second.rounds for m in r.moves if m.seat == 0 and not m.forced]
    assert comments[0] == "decision 3" and "late" not in comments


async def test_an_answer_given_up_on_is_thrown_away(tmp_path: Path) -> None:
    """The 2nd decision is cancelled by its caller once it is written (a relay's Cancel from the server, a game
    cancelled), while the bot still thinks; its answer comes later and must not answer the 3rd."""
    import trio
    import trio.testing

    from arena.examples import example_request
    from arena.players.relay import decision_request

    request = decision_request(example_request("draw"), {})
    process = BotProcess(stdio_bot("late_once"), tmp_path, startup_s=15)
    try:
        bot = await process.ensure_running()
        first, _ = await bot.reply(request, 60)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.reply, request, 60)
            await trio.testing.wait_all_tasks_blocked()  # written, and waiting for the bot's line
            nursery.cancel_scope.cancel()
        third, _ = await bot.reply(request, 60)
    finally:
        await process.stop()
    assert (first.comment, third.comment) == ("decision 1", "decision 3")


def test_the_kit_passes_check_bot_sandboxed() -> None:
    out = subprocess.run([sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--variants",
                          "draw,mexican_train", "--protocol", "stdio", "--", sys.executable, KIT, "--policy",
                          "heaviest"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "handshake: stdio-heaviest 1.0.0" in out.stdout and "sandbox bubblewrap" in out.stdout


PERL_BOT = str(ROOT / "tests" / "bots" / "perl_stdio_bot.pl")
AWK_BOT = ('/^\\{"hello"/ { print "{\\"name\\":\\"awk-first\\",\\"protocolVersion\\":1}"; fflush() }\n'
           '/^\\{"act"/ { print "{\\"index\\":0}"; fflush() }')
"""The awk bot of docs/how-to/bot-without-a-kit.md, as the shell passes it to awk."""


@pytest.mark.parametrize("command", [["perl", PERL_BOT], ["awk", "-W", "interactive", AWK_BOT]], ids=["perl", "awk"])
def test_a_bot_without_a_kit_passes_check_bot_sandboxed(command: list[str]) -> None:
    """The bots of docs/how-to/bot-without-a-kit.md: a language with no kit, over the stdio protocol, in every
    variant, in the sandbox (which shows it the system's interpreters and its own folder)."""
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    out = subprocess.run([sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--protocol", "stdio", "--",
                          *command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    name = "perl-heaviest 1.0.0 by me" if command[0] == "perl" else "awk-first"
    assert f"handshake: {name}" in out.stdout and "sandbox bubblewrap" in out.stdout
    assert out.stdout.count("PASS") == len(VARIANTS) + 1 and "FAIL" not in out.stdout


@pytest.mark.fast
def test_the_example_requests_are_current_and_parse() -> None:
    """proto/examples/ holds what the arena writes now (regenerate: python -m arena.examples)."""
    from google.protobuf import json_format

    from arena.protocol import bot_pb2
    from arena.examples import FOLDER, example_json

    for variant in VARIANTS:
        path = FOLDER / f"{variant}.act.json"
        assert path.read_text() == example_json(variant), f"{path} is stale: python -m arena.examples"
        request = json_format.Parse(path.read_text(), bot_pb2.ActRequest())
        assert request.variant == variant and len(request.observation.legal_actions) >= 3
    assert sorted(p.name for p in FOLDER.glob("*.json")) == sorted(f"{v}.act.json" for v in VARIANTS)


@pytest.mark.fast
def test_the_kit_policy_works_offline() -> None:
    """What a bot author does with the examples: call the policy on each without the arena."""
    import importlib.util
    import json

    from arena.examples import FOLDER

    spec = importlib.util.spec_from_file_location("stdio_kit", KIT)
    kit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kit)  # type: ignore[union-attr]
    for path in sorted(FOLDER.glob("*.act.json")):
        request = json.loads(path.read_text())
        index = kit.choose(request, "heaviest")
        legal = request["observation"]["legalActions"]
        placements = [a for a in legal if a["kind"] == "ACTION_KIND_PLACE"]
        if placements:
            best = max(a["tile"]["low"] + a["tile"]["high"] for a in placements)
            assert legal[index]["tile"]["low"] + legal[index]["tile"]["high"] == best
