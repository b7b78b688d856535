"""A tournament arena for dominoes bots: pure rules (``arena.rules``), the referee, bots over gRPC, tournaments."""

__version__ = "0.1.0"
