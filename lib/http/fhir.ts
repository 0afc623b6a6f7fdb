/**
 * FHIR R4 over the shared pipeline: content negotiation (406), the response body and media type,
 * the search parameters every FHIR route understands (400 naming each bad one), and the base URL
 * that Bundle links and fullUrls are built from.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { acceptsMediaType } from './accept';
import { headerValue, headerValues } from './headers';
import { HttpProblem, type FieldError, type ProblemBody } from './problem';
import type { HttpRoute } from '../config/service';
import { operationOutcome } from '../fhir/operation-outcome';
import { httpEndpoint, storelessHttpEndpoint, type EndpointHandler, type EndpointOptions, type EndpointResponse, type StorelessRequest } from './endpoint';

export const FHIR_MEDIA_TYPE = 'application/fhir+json';
export const FHIR_CONTENT_TYPE = 'application/fhir+json; charset=utf-8';
/** _count: 1..200, default 20 (the HL7 summary's limits) */
const FORMAT_JSON = new Set(['json', 'application/json', 'application/fhir+json']);

/**
 * 406 unless the caller accepts FHIR JSON: `application/fhir+json`, `application/json`, wildcards or
 * no Accept at all. `_format` (json, application/json, application/fhir+json) overrides Accept, as
 * the FHIR spec says; any other `_format` is a 406 too.
 */
export function requireFhirAcceptable(event: APIGatewayProxyEvent): void {
  const format = queryValues(event, '_format');
  if (format.length > 0) {
    if (format.length === 1 && FORMAT_JSON.has(format[0]!.toLowerCase())) return;
    throw new HttpProblem('notAcceptable', `this endpoint produces ${FHIR_MEDIA_TYPE} only (_format json)`);
  }
  const accept = headerValues(event, 'accept').join(', ') || undefined;
  if (!acceptsMediaType(accept, FHIR_MEDIA_TYPE) && !acceptsMediaType(accept, 'application/json')) {
    throw new HttpProblem('notAcceptable', `this endpoint produces ${FHIR_MEDIA_TYPE} only`);
  }
}

/** A FHIR JSON response (an EndpointResponse of lib/http/endpoint.ts). */
export function fhirResponse(resource: unknown, status = 200): { status: number; contentType: string; body: string } {
  return { status, contentType: FHIR_CONTENT_TYPE, body: JSON.stringify(resource) };
}

/**
 * The query of a FHIR route that takes no parameter besides `_format` (a read, metadata): any other
 * parameter is a 400, as {@link readFhirQuery} (lib/http/fhir-query.ts) answers for a parameter its route
 * does not accept. Kept apart from it so that reads bundle no search-parameter parsing.
 */
export function rejectFhirQueryParameters(event: APIGatewayProxyEvent): void {
  const errors = unsupportedParameterErrors(event, new Set(['_format']));
  if (errors.length > 0) throw new HttpProblem('validation', 'query parameters are missing or invalid', { errors });
}

/** One error per query parameter outside `known`; names are echoed only when they are short, plain parameter names (never caller text at large). */
export function unsupportedParameterErrors(event: APIGatewayProxyEvent, known: ReadonlySet<string>): FieldError[] {
  return queryNames(event)
    .filter((name) => !known.has(name))
    .map((name) => ({ parameter: /^[A-Za-z_][A-Za-z0-9_.:-]{0,39}$/.test(name) ? name : '(unnamed)', message: 'is not supported by this endpoint' }));
}

/** The values of one query parameter (multi-value first). */
export function queryValues(event: APIGatewayProxyEvent, name: string): string[] {
  const multi = event.multiValueQueryStringParameters?.[name];
  if (multi && multi.length > 0) return multi;
  const single = event.queryStringParameters?.[name];
  return single === undefined || single === null ? [] : [single];
}

/** Every query parameter name the request carried. */
function queryNames(event: APIGatewayProxyEvent): string[] {
  return [...new Set([...Object.keys(event.multiValueQueryStringParameters ?? {}), ...Object.keys(event.queryStringParameters ?? {})])];
}

/** A path parameter that must look like a FHIR logical id this server could have issued; else 400. */
export function requireLogicalIdParameter(event: APIGatewayProxyEvent, name = 'id'): string {
  const raw = event.pathParameters?.[name];
  if (typeof raw !== 'string' || !/^[A-Za-z0-9\-.]{1,800}$/.test(raw)) {
    throw new HttpProblem('validation', 'the resource id is invalid', {
      errors: [{ parameter: name, message: 'must be a FHIR id: letters, digits, "-" and "."' }],
    });
  }
  return raw;
}

const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/;
const PREFIX = /^(\/[A-Za-z0-9._~-]{1,128}){0,4}$/;

/**
 * Absolute base of the FHIR routes as the caller reached them, e.g.
 * `https://abc.execute-api.eu-west-1.amazonaws.com/prod/fhir`: the gateway's domain name (else the
 * Host header), the path prefix before the route (the stage, or a custom domain's base path) and
 * the scheme from X-Forwarded-Proto (https unless it says http). Anything malformed falls back to a
 * relative `/fhir`.
 */
export function fhirBaseUrl(event: APIGatewayProxyEvent): string {
  const host = event.requestContext?.domainName ?? headerValue(event, 'host');
  const calledPath = event.requestContext?.path;
  const prefix =
    typeof calledPath === 'string' && typeof event.path === 'string' && calledPath.endsWith(event.path)
      ? calledPath.slice(0, calledPath.length - event.path.length)
      : '';
  if (!host || !HOST.test(host) || !PREFIX.test(prefix)) return '/fhir';
  const scheme = headerValue(event, 'x-forwarded-proto')?.toLowerCase() === 'http' ? 'http' : 'https';
  return `${scheme}://${host}${prefix}/fhir`;
}

/** A problem as an OperationOutcome: same status, headers and text as the problem+json it replaces. */
export function operationOutcomeProblem(problem: ProblemBody): { contentType: string; body: string } {
  const outcome = operationOutcome({
    status: problem.status,
    detail: problem.detail,
    requestId: problem.requestId,
    fields: problem.errors?.map(fieldLocation),
  });
  return { contentType: FHIR_CONTENT_TYPE, body: JSON.stringify(outcome) };
}

function fieldLocation(error: FieldError): { location: string; message: string } {
  if ('parameter' in error) return { location: error.parameter, message: error.message };
  if ('header' in error) return { location: `header ${error.header}`, message: error.message };
  return { location: error.pointer, message: error.message };
}

/** The HTTP pipeline of a FHIR route (`format: 'fhir'`): httpEndpoint, answering errors as OperationOutcome. */
export function fhirEndpoint(endpoint: HttpRoute, handle: EndpointHandler, options: EndpointOptions = {}) {
  return httpEndpoint(endpoint, handle, { ...options, renderProblem: operationOutcomeProblem });
}

/** fhirEndpoint for a FHIR function that reads no stored data (metadata, unknown route): no audit step, no SDK client. */
export function storelessFhirEndpoint(endpoint: HttpRoute, handle: (request: StorelessRequest) => Promise<EndpointResponse>, options: EndpointOptions = {}) {
  return storelessHttpEndpoint(endpoint, handle, { ...options, renderProblem: operationOutcomeProblem });
}
