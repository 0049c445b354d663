/**
 * The `myr-gateway` bin: `npx myr-gateway sandbox [flags]` starts a local sandbox of the
 * service on 127.0.0.1; `npx myr-gateway doctor` checks the gateway configured in the
 * environment. Built to dist/sandbox/cli.js with a `#!/usr/bin/env node` banner.
 *
 * @module
 */
import { doctorMain } from '../doctor/command.js';
import { main } from './command.js';

const argv = process.argv.slice(2);
const run =
  argv[0] === 'doctor'
    ? doctorMain(argv.slice(1), {
        env: process.env,
        write: (text) => void process.stdout.write(text),
        writeError: (text) => void process.stderr.write(text),
      })
    : main(argv);

run.then(
  (code) => {
    // Exit now: callback retries still waiting (up to ~6 s) must not keep a stopped sandbox alive.
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`myr-gateway: ${(error instanceof Error ? error.stack : undefined) ?? String(error)}\n`);
    process.exit(1);
  },
);
