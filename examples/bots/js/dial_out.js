#!/usr/bin/env node
// The example bot dialling out: it connects to the arena's ArenaService.Connect stream, so it
// needs no open port (a bot behind NAT or a firewall). Same decisions as bot.js (player.js).
//
//   npm ci                                                  # once, in this folder
//   NARDY_BOT_TOKEN=<token> node dial_out.js HOST:PORT [SEED]
//
// The token is the one RegisterBot(dial_out={}) returned (`nardy arena register`, or
// Arena.register_dial_out_bot); it is read from the environment so that it does not show in `ps`.
// The bot prints one line when it connects, when it loses the connection and before each retry;
// retries wait a jittered exponential back-off (0.1 s doubling up to 5 s, each delay drawn from
// [d/2, d] so that bots cut off together do not come back in step). A rejected token ends the bot
// with exit status 1; SIGTERM/SIGINT end it with 0.
'use strict';

const { dependency } = require('./deps');

const grpc = dependency('@grpc/grpc-js');
const { loadProto, randomPlayer } = require('./player');

const arenaProto = grpc.loadPackageDefinition(loadProto('nardy/arena/v1/arena.proto')).nardy.arena
  .v1;

const address = process.argv[2];
const token = process.env.NARDY_BOT_TOKEN || '';
if (!address || !token) {
  console.error('usage: NARDY_BOT_TOKEN=<token> node dial_out.js HOST:PORT [SEED]');
  process.exit(2);
}
const player = randomPlayer(Number(process.argv[3] || 1), 'js-dial-out');
const info = {
  name: 'js-random-dial-out',
  version: '0.1.0',
  author: 'nardy examples',
  variants: [],
  description: 'Plays a random legal play, dialling out (Node.js, @grpc/grpc-js).',
};

const BACKOFF_INITIAL = 0.1; // seconds
const BACKOFF_MAX = 5.0;
const games = new Set(); // games we answered in and have not seen end: resumed after a reconnect
const channelOptions = {
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.max_send_message_length': 4 * 1024 * 1024,
};
let client = null;
let call = null;
let stopping = false;
let nominal = BACKOFF_INITIAL;
let attempt = 0;

function say(line) {
  console.log(line);
}

// Answer one DecisionRequest with the DecisionAnswer of the same kind, echoing game and sequence.
function answer(request) {
  const kind = request.request; // 'choose_play' | 'decide_double' | 'respond_to_double'
  const decide = {
    choose_play: player.choosePlay,
    decide_double: player.decideDouble,
    respond_to_double: player.respondToDouble,
  }[kind];
  if (!decide) return null; // a kind this bot does not know (added in a later v1): no answer
  const context = request[kind].context;
  games.add(context.game_id);
  return { game_id: context.game_id, sequence: context.sequence, [kind]: decide(request[kind]) };
}

function connect() {
  let welcomed = false;
  let farewell = '';
  let finished = false;
  // A fresh channel per attempt: the back-off below is the only one (a reused channel would add
  // its own reconnect back-off and fail calls fast while it waits).
  const credentials = grpc.credentials.createInsecure();
  const channel = new arenaProto.ArenaService(address, credentials, channelOptions);
  const stream = channel.Connect();
  client = channel;
  call = stream;
  stream.write({ hello: { token, resume_game_ids: [...games], info } });

  stream.on('data', (message) => {
    switch (message.message) {
      case 'welcome': {
        welcomed = true;
        nominal = BACKOFF_INITIAL; // a good connection: the next outage starts the back-off afresh
        attempt = 0;
        const resumed = message.welcome.resumed_game_ids.length;
        say(
          `connected to ${address} as ${message.welcome.bot_id}` +
            (resumed ? ` (resuming ${resumed} games)` : ''),
        );
        break;
      }
      case 'decision_request': {
        const reply = answer(message.decision_request);
        if (reply) stream.write({ answer: reply });
        break;
      }
      case 'game_ended':
        games.delete(message.game_ended.game_id);
        break;
      case 'error':
        if (message.error.code === 'ERROR_CODE_UNAUTHENTICATED') {
          say(`token rejected by the arena at ${address}: ${message.error.message}`);
          process.exit(1);
        }
        if (message.error.fatal) farewell = message.error.message;
        break;
      default:
        break; // a message kind added in a later v1: ignore it
    }
  });

  // 'status' comes exactly once, with the call's final status, however the stream ended.
  function ended(reason, code) {
    if (finished) return;
    finished = true;
    call = null;
    client = null;
    channel.close();
    if (stopping) return;
    if (code === grpc.status.UNAUTHENTICATED) {
      say(`token rejected by the arena at ${address}: ${reason}`);
      process.exit(1);
    }
    say(
      welcomed
        ? `connection lost: ${farewell || reason}`
        : `cannot reach the arena at ${address}: ${farewell || reason}`,
    );
    // Jittered exponential back-off ("equal jitter"): a delay drawn from [d/2, d].
    const delay = nominal / 2 + (Math.random() * nominal) / 2;
    nominal = Math.min(nominal * 2, BACKOFF_MAX);
    attempt += 1;
    say(`retrying in ${delay.toFixed(2)}s (attempt ${attempt})`);
    setTimeout(connect, delay * 1000);
  }
  stream.on('status', (status) => {
    const details = String(status.details || '').replace(/\s*Resolution note:\s*$/, '');
    ended(
      status.code === grpc.status.OK
        ? 'the arena closed the stream'
        : `${grpc.status[status.code] ?? status.code}: ${details}`,
      status.code,
    );
  });
  stream.on('error', () => {}); // reported by 'status'; without a listener Node would throw
}

function shutdown() {
  stopping = true;
  if (call) call.cancel();
  if (client) client.close();
  setTimeout(() => process.exit(0), 100).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

connect();
