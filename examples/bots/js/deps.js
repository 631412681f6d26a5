// The examples' npm dependencies: when `npm ci` has not been run, one line that says so instead
// of node's MODULE_NOT_FOUND stack trace.
'use strict';

const path = require('path');

function dependency(name) {
  try {
    return require(name);
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${name}'`)) {
      const folder = path.relative(process.cwd(), __dirname) || '.';
      console.error(`${name} is not installed: run \`npm ci\` in ${folder} first`);
      process.exit(2);
    }
    throw err;
  }
}

module.exports = { dependency };
