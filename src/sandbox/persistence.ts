/**
 * `--data FILE`: the sandbox's payments, withdrawals, tokens and delivery log kept across
 * restarts. Written atomically (a temporary file renamed over the old one), so a crash
 * mid-write leaves the previous state, never half a file. The temporary file has a random
 * name and is created exclusively, so a file or symlink planted beside the target is never
 * written through. A file that fails {@link dataFileProblem} is refused and never written.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { StateSnapshot } from '../testing/state.js';
import { dataFileProblem } from './data-shape.js';
import type { DeliveryEntry } from './delivery-log.js';

/** What the file holds. */
export interface SandboxData extends StateSnapshot {
  version: 1;
  deliveries: DeliveryEntry[];
}

/** A `--data` file the sandbox cannot use; it is left untouched. */
export class SandboxDataError extends Error {
  override name = 'SandboxDataError';
}

/** Reads the file; `undefined` when it does not exist yet. Throws SandboxDataError when it is not ours. */
export function loadData(file: string): SandboxData | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new SandboxDataError(
      `--data ${file} is not valid JSON (${error instanceof Error ? error.message : String(error)}); move it away or pass another file`,
    );
  }
  const problem = dataFileProblem(parsed);
  if (problem)
    throw new SandboxDataError(
      `--data ${file}: ${problem}. The file was left as it is: fix it, move it away or pass another file`,
    );
  return parsed as SandboxData; // dataFileProblem found no problem: it has this shape
}

/**
 * Writes the file atomically: a new temporary file beside it (random name, created with `wx`,
 * so it fails rather than open anything already there), then a rename over the target, which
 * replaces a symlink at the target rather than writing through it.
 */
export function saveData(file: string, data: SandboxData): void {
  const temporary = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    try {
      writeFileSync(fd, `${JSON.stringify(data, null, 2)}\n`); // on an fd: writes it all, looping over short writes
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Coalesces saves: at most one write per `delayMs`, and a synchronous `flush()` on shutdown. */
export function createSaver(
  file: string,
  collect: () => SandboxData,
  delayMs = 100,
): { schedule(): void; flush(): void; stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    saveData(file, collect());
  };
  return {
    schedule() {
      // A stopped sandbox never writes again: a restarted one may own the file by now.
      if (timer || stopped) return;
      timer = setTimeout(() => {
        timer = undefined;
        try {
          saveData(file, collect());
        } catch (error) {
          console.error(
            `sandbox: could not write --data ${file}: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }, delayMs);
      timer.unref();
    },
    flush,
    /** Writes one last time, then ignores every later change. */
    stop() {
      if (stopped) return;
      stopped = true;
      flush();
    },
  };
}
