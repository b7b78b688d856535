#!/usr/bin/env bash
# The language table of docs/reference/kits.md: each kit's start time and median reply in Draw, from check-bot (sandboxed).
set -uo pipefail
cd "$(dirname "$0")/.."
run() { name=$1; shift; out=$(.venv/bin/arena check-bot --matches 3 --variants draw "$@" 2>&1); start=$(echo "$out" | grep -o "started in [0-9]* ms" | grep -o "[0-9]*"); med=$(echo "$out" | grep "│ draw" | awk -F'│' '{print $7}' | tr -d ' '); echo "$name start=${start}ms draw_median=${med}ms"; }
run python -- python bots/python/random_bot.py
run node -- node bots/node/bot.js
run go -- bots/go/bin/bot
run rust -- bots/rust/bin/bot
run java --first-move-ms 5000 -- bots/java/bot
run cpp -- bots/cpp/bin/bot
run typescript -- node bots/typescript/bot.js
run stdio --protocol stdio -- python3 bots/stdio/bot.py
