/**
 * A small, dependency-free benchmark harness: client CPU time (process.cpuUsage, user +
 * system, all threads of this process) and wall time (performance.now) per round of N
 * requests at a fixed concurrency, with warm-up, interleaved rounds and medians.
 *
 * @module
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

/** One timed round of `requests` operations. */
export interface RoundSample {
  /** Client CPU (user + system) spent in this process per operation, microseconds. */
  cpuUsPerOp: number;
  /** Operations per second of wall time. */
  opsPerSec: number;
  /** Wall time of the round, milliseconds. */
  wallMs: number;
}

/** Runs `operation` `total` times with at most `concurrency` in flight. */
export async function runConcurrent(
  total: number,
  concurrency: number,
  operation: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const index = next++;
      await operation(index);
    }
  };
  const workers: Promise<void>[] = [];
  for (let i = 0; i < Math.min(concurrency, total); i++) workers.push(worker());
  await Promise.all(workers);
}

/** Times one round: CPU and wall time around `total` operations. */
export async function timeRound(
  total: number,
  concurrency: number,
  operation: (index: number) => Promise<unknown>,
): Promise<RoundSample> {
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  await runConcurrent(total, concurrency, operation);
  const wallMs = performance.now() - wallStart;
  const cpu = process.cpuUsage(cpuStart);
  return {
    cpuUsPerOp: (cpu.user + cpu.system) / total,
    opsPerSec: total / (wallMs / 1000),
    wallMs,
  };
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Median of per-round ratios a[i] / b[i]. Rounds of different contenders run back to back
 * (see {@link compare}), so pairing them cancels most of the drift a shared, loaded
 * machine adds; on a quiet machine it agrees with the ratio of medians.
 */
export function pairedRatio(a: readonly RoundSample[], b: readonly RoundSample[]): number {
  const n = Math.min(a.length, b.length);
  const ratios: number[] = [];
  for (let i = 0; i < n; i++) ratios.push((a[i] as RoundSample).cpuUsPerOp / (b[i] as RoundSample).cpuUsPerOp);
  return median(ratios);
}

/** Load average over the last minute, per core (1.0 = every core busy). */
export function loadPerCore(): number {
  return (os.loadavg()[0] ?? 0) / os.availableParallelism();
}

/** Lets timers, sockets and idle-time GC settle between rounds. */
export async function settle(ms = 25): Promise<void> {
  await delay(ms);
}

/** One contender: a name and the operation it repeats. */
export interface Contender {
  name: string;
  operation: (index: number) => Promise<unknown>;
}

/** Per-contender samples and medians at one concurrency. */
export interface ContenderResult {
  name: string;
  concurrency: number;
  requestsPerRound: number;
  rounds: RoundSample[];
  medianCpuUsPerOp: number;
  medianOpsPerSec: number;
}

export interface CompareOptions {
  concurrency: number;
  /** Operations per timed round. */
  requests: number;
  /** Timed rounds per contender. */
  rounds: number;
  /** Untimed operations per contender before the first round. */
  warmup: number;
  /** Called after each round (progress output). */
  onRound?: (name: string, round: number, sample: RoundSample) => void;
}

/**
 * Warms every contender up, then runs `rounds` rounds of each, interleaved and with a
 * rotating order, so drift (thermal, GC debt, other load) spreads over all of them.
 */
export async function compare(contenders: readonly Contender[], options: CompareOptions): Promise<ContenderResult[]> {
  for (const contender of contenders) {
    await runConcurrent(options.warmup, options.concurrency, contender.operation);
    await settle();
  }
  const samples = new Map<string, RoundSample[]>(contenders.map((c) => [c.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(round + k) % contenders.length] as Contender;
      const sample = await timeRound(options.requests, options.concurrency, contender.operation);
      samples.get(contender.name)?.push(sample);
      options.onRound?.(contender.name, round, sample);
      await settle();
    }
  }
  return contenders.map((c) => {
    const rounds = samples.get(c.name) ?? [];
    return {
      name: c.name,
      concurrency: options.concurrency,
      requestsPerRound: options.requests,
      rounds,
      medianCpuUsPerOp: median(rounds.map((r) => r.cpuUsPerOp)),
      medianOpsPerSec: median(rounds.map((r) => r.opsPerSec)),
    };
  });
}

/** The machine, for the record. */
export function machineInfo(): Record<string, string | number> {
  const cpus = os.cpus();
  return {
    cpus: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    totalMemGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  };
}

/** Formats rows as a plain-text table with right-aligned numeric columns. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Reads a positive integer from the environment. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}
