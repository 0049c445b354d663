/**
 * The bridge from ky's `shouldRetry` to the retry policy (`retry-policy.ts`): asks the policy about the
 * attempt just judged and carries out its answer on the call's state (a backoff, a token renewal,
 * or the error the call ends with). It always answers true or false, never undefined, which
 * would hand the call to ky's own defaults.
 *
 * @module
 */
import { decide, isTokenRefusal } from './retry-policy.js';
import { outcomeUnknownError, stoppedError } from './call-errors.js';
import type { CallEnv, CallState } from './call-state.js';

/**
 * ky's `shouldRetry`, and the catch's judgement of the last attempt (which ky does not ask
 * about once its limit or the total time is spent): the policy's answer for a failed attempt
 * not yet decided, false for anything else.
 */
export async function shouldRetry(state: CallState, env: CallEnv): Promise<boolean> {
  const last = state.last;
  if (!last || last.judged.ok || state.decided) return false;
  state.decided = true;
  const { attempt, judged } = last;
  const { spec, limits } = state;
  const decision = decide({
    operation: spec.operation,
    attempt: state.retries + 1,
    outcome: judged.outcome,
    maxRetries: state.maxRetries,
    retry: env.config.retry,
    random: env.config.random(),
    remainingMs: limits.remaining(),
    tokenRenewed: state.tokenRenewed,
  });
  if (decision.action === 'outcome-unknown') {
    state.maybeProcessed = true;
    // An attempt cut by the caller's signal or the total timeout: the error says which of
    // them stopped it, not the attempt timeout that never ran out.
    state.final =
      attempt.kind === 'timeout' && limits.stopped
        ? stoppedError(undefined, state)
        : outcomeUnknownError(spec, judged.error);
    return false;
  }
  if ('maybeProcessed' in decision && decision.maybeProcessed) state.maybeProcessed = true;
  if (limits.stopped) {
    state.final = stoppedError(undefined, state);
    return false;
  }
  if (decision.action === 'renew-token' && state.token !== undefined && env.tokens) {
    state.tokenRenewed = true;
    state.renewNext = true;
    state.delayMs = 0;
    return true;
  }
  if (decision.action !== 'retry') {
    if (state.token !== undefined && state.tokenRenewed && isTokenRefusal(judged.error.code)) {
      await env.tokens?.forget(state.token);
    }
    state.final = judged.error;
    return false;
  }
  state.retries += 1;
  state.delayMs = decision.delayMs;
  state.trace.retry(decision.delayMs);
  return true;
}
