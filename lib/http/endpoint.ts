import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { HttpRoute } from '../config/service';
import type { AuditEvent } from '../audit/audit-trail';
import { accessControl } from './middleware/access-control';
import { auditRecording } from './middleware/audit-recording';
import { httpResponses, type ProblemRenderer } from './middleware/http-responses';
import { requestTracing } from './middleware/request-tracing';
import { purposeOfUseHeader } from './purpose-of-use';
import { DependencyUnavailableError } from '../domain-errors';
import { stateFromContext, type AuthorizedRequest } from './request-state';

export interface EndpointResponse {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

export type EndpointHandler = (request: AuthorizedRequest) => Promise<EndpointResponse>;

export interface EndpointOptions {
  /** the clock the endpoint sees (tests pin it) */
  clock?: () => Date;
  /** how errors are written (default problem+json; FHIR endpoints: fhirEndpoint in lib/http/fhir.ts) */
  renderProblem?: ProblemRenderer;
}

/** Answer 503 this long before Lambda's own timeout, so the caller gets a retryable problem. */
const TIMEOUT_MARGIN_MS = 1000;

/**
 * The pipeline every HTTP endpoint shares:
 * request id -> access decision (key, partner policy, rate limit, scope) -> the endpoint's code ->
 * problem+json errors and common headers. `endpoint` is the function's own route
 * (`<name>Route` of lib/config/routes.ts: only that route goes into its bundle).
 */
function sharedPipeline(endpoint: HttpRoute, options: EndpointOptions) {
  const clock = options.clock ?? (() => new Date());
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>({
    timeoutEarlyInMillis: TIMEOUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new DependencyUnavailableError('timeout');
    },
  })
    .use(httpResponses(options.renderProblem))
    .use(requestTracing(endpoint, clock))
    .use(accessControl());
}

function toProxyResult(response: EndpointResponse): APIGatewayProxyResult {
  return {
    statusCode: response.status,
    headers: { 'content-type': response.contentType, ...(response.headers ?? {}) },
    body: response.body,
  };
}

/**
 * An endpoint that touches stored data: the shared pipeline, then the audit record of what it declared
 * (and, on an export or FHIR read, its disclosures); `x-purpose-of-use` is read before the endpoint's code.
 */
export function httpEndpoint(endpoint: HttpRoute, handle: EndpointHandler, options: EndpointOptions = {}) {
  return sharedPipeline(endpoint, options)
    .use(auditRecording())
    .use(purposeOfUseHeader())
    .handler(async (event: APIGatewayProxyEvent, context: Context) => {
      const state = stateFromContext(context)!;
      const request: AuthorizedRequest = Object.assign(state, {
        principal: state.principal!,
        event,
        audit: (auditEvent: AuditEvent) => {
          state.auditEvent = auditEvent;
        },
      });
      return toProxyResult(await handle(request));
    });
}

/** What a storeless endpoint sees: the request, with nothing to audit. */
export type StorelessRequest = Omit<AuthorizedRequest, 'audit'>;

/**
 * An endpoint that reads and writes no stored data (no table in its `needs`: the API contract and
 * reference, the inbox page's shell, FHIR metadata and unknown FHIR routes): the shared pipeline
 * without the audit step, which is the only part that builds a DynamoDB client, so its bundle
 * carries no AWS SDK client (issue 31 item 5: no client a function never calls). There is no PHI
 * access to audit; test/storeless-endpoints.test.ts holds each function to its `needs`.
 */
export function storelessHttpEndpoint(endpoint: HttpRoute, handle: (request: StorelessRequest) => Promise<EndpointResponse>, options: EndpointOptions = {}) {
  return sharedPipeline(endpoint, options).handler(async (event: APIGatewayProxyEvent, context: Context) => {
    const state = stateFromContext(context)!;
    return toProxyResult(await handle(Object.assign(state, { principal: state.principal!, event })));
  });
}

export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): EndpointResponse {
  return { status, contentType: 'application/json', body: JSON.stringify(body), headers };
}

export const HL7_CONTENT_TYPE = 'application/hl7-v2; charset=utf-8';

export function hl7Response(message: string): EndpointResponse {
  return { status: 200, contentType: HL7_CONTENT_TYPE, body: message };
}
