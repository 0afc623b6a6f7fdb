/**
 * RFC 9457 problem details. Every client-visible error is an `HttpProblem`; its `detail` is
 * written for the partner and never carries PHI or internals. Anything else thrown inside a
 * handler becomes a generic 500 (or 503 when a dependency is unavailable).
 */
import type { FieldError } from '../domain-errors';

export const ProblemTypes = {
  validation: { status: 400, slug: 'validation-error', title: 'Request validation failed' },
  badRequest: { status: 400, slug: 'bad-request', title: 'Bad request' },
  unauthenticated: { status: 401, slug: 'unauthenticated', title: 'Missing, invalid or revoked API key' },
  forbidden: { status: 403, slug: 'forbidden', title: 'Forbidden' },
  notFound: { status: 404, slug: 'not-found', title: 'Not found' },
  methodNotAllowed: { status: 405, slug: 'method-not-allowed', title: 'Method not allowed' },
  notAcceptable: { status: 406, slug: 'not-acceptable', title: 'Not acceptable' },
  conflict: { status: 409, slug: 'conflict', title: 'Conflict' },
  inProgress: { status: 409, slug: 'request-in-progress', title: 'Request already in progress' },
  payloadTooLarge: { status: 413, slug: 'payload-too-large', title: 'Payload too large' },
  unsupportedMediaType: { status: 415, slug: 'unsupported-media-type', title: 'Unsupported media type' },
  rateLimited: { status: 429, slug: 'rate-limited', title: 'Too many requests' },
  internal: { status: 500, slug: 'internal-error', title: 'Internal error' },
  unavailable: { status: 503, slug: 'service-unavailable', title: 'Service temporarily unavailable' },
} as const;

export type ProblemKind = keyof typeof ProblemTypes;

export type { FieldError };

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  requestId: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export const PROBLEM_TYPE_BASE = '/problems/';

export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  readonly status: number;
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly extras: { errors?: FieldError[]; headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.status = ProblemTypes[kind].status;
  }

  toBody(requestId: string): ProblemBody {
    const t = ProblemTypes[this.kind];
    return {
      type: PROBLEM_TYPE_BASE + t.slug,
      title: t.title,
      status: t.status,
      detail: this.detail,
      requestId,
      ...(this.extras.errors ? { errors: this.extras.errors } : {}),
      ...(this.extras.extensions ?? {}),
    };
  }
}

export function problemBody(kind: ProblemKind, detail: string, requestId: string, errors?: FieldError[]): ProblemBody {
  return new HttpProblem(kind, detail, { errors }).toBody(requestId);
}
