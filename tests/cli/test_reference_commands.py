"""``arena reference`` and ``arena gauntlet --reference`` as a user runs them: a small scale made by a real round
robin, then the Python kit's greedy bot (a real sandboxed process) placed on it where the built-in greedy is."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from arena.records.run_folder import RunFolder

from support.cli import arena
from support.paths import ROOT


def test_a_scale_is_made_extended_and_a_bot_that_plays_as_greedy_is_placed_on_greedys_rating(tmp_path: Path) -> None:
    scale_file = tmp_path / "scale.json"
    made = arena("reference", "draw", "--kinds", "random,mixed,greedy", "--deal-sets", "3", "--seed", "t1",
                 "--out", str(tmp_path / "scale-run"), "--write", str(scale_file))
    assert made.returncode == 0, made.stderr
    scale = json.loads(scale_file.read_text())
    assert [(p["name"], p["elo"], p["deal_sets"]) for p in scale["points"]] == [
        ("random", 0.0, 6), ("mixed", 297.9, 6), ("greedy", 595.8, 6)]
    assert scale["seed"] == "t1"
    assert scale["command"].endswith("reference draw --players 2 --deal-sets 3 --kinds random,mixed,greedy --seed t1")
    assert re.search(r"^ +greedy +\+596 +\[-26, \+1217\] +6$", made.stdout, re.MULTILINE)

    extended = arena("reference", "draw", "--add", "search10", "--base", str(tmp_path / "scale-run"), "--deal-sets", "2",
                     "--seed", "t3", "--write", str(tmp_path / "extended.json"))
    assert extended.returncode == 0, extended.stderr
    both = json.loads((tmp_path / "extended.json").read_text())
    assert [(p["name"], p["elo"], p["deal_sets"]) for p in both["points"]] == [
        ("random", 0.0, 8), ("mixed", 290.1, 8), ("greedy", 572.6, 8), ("search10", 1110.9, 6)]
    assert ("reference draw --players 2 --deal-sets 3 --kinds random,mixed,greedy --seed t1 --out "
            f"{tmp_path / 'scale-run'}\n") in both["command"]
    assert both["command"].endswith(f"--deal-sets 2 --add search10 --base {tmp_path / 'scale-run'} --seed t3")

    placed = arena("gauntlet", "--reference", "draw", "--scale", str(scale_file), "--deal-sets", "3", "--seed", "t2",
                   "--out", str(tmp_path / "gauntlet"), "--", "python", str(ROOT / "bots/python/greedy_bot.py"))
    assert placed.returncode == 0, placed.stderr
    assert ("greedy_bot on the draw reference scale: +589 Elo [+287, +890] above random, from 9 deal sets; "
            "not told apart from mixed, greedy") in placed.stdout


def test_a_gauntlet_without_a_published_scale_or_a_command_is_refused_in_a_line(tmp_path: Path) -> None:
    refused = arena("gauntlet", "--reference", "draw", "--players", "4", "--out", str(tmp_path / "g"), "--",
                    "python", "bot.py")
    assert refused.returncode == 2
    assert "error: no reference scale for draw with 4 players is published" in refused.stderr
    assert "Traceback" not in refused.stderr
    missing = arena("gauntlet", "--reference", "draw", "--scale", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "give the bot's command after --" in missing.stderr
    assert not (tmp_path / "g").exists()


def test_a_scale_without_random_is_refused(tmp_path: Path) -> None:
    refused = arena("reference", "draw", "--kinds", "greedy,mixed", "--out", str(tmp_path / "r"))
    assert refused.returncode == 2 and "--kinds must include random" in refused.stderr


def test_a_scale_made_with_an_option_plays_and_keeps_it_and_a_bad_option_is_one_line(tmp_path: Path) -> None:
    run, scale_file = tmp_path / "run", tmp_path / "scale.json"
    made = arena("reference", "mexican_train", "--players", "2", "--option", "rounds=1", "--kinds", "random,greedy",
                 "--deal-sets", "1", "--seed", "o1", "--out", str(run), "--write", str(scale_file))
    assert made.returncode == 0, made.stderr
    scale = json.loads(scale_file.read_text())
    assert scale["options"] == {"rounds": 1}
    assert scale["command"].endswith("reference mexican_train --players 2 --option rounds=1 --deal-sets 1 "
                                     "--kinds random,greedy --seed o1")
    assert tomllib.loads(RunFolder(run).spec_copy.read_text())["options"] == {"rounds": 1}

    refused = arena("reference", "draw", "--option", "colour=red", "--out", str(tmp_path / "r"))
    assert refused.returncode == 2 and refused.stderr.startswith("error: ") and "colour" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "r").exists()
