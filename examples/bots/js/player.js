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

// What a nardy.game.v1.Position says about each side, [mover, opponent], pinned checkers
// included (RULES.md §3.12.2, plakoto): `position.pinned` lists the points holding one checker
// pinned beneath the stack that `points` counts. That checker is the OTHER side's: it counts among
// its owner's checkers, but the point belongs to the stack's owner (closed to the pinned side).
// The field is empty in every variant that does not pin.
function sides(position) {
  const points = position.points.map(Number);
  const pinned = (position.pinned || []).map(Number);
  const checkers = [
    Number(position.bar?.mover || 0) + Number(position.off?.mover || 0),
    Number(position.bar?.opponent || 0) + Number(position.off?.opponent || 0),
  ];
  const held = [0, 0];
  for (const n of points) {
    if (n > 0) {
      checkers[0] += n;
      held[0] += 1;
    } else if (n < 0) {
      checkers[1] -= n;
      held[1] += 1;
    }
  }
  const pins = [0, 0]; // checkers of each side that are pinned
  for (const p of pinned) {
    const owner = points[p - 1] > 0 ? 1 : 0; // beneath the mover's stack: the opponent's checker
    pins[owner] += 1;
    checkers[owner] += 1;
  }
  return { checkers, held, pinned: pins };
}

// A player that picks a (seeded) random legal play, never doubles and always takes; where plays
// differ in pins (plakoto), it keeps only those that leave the opponent the most pinned checkers
// net of its own. Where nothing can be pinned every play scores 0, so the choice is the plain
// random one. `engine` is written into every play's DecisionInfo, so records show which program
// answered, with what the bot read from the position (which the tests check against the kernel).
function randomPlayer(seed, engine) {
  const random = rng(seed);
  return {
    choosePlay(request) {
      const { legal_plays: plays, position } = request.context;
      const score = (play) => {
        const { pinned } = sides(play.result); // the result is still the bot's (mover's) view
        return pinned[1] - pinned[0];
      };
      const scores = plays.map(score);
      const best = Math.max(...scores);
      const candidates = plays.filter((_, i) => scores[i] === best);
      const choice = candidates[Math.floor(random() * candidates.length)];
      const seen = sides(position);
      return {
        play_index: choice.index,
        info: {
          comment: `random among ${candidates.length} of ${plays.length}`,
          values: {
            engine,
            position: position.position_id,
            checkers: seen.checkers.join('/'),
            held: seen.held.join('/'),
            pinned: seen.pinned.join('/'),
          },
        },
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

module.exports = { PROTOS, loadProto, randomPlayer, rng, sameSecret, sides };
