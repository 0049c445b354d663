// What `npm test` runs first: the Debian packages the suite starts real servers and tools from,
// installed when missing, so the README's second command passes on a fresh machine as it does in
// CI (.ci/run runs the same `npm test`). Installed only when something is missing: `apt-get
// update` first, then one `apt-get install` of what is missing. As root it runs apt-get itself;
// otherwise through `sudo -n` when that needs no password, else it stops and prints the command.
// `--dry-run` prints what it would run and runs nothing (test/setup/system-packages.test.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Whether `command` is found on PATH and answers `args` (its version). */
function runs(command, args = ['--version']) {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** Whether the system has a user `name` (the postgresql package makes `postgres`). */
function hasUser(name) {
  return (
    existsSync('/etc/passwd') &&
    readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .some((line) => line.startsWith(`${name}:`))
  );
}

/** Each package, and how to tell it is there: the same checks as the test helpers that need it. */
export const REQUIREMENTS = [
  // The HTTPS tests make a certificate per run with the openssl CLI.
  { package: 'openssl', present: () => runs('openssl', ['version']) },
  // The sandbox's browser test drives Debian's Chromium with playwright-core (no browser download).
  { package: 'chromium', present: () => existsSync('/usr/bin/chromium') },
  // The Redis store, fleet and topology tests start real redis-server processes (test/helpers/redis.ts).
  { package: 'redis-server', present: () => runs('redis-server') },
  // The SQL ledger tests start PostgreSQL 15 as its package's postgres user (test/helpers/postgres.ts).
  {
    package: 'postgresql',
    present: () => existsSync('/usr/lib/postgresql/15/bin/postgres') && hasUser('postgres'),
  },
  // ... and MariaDB 10.11 (test/helpers/mariadb.ts).
  { package: 'mariadb-server', present: () => runs('mariadbd') },
];

/** The packages of `requirements` that are missing, in order. */
export function missingPackages(requirements = REQUIREMENTS) {
  return requirements.filter((requirement) => !requirement.present()).map((requirement) => requirement.package);
}

/** The commands that install `packages`: `apt-get update`, then one install. */
export function installCommands(packages) {
  return [
    ['apt-get', 'update', '-qq'],
    ['apt-get', 'install', '-y', '-qq', ...packages],
  ];
}

function main() {
  const dryRun = process.argv.includes('--dry-run');
  const missing = missingPackages();
  if (missing.length === 0) return 0;
  const asRoot = process.getuid?.() === 0;
  const sudo = !asRoot && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  const commands = installCommands(missing).map((command) =>
    asRoot || dryRun || !sudo ? command : ['sudo', '-n', ...command],
  );
  console.log(`The test suite needs Debian packages that are missing: ${missing.join(', ')}.`);
  if (dryRun) {
    for (const command of commands) console.log(`would run: ${command.join(' ')}`);
    return 0;
  }
  if (!asRoot && !sudo) {
    console.error(
      `Install them as root, then run npm test again:\n  ${commands.map((command) => command.join(' ')).join(' && ')}`,
    );
    return 1;
  }
  for (const command of commands) {
    console.log(`running: ${command.join(' ')}`);
    const [file, ...args] = command;
    const done = spawnSync(file, args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (done.status !== 0) return done.status ?? 1;
  }
  const still = missingPackages();
  if (still.length > 0) {
    console.error(`Still missing after apt-get install: ${still.join(', ')}`);
    return 1;
  }
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main();
