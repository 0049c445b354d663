/**
 * ky's side of a call: its `beforeRequest`/`beforeRetry` hooks, which wait out the policy's
 * backoff and take the bearer token (renewed after a TOKEN_EXPIRED decision) and the pacing slot
 * under the call's own signal, so no such wait is ever inside ky's attempt timeout; and the one
 * translation of what ky threw into the call's error ({@link kyFailure}).
 *
 * @module
 */
import { type Hooks, isTimeoutError } from 'ky';
import { AuthenticationError } from '../errors/service.js';
import { stoppedError } from './call-errors.js';
import { CallState, type CallEnv } from './call-state.js';
import { shouldRetry } from './retry-decision.js';

/** The call behind a ky hook (its `context`); undefined for a request ky made without one. */
function callOf(options: { readonly context: Record<string, unknown> }): CallState | undefined {
  const call = options.context.call;
  return call instanceof CallState ? call : undefined;
}

/** The hooks of the client's ky instance: each prepares the next attempt of the call in its context. */
export function kyHooks(env: CallEnv): Hooks {
  return {
    beforeRequest: [({ options }) => beforeAttempt(callOf(options), false, env)],
    beforeRetry: [({ options }) => beforeAttempt(callOf(options), true, env)],
  };
}

/**
 * ky's `beforeRequest` and `beforeRetry`: the backoff (a retry), the token (renewed when the
 * policy said so) and the pacing slot, all under the call's own signal and before ky's attempt
 * timeout starts: a wait for a slot never reads as a timeout (for a withdrawal, that would be
 * OUTCOME_UNKNOWN).
 */
function beforeAttempt(state: CallState | undefined, retry: boolean, env: CallEnv): Promise<void> | undefined {
  if (!state) return undefined;
  state.preparing = prepare(state, retry, env);
  return state.preparing;
}

async function prepare(state: CallState, retry: boolean, env: CallEnv): Promise<void> {
  const { config, tokens } = env;
  const { spec, limits } = state;
  try {
    if (retry && state.delayMs > 0) await config.sleep(state.delayMs, limits.signal);
    if (limits.stopped) throw stoppedError(undefined, state);
    if (state.renewNext && state.token !== undefined && tokens) {
      state.renewNext = false;
      await tokens.renew(state.token, limits.signal);
    }
    if (spec.authenticated) {
      if (!tokens) throw new AuthenticationError('No token manager configured', { code: 'UNAUTHORIZED' });
      // A cached token needs no signal; the getter builds one only for a refresh.
      state.token = await tokens.get(() => limits.signal);
    }
    // Waiting for a slot happens before anything is sent: it is not a retry.
    // The last attempt cannot absorb a 429: it is never given the edge probe.
    if (config.pacer)
      state.paced = await config.pacer.acquire(
        spec.operation,
        limits.user,
        limits.remaining(),
        () => limits.signal,
        state.retries < state.maxRetries,
      );
    state.reported = state.beforeAttempt?.();
  } catch (error) {
    state.final = stoppedError(error, state);
    throw state.final;
  }
}

/** The one translation of what ky threw into the call's error. */
export async function kyFailure(state: CallState, error: unknown, env: CallEnv): Promise<unknown> {
  // ky's total timeout may fire while a hook still waits (a pacing slot, a token) under the
  // same deadline: that wait's own answer (RATE_LIMITED with its source) is the call's, not a
  // bare TIMEOUT. Every wait in a hook is bounded by the call's deadline, so this one is too.
  await state.preparing?.catch(() => undefined);
  if (state.final !== undefined) return state.final;
  // ky asks `shouldRetry` only while retries and time are left: the last attempt is judged here.
  await shouldRetry(state, env);
  if (state.final !== undefined) return state.final;
  // Every attempt's own timeout reached the policy above; a TimeoutError of ky's that gets here
  // is its total timeout, which may fire a little before this deadline's clock passes it.
  if (isTimeoutError(error) && state.limits.user?.aborted !== true) state.limits.spent();
  return stoppedError(error, state);
}
