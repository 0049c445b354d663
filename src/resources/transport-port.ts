/**
 * What a resource needs of the client's transport: one call, and one call whose failure comes
 * back as a value. Spelled out here rather than as `Pick<Transport, …>`, so that a resource's
 * declaration does not drag the transport, the token manager and the logger into the public
 * types (none of them is exported).
 *
 * @module
 */
import type { CallAnswer, CallOutcome, CallSpec, RequestOptions } from '../core/call/call-spec.js';

/** The client's transport, as the resources use it. */
export interface ResourceTransport {
  /** Runs a call to completion; resolves with the parsed 2xx body, throws a MyrGatewayError. */
  call(spec: CallSpec, options?: RequestOptions): Promise<CallAnswer>;
  /** Like `call`, but a failure is returned with what a follow-up needs. */
  outcomeOf(spec: CallSpec, options?: RequestOptions): Promise<CallOutcome>;
}
