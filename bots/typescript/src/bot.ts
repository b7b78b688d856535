// An example dominoes bot in TypeScript: a gRPC server for the Bot service of proto/dominoes/v1/bot.proto.
// Copy it and change choose() to write your own.
//
// Build: bash bots/build.sh typescript   (generates src/gen/ from proto/ with ts-proto, compiles into dist/)
// Run:   node bots/typescript/bot.js --listen 127.0.0.1:50055 [--policy random|heaviest] [--name NAME]
// The arena starts it with DOMINOES_BOT_LISTEN set instead of --listen.
import * as fs from "node:fs";
import { parseArgs } from "node:util";
import * as grpc from "@grpc/grpc-js";

import {
  type ActReply,
  type ActRequest,
  BotService,
  type BotServer,
  type HelloReply,
  ProtocolVersion,
} from "./gen/dominoes/v1/bot";
import { type Action, ActionKind, type Observation } from "./gen/dominoes/v1/types";

// The arena sets the same message size limit at its end.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

// --- The policy: everything a bot author changes is here. -------------------------------------------

const POLICIES = ["random", "heaviest"] as const;
type Policy = (typeof POLICIES)[number];

// An ActRequest whose observation is present and has at least one legal action (act() checks both).
type Decision = ActRequest & { observation: Observation };

const pips = (action: Action): number => (action.tile ? action.tile.low + action.tile.high : 0);

// choose returns an index into request.observation.legalActions, which is never empty here.
// Fields are camelCase (legal_actions -> legalActions), enums are numeric TypeScript enums
// (ActionKind.ACTION_KIND_PLACE), 64-bit integers are plain numbers, absent messages are undefined.
function choose(request: Decision, policy: Policy): number {
  const legal = request.observation.legalActions;
  switch (policy) {
    case "heaviest": {
      // The placement with the most pips (the first of equals); otherwise index 0, because with no
      // placement the legal actions are a draw or a pass.
      let best = 0;
      let bestPips = -1;
      legal.forEach((action, i) => {
        if (action.kind === ActionKind.ACTION_KIND_PLACE && pips(action) > bestPips) {
          best = i;
          bestPips = pips(action);
        }
      });
      return best;
    }
    case "random":
      return Math.floor(Math.random() * legal.length);
  }
}

// --- The service. ------------------------------------------------------------------------------------

// Node.js runs the handlers one at a time on its event loop, but calls for different matches interleave:
// a stateful bot keys its memory by request.matchId.
function makeService(name: string, policy: Policy): BotServer {
  const hello: HelloReply = {
    name,
    version: "1.0.0",
    author: "dominoes arena",
    protocolVersion: ProtocolVersion.PROTOCOL_VERSION_1,
    variants: [], // empty: every variant
  };
  return {
    hello(_call, callback) {
      callback(null, hello);
    },
    act(call, callback) {
      const request = call.request;
      const n = request.observation?.legalActions.length ?? 0;
      if (n === 0) {
        // A malformed request gets an error status; it must never bring the process down.
        callback({ code: grpc.status.INVALID_ARGUMENT, details: "the request has no legal actions" });
        return;
      }
      let index: number;
      try {
        index = choose(request as Decision, policy);
      } catch (err) {
        callback({ code: grpc.status.INTERNAL, details: `policy ${policy} failed: ${String(err)}` });
        return;
      }
      if (!Number.isInteger(index) || index < 0 || index >= n) {
        // Better a clear bot error in the arena's record than an "illegal action" that hides the bug.
        callback({
          code: grpc.status.INTERNAL,
          details: `policy ${policy} chose index ${index} of ${n} legal actions`,
        });
        return;
      }
      const reply: ActReply = { index, comment: "" };
      callback(null, reply);
    },
    // Round and match results: a stateful bot would learn from the revealed hands here.
    notify(_call, callback) {
      callback(null, {});
    },
  };
}

// --- Listening and running. --------------------------------------------------------------------------

// A socket file left by a killed bot makes bind fail with "address already in use". Remove it, but only
// if it is a socket: a typo in the address must not delete someone's file. "unix:/path" and
// "unix:///path" (as gRPC spells it) are both accepted.
function removeStaleSocket(address: string): void {
  if (!address.startsWith("unix:")) return;
  let path = address.slice("unix:".length);
  if (path.startsWith("//")) path = path.slice(2);
  try {
    if (fs.lstatSync(path).isSocket()) fs.unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

const USAGE =
  "usage: node bots/typescript/bot.js [--listen ADDR] [--policy random|heaviest] [--name NAME]\n" +
  '  ADDR is "127.0.0.1:PORT" or "unix:/path/to.sock"; default: $DOMINOES_BOT_LISTEN\n' +
  '  NAME defaults to "typescript-" + the policy';

function usage(problem: string): never {
  console.error(`error: ${problem}\n${USAGE}`);
  process.exit(2);
}

function parseOptions(): { listen: string; policy: Policy; name: string } {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        listen: { type: "string" },
        policy: { type: "string", default: "random" },
        name: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    usage((err as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const policy = values.policy as Policy;
  if (!POLICIES.includes(policy)) usage(`unknown policy "${values.policy}" (known: ${POLICIES.join(", ")})`);
  const listen = values.listen || process.env.DOMINOES_BOT_LISTEN;
  if (!listen) usage("no address to listen on: pass --listen ADDR or set DOMINOES_BOT_LISTEN");
  const name = values.name ?? `typescript-${policy}`;
  // The arena refuses a handshake whose name is longer than 64 characters or holds control characters.
  if (name.length === 0 || name.length > 64 || /\p{Cc}/u.test(name)) {
    usage("--name must be 1 to 64 printable characters");
  }
  return { listen, policy, name };
}

function main(): void {
  const { listen, policy, name } = parseOptions();
  const server = new grpc.Server({
    "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
    // Never share a port with another process: a second bot on the same port must fail, not steal calls.
    "grpc.so_reuseport": 0,
  });
  server.addService(BotService, makeService(name, policy));

  try {
    removeStaleSocket(listen);
  } catch (err) {
    console.error(`typescript bot: could not remove the stale socket at ${listen}: ${String(err)}`);
    process.exit(1);
  }
  server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`typescript bot: could not listen on ${listen}: ${err.message}`);
      process.exit(1);
    }
    // Show the port actually bound, so "127.0.0.1:0" (any free port) is usable too.
    const shown = listen.startsWith("unix:") ? listen : listen.replace(/:\d+$/, `:${port}`);
    console.error(`typescript bot: listening on ${shown} (policy ${policy}, name ${name})`);
  });

  // The arena stops a bot with SIGTERM: finish the calls in flight, but never take more than 2 s.
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      server.forceShutdown();
      process.exit(0);
    }, 2000).unref();
    server.tryShutdown(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main();
