/**
 * Starts test/helpers/rate-mock-worker.ts: the mock, rate-limited and counting late or on
 * arrival, served over HTTPS from another process with a certificate made for this run, which
 * this process (and any worker given `TRUST_CERT`) trusts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { WorkerPool } from '../fleet/pool.js';

export interface RateMockProcess {
  /** `https://127.0.0.1:<port>/api/v1`. */
  readonly baseUrl: string;
  /** The certificate's PEM file, for worker processes to trust (`TRUST_CERT`). */
  readonly certFile: string;
  /** The payment creations' statuses so far, in the order they arrived. */
  creates(): Promise<number[]>;
  /**
   * What a failed time bound says: when the first creation came (ms into its second) and every
   * creation's arrival after it, the ones not accepted with their status.
   */
  timeline(): Promise<string>;
  /** Forgets the creations and the rate window. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** What the served mock enforces: `limit` creations per `windowMs`, each counted `latencyMs` + up to `jitterMs` late. */
export interface RateMockOptions {
  limit: number;
  windowMs: number;
  merchantId: string;
  apiKey: string;
  latencyMs?: number;
  jitterMs?: number;
}

/** Trusts the PEM certificate in `file` for this process's HTTPS (what NODE_EXTRA_CA_CERTS does at start-up). */
export function trustCertificate(file: string): void {
  tls.setDefaultCACertificates([...tls.rootCertificates, readFileSync(file, 'utf8')]);
}

export async function startRateMockProcess(options: RateMockOptions): Promise<RateMockProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'myr-rate-mock-'));
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  trustCertificate(certFile);
  const pool = await WorkerPool.start('../helpers/rate-mock-worker.ts', 1, () => ({
    LIMIT: String(options.limit),
    WINDOW_MS: String(options.windowMs),
    MERCHANT_ID: options.merchantId,
    API_KEY: options.apiKey,
    COUNT_LATENCY_MS: String(options.latencyMs ?? 0),
    COUNT_JITTER_MS: String(options.jitterMs ?? 0),
    TLS_KEY: keyFile,
    TLS_CERT: certFile,
  }));
  const worker = pool.workers[0]!;
  const baseUrl = await worker.request<string>({ type: 'url' });
  return {
    baseUrl,
    certFile,
    creates: () => worker.request<number[]>({ type: 'creates' }),
    timeline: async () => {
      const creates = await worker.request<{ status: number; at: number }[]>({ type: 'timeline' });
      const first = Math.min(...creates.map((c) => c.at));
      const each = creates.map((c) => `${Math.round(c.at - first)}${c.status === 200 ? '' : `:${c.status}`}`);
      return `first creation ${first % 1000} ms into its second; arrivals (ms after it): ${each.join(' ')}`;
    },
    reset: () => worker.request<void>({ type: 'reset' }),
    stop: async () => {
      await pool.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
