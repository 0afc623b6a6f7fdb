/**
 * The only mapping from what went wrong to what the caller is answered: an `HttpProblem` (thrown
 * by lib/http and functions/ for request-level refusals) as it is, the domain's typed errors
 * (lib/domain-errors.ts) to their problem kind, a transient dependency failure to 503 with
 * Retry-After, anything else to a generic 500. The response middleware renders the result; the
 * audit middleware records its status.
 */
import { DomainError, type DomainErrorKind } from '../domain-errors';
import { isTransientAwsError } from '../aws/dependency-calls';
import { HttpProblem, type ProblemKind } from './problem';

export const RETRY_AFTER_UNAVAILABLE_SECONDS = 2;

export interface MappedProblem {
  problem: HttpProblem;
  /** the caller's request or a stated domain outcome (not logged as a failure) */
  expected: boolean;
}

/** Each outcome the domain states, as the problem the caller is answered with. */
const PROBLEM_OF_KIND = {
  notFound: 'notFound',
  invalidParameter: 'validation',
  validationFailed: 'validation',
  malformedRequest: 'badRequest',
  conflict: 'conflict',
  inProgress: 'inProgress',
  forbiddenByPolicy: 'forbidden',
  contentTooLarge: 'payloadTooLarge',
} as const satisfies Record<DomainErrorKind, ProblemKind>;

// "no such record" and "not this patient's record" are one answer (RecordNotFoundError's detail):
// existence is not revealed
function domainProblem(error: DomainError): HttpProblem {
  return new HttpProblem(PROBLEM_OF_KIND[error.kind], error.detail, {
    ...(error.fieldErrors.length > 0 ? { errors: error.fieldErrors } : {}),
    ...(Object.keys(error.extensions).length > 0 ? { extensions: error.extensions } : {}),
    ...(error.retryAfterSeconds !== undefined ? { headers: { 'retry-after': String(error.retryAfterSeconds) } } : {}),
  });
}

export function problemForError(error: unknown): MappedProblem {
  if (error instanceof HttpProblem) return { problem: error, expected: true };
  if (error instanceof DomainError) return { problem: domainProblem(error), expected: true };
  if (isTransientAwsError(error)) {
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
