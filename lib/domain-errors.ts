/**
 * What the domain says went wrong, in its own words: a small typed family (Powertools style: a
 * stable `name`, the underlying error as `cause`) that knows nothing of HTTP. Each error names its
 * `kind` of outcome; lib/http holds the only mapping from kinds to problem+json and status codes
 * (lib/http/domain-problems.ts), used by the response middleware and the audit middleware alike,
 * so a bundle carries only the error classes its code throws. Messages are client-safe: fixed text
 * and ids, never a value from the request (it may be PHI).
 */

/** One failing field: a body field by JSON pointer (RFC 6901), or a query parameter / header by name. */
export type FieldError = { pointer: string; message: string } | { parameter: string; message: string } | { header: string; message: string };

/** The outcomes the domain can state. */
export type DomainErrorKind =
  'notFound' | 'invalidParameter' | 'validationFailed' | 'malformedRequest' | 'conflict' | 'inProgress' | 'forbiddenByPolicy' | 'contentTooLarge';

/** The base of the family: `detail` is the client-safe sentence the caller is answered with. */
export abstract class DomainError extends Error {
  abstract override readonly name: string;
  abstract readonly kind: DomainErrorKind;
  /** every failing field, when the outcome is about fields */
  readonly fieldErrors: FieldError[] = [];
  /** non-PHI facts for the caller (e.g. the state a packet is in) */
  readonly extensions: Record<string, unknown> = {};
  /** when a retry of the same request may succeed */
  readonly retryAfterSeconds: number | undefined = undefined;

  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }
}

/** No such record, or not this caller's / this patient's record: existence is not revealed. */
export class RecordNotFoundError extends DomainError {
  override readonly name: string = 'RecordNotFoundError';
  readonly kind = 'notFound';
  constructor(
    readonly what: string,
    detail = `no ${what} with these ids was found`,
  ) {
    super(detail);
  }
}

/** A request parameter the domain found unusable (e.g. a cursor or page token it did not issue): names it. */
export class InvalidParameterError extends DomainError {
  override readonly name: string = 'InvalidParameterError';
  readonly kind = 'invalidParameter';
  override readonly fieldErrors: FieldError[];
  constructor(
    readonly parameter: string,
    readonly problem: string,
    detail = 'query parameters are missing or invalid',
  ) {
    super(detail);
    this.fieldErrors = [{ parameter, message: problem }];
  }
}

/** A submitted document failed its rules: every failing field. */
export class ValidationFailedError extends DomainError {
  override readonly name: string = 'ValidationFailedError';
  readonly kind = 'validationFailed';
  constructor(
    detail: string,
    readonly errors: FieldError[],
  ) {
    super(detail);
    this.fieldErrors.push(...errors);
  }
}

/** The request cannot be read at all (e.g. an HL7 body without an MSH segment). */
export class MalformedRequestError extends DomainError {
  override readonly name: string = 'MalformedRequestError';
  readonly kind = 'malformedRequest';
}

/** The request contradicts what is stored (e.g. an idempotency key reused with another body). */
export class ConflictError extends DomainError {
  override readonly name: string = 'ConflictError';
  readonly kind = 'conflict';
  constructor(detail: string, extensions: Record<string, unknown> = {}) {
    super(detail);
    Object.assign(this.extensions, extensions);
  }
}

/** The submitted content is larger than the domain keeps (e.g. a form packet over its byte limit). */
export class ContentTooLargeError extends DomainError {
  override readonly name: string = 'ContentTooLargeError';
  readonly kind = 'contentTooLarge';
}

/** The same request is still being processed elsewhere: retry it after `retryAfterSeconds`. */
export class RequestInProgressError extends DomainError {
  override readonly name: string = 'RequestInProgressError';
  readonly kind = 'inProgress';
  override readonly retryAfterSeconds: number;
  constructor(detail: string, retryAfterSeconds: number) {
    super(detail);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The caller is known but its partner policy does not allow this (e.g. a foreign sender id). */
export class ForbiddenByPolicyError extends DomainError {
  override readonly name: string = 'ForbiddenByPolicyError';
  readonly kind = 'forbiddenByPolicy';
  constructor(detail: string, errors: FieldError[] = []) {
    super(detail);
    this.fieldErrors.push(...errors);
  }
}

/** A dependency failed in a way a retry can fix (throttling, timeouts, 5xx, network). */
export class DependencyUnavailableError extends Error {
  override readonly name: string = 'DependencyUnavailableError';
  constructor(
    readonly dependency: string,
    options?: { cause?: unknown },
  ) {
    super(`${dependency} unavailable`, options);
  }
}
