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
import { parseDateCondition, parseTokenList, type DateCondition, type TokenValue } from '../fhir/search-params';

export const FHIR_MEDIA_TYPE = 'application/fhir+json';
export const FHIR_CONTENT_TYPE = 'application/fhir+json; charset=utf-8';
/** _count: 1..200, default 20 (the HL7 summary's limits) */
export const FHIR_COUNT = { min: 1, max: 200, fallback: 20 } as const;

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

function queryValues(event: APIGatewayProxyEvent, name: string): string[] {
  const multi = event.multiValueQueryStringParameters?.[name];
  if (multi && multi.length > 0) return multi;
  const single = event.queryStringParameters?.[name];
  return single === undefined || single === null ? [] : [single];
}

/** Every query parameter name the request carried. */
function queryNames(event: APIGatewayProxyEvent): string[] {
  return [...new Set([...Object.keys(event.multiValueQueryStringParameters ?? {}), ...Object.keys(event.queryStringParameters ?? {})])];
}

export interface FhirQuery {
  count: number;
  pageToken?: string;
  /** the `patient` parameter's id (`Patient/` prefix removed), when the route takes one */
  patient?: string;
  /** `category` / `code`: an OR list of tokens (lib/fhir/search-params.ts) */
  category?: TokenValue[];
  code?: TokenValue[];
  /** `date`, each repetition a condition (AND); empty when not sent */
  date: DateCondition[];
  /** `identifier`: one `system|value` token */
  identifier?: { system: string; value: string };
  /** `_id`: an OR list of logical ids */
  ids?: string[];
  /** the search parameters as sent (name, value), in the route's order: what `self` and `next` links repeat */
  search: Array<[string, string]>;
}

/** Parameters a FHIR route may accept besides `_format`. */
export type FhirParameter = '_count' | '_page_token' | 'patient' | 'category' | 'code' | 'date' | 'identifier' | '_id';

const MAX_DATE_CONDITIONS = 4;
const MAX_IDS = 10;
const LOGICAL_ID = /^[A-Za-z0-9\-.]{1,800}$/;

const MAX_TOKEN_LENGTH = 1024;

/**
 * Reads the query of a FHIR route. `accepted` lists the parameters this route understands besides
 * `_format`; an unknown parameter is a 400 (a filter the server would silently ignore could hand a
 * partner more than it asked for). `patient` is required when accepted.
 */
export function readFhirQuery(event: APIGatewayProxyEvent, accepted: readonly FhirParameter[]): FhirQuery {
  const errors: FieldError[] = [];
  const known = new Set<string>([...accepted, '_format']);
  for (const name of queryNames(event)) {
    // names are echoed only when they are short, plain parameter names (never caller text at large)
    if (!known.has(name))
      errors.push({ parameter: /^[A-Za-z_][A-Za-z0-9_.:-]{0,39}$/.test(name) ? name : '(unnamed)', message: 'is not supported by this endpoint' });
  }
  const single = (name: string): string | undefined => {
    const list = [...new Set(queryValues(event, name))];
    if (list.length > 1) {
      errors.push({ parameter: name, message: 'must be sent once' });
      return undefined;
    }
    return list[0];
  };
  const query: FhirQuery = { count: FHIR_COUNT.fallback, date: [], search: [] };
  if (accepted.includes('_count')) {
    const raw = single('_count');
    if (raw !== undefined) {
      const value = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
      if (!(value >= FHIR_COUNT.min && value <= FHIR_COUNT.max))
        errors.push({ parameter: '_count', message: `must be an integer from ${FHIR_COUNT.min} to ${FHIR_COUNT.max}` });
      else query.count = value;
    }
  }
  if (accepted.includes('_page_token')) {
    const raw = single('_page_token');
    if (raw !== undefined) {
      if (raw === '' || raw.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw))
        errors.push({ parameter: '_page_token', message: 'is not a page token this server issued' });
      else query.pageToken = raw;
    }
  }
  if (accepted.includes('patient')) {
    const raw = single('patient');
    if (raw === undefined || raw === '') errors.push({ parameter: 'patient', message: 'is required (a Patient id, or Patient/<id>)' });
    else {
      const id = raw.startsWith('Patient/') ? raw.slice('Patient/'.length) : raw;
      if (!/^[A-Za-z0-9\-.]{1,800}$/.test(id))
        errors.push({ parameter: 'patient', message: 'must be a Patient id (letters, digits, "-" and ".") or Patient/<id>' });
      else {
        query.patient = id;
        query.search.push(['patient', raw]);
      }
    }
  }
  readSearchParameters(event, accepted, query, errors, single);
  if (errors.length > 0) throw new HttpProblem('validation', 'query parameters are missing or invalid', { errors });
  return query;
}

/** category, code, date, identifier, _id: parsed into `query`, one error per bad value. */
function readSearchParameters(
  event: APIGatewayProxyEvent,
  accepted: readonly FhirParameter[],
  query: FhirQuery,
  errors: FieldError[],
  single: (name: string) => string | undefined,
): void {
  for (const name of ['category', 'code'] as const) {
    if (!accepted.includes(name)) continue;
    const raw = single(name);
    if (raw === undefined) continue;
    const parsed = parseTokenList(raw);
    if (!parsed.ok) errors.push({ parameter: name, message: parsed.message });
    else {
      query[name] = parsed.value;
      query.search.push([name, raw]);
    }
  }
  if (accepted.includes('date')) {
    const values = queryValues(event, 'date');
    if (values.length > MAX_DATE_CONDITIONS) errors.push({ parameter: 'date', message: `may be sent at most ${MAX_DATE_CONDITIONS} times` });
    else
      for (const raw of values) {
        const parsed = parseDateCondition(raw);
        if (!parsed.ok) errors.push({ parameter: 'date', message: parsed.message });
        else {
          query.date.push(parsed.value);
          query.search.push(['date', raw]);
        }
      }
  }
  if (accepted.includes('identifier')) {
    const raw = single('identifier');
    if (raw !== undefined) {
      const parsed = parseTokenList(raw);
      const token = parsed.ok && parsed.value.length === 1 ? parsed.value[0]! : undefined;
      if (!token || token.system === undefined || token.system === '' || token.code === undefined)
        errors.push({
          parameter: 'identifier',
          message: 'must be one system|value (the system is the Patient identifier system, e.g. urn:interop:mrn:<authority>)',
        });
      else {
        query.identifier = { system: token.system, value: token.code };
        query.search.push(['identifier', raw]);
      }
    }
  }
  if (accepted.includes('_id')) {
    const raw = single('_id');
    if (raw !== undefined) {
      const ids = [...new Set(raw.split(','))];
      if (ids.length > MAX_IDS || !ids.every((id) => LOGICAL_ID.test(id)))
        errors.push({ parameter: '_id', message: `must be 1 to ${MAX_IDS} comma-separated ids (letters, digits, "-" and ".")` });
      else {
        query.ids = ids;
        query.search.push(['_id', raw]);
      }
    }
  }
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
