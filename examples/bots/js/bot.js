#!/usr/bin/env node
// An example nardy arena bot in JavaScript: a nardy.bot.v1.BotService server that plays a
// (seeded) random legal play, never doubles and always takes.
//
//   npm ci                       # once, in this folder
//   node bot.js [PORT] [SEED]    # PORT 0 (the default) picks a free port
//
// The bot prints "LISTENING <host>:<port>" once it accepts calls, the line the arena's local-bot
// supervisor and the tests wait for. Set NARDY_BOT_TOKEN to refuse callers that do not send
// "authorization: Bearer <token>" (the token RegisterBot returned to the arena).
//
// The .proto files are loaded at run time from the repository's protos/ folder (or from
// NARDY_PROTOS), so the bot always speaks the current protocol; no code generation step.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOS = process.env.NARDY_PROTOS || path.resolve(__dirname, '..', '..', '..', 'protos');

const definition = protoLoader.loadSync(path.join(PROTOS, 'nardy/bot/v1/bot.proto'), {
  includeDirs: [PROTOS],
  keepCase: true, // field names exactly as in the .proto: legal_plays, play_index, ...
  longs: String, // uint64 sequence numbers arrive as decimal strings
  enums: String, // enum values by name: 'DOUBLE_ACTION_ROLL', ...
  defaults: true,
  oneofs: true,
});
const botProto = grpc.loadPackageDefinition(definition).nardy.bot.v1;

// mulberry32: a tiny seeded PRNG, so that the same seed gives the same games.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const port = Number(process.argv[2] || 0);
const random = rng(Number(process.argv[3] || 1));
const token = process.env.NARDY_BOT_TOKEN || '';

// Refuse the call unless it carries the arena's token (when one is configured).
function authorized(call, callback) {
  if (!token) return true;
  const [value] = call.metadata.get('authorization');
  if (value === `Bearer ${token}`) return true;
  callback({ code: grpc.status.UNAUTHENTICATED, details: 'wrong or missing arena token' });
  return false;
}

const service = {
  GetInfo(call, callback) {
    if (!authorized(call, callback)) return;
    callback(null, {
      info: {
        name: 'js-random',
        version: '0.1.0',
        author: 'nardy examples',
        variants: [],
        description: 'Plays a random legal play (Node.js, @grpc/grpc-js).',
      },
    });
  },

  ChoosePlay(call, callback) {
    if (!authorized(call, callback)) return;
    const plays = call.request.context.legal_plays;
    const choice = plays[Math.floor(random() * plays.length)];
    callback(null, {
      play_index: choice.index,
      info: { comment: `random among ${plays.length}`, values: { engine: 'js' } },
    });
  },

  DecideDouble(call, callback) {
    if (!authorized(call, callback)) return;
    callback(null, { action: 'DOUBLE_ACTION_ROLL' });
  },

  RespondToDouble(call, callback) {
    if (!authorized(call, callback)) return;
    callback(null, { action: 'TAKE_ACTION_TAKE' });
  },
};

const server = new grpc.Server({
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.max_send_message_length': 4 * 1024 * 1024,
});
server.addService(botProto.BotService.service, service);
server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
  if (err) {
    console.error(`cannot listen: ${err.message}`);
    process.exit(1);
  }
  console.log(`LISTENING 127.0.0.1:${bound}`);
});

function shutdown() {
  server.tryShutdown(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
