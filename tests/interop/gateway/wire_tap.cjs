// Loaded into server-everything's node with `--require` by run.sh: appends every
// chunk the server reads from stdin to the file named by TH_EVERYTHING_WIRE, so
// a test can see what the gateway sent it (a relayed notifications/cancelled
// above all: server-everything's long-running tool shows no sign of one). It
// only listens: the chunks reach the server unchanged, in the same order.
'use strict';

const fs = require('node:fs');

const wire = process.env.TH_EVERYTHING_WIRE;
if (wire) {
    const stdin = process.stdin;
    const emit = stdin.emit;
    stdin.emit = function (event, ...args) {
        if (event === 'data') fs.appendFileSync(wire, args[0]);
        return emit.call(this, event, ...args);
    };
}
