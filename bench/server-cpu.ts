/**
 * The CPU a database server spent, read from Linux's /proc, so the ledger bench can say on which
 * side of the socket a callback's time goes: the client (this process) or the server. A
 * callback's cost on a machine whose cores both sides share is the sum of the two.
 *
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's clock ticks per second in /proc's CPU times (USER_HZ: 100 on every architecture Node runs on). */
const TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the command's name (which may hold spaces and parentheses). */
function statOf(pid: string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * Milliseconds of CPU spent by the process `rootPid` and its children, living and exited (a
 * Postgres postmaster and its backends; mysqld alone), or undefined where /proc cannot say.
 *
 * @example
 * ```ts
 * const before = processTreeCpuMs(postmasterPid);
 * ```
 */
export function processTreeCpuMs(rootPid: number | undefined): number | undefined {
  if (rootPid === undefined) return undefined;
  const root = statOf(String(rootPid));
  if (root === undefined) return undefined;
  // utime, stime, and the CPU of the children the root has reaped (cutime, cstime).
  let ticks = Number(root[11]) + Number(root[12]) + Number(root[13]) + Number(root[14]);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = statOf(pid);
    if (stat?.[1] === String(rootPid)) ticks += Number(stat[11]) + Number(stat[12]);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The pid a server wrote in `file` (its first line), or undefined. */
export function pidIn(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
