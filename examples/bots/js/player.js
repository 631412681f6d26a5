// The example bot's decisions, shared by both transports (bot.js serves BotService, dial_out.js
// dials out to ArenaService): the request and response messages are the same on both.
'use strict';

const crypto = require('crypto');
const path = require('path');
const { dependency } = require('./deps');

const protoLoader = dependency('@grpc/proto-loader');

// The .proto files: the repository's protos/ folder, or NARDY_PROTOS (e.g. the folder written by
// `nardy protos --out DIR` from an installed nardy), so the bot always speaks the current protocol
// and needs no code generation step.
const PROTOS = process.env.NARDY_PROTOS || path.resolve(__dirname, '..', '..', '..', 'protos');

function loadProto(file) {
  return protoLoader.loadSync(path.join(PROTOS, file), {
    includeDirs: [PROTOS],
    keepCase: true, // field names exactly as in the .proto: legal_plays, play_index, ...
    longs: String, // uint64 sequence numbers arrive as decimal strings
    enums: String, // enum values by name: 'DOUBLE_ACTION_ROLL', ...
    defaults: true,
    oneofs: true, // a oneof's set member is named by a virtual field (message.message, ...)
  });
}

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

// A player that picks a (seeded) random legal play, never doubles and always takes. `engine` is
// written into every play's DecisionInfo, so records show which program answered.
function randomPlayer(seed, engine) {
  const random = rng(seed);
  return {
    choosePlay(request) {
      const plays = request.context.legal_plays;
      const choice = plays[Math.floor(random() * plays.length)];
      return {
        play_index: choice.index,
        info: { comment: `random among ${plays.length}`, values: { engine } },
      };
    },
    decideDouble() {
      return { action: 'DOUBLE_ACTION_ROLL' };
    },
    respondToDouble() {
      return { action: 'TAKE_ACTION_TAKE' };
    },
  };
}

// Compare a presented secret with the expected one in constant time (a plain === returns sooner the
// earlier the first wrong character, which leaks the token to a patient caller).
function sameSecret(presented, expected) {
  const a = Buffer.from(String(presented ?? ''));
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

module.exports = { PROTOS, loadProto, randomPlayer, rng, sameSecret };
