"""The arena as a long-lived gRPC server (``proto/dominoes/v1/arena.proto``) and its command-line clients.

- :mod:`.core`: :class:`~.core.Arena` (tournaments on trio, events); :mod:`.service`:
  :class:`~.service.ArenaServicer` (the grpc.aio handlers, on the loop trio is the guest of);
- :mod:`.events`: the watchers' bounded buffers and the event messages;
- :mod:`.tournaments`: a tournament's folder, state on disk and record index;
- :mod:`.submission`: the TournamentSpec message and the tournament file, and the checks before accepting one;
- :mod:`.registry`: the operator's registry of bots (``arena serve --bots FILE``);
- :mod:`.admission`: what a server runs for a submission (registered bots by name, commands only with
  ``--allow-commands``, always sandboxed, limits only lowered, names fit for a terminal, caps);
- :mod:`.auth`: loopback by default, bearer token, TLS;
- :mod:`.serve`: ``arena serve`` (trio main loop, signals, clean stop);
- :mod:`.client` and :mod:`.cli`: ``arena submit``, ``status``, ``watch``, ``games``, ``fetch``, ``cancel``.

Nothing is imported here, so ``arena`` starts without loading grpc until a server command needs it.
"""
