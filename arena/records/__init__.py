"""Game records: the format (protobuf GameRecord as one JSON line), the durable writer, the reader that checks every
line before anyone uses it (``schema.py``), and the repair that moves unreadable lines aside."""
