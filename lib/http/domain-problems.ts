/**
 * The only mapping from what went wrong to what the caller is answered: an `HttpProblem` (thrown
 * by lib/http and functions/ for request-level refusals) as it is, the domain's typed errors
 * (lib/domain-errors.ts) to their problem kind, a transient dependency failure to 503 with
 * Retry-After, anything else to a generic 500. The response middleware renders the result; the
 * audit middleware records its status.
 */
import {
  ConflictError,
  ContentTooLargeError,
  DomainError,
  ForbiddenByPolicyError,
  InvalidParameterError,
  MalformedRequestError,
  RecordNotFoundError,
  RequestInProgressError,
  ValidationFailedError,
} from '../domain-errors';
import { HttpProblem, isRetryableDependencyError } from './problem';

export const RETRY_AFTER_UNAVAILABLE_SECONDS = 2;

export interface MappedProblem {
  problem: HttpProblem;
  /** the caller's request or a stated domain outcome (not logged as a failure) */
  expected: boolean;
}

function domainProblem(error: DomainError): HttpProblem | undefined {
  if (error instanceof InvalidParameterError) {
    return new HttpProblem('validation', error.detail, { errors: [{ parameter: error.parameter, message: error.problem }] });
  }
  // one answer for "no such record" and "not this patient's record": existence is not revealed
  if (error instanceof RecordNotFoundError) return new HttpProblem('notFound', error.detail);
  if (error instanceof ValidationFailedError) return new HttpProblem('validation', error.detail, { errors: error.errors });
  if (error instanceof MalformedRequestError) return new HttpProblem('badRequest', error.detail);
  if (error instanceof ConflictError)
    return new HttpProblem('conflict', error.detail, Object.keys(error.extensions).length > 0 ? { extensions: error.extensions } : {});
  if (error instanceof ContentTooLargeError) return new HttpProblem('payloadTooLarge', error.detail);
  if (error instanceof RequestInProgressError)
    return new HttpProblem('inProgress', error.detail, { headers: { 'retry-after': String(error.retryAfterSeconds) } });
  if (error instanceof ForbiddenByPolicyError) return new HttpProblem('forbidden', error.detail, error.errors.length > 0 ? { errors: error.errors } : {});
  return undefined;
}

export function problemForError(error: unknown): MappedProblem {
  if (error instanceof HttpProblem) return { problem: error, expected: true };
  if (error instanceof DomainError) {
    const problem = domainProblem(error);
    if (problem) return { problem, expected: true };
  }
  if (isRetryableDependencyError(error)) {
    return {
      problem: new HttpProblem('unavailable', 'a dependency is temporarily unavailable; retry the same request', {
        headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
      }),
      expected: false,
    };
  }
  return {
    problem: new HttpProblem(
      'internal',
      'the request failed; it may have been partly applied: retry the same request (same x-request-id) to learn its outcome',
    ),
    expected: false,
  };
}

/** The status the caller is answered for `error` (what the audit trail records). */
export function statusForError(error: unknown): number {
  return problemForError(error).problem.status;
}
