/**
 * What one call has learned so far ({@link CallState}: ky carries it to the hooks in its
 * `context`), and what the call's decisions run with ({@link CallEnv}).
 *
 * @module
 */
import type { TokenAttemptHook, TokenManager } from '../tokens/manager.js';
import type { Attempt, Judgement } from './attempt.js';
import type { CallDeadline } from './call-deadline.js';
import type { CallSpec } from './call-spec.js';
import type { Pacer, PaceReport } from '../pacing/pacer.js';
import type { ResolvedRetryOptions } from './retry-options.js';
import type { CallTrace } from '../observe/observer.js';
import type { Redact } from '../redact.js';
import type { TokenAttemptReport } from '../tokens/shared.js';

/** The client's settings and services a call's hooks and retry decisions use. */
export interface CallEnv {
  readonly config: {
    readonly retry: ResolvedRetryOptions;
    readonly random: () => number;
    readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
    /** Pacing to the rate limits; undefined when turned off (`rateLimiter: false`). */
    readonly pacer?: Pacer | undefined;
  };
  /** The token manager, wired after the transport is built (it needs the transport). */
  readonly tokens: TokenManager | undefined;
}

/**
 * What one call has learned so far: ky carries it to the hooks in its `context`. The fields the
 * constructor sets are `declare`d, so the class body does not define each of them a second time
 * in every merchant's bundle; the others are defined up front, so every call's state has one shape.
 */
export class CallState {
  declare readonly spec: CallSpec;
  declare readonly body: string | undefined;
  declare readonly limits: CallDeadline;
  declare readonly trace: CallTrace;
  declare readonly maxRetries: number;
  declare readonly attemptTimeout: number;
  declare readonly judge: { redact: Redact };
  declare readonly beforeAttempt: TokenAttemptHook | undefined;
  token: string | undefined;
  /** Retries the policy granted (a token renewal is not one). */
  retries = 0;
  tokenRenewed = false;
  /** The policy decided to renew the token before the next attempt. */
  renewNext = false;
  /** The backoff the policy chose before the next attempt. */
  delayMs = 0;
  /** An attempt may have been processed by the service. */
  maybeProcessed = false;
  /** The last attempt, judged once by the fetch wrapper, and whether the policy has decided on it. */
  last: { attempt: Attempt; judged: Judgement } | undefined;
  decided = false;
  /** The error the call ends with, once the policy or a hook has decided it. */
  final: unknown;
  /** What the next attempt reports to the pacer and the token limiter when it ends. */
  paced: PaceReport | undefined;
  reported: ((report: TokenAttemptReport) => void) | undefined;
  /** The hook running before the next attempt (backoff, token, pacing slot), until it settles. */
  preparing: Promise<void> | undefined;

  constructor(
    spec: CallSpec,
    limits: CallDeadline,
    trace: CallTrace,
    settings: { maxRetries: number; attemptTimeout: number; judge: { redact: Redact } },
    beforeAttempt: TokenAttemptHook | undefined,
  ) {
    this.spec = spec;
    this.body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    this.limits = limits;
    this.trace = trace;
    this.maxRetries = settings.maxRetries;
    this.attemptTimeout = settings.attemptTimeout;
    this.judge = settings.judge;
    this.beforeAttempt = beforeAttempt;
  }
}
