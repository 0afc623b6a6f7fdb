import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { HttpEndpoints, type HttpEndpoint } from '../config/service';
import type { AuditEvent } from '../audit/audit-trail';
import { accessControl } from './middleware/access-control';
import { auditRecording } from './middleware/audit-recording';
import { httpResponses } from './middleware/http-responses';
import { requestTracing } from './middleware/request-tracing';
import { DependencyUnavailableError } from './problem';
import { stateFromContext, type AuthorizedRequest, type RequestState } from './request-state';

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
}

/** Answer 503 this long before Lambda's own timeout, so the caller gets a retryable problem. */
const TIMEOUT_MARGIN_MS = 1000;

/**
 * The pipeline every HTTP endpoint shares:
 * request id -> access decision (key, partner policy, rate limit, scope) -> the endpoint's code ->
 * problem+json errors and common headers. `name` is the endpoint's name in the endpoint list.
 */
export function httpEndpoint(name: string, handle: EndpointHandler, options: EndpointOptions = {}) {
  const endpoint = HttpEndpoints.find((e) => e.name === name);
  if (!endpoint) throw new Error(`endpoint ${name} is not in the endpoint list`);
  if (endpoint.access === 'public') throw new Error(`endpoint ${name} is public: use publicHttpEndpoint`);
  return pipeline(endpoint, handle as (request: RequestState & { event: APIGatewayProxyEvent }) => Promise<EndpointResponse>, options);
}

/** A request to a public endpoint: no key needed, so there may be no principal; nothing is audited. */
export type PublicRequest = RequestState & { event: APIGatewayProxyEvent };

/** The same pipeline for an endpoint marked `access: 'public'` (rate limited, never refused for a missing key). */
export function publicHttpEndpoint(name: string, handle: (request: PublicRequest) => Promise<EndpointResponse>, options: EndpointOptions = {}) {
  const endpoint = HttpEndpoints.find((e) => e.name === name);
  if (!endpoint) throw new Error(`endpoint ${name} is not in the endpoint list`);
  if (endpoint.access !== 'public') throw new Error(`endpoint ${name} is not public`);
  return pipeline(endpoint, handle, options);
}

function pipeline(endpoint: HttpEndpoint, handle: (request: AuthorizedRequest) => Promise<EndpointResponse>, options: EndpointOptions) {
  const clock = options.clock ?? (() => new Date());
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>({
    timeoutEarlyInMillis: TIMEOUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new DependencyUnavailableError('timeout');
    },
  })
    .use(httpResponses())
    .use(requestTracing(endpoint, clock))
    .use(accessControl())
    .use(auditRecording())
    .handler(async (event: APIGatewayProxyEvent, context: Context) => {
      const state = stateFromContext(context)!;
      const request: AuthorizedRequest = Object.assign(state, {
        principal: state.principal!,
        event,
        audit: (auditEvent: AuditEvent) => {
          state.auditEvent = auditEvent;
        },
      });
      const response = await handle(request);
      return {
        statusCode: response.status,
        headers: { 'content-type': response.contentType, ...(response.headers ?? {}) },
        body: response.body,
      };
    });
}

export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): EndpointResponse {
  return { status, contentType: 'application/json', body: JSON.stringify(body), headers };
}

export const HL7_CONTENT_TYPE = 'application/hl7-v2; charset=utf-8';

export function hl7Response(message: string): EndpointResponse {
  return { status: 200, contentType: HL7_CONTENT_TYPE, body: message };
}
