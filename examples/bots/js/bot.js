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
// The .proto files are loaded at run time (player.js), so the bot always speaks the current
// protocol; no code generation step. dial_out.js is the same bot dialling out to the arena.
'use strict';

const { dependency } = require('./deps');

const grpc = dependency('@grpc/grpc-js');
const { loadProto, randomPlayer, sameSecret } = require('./player');

const botProto = grpc.loadPackageDefinition(loadProto('nardy/bot/v1/bot.proto')).nardy.bot.v1;

const port = Number(process.argv[2] || 0);
const player = randomPlayer(Number(process.argv[3] || 1), 'js');
const token = process.env.NARDY_BOT_TOKEN || '';

// Refuse the call unless it carries the arena's token (when one is configured).
function authorized(call, callback) {
  if (!token) return true;
  const [value] = call.metadata.get('authorization');
  if (sameSecret(value, `Bearer ${token}`)) return true;
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
    callback(null, player.choosePlay(call.request));
  },

  DecideDouble(call, callback) {
    if (!authorized(call, callback)) return;
    callback(null, player.decideDouble(call.request));
  },

  RespondToDouble(call, callback) {
    if (!authorized(call, callback)) return;
    callback(null, player.respondToDouble(call.request));
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
