/**
 * API Gateway (REST API, Lambda proxy integration) as the local stack runs it: an HTTP request
 * becomes a v1 proxy event, the authorizer function runs first (as the REQUEST authorizer does in
 * the cloud, result caching off), its context is attached, then the endpoint's handler runs and its
 * result is written back. `dispatch` is shared by the HTTP server and `npm run invoke`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { allowedMethods, AuthorizerFunction, HttpEndpoints, type HttpEndpoint } from '../config/service';
import { LAMBDA_MAX_PAYLOAD_BYTES } from '../http/body-limit';
import { PROBLEM_CONTENT_TYPE } from '../http/middleware/http-responses';
import { problemBody, type ProblemKind } from '../http/problem';
import { isValidRequestId } from '../http/request-id';
import { logger } from '../observability/logger';
import { loadHandler } from './function-registry';
import { lambdaContext } from './lambda-context';

/** API Gateway's own payload limit is 10 MB; Lambda's is 6 MB (event and result, checked in `dispatch`). */
export const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

export interface GatewayRequest {
  method: string;
  /** path with query string, e.g. /exportHl7Note?patientId=1 */
  url: string;
  /** raw header pairs as received (repeated headers stay repeated) */
  headers: Array<[string, string]>;
  body?: Buffer;
  sourceIp: string;
}

interface RouteMatch {
  endpoint: HttpEndpoint;
  pathParameters: Record<string, string> | null;
  /** a path parameter is not valid percent-encoding (API Gateway answers 400) */
  undecodable?: boolean;
}

function decodePathParameter(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The endpoint for a request. Like API Gateway, a static path segment wins over a path parameter at
 * the same position (`/interopInbox/held` is not the packet `held` of `/interopInbox/{packetId}`),
 * and a greedy path parameter (`/fhir/{proxy+}`: one or more segments) only takes a path no other
 * route matches.
 */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  const specificity = (template: string) =>
    template
      .split('/')
      .map((segment) => (segment.endsWith('+}') ? '2' : segment.startsWith('{') ? '1' : '0'))
      .join('');
  const greedy = (template: string) => (template.endsWith('+}') ? 1 : 0);
  const endpoints = HttpEndpoints.filter((e) => e.method === method).sort(
    (a, b) => greedy(a.path) - greedy(b.path) || specificity(a.path).localeCompare(specificity(b.path)),
  );
  for (const endpoint of endpoints) {
    const names: string[] = [];
    const pattern = endpoint.path
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\{(\w+)\\\+\}/g, (_m, name: string) => {
        names.push(name);
        return '([^/].*)';
      })
      .replace(/\{(\w+)\}/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
    const match = new RegExp(`^${pattern}$`).exec(path);
    if (!match) continue;
    const decoded = names.map((_n, i) => decodePathParameter(match[i + 1]!));
    if (decoded.some((v) => v === undefined)) return { endpoint, pathParameters: null, undecodable: true };
    const pathParameters = names.length ? Object.fromEntries(names.map((n, i) => [n, decoded[i]!])) : null;
    return { endpoint, pathParameters };
  }
  return undefined;
}

function gatewayProblem(
  kind: ProblemKind,
  detail: string,
  requestIdHeader: string | undefined,
  extraHeaders: Record<string, string> = {},
): APIGatewayProxyResult {
  const requestId = requestIdHeader && isValidRequestId(requestIdHeader) ? requestIdHeader : randomUUID();
  return {
    statusCode: problemBody(kind, detail, requestId).status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'x-request-id': requestId, 'cache-control': 'no-store', ...extraHeaders },
    body: JSON.stringify(problemBody(kind, detail, requestId)),
  };
}

/** The Host header the client sent (the local stand-in for API Gateway's domainName), if one was sent once. */
function hostOf(headers: Array<[string, string]>): string | undefined {
  const hosts = headers.filter(([name]) => name.toLowerCase() === 'host').map(([, value]) => value);
  return hosts.length === 1 ? hosts[0] : undefined;
}

function toEvent(request: GatewayRequest, route: RouteMatch): APIGatewayProxyEvent {
  const url = new URL(request.url, 'http://localhost');
  // null-prototype maps: a header or parameter named `constructor` or `__proto__` is just a name
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  const multiValueHeaders: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of request.headers) {
    // API Gateway sets X-Forwarded-Proto itself (https in the cloud; this server speaks http)
    if (name.toLowerCase() === 'x-forwarded-proto') continue;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  headers['X-Forwarded-Proto'] = 'http';
  multiValueHeaders['X-Forwarded-Proto'] = ['http'];
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  const multiQuery: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  let body: string | null = null;
  let isBase64Encoded = false;
  if (request.body && request.body.length > 0) {
    try {
      body = new TextDecoder('utf-8', { fatal: true }).decode(request.body);
    } catch {
      body = request.body.toString('base64');
      isBase64Encoded = true;
    }
  }
  const requestTimeEpoch = Date.now();
  return {
    resource: route.endpoint.path,
    path: url.pathname,
    httpMethod: request.method,
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: route.pathParameters,
    stageVariables: null,
    body,
    isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      identity: { sourceIp: request.sourceIp, userAgent: headers['user-agent'] ?? null } as APIGatewayProxyEvent['requestContext']['identity'],
      // the path the client called (in the cloud: /<stage>/... on the execute-api domain); no stage prefix here
      path: url.pathname,
      domainName: hostOf(request.headers),
      stage: 'local',
      requestId: randomUUID(),
      requestTimeEpoch,
      resourceId: route.endpoint.name,
      resourcePath: route.endpoint.path,
    },
  };
}

/** The REQUEST authorizer event API Gateway sends for a proxy event (no identity source, TTL 0). */
export function authorizerEventFor(event: APIGatewayProxyEvent): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:us-east-1:000000000000:local/local/${event.httpMethod}${event.resource}`,
    resource: event.resource,
    path: event.path,
    httpMethod: event.httpMethod,
    headers: event.headers as Record<string, string>,
    multiValueHeaders: event.multiValueHeaders as Record<string, string[]>,
    pathParameters: event.pathParameters,
    queryStringParameters: event.queryStringParameters as Record<string, string> | null,
    multiValueQueryStringParameters: event.multiValueQueryStringParameters as Record<string, string[]> | null,
    stageVariables: null,
    requestContext: { ...event.requestContext, authorizer: undefined },
  };
}

export interface DispatchOptions {
  /** the endpoint handler's remaining time in ms (default: its configured timeout) */
  handlerDeadlineMs?: number;
}

/** One request through the emulated gateway: route, authorizer, handler. */
export async function dispatch(request: GatewayRequest, options: DispatchOptions = {}): Promise<APIGatewayProxyResult> {
  const url = new URL(request.url, 'http://localhost');
  const requestIdHeader = request.headers.find(([n]) => n.toLowerCase() === 'x-request-id')?.[1];
  const route = matchRoute(request.method, url.pathname);
  if (!route) {
    // a path the list defines, with a method it does not: 405 with Allow (the cloud's ANY mock
    // method answers the same, infra/partner-api.ts)
    const known = HttpEndpoints.find((e) => matchRoute(e.method, url.pathname)?.endpoint === e);
    return known
      ? gatewayProblem('methodNotAllowed', `method ${request.method} is not allowed here; see the Allow header`, requestIdHeader, {
          allow: allowedMethods(known.path).join(', '),
        })
      : gatewayProblem('notFound', 'no such resource', requestIdHeader);
  }
  if (route.undecodable) return gatewayProblem('badRequest', 'the request path is not valid percent-encoding', requestIdHeader);
  if (request.body && request.body.length > GATEWAY_MAX_BODY_BYTES) {
    return gatewayProblem('payloadTooLarge', 'the request body exceeds 10 MB', requestIdHeader);
  }
  const event = toEvent(request, route);
  let authorization: APIGatewayAuthorizerResult;
  try {
    const authorizer = await loadHandler(AuthorizerFunction.name);
    authorization = (await authorizer(
      authorizerEventFor(event),
      lambdaContext(AuthorizerFunction.name, AuthorizerFunction.timeoutSeconds),
      () => undefined,
    )) as APIGatewayAuthorizerResult;
  } catch (error) {
    // the cloud's AUTHORIZER_FAILURE gateway response: 503, retryable
    logger.error('gateway.authorizer_failed', { route: route.endpoint.name, errorName: (error as Error).name });
    return gatewayProblem('unavailable', 'authorization is temporarily unavailable; retry the same request', requestIdHeader, { 'retry-after': '2' });
  }
  const allowed = authorization.policyDocument.Statement.some((s) => s.Effect === 'Allow');
  if (!allowed) return gatewayProblem('forbidden', 'the authorizer denied this request', requestIdHeader);
  event.requestContext.authorizer = { ...(authorization.context ?? {}), principalId: authorization.principalId };
  // Lambda refuses an invocation whose event (or result) exceeds 6 MB; the cloud's API Gateway then
  // answers a 5xx of its own. The app's body limit (lib/http/body-limit.ts) keeps this out of reach.
  if (Buffer.byteLength(JSON.stringify(event), 'utf8') > LAMBDA_MAX_PAYLOAD_BYTES) {
    logger.error('gateway.request_payload_too_large', { route: route.endpoint.name });
    return { ...gatewayProblem('internal', 'the Lambda invocation payload exceeds 6 MB', requestIdHeader), statusCode: 502 };
  }
  const handler = await loadHandler(route.endpoint.name);
  try {
    const context = lambdaContext(
      route.endpoint.name,
      options.handlerDeadlineMs !== undefined ? options.handlerDeadlineMs / 1000 : route.endpoint.timeoutSeconds,
    );
    const result = (await handler(event, context, () => undefined)) as APIGatewayProxyResult;
    if (Buffer.byteLength(JSON.stringify(result), 'utf8') > LAMBDA_MAX_PAYLOAD_BYTES) {
      logger.error('gateway.response_payload_too_large', { route: route.endpoint.name });
      return { ...gatewayProblem('internal', 'the Lambda response payload exceeds 6 MB', requestIdHeader), statusCode: 502 };
    }
    return result;
  } catch (error) {
    // a handler that throws is a Lambda error: API Gateway answers 502
    logger.error('gateway.handler_failed', { route: route.endpoint.name, errorName: (error as Error).name });
    return { ...gatewayProblem('internal', 'the endpoint failed', requestIdHeader), statusCode: 502 };
  }
}

export interface ApiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * The local API: an HTTP server on loopback that feeds every request through `dispatch`.
 * `ready`: requests that arrive before it settles wait for it (nothing is answered, not even a 503,
 * while the rest of the local stack starts: the staff sign-in provider needs the API's port first).
 */
export async function startApiServer(options: { host: string; port: number; ready?: Promise<void>; onHeld?: () => void }): Promise<ApiServer> {
  let started = options.ready === undefined;
  const ready = (options.ready ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => {
      started = true;
    });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > GATEWAY_MAX_BODY_BYTES + 1) {
        tooLarge = true;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!started) options.onHeld?.();
      void ready.then(() => answer());
    });
    const answer = () => {
      const headers: Array<[string, string]> = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      const body = tooLarge ? Buffer.alloc(GATEWAY_MAX_BODY_BYTES + 1) : Buffer.concat(chunks);
      dispatch({ method: req.method ?? 'GET', url: req.url ?? '/', headers, body, sourceIp: req.socket.remoteAddress ?? '127.0.0.1' })
        .then((result) => {
          const outHeaders: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(result.headers ?? {})) outHeaders[k.toLowerCase()] = String(v);
          for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) outHeaders[k.toLowerCase()] = v.map(String);
          const payload = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
          outHeaders['content-length'] = String(payload.length);
          res.writeHead(result.statusCode, outHeaders);
          res.end(payload);
        })
        .catch(() => {
          res.writeHead(500, { 'content-type': PROBLEM_CONTENT_TYPE });
          res.end(JSON.stringify({ type: '/problems/internal-error', title: 'Internal error', status: 500, detail: 'local gateway failure' }));
        });
    };
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
