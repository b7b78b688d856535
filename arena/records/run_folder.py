"""The layout of a run folder, in one place: every file's name, and what the files say about the run.

A run folder (``arena run --out``, and each tournament's folder on a server) holds: ``tournament.toml`` (the file as
run), ``entrants.json`` (the entrants and the schedule's order), ``commitment.txt`` (published before the first
game), ``seed.secret`` (until the end) then ``seed.json`` (revealed), ``bots.json`` (handshakes), ``games.jsonl.zst``
(one compressed record per game; ``games.jsonl``, one JSON line per game, in folders of earlier arenas, see
:attr:`RunFolder.records`), ``standings.json``, ``arena.log`` (structlog JSON events) and ``logs/`` (each bot's output).

The master seed and its commitment: commitment = SHA-256 of ``"dominoes/v1/commit/<nonce>/<seed>"`` in hex, where
the nonce is 32 random hex digits, so even a short seed cannot be guessed from its commitment before it is revealed.
``seed.secret`` keeps both (owner-only, for resume) until the end, when ``seed.json`` reveals them.

The runner writes these files, replay verifies them, export and the web decide from them whether seeds may be shown,
the server resumes from them: each asks this module (:class:`RunFolder`) rather than spelling a file name, so the
layout is defined once. It lives under ``records/`` because reading records needs it and ``records/`` never imports
``tournament/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPEC_COPY = "tournament.toml"
ENTRANTS = "entrants.json"
COMMITMENT = "commitment.txt"
SECRET = "seed.secret"
REVEALED = "seed.json"
BOTS = "bots.json"
RECORDS = "games.jsonl"
"""The readable record file: one JSON line per game (what every run wrote before the compact file)."""
COMPACT_RECORDS = "games.jsonl.zst"
"""The compact record file (:mod:`.compact`): what new runs write."""
FORMAT_VARIABLE = "ARENA_RECORDS"
"""Set to ``jsonl``, new runs write the readable ``games.jsonl`` instead (tools that tail the file); unset or any
other value, the compact file."""
STANDINGS = "standings.json"
LOG = "arena.log"
BOT_LOGS = "logs"


@dataclass(frozen=True)
class SeedCommitment:
    """A master seed and the nonce of its commitment."""

    seed: str
    nonce: str

    @property
    def commitment(self) -> str:
        return commitment_of(self.seed, self.nonce)


def commitment_of(seed: str, nonce: str) -> str:
    """The published commitment to a seed: SHA-256 of ``dominoes/v1/commit/<nonce>/<seed>``, in hex."""
    return hashlib.sha256(f"dominoes/v1/commit/{nonce}/{seed}".encode()).hexdigest()


def new_seed(given: str | None) -> SeedCommitment:
    """The seed a tournament file gives (or 64 random bits), with a fresh nonce."""
    return SeedCommitment(given if given is not None else str(secrets.randbits(64)), secrets.token_hex(16))


@dataclass(frozen=True)
class RunFolder:
    """One run folder: where each of its files is, and what they say (finished, holds games, the seed)."""

    path: Path

    # --- where each file is ---

    @property
    def spec_copy(self) -> Path:
        return self.path / SPEC_COPY

    @property
    def entrants(self) -> Path:
        return self.path / ENTRANTS

    @property
    def commitment_file(self) -> Path:
        return self.path / COMMITMENT

    @property
    def secret_file(self) -> Path:
        return self.path / SECRET

    @property
    def revealed_file(self) -> Path:
        return self.path / REVEALED

    @property
    def bots(self) -> Path:
        return self.path / BOTS

    @property
    def records(self) -> Path:
        """The record file: the one the folder has (``games.jsonl`` first, so a run of an earlier arena keeps
        appending to its own file on resume), else the one a new run writes (:data:`FORMAT_VARIABLE`)."""
        for name in (RECORDS, COMPACT_RECORDS):
            if (self.path / name).exists():
                return self.path / name
        return self.path / (RECORDS if os.environ.get(FORMAT_VARIABLE) == "jsonl" else COMPACT_RECORDS)

    @property
    def standings(self) -> Path:
        return self.path / STANDINGS

    @property
    def log(self) -> Path:
        return self.path / LOG

    @property
    def bot_logs(self) -> Path:
        return self.path / BOT_LOGS

    # --- what the files say ---

    def keeps_secret(self) -> bool:
        """The master seed is still secret here (a run under way, or stopped before its end): resumable."""
        return self.secret_file.exists()

    def is_finished(self) -> bool:
        """The folder holds a tournament that ended (its seed revealed, its secret gone)."""
        return self.revealed_file.exists() and not self.secret_file.exists()

    def seeds_shown(self) -> bool:
        """Whether the games' seeds may be shown: not while the master seed is secret (``seed.secret`` and no
        ``seed.json``); a folder without either (a record file on its own) shows what it holds."""
        return self.revealed_file.exists() or not self.secret_file.exists()

    def holds_games(self) -> bool:
        """The record file holds at least one byte: a run started here."""
        return self.records.exists() and self.records.stat().st_size > 0

    # --- the seed and its commitment ---

    def publish(self, seed: SeedCommitment) -> None:
        """Keep the secret (owner-only) and publish the commitment."""
        fd = os.open(self.secret_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"seed": seed.seed, "nonce": seed.nonce}, f)
        self.commitment_file.write_text(
            f"{seed.commitment}\n# sha256 of 'dominoes/v1/commit/<nonce>/<seed>'; both are revealed in {REVEALED}"
            " when the tournament ends\n")

    def load_secret(self) -> SeedCommitment:
        """The secret seed kept for resume (OSError, ValueError or KeyError when it cannot be read)."""
        data = json.loads(self.secret_file.read_text())
        return SeedCommitment(str(data["seed"]), str(data["nonce"]))

    def reveal(self, seed: SeedCommitment) -> None:
        """Write ``seed.json`` (the secret is removed by the caller once this is safe on disk)."""
        self.revealed_file.write_text(json.dumps(
            {"seed": seed.seed, "nonce": seed.nonce, "commitment": seed.commitment}, indent=2) + "\n")

    def revealed(self) -> Any:
        """What ``seed.json`` holds (a dict with seed, nonce and commitment when it is sound), None when there is
        none; OSError, ValueError or RecursionError when it cannot be read."""
        return json.loads(self.revealed_file.read_text()) if self.revealed_file.exists() else None

    def revealed_seed(self) -> str:
        """The revealed master seed, "" when there is none or it cannot be read."""
        try:
            return str(self.revealed()["seed"])
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return ""

    def commitment(self) -> str | None:
        """The published commitment (the first word of ``commitment.txt``), None when there is none; OSError or
        ValueError when it cannot be read."""
        if not self.commitment_file.exists():
            return None
        words = self.commitment_file.read_text().split()
        return words[0] if words else None

