"""The master seed and its commitment: published before the first game, revealed when the tournament ends.

Commitment = SHA-256 of ``"dominoes/v1/commit/<nonce>/<seed>"`` in hex, where the nonce is 32 random hex digits,
so even a short seed cannot be guessed from its commitment before it is revealed. ``seed.secret`` in the run folder
keeps both (for resume) until the end, when ``seed.json`` reveals them.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

SECRET_FILE = "seed.secret"
REVEALED_FILE = "seed.json"
COMMITMENT_FILE = "commitment.txt"


@dataclass(frozen=True)
class SeedCommitment:
    seed: str
    nonce: str

    @property
    def commitment(self) -> str:
        return commitment_of(self.seed, self.nonce)


def commitment_of(seed: str, nonce: str) -> str:
    return hashlib.sha256(f"dominoes/v1/commit/{nonce}/{seed}".encode()).hexdigest()


def new_seed(given: str | None) -> SeedCommitment:
    return SeedCommitment(given if given is not None else str(secrets.randbits(64)), secrets.token_hex(16))


def publish(run: Path, seed: SeedCommitment) -> None:
    """Keep the secret (owner-only) and publish the commitment."""
    secret = run / SECRET_FILE
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"seed": seed.seed, "nonce": seed.nonce}, f)
    (run / COMMITMENT_FILE).write_text(
        f"{seed.commitment}\n# sha256 of 'dominoes/v1/commit/<nonce>/<seed>'; both are revealed in {REVEALED_FILE}"
        " when the tournament ends\n")


def load_secret(run: Path) -> SeedCommitment:
    data = json.loads((run / SECRET_FILE).read_text())
    return SeedCommitment(str(data["seed"]), str(data["nonce"]))


def reveal(run: Path, seed: SeedCommitment) -> None:
    (run / REVEALED_FILE).write_text(json.dumps(
        {"seed": seed.seed, "nonce": seed.nonce, "commitment": seed.commitment}, indent=2) + "\n")
