/**
 * The error a call ends with when it did not end on an attempt's own answer: stopped by the
 * caller's signal or the total timeout ({@link stoppedError}), or a money-moving request that
 * may have been processed and is not sent again ({@link outcomeUnknownError}).
 *
 * @module
 */
import { AbortError, TimeoutError } from '../errors/service.js';
import { MyrGatewayError } from '../errors/base.js';
import { OutcomeUnknownError } from '../errors/outcome.js';
import { isAtMostOnce, outcomeUnknownAdvice } from './retry-policy.js';
import type { CallSpec } from './call-spec.js';
import type { CallState } from './call-state.js';

/**
 * The error for a call stopped by the caller's signal or the overall timeout; `cause` when it is
 * already one of the SDK's errors (a hook's wait that ended with its own answer).
 */
export function stoppedError(cause: unknown, state: CallState): MyrGatewayError {
  if (cause instanceof MyrGatewayError) return cause;
  const { spec, limits } = state;
  const maybe =
    state.maybeProcessed && spec.operation === 'payment.create'
      ? `; an attempt may have reached the service: ${outcomeUnknownAdvice(spec.operation, spec.referenceId ?? '')}`
      : '';
  const referenceId = spec.referenceId;
  const error = limits.user?.aborted
    ? new AbortError(`ABORTED: the call was aborted by its signal${maybe}`, { code: 'ABORTED', referenceId })
    : limits.expired
      ? new TimeoutError(`TIMEOUT: the call did not finish within its total timeout${maybe}`, {
          code: 'TIMEOUT',
          retryable: true,
          referenceId,
        })
      : new MyrGatewayError('The call stopped unexpectedly', { code: 'HTTP_ERROR', referenceId });
  if (state.maybeProcessed && isAtMostOnce(spec.operation)) {
    return outcomeUnknownError(spec, error);
  }
  return error;
}

/**
 * A money-moving request that may have been processed: `why` the SDK stops there (by default:
 * it is not sent again), the call's `error` as its cause, and what to do.
 */
export function outcomeUnknownError(
  spec: Pick<CallSpec, 'method' | 'path' | 'operation' | 'referenceId'>,
  error: MyrGatewayError,
  why = 'not sent again: a second attempt could move money twice',
): OutcomeUnknownError {
  const referenceId = spec.referenceId ?? '';
  return new OutcomeUnknownError(
    `OUTCOME_UNKNOWN: the ${spec.method} /${spec.path} request for reference_id ${referenceId} may have reached the service ` +
      `(${error.message}); ${why}. ${outcomeUnknownAdvice(spec.operation, referenceId)}`,
    { referenceId, status: error.status, correlationId: error.correlationId, cause: error },
  );
}
