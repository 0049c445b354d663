// Bun and Deno entry: imports the installed package the way a merchant does, serves the
// Web handler on the runtime's own HTTP server, runs the checks and prints one JSON line.
// Usage: bun entry-cli.mjs input.json | deno run … entry-cli.mjs input.json
/* global fetch */
import * as sdk from 'myr-gateway';
import * as webhooks from 'myr-gateway/webhooks';
import { conformanceWebHandler, runConformance } from './conformance.mjs';

const isDeno = typeof globalThis.Deno !== 'undefined';
const isBun = typeof globalThis.Bun !== 'undefined';
const args = isDeno ? globalThis.Deno.args : process.argv.slice(2);
const readText = isDeno ? (p) => globalThis.Deno.readTextFile(p) : (p) => globalThis.Bun.file(p).text();
const input = JSON.parse(await readText(args[0]));

const runs = [];
const handler = conformanceWebHandler(webhooks, input.apiKey, runs);

let url;
let close;
if (isBun) {
  const server = globalThis.Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handler });
  url = `http://127.0.0.1:${server.port}/webhooks/myr`;
  close = () => server.stop(true);
} else if (isDeno) {
  const server = globalThis.Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, handler);
  url = `http://127.0.0.1:${server.addr.port}/webhooks/myr`;
  close = () => server.shutdown();
} else {
  throw new Error('entry-cli.mjs runs under Bun or Deno');
}

const runtime = isBun
  ? { name: 'bun', version: globalThis.Bun.version }
  : { name: 'deno', version: globalThis.Deno.version.deno };
let report;
try {
  report = await runConformance({ sdk, webhooks, input, runs, post: (init) => fetch(url, init) });
} finally {
  await close();
}
// No process.exit: the script must end on its own, or the runtime keeps something open.
console.log(JSON.stringify({ runtime, ...report }));
