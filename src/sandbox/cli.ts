/**
 * The `myr-gateway` bin: `npx myr-gateway sandbox [flags]` starts a local sandbox of the
 * service on 127.0.0.1. Built to dist/sandbox/cli.js with a `#!/usr/bin/env node` banner.
 *
 * @module
 */
import { main } from './command.js';

main(process.argv.slice(2)).then(
  (code) => {
    // Exit now: callback retries still waiting (up to ~6 s) must not keep a stopped sandbox alive.
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`myr-gateway: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
