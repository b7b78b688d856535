"""The language-neutral protocol (``proto/dominoes/v1``) in Python: generated messages and their conversions.

The generated modules live in ``arena/_generated`` (written by ``scripts/setup.sh``, never edited). protoc's Python
output imports its siblings by their proto package path (``from dominoes.v1 import types_pb2``), so that folder is
put on ``sys.path`` here, once, before importing them.
"""

from __future__ import annotations

import sys
from pathlib import Path

_GENERATED = Path(__file__).resolve().parent.parent / "_generated"
if not (_GENERATED / "dominoes" / "v1" / "bot_pb2.py").exists():
    raise ImportError(
        "the protocol code is not generated yet: run `bash scripts/setup.sh` (or `python -m arena.codegen`)"
    )
if str(_GENERATED) not in sys.path:
    sys.path.insert(0, str(_GENERATED))

from dominoes.v1 import arena_pb2 as arena_pb2  # noqa: E402
from dominoes.v1 import arena_pb2_grpc as arena_pb2_grpc  # noqa: E402
from dominoes.v1 import bot_pb2 as bot_pb2  # noqa: E402
from dominoes.v1 import bot_pb2_grpc as bot_pb2_grpc  # noqa: E402
from dominoes.v1 import dial_in_pb2 as dial_in_pb2  # noqa: E402
from dominoes.v1 import dial_in_pb2_grpc as dial_in_pb2_grpc  # noqa: E402
from dominoes.v1 import league_pb2 as league_pb2  # noqa: E402
from dominoes.v1 import league_pb2_grpc as league_pb2_grpc  # noqa: E402
from dominoes.v1 import tournament_pb2 as tournament_pb2  # noqa: E402
from dominoes.v1 import types_pb2 as types_pb2  # noqa: E402

PROTOCOL_VERSION = 1
LISTEN_ENV = "DOMINOES_BOT_LISTEN"
"""The environment variable that tells a bot started by the arena where to listen."""
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Message size limit, set explicitly at both ends (a Mexican Train observation with 190 tiles stays far below)."""
