#!/usr/bin/env node
// The TypeScript bot's launcher: runs the compiled dist/bot.js (bash bots/build.sh typescript).
// It sits next to node_modules/ on purpose: the arena shows a sandboxed bot only the folder of its first file
// argument, so `node bots/typescript/bot.js` makes that folder bots/typescript (dist/ and node_modules/ both
// visible), where `node bots/typescript/dist/bot.js` would show dist/ alone and the packages could not load.
'use strict';
const path = require('node:path');

const compiled = path.join(__dirname, 'dist', 'bot.js');
try {
  require.resolve(compiled);
  require.resolve('@grpc/grpc-js');
} catch {
  console.error(`typescript bot: ${compiled} or its packages are missing: build with "bash bots/build.sh typescript"`);
  process.exit(1);
}
// Stack traces name the lines of src/*.ts (the compiler writes source maps beside dist/*.js).
process.setSourceMapsEnabled(true);
require(compiled);
