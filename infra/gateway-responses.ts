/**
 * Answers API Gateway gives by itself (no function ran, or the authorizer failed), shaped like the
 * pipeline's problem+json (lib/http/problem.ts): same `type`/`title` per status, `requestId`, and
 * the caller's `x-request-id` echoed in the header.
 *
 * Gateway response templates are not VTL: only `$context`/`$stageVariables` are substituted, so
 * the body's `requestId` is the gateway's request id (`$context.requestId`, also in the access
 * log and the `x-amzn-RequestId` header) and the caller's x-request-id comes back as a header.
 */
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { PROBLEM_TYPE_BASE, ProblemTypes, type ProblemKind } from '../lib/http/problem';

/** Problem types that only the gateway produces (the functions never answer 502/504). */
const GatewayOnlyTypes = {
  // DEFAULT_4XX keeps the status of whatever the gateway refused, so its type says no more than that
  requestRejected: { status: 400, slug: 'request-rejected', title: 'Request rejected by the API gateway' },
  badGateway: { status: 502, slug: 'bad-gateway', title: 'Bad gateway' },
  gatewayTimeout: { status: 504, slug: 'gateway-timeout', title: 'Gateway timeout' },
} as const;

type Kind = ProblemKind | keyof typeof GatewayOnlyTypes;

export interface GatewayProblem {
  type: apigw.ResponseType;
  kind: Kind;
  /** HTTP status; omitted for DEFAULT_4XX/5XX, which keep the status of whatever went wrong */
  status?: number;
  /** fixed client-safe detail, or undefined to use the gateway's own message */
  detail?: string;
  retryAfterSeconds?: number;
}

export const GatewayProblems: GatewayProblem[] = [
  { type: apigw.ResponseType.DEFAULT_4XX, kind: 'requestRejected' },
  { type: apigw.ResponseType.DEFAULT_5XX, kind: 'internal' },
  { type: apigw.ResponseType.BAD_REQUEST_PARAMETERS, kind: 'validation', status: 400 },
  { type: apigw.ResponseType.BAD_REQUEST_BODY, kind: 'validation', status: 400 },
  // apiKeySource AUTHORIZER: the authorizer named a key the gateway does not have in a usage plan of
  // this stage (key provisioned in the keys table but not in API Gateway) -> like an invalid key
  { type: apigw.ResponseType.INVALID_API_KEY, kind: 'unauthenticated', status: 401, detail: 'The API key is not enabled for this API.' },
  { type: apigw.ResponseType.UNAUTHORIZED, kind: 'unauthenticated', status: 401, detail: 'Missing, invalid or revoked API key.' },
  { type: apigw.ResponseType.ACCESS_DENIED, kind: 'forbidden', status: 403, detail: 'Access to this resource is denied.' },
  { type: apigw.ResponseType.WAF_FILTERED, kind: 'forbidden', status: 403, detail: 'The request was blocked by the web application firewall.' },
  // no IAM auth on this API: "missing authentication token" means no such route or method
  { type: apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, kind: 'notFound', status: 404, detail: 'No such route.' },
  { type: apigw.ResponseType.RESOURCE_NOT_FOUND, kind: 'notFound', status: 404, detail: 'No such route.' },
  { type: apigw.ResponseType.REQUEST_TOO_LARGE, kind: 'payloadTooLarge', status: 413, detail: 'The request body is too large.' },
  { type: apigw.ResponseType.UNSUPPORTED_MEDIA_TYPE, kind: 'unsupportedMediaType', status: 415 },
  {
    type: apigw.ResponseType.THROTTLED,
    kind: 'rateLimited',
    status: 429,
    detail: 'Too many requests for this API key; slow down and retry.',
    retryAfterSeconds: 1,
  },
  { type: apigw.ResponseType.QUOTA_EXCEEDED, kind: 'rateLimited', status: 429, detail: 'The monthly request quota of this API key is used up.' },
  // the authorizer function failed (error, timeout, throttle): the key may well be valid -> retry
  {
    type: apigw.ResponseType.AUTHORIZER_FAILURE,
    kind: 'unavailable',
    status: 503,
    detail: 'Authorization is temporarily unavailable; retry later.',
    retryAfterSeconds: 1,
  },
  { type: apigw.ResponseType.AUTHORIZER_CONFIGURATION_ERROR, kind: 'internal', status: 500, detail: 'Authorization is misconfigured.' },
  { type: apigw.ResponseType.API_CONFIGURATION_ERROR, kind: 'internal', status: 500, detail: 'The API is misconfigured.' },
  { type: apigw.ResponseType.INTEGRATION_FAILURE, kind: 'badGateway', status: 502, detail: 'The service could not process the request; retry later.' },
  { type: apigw.ResponseType.INTEGRATION_TIMEOUT, kind: 'gatewayTimeout', status: 504, detail: 'The service did not answer in time; retry later.' },
];

function typeOf(kind: Kind): { slug: string; title: string } {
  return kind in GatewayOnlyTypes ? GatewayOnlyTypes[kind as keyof typeof GatewayOnlyTypes] : ProblemTypes[kind as ProblemKind];
}

/** The application/problem+json body template of a gateway response. */
export function problemTemplate(problem: GatewayProblem): string {
  const t = typeOf(problem.kind);
  const parts = [`"type":${JSON.stringify(PROBLEM_TYPE_BASE + t.slug)}`, `"title":${JSON.stringify(t.title)}`];
  if (problem.status !== undefined) parts.push(`"status":${problem.status}`);
  // $context.error.messageString is the gateway's message, already a quoted JSON string
  parts.push(`"detail":${problem.detail !== undefined ? JSON.stringify(problem.detail) : '$context.error.messageString'}`);
  parts.push(`"requestId":"$context.requestId"`);
  return `{${parts.join(',')}}`;
}

export function problemHeaders(problem: GatewayProblem): Record<string, string> {
  return {
    'Content-Type': "'application/problem+json'",
    'Cache-Control': "'no-store'",
    'X-Content-Type-Options': "'nosniff'",
    'x-request-id': 'method.request.header.x-request-id',
    ...(problem.retryAfterSeconds ? { 'Retry-After': `'${problem.retryAfterSeconds}'` } : {}),
  };
}

export function addGatewayProblems(api: apigw.RestApi): void {
  for (const problem of GatewayProblems) {
    api.addGatewayResponse(`Gw${problem.type.responseType}`, {
      type: problem.type,
      statusCode: problem.status !== undefined ? String(problem.status) : undefined,
      responseHeaders: problemHeaders(problem),
      templates: { 'application/json': problemTemplate(problem) },
    });
  }
}
