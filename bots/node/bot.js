#!/usr/bin/env node
// An example dominoes bot in Node.js: a gRPC server implementing the Bot service of
// proto/dominoes/v1/bot.proto. Copy it and change choose() to write your own.
//
// Run:  node bot.js --listen 127.0.0.1:50053 [--policy random|heaviest] [--name NAME] [--proto-dir DIR]
// The handshake name is NAME, or node-POLICY ("node-random", "node-heaviest") without --name.
// The arena starts it with DOMINOES_BOT_LISTEN set instead of --listen.
'use strict';

const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOCOL_VERSION = 1;
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024; // the arena sets the same limit at its end
const USAGE =
  'usage: node bot.js [--listen ADDR] [--policy random|heaviest] [--name NAME] [--proto-dir DIR]\n' +
  '  ADDR is "127.0.0.1:PORT" or "unix:/path/to.sock"; default: $DOMINOES_BOT_LISTEN';

function parseOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        listen: { type: 'string' },
        policy: { type: 'string', default: 'random' },
        // No default here: the name follows the policy unless given (see below).
        name: { type: 'string' },
        // The .proto files are read at run time, by default from the repository's proto/ folder,
        // found from this script's own location so the bot runs from any working directory.
        'proto-dir': { type: 'string', default: path.join(__dirname, '..', '..', 'proto') },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    fail(err.message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!(values.policy in POLICIES)) fail(`unknown policy "${values.policy}"`);
  // The handshake name tells the policies apart in standings and logs ("node-heaviest"); --name overrides it.
  values.name = values.name || `node-${values.policy}`;
  values.listen = values.listen || process.env.DOMINOES_BOT_LISTEN;
  if (!values.listen) fail('no address to listen on: pass --listen ADDR or set DOMINOES_BOT_LISTEN');
  return values;
}

function fail(message) {
  console.error(`error: ${message}\n${USAGE}`);
  process.exit(2);
}

// The loader options fix how messages look in JavaScript: camelCase field names (legal_actions ->
// legalActions), enums as their names ('ACTION_KIND_PLACE'), 64-bit integers as plain numbers, unset
// fields filled with their defaults, and the name of the set member of each oneof.
function loadService(protoDir) {
  const definition = protoLoader.loadSync('dominoes/v1/bot.proto', {
    includeDirs: [protoDir],
    keepCase: false,
    enums: String,
    longs: Number,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).dominoes.v1.Bot.service;
}

// --- The policy: everything a bot author changes is here. -------------------------------------------

const pips = (action) => (action.tile ? action.tile.low + action.tile.high : 0);

// Each policy gets the whole ActRequest and returns an index into request.observation.legalActions
// (which is never empty here).
const POLICIES = {
  random(request) {
    return Math.floor(Math.random() * request.observation.legalActions.length);
  },
  // The placement with the most pips (the first of equals); drawing or passing only when nothing can be placed.
  heaviest(request) {
    const legal = request.observation.legalActions;
    let best = -1;
    legal.forEach((action, i) => {
      if (action.kind === 'ACTION_KIND_PLACE' && (best < 0 || pips(action) > pips(legal[best]))) best = i;
    });
    return best >= 0 ? best : 0; // no placement: the legal actions are a draw or a pass
  },
};

// --- The service. ------------------------------------------------------------------------------------

function makeHandlers(options) {
  const choose = POLICIES[options.policy];
  const hello = {
    name: options.name,
    version: '1.0.0',
    author: 'dominoes arena',
    protocolVersion: PROTOCOL_VERSION,
    variants: [], // empty: every variant
  };
  return {
    Hello(call, callback) {
      callback(null, hello);
    },
    Act(call, callback) {
      const observation = call.request.observation;
      if (!observation || observation.legalActions.length === 0) {
        // A malformed request gets an error status; it must never bring the process down.
        callback({ code: grpc.status.INVALID_ARGUMENT, details: 'the request has no legal actions' });
        return;
      }
      try {
        callback(null, { index: choose(call.request) });
      } catch (err) {
        callback({ code: grpc.status.INTERNAL, details: `policy failed: ${err.message}` });
      }
    },
    // Round and match results: a stateful bot would learn from the revealed hands here.
    Notify(call, callback) {
      callback(null, {});
    },
  };
}

function main() {
  const options = parseOptions();
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    // Never share a port with another process: a second bot on the same port must fail, not steal calls.
    'grpc.so_reuseport': 0,
  });
  let service;
  try {
    service = loadService(options['proto-dir']);
  } catch (err) {
    console.error(`error: could not load bot.proto from ${options['proto-dir']}: ${err.message}`);
    process.exit(1);
  }
  server.addService(service, makeHandlers(options));

  server.bindAsync(options.listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`error: could not listen on ${options.listen}: ${err.message}`);
      process.exit(1);
    }
    // Show the port actually bound, so "127.0.0.1:0" (any free port) is usable too.
    const shown = options.listen.startsWith('unix:')
      ? options.listen
      : options.listen.replace(/:\d+$/, `:${port}`);
    console.error(`node bot listening on ${shown}`);
  });

  // The arena stops a bot with SIGTERM: finish the calls in flight, but never take more than 2 s.
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      server.forceShutdown();
      process.exit(0);
    }, 2000).unref();
    server.tryShutdown(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
