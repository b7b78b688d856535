"""Game records: the format (protobuf GameRecord as one JSON line), the durable writer, the tolerant reader."""
