"""A bot that misbehaves on purpose, one way per --mode, to test that every fault is recorded.

Modes: hang (Act never answers), exit_mid (exits after 3 decisions), illegal_index, illegal_action, garbage (a reply
that is not an ActReply), empty (a reply choosing nothing), error (the handler raises), never_start (exits before
listening), no_listen (never listens), bad_version (handshake with protocol 99), block_only (claims only Block and
plays the first legal action), good (plays the first legal action), escape_name (a name that would clear the
screen), long_name (a 100,000-character name), slow_first (1 s for its first decision of each match, then quick),
sleepy (marks ``time move_ms <M> bank_ms <B> deadline_ms <D>`` as each decision arrives, sleeps --sleep-ms, then plays
the first legal action), mark_sigterm (plays as good, and marks ``SIGTERM`` when the signal comes, as a bot that
saves its state at the end would), ignore_sigterm (plays as good, and never stops on SIGTERM). What the bot saw (e.g.
"cancelled") goes to its log as a line ``MARK <what>`` (a sandboxed bot can write nowhere else).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import grpc

from arena.protocol import bot_pb2, types_pb2
from testbot import serve_handlers

parser = argparse.ArgumentParser()
parser.add_argument("--mode", required=True)
parser.add_argument("--listen")
parser.add_argument("--tag", help="ignored: lets a test find its bot processes")
parser.add_argument("--sleep-ms", type=int, default=0, help="sleepy: how long each decision takes")
args = parser.parse_args()
MODE = args.mode
decisions = 0
lock = threading.Lock()
matches_seen: set[str] = set()


def mark(text: str) -> None:
    print(f"MARK {text}", file=sys.stderr, flush=True)


def hello(request: bot_pb2.HelloRequest, context: grpc.ServicerContext) -> bot_pb2.HelloReply:
    version = 99 if MODE == "bad_version" else 1
    variants = ["block"] if MODE == "block_only" else []
    name = {"escape_name": "bad\x1b[2J\x1b[Hbot", "long_name": "n" * 100_000}.get(MODE, f"bad-{MODE}")
    return bot_pb2.HelloReply(name=name, version="0", protocol_version=version, variants=variants)


def act(request: bot_pb2.ActRequest, context: grpc.ServicerContext):
    global decisions
    with lock:
        decisions += 1
        count = decisions
    if MODE == "hang":
        done = threading.Event()
        context.add_callback(lambda: (mark("cancelled"), done.set()))
        done.wait(600)
        return bot_pb2.ActReply(index=0)
    if MODE == "slow_first":  # a runtime warming up: its first decision of each match takes 1 s
        mark(f"move_ms {request.time.move_ms}")
        with lock:
            first = request.match_id not in matches_seen
            matches_seen.add(request.match_id)
        if first:
            time.sleep(1.0)
    if MODE == "sleepy":  # a slow thinker: what it was given, then longer than its move time
        told = request.time
        mark(f"time move_ms {told.move_ms} bank_ms {told.bank_ms} deadline_ms {told.deadline_ms}")
        time.sleep(args.sleep_ms / 1000)
    if MODE == "exit_mid" and count > 3:
        os._exit(3)
    if MODE == "illegal_index":
        return bot_pb2.ActReply(index=999)
    if MODE == "illegal_action":
        return bot_pb2.ActReply(action=types_pb2.Action(kind=types_pb2.ACTION_KIND_PLACE,
                                                        tile=types_pb2.Tile(low=9, high=9)))
    if MODE == "garbage":
        return b"\xff\xff\xff\x07garbage"
    if MODE == "empty":
        return bot_pb2.ActReply()
    if MODE == "error":
        raise RuntimeError("the bot's policy blew up")
    return bot_pb2.ActReply(index=0)


def notify(request: bot_pb2.Notification, context: grpc.ServicerContext) -> bot_pb2.NotifyReply:
    return bot_pb2.NotifyReply()


def serialize_reply(reply) -> bytes:
    return reply if isinstance(reply, bytes) else reply.SerializeToString()


def main() -> None:
    if MODE == "never_start":
        print("bad bot: refusing to start", file=sys.stderr, flush=True)
        sys.exit(4)
    if MODE == "no_listen":
        time.sleep(600)
    on_sigterm = {"mark_sigterm": lambda: mark("SIGTERM"), "ignore_sigterm": serve_on_regardless}.get(MODE)
    serve_handlers(hello, act, notify, args.listen, serialize_reply, on_sigterm=on_sigterm)


def serve_on_regardless() -> None:
    """ignore_sigterm: the signal's handler never returns, so the server is never stopped; only a kill ends the bot."""
    mark("SIGTERM ignored")
    threading.Event().wait()


if __name__ == "__main__":
    main()
