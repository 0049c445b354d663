/**
 * `--data FILE`: the sandbox's payments, withdrawals, tokens and delivery log kept across
 * restarts. Written atomically (a temporary file renamed over the old one), so a crash
 * mid-write leaves the previous state, never half a file.
 *
 * @module
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { StateSnapshot } from '../testing/state.js';
import type { DeliveryEntry } from './deliveries.js';

/** What the file holds. */
export interface SandboxData extends StateSnapshot {
  version: 1;
  deliveries: DeliveryEntry[];
}

/** A `--data` file the sandbox cannot use; it is left untouched. */
export class SandboxDataError extends Error {
  override name = 'SandboxDataError';
}

function isArray(value: unknown): value is unknown[] {
  return Array.isArray(value);
}

/** Reads the file; `undefined` when it does not exist yet. Throws SandboxDataError when it is not ours. */
export function loadData(file: string): SandboxData | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new SandboxDataError(`--data ${file} is not valid JSON (${(error as Error).message}); move it away or pass another file`);
  }
  const data = parsed as Partial<SandboxData> | null;
  if (!data || data.version !== 1 || !isArray(data.records) || !isArray(data.tokens) || !isArray(data.deliveries)) {
    throw new SandboxDataError(`--data ${file} is not a sandbox data file (version 1 with records, tokens, deliveries); pass another file`);
  }
  return data as SandboxData;
}

/** Writes the file atomically: a temporary file in the same folder, then a rename. */
export function saveData(file: string, data: SandboxData): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
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
          console.error(`sandbox: could not write --data ${file}: ${(error as Error).message}`);
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
