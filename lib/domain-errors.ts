/**
 * Errors the domain modules raise for conditions a caller caused. The HTTP pipeline maps them to
 * problem responses (lib/http/middleware/http-responses.ts); their messages are client-safe.
 */
export class RecordNotFoundError extends Error {
  override readonly name = 'RecordNotFoundError';
  constructor(readonly what: string) {
    super(`${what} not found`);
  }
}

/** A request parameter the domain found unusable (e.g. a page token it did not issue): a 400 naming it. */
export class InvalidParameterError extends Error {
  override readonly name = 'InvalidParameterError';
  constructor(
    readonly parameter: string,
    readonly problem: string,
  ) {
    super(`${parameter} ${problem}`);
  }
}
