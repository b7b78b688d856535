"""The tutorial docs/tutorials/study-games.md, followed as a reader follows it: every shell block it marks is run, in
its order, by one bash in a fresh folder (tests/support/tutorial.py: the convention, the runner). A tournament with
a fixed seed, verified, exported to Parquet, studied in DuckDB, drawn with matplotlib.

The tournament is deterministic: the built-in players draw from each game's seed, and the search bot stops at its
playout cap long before its deadline. So every output the page shows is the output, line for line, where it has no
time in it; where it has (the standings' think column, the think-time table), the counts are compared with the page's
and the times are checked for their ranges. The figure must be a whole PNG of the size the page says.
"""

from __future__ import annotations

import importlib.util
import re
import struct
import zlib
from pathlib import Path

from support.tutorial import Tutorial, lines_missing, unavailable

from arena.sandbox import host

TUTORIAL = Tutorial("study-games")
SCRIPT_S = 300
"""A bound for the whole page; it takes 15 to 35 seconds (the tournament most of it)."""
SHOWN_AS_IS = ("arena replay runs/study --verify", "arena export runs/study", "CREATE OR REPLACE VIEW",
               "FROM seated GROUP BY bot, seat", "WITH deal_sets AS", "AS leader_won", 'print("wrote study.png")')
"""The blocks (by a piece of their text) whose output has no time in it: the page shows it as it is."""
FIGURE = (1000, 400)
"""The figure's size in pixels: figsize=(10, 4) at dpi=100."""


def rows(text: str) -> list[list[str]]:
    """The body rows of the tables in a text, as their cells: rich and DuckDB both draw a table's rows between │ bars,
    and a line (├ or ┡ at its left) between the heading rows (names, and DuckDB's types) and the body."""
    found, body = [], False
    for line in text.splitlines():
        line = line.strip()
        if line[:1] in ("┌", "┏"):
            body = False
        elif line[:1] in ("├", "┡"):
            body = True
        elif body and line.startswith("│") and line.endswith("│"):
            found.append([cell.strip() for cell in line[1:-1].split("│")])
    return found


def png_size(path: Path) -> tuple[int, int]:
    """The width and height of a PNG file, after checking that it is one, whole: the signature, every chunk's CRC,
    the image data inflating to the size its header says, and the end chunk last."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    at, chunks, image = 8, [], b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"chunk {kind!r}: bad CRC"
        chunks.append(kind)
        image += body if kind == b"IDAT" else b""
        at += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks, chunks
    header = data[16:29]
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    assert len(zlib.decompress(image)) == height * (1 + width * channels * depth // 8)
    return width, height


def test_the_setup_block_is_what_this_test_does() -> None:
    setup = TUTORIAL.setup()
    assert "ARENA_WITH_STUDY=1 bash scripts/setup.sh" in setup and 'PATH="$PWD/.venv/bin:$PATH"' in setup
    # the test command (scripts/test.sh) sets up with the study extra, as the page's reader does
    assert "ARENA_WITH_STUDY=1" in (Path(__file__).parents[2] / "scripts" / "test.sh").read_text()


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    for library in ("duckdb", "matplotlib"):
        if importlib.util.find_spec(library) is None:
            unavailable(f"{library} is not installed: the study extra (ARENA_WITH_STUDY=1 bash scripts/setup.sh)")
    sandbox_problem = host().bwrap_problem or host().filter_problem
    if sandbox_problem is not None:
        unavailable(f"the tournament's search bot runs in the sandbox: {sandbox_problem}")
    assert len(TUTORIAL.blocks()) == 9, "the page's blocks were not found: see tests/support/tutorial.py"
    ran = TUTORIAL.run(tmp_path, timeout=SCRIPT_S)
    ran.check()
    print(f"the tutorial took {ran.seconds:.1f} s")

    for key in SHOWN_AS_IS:
        shown = TUTORIAL.excerpt(key)
        assert shown.strip(), f"the page shows no output for the block with {key!r}"
        assert lines_missing(shown, ran.of(key)) == [], ran.of(key)

    # the tournament: its standings as the page shows them but for the think time (the 11th column), then its last
    # lines; rows() would not see the page's excerpt's rows without their heading, so they are read as lines
    played, shown = ran.of("arena run study.toml"), TUTORIAL.excerpt("arena run study.toml")
    standings = [row[:10] + row[11:] for row in rows(played) if len(row) == 12]
    shown_rows = [[cell.strip() for cell in line[1:-1].split("│")] for line in shown.splitlines() if line[:1] == "│"]
    assert len(shown_rows) == 3 and [row[:10] + row[11:] for row in shown_rows] == standings, played
    assert [row[9] for row in standings] == ["0", "0", "0"], "faults"
    assert lines_missing("\n".join(line for line in shown.splitlines() if not line.startswith("│")), played) == []

    # the numbers the page's text tells, read from the output
    summary = rows(ran.of("CREATE OR REPLACE VIEW"))[-1]
    assert summary == ["48", "24", "176", "5285"], summary
    assert "verified 48 games, 5285 moves in runs/study: OK" in ran.of("arena replay runs/study --verify")
    by_seat = {(row[0], row[1]): row[2:] for row in rows(ran.of("FROM seated GROUP BY bot, seat"))}
    assert {games for games, _, _ in by_seat.values()} == {"16"} and len(by_seat) == 6, by_seat
    deal_sets = ran.of("WITH deal_sets AS")
    assert ["1/3", "21", "[search, random]", "[37, 72]", "random"] in rows(deal_sets), deal_sets
    assert "Result: seat 1 (random) wins · 5 rounds" in deal_sets

    # think times: the counts are the page's; the times only have to be this machine's, in their ranges
    timed, shown = rows(ran.of("AS median_ms")), rows(TUTORIAL.excerpt("AS median_ms"))
    assert [row[:3] for row in timed] == [row[:3] for row in shown] and len(shown) == 3, timed
    median = {row[0]: float(row[3]) for row in timed}
    assert median["greedy"] < 1 and median["random"] < 1, median  # in process: microseconds
    assert median["search"] > max(median["greedy"], median["random"]), median
    assert 1 < median["search"] < 1000, median  # 32 playouts and a gRPC round trip

    figure = tmp_path / "study.png"
    assert png_size(figure) == FIGURE
    assert 10_000 < figure.stat().st_size < 1_000_000, figure.stat().st_size  # drawn on, not blank
    assert re.search(r"\b1000 × 400\b", TUTORIAL.page.read_text()), "the page says the figure's size"
