/**
 * The OpenAPI 3.1 document of the partner API, built from the endpoint list (lib/config/service.ts:
 * method, path, scope), the request schemas in schemas/ (referenced, never copied by hand), the
 * problem types (lib/http/problem.ts) and the per-endpoint documentation (./endpoint-docs.ts).
 * `npm run openapi` writes it to docs/openapi.json; a test fails when that file is stale.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { HttpEndpoints, routeScopes, type HttpEndpoint } from '../config/service';
import { HL7_MEDIA_TYPE } from '../http/hl7-negotiation';
import { PROBLEM_CONTENT_TYPE } from '../http/middleware/http-responses';
import { PROBLEM_TYPE_BASE, ProblemTypes, type ProblemKind } from '../http/problem';
import { REQUEST_ID_PATTERN } from '../http/request-id';
import { PURPOSE_OF_USE_HEADER } from '../http/purpose-of-use';
import { disclosesPatientRecords } from '../disclosures/disclosing-routes';
import { PURPOSES_OF_USE } from '../relationships/relationships';
import { EndpointDocs, type EndpointDoc, type ProblemDoc, type SuccessDoc } from './endpoint-docs';
import { ResponseSchemas } from './response-schemas';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const OPENAPI_FILE = path.join(REPO_ROOT, 'docs', 'openapi.json');
const SCHEMAS_DIR = path.join(REPO_ROOT, 'schemas');
const EXAMPLES_DIR = path.join(__dirname, 'examples');

type Json = Record<string, unknown>;

/** The statuses every endpoint can answer besides its own. */
export const COMMON_PROBLEM_STATUSES = [400, 401, 403, 429, 500, 503] as const;
/** Statuses at which the answer may come from API Gateway itself (no x-ratelimit-* headers then). */
const GATEWAY_STATUSES = new Set([400, 404, 413, 500, 502, 503]);
const EXAMPLE_REQUEST_ID = '8f14e45f-ceea-4a67-9f3c-5f5c6b0f2a11';

export class MissingEndpointDocError extends Error {
  override readonly name = 'MissingEndpointDocError';
  constructor(readonly endpoints: string[]) {
    super(
      `no OpenAPI documentation for endpoint(s) ${endpoints.join(', ')}: add an entry keyed by the endpoint name to EndpointDocs in lib/openapi/endpoint-docs.ts (summary, parameters, request body, every status with an example), then run \`npm run openapi\``,
    );
  }
}

/** `lab-result.schema.json` -> `LabResult` */
export function schemaComponentName(file: string): string {
  return file
    .replace(/\.schema\.json$/, '')
    .split(/[^A-Za-z0-9]+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** A schemas/ file as components: `$schema`/`$id` dropped, `definitions` hoisted, refs rewritten. */
function requestSchemaComponents(file: string): Record<string, Json> {
  const schema = JSON.parse(readFileSync(path.join(SCHEMAS_DIR, file), 'utf8')) as Json;
  const base = schemaComponentName(file);
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!value || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) {
      if (k === '$ref' && typeof v === 'string') {
        if (v === '#') out[k] = `#/components/schemas/${base}`;
        else if (v.startsWith('#/definitions/')) out[k] = `#/components/schemas/${base}_${v.slice('#/definitions/'.length)}`;
        else throw new Error(`schemas/${file}: $ref ${v} cannot be published (only #/definitions/... refs)`);
      } else out[k] = rewrite(v);
    }
    return out;
  };
  const { $schema: _s, $id: _i, definitions, ...root } = schema;
  const components: Record<string, Json> = { [base]: rewrite(root) as Json };
  for (const [name, def] of Object.entries((definitions as Record<string, Json> | undefined) ?? {})) components[`${base}_${name}`] = rewrite(def) as Json;
  return components;
}

function problemExample(kind: string, detail: string, errors?: unknown[], extensions?: Json): Json {
  const t = ProblemTypes[kind as ProblemKind];
  if (!t) throw new Error(`unknown problem kind ${kind} in lib/openapi/endpoint-docs.ts`);
  return {
    type: PROBLEM_TYPE_BASE + t.slug,
    title: t.title,
    status: t.status,
    detail,
    requestId: EXAMPLE_REQUEST_ID,
    ...(errors ? { errors } : {}),
    ...(extensions ?? {}),
  };
}

function headersFor(status: number, doc: EndpointDoc): Json {
  const counted = !GATEWAY_STATUSES.has(status);
  const headers: Json = {
    'x-request-id': { $ref: '#/components/headers/RequestId' },
    'cache-control': { $ref: '#/components/headers/CacheControl' },
    'x-ratelimit-limit': { $ref: counted ? '#/components/headers/RateLimitLimit' : '#/components/headers/RateLimitLimitIfCounted' },
    'x-ratelimit-remaining': {
      $ref: counted ? '#/components/headers/RateLimitRemaining' : '#/components/headers/RateLimitRemainingIfCounted',
    },
    'x-ratelimit-reset': { $ref: counted ? '#/components/headers/RateLimitReset' : '#/components/headers/RateLimitResetIfCounted' },
  };
  if (status === 429 || status === 503) headers['retry-after'] = { $ref: '#/components/headers/RetryAfter' };
  if (status === 409 && doc.replayHeader) headers['retry-after'] = { $ref: '#/components/headers/RetryAfterIfInProgress' };
  if ((status === 200 || (status === 201 && doc.fhirRequestBody)) && doc.replayHeader)
    headers['idempotent-replayed'] = { $ref: '#/components/headers/IdempotentReplayed' };
  if (status === 201 && doc.fhirRequestBody)
    headers.location = { description: 'The created resource, readable through the FHIR reads (when the answer names one).', schema: { type: 'string' } };
  return headers;
}

function successResponse(status: number, success: SuccessDoc, doc: EndpointDoc): Json {
  if (success.kind === 'fhir') {
    return {
      description: `${success.description} \`Content-Type: application/fhir+json\`.`,
      headers: headersFor(status, doc),
      content: {
        [FHIR_MEDIA_TYPE]: {
          schema: { $ref: `#/components/schemas/${success.schema}` },
          example: JSON.parse(readFileSync(path.join(EXAMPLES_DIR, success.exampleFile), 'utf8')) as unknown,
        },
      },
    };
  }
  if (success.kind === 'html') {
    return {
      description: success.description,
      headers: headersFor(status, doc),
      content: { 'text/html': { schema: { type: 'string' }, example: success.example } },
    };
  }
  if (success.kind === 'hl7') {
    const message = readFileSync(path.join(EXAMPLES_DIR, success.exampleFile), 'utf8');
    return {
      description: `${success.description} \`Content-Type: application/hl7-v2; charset=utf-8\`; segments end with a carriage return.`,
      headers: headersFor(status, doc),
      content: { [HL7_MEDIA_TYPE]: { schema: { $ref: '#/components/schemas/Hl7Message' }, example: message } },
    };
  }
  return {
    description: success.description,
    headers: headersFor(status, doc),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${success.schema}` }, examples: success.examples } },
  };
}

/** A refusal of a FHIR route: the same status, headers and text as an OperationOutcome (docs/fhir.md). */
function outcomeResponse(status: number, problem: ProblemDoc, doc: EndpointDoc): Json {
  const examples: Json = {};
  for (const [name, e] of Object.entries(problem.examples)) {
    examples[name] = {
      summary: e.summary,
      value: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: FHIR_ISSUE_CODES[status] ?? 'processing', diagnostics: e.detail }] },
    };
  }
  return {
    description: problem.description,
    headers: headersFor(status, doc),
    content: { [FHIR_MEDIA_TYPE]: { schema: { $ref: '#/components/schemas/OperationOutcome' }, examples } },
  };
}

const FHIR_MEDIA_TYPE = 'application/fhir+json';
/** The issue code each refusal status carries on the FHIR routes (lib/fhir). */
const FHIR_ISSUE_CODES: Record<number, string> = {
  400: 'invalid',
  401: 'login',
  403: 'forbidden',
  404: 'not-found',
  406: 'not-supported',
  409: 'conflict',
  413: 'too-costly',
  415: 'not-supported',
  429: 'throttled',
  500: 'exception',
  503: 'transient',
};

function problemResponse(status: number, problem: ProblemDoc, doc: EndpointDoc): Json {
  const examples: Json = {};
  for (const [name, e] of Object.entries(problem.examples)) {
    if (ProblemTypes[e.kind as ProblemKind]?.status !== status) throw new Error(`example ${name} of ${status}: problem kind ${e.kind} has another status`);
    examples[name] = { summary: e.summary, value: problemExample(e.kind, e.detail, e.errors, e.extensions) };
  }
  return {
    description: problem.description,
    headers: headersFor(status, doc),
    content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' }, examples } },
  };
}

const commonProblems: Record<number, ProblemDoc> = {
  401: {
    description: 'The x-api-key header is missing, unknown or revoked.',
    examples: { missing: { summary: 'no key', kind: 'unauthenticated', detail: 'the x-api-key header is missing' } },
  },
  403: {
    description: "The key lacks this operation's scope, or its partner is blocked.",
    examples: { scope: { summary: 'missing scope', kind: 'forbidden', detail: 'this API key lacks the scope this endpoint requires' } },
  },
  429: {
    description: "The key's (or, without a valid key, the source address's) request limit for the current window is used up; `Retry-After` says when to retry.",
    examples: {
      limited: { summary: 'limit reached', kind: 'rateLimited', detail: 'rate limit exceeded; retry after the time in Retry-After' },
    },
  },
  500: {
    description: 'An unexpected failure; no internals in the body. Retry the same request (same x-request-id) to learn its outcome.',
    examples: {
      internal: {
        summary: 'unexpected failure',
        kind: 'internal',
        detail: 'the request failed; it may have been partly applied: retry the same request (same x-request-id) to learn its outcome',
      },
    },
  },
  503: {
    description:
      'A dependency (DynamoDB, KMS, SQS, S3, the authorizer) is throttled or unavailable; nothing was half-written. Retry after `Retry-After` seconds.',
    examples: {
      unavailable: {
        summary: 'dependency unavailable',
        kind: 'unavailable',
        detail: 'a dependency is temporarily unavailable; retry the same request',
      },
    },
  },
};

/** Inbox operations also accept a signed-in staff member's ID token (the authorizer checks it). */
function staffMay(endpoint: HttpEndpoint): boolean {
  return routeScopes(endpoint).some((scope) => scope.startsWith('interop:inbox:'));
}

export function securityFor(endpoint: HttpEndpoint): Json[] {
  if (endpoint.anonymous) return [];
  // OpenAPI security: alternatives are separate requirement objects (any one satisfies)
  const scopes = routeScopes(endpoint);
  const byKey = scopes.map((scope) => ({ apiKey: [scope] }));
  return staffMay(endpoint) ? [...byKey, ...scopes.map((scope) => ({ staffIdToken: [scope] }))] : byKey;
}

/** Refusals every endpoint gives the same way: one shared response each (an endpoint may override). */
const sharedProblemResponses: Record<number, string> = {
  401: 'Unauthenticated',
  403: 'Forbidden',
  429: 'RateLimited',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

function operation(endpoint: HttpEndpoint, doc: EndpointDoc): Json {
  const common = endpoint.anonymous
    ? Object.fromEntries(Object.entries(commonProblems).filter(([status]) => status !== '401' && status !== '403'))
    : commonProblems;
  const problems: Record<number, ProblemDoc> = { ...common, 400: doc.badRequest, ...doc.problems };
  const responses: Json = {};
  const statuses = [...Object.keys(doc.success), ...Object.keys(problems)].map(Number).sort((a, b) => a - b);
  const hl7 = Object.values(doc.success).some((s) => s.kind === 'hl7');
  for (const status of statuses) {
    const success = doc.success[status];
    if (success) responses[String(status)] = successResponse(status, success, doc);
    else if (endpoint.format === 'fhir') responses[String(status)] = outcomeResponse(status, problems[status]!, doc);
    else if (sharedProblemResponses[status] && !doc.problems[status])
      responses[String(status)] = { $ref: `#/components/responses/${sharedProblemResponses[status]}` };
    else responses[String(status)] = problemResponse(status, problems[status]!, doc);
  }
  const parameters: unknown[] = doc.parameters.map((p) => ({
    name: p.name,
    in: p.in,
    required: p.required,
    description: p.description,
    schema: p.schema,
    example: p.example,
  }));
  parameters.push({ $ref: doc.replayHeader ? '#/components/parameters/IdempotencyRequestId' : '#/components/parameters/RequestId' });
  if (hl7) parameters.push({ $ref: '#/components/parameters/AcceptHl7' });
  if (disclosesPatientRecords(endpoint) && endpoint.needs.tables?.audit) parameters.push({ $ref: '#/components/parameters/PurposeOfUse' });
  const op: Json = {
    operationId: endpoint.name,
    summary: doc.summary,
    description: endpoint.anonymous
      ? `${doc.description}\n\nNo key or token needed.`
      : `${doc.description}\n\nRequired scope: ${routeScopes(endpoint)
          .map((scope) => `\`${scope}\``)
          .join(' or ')}${staffMay(endpoint) ? ' (or a staff ID token)' : ''}.`,
    tags: [doc.tag],
    security: securityFor(endpoint),
    ...(endpoint.anonymous ? {} : { 'x-required-scope': routeScopes(endpoint).join(' ') }),
    parameters,
  };
  if (doc.hl7RequestBody) {
    op.requestBody = {
      required: true,
      description: doc.hl7RequestBody.description,
      content: {
        [HL7_MEDIA_TYPE]: {
          schema: { $ref: '#/components/schemas/Hl7Message' },
          example: readFileSync(path.join(EXAMPLES_DIR, doc.hl7RequestBody.exampleFile), 'utf8'),
        },
      },
    };
  }
  if (doc.fhirRequestBody) {
    const example = JSON.parse(readFileSync(path.join(EXAMPLES_DIR, doc.fhirRequestBody.exampleFile), 'utf8')) as unknown;
    // a FHIR resource (the route names its resourceType in the description); checked by lib/fhir-intake/structure.ts
    const schema = { $ref: '#/components/schemas/FhirResource' };
    op.requestBody = {
      required: true,
      description: `${doc.fhirRequestBody.description} \`resourceType\`: ${doc.fhirRequestBody.resourceType}.`,
      content: { [FHIR_MEDIA_TYPE]: { schema, example }, 'application/json': { schema, example } },
    };
  }
  if (doc.requestBody) {
    op.requestBody = {
      required: true,
      description: doc.requestBody.description,
      content: {
        'application/json': {
          schema: { $ref: `#/components/schemas/${schemaComponentName(doc.requestBody.schemaFile)}` },
          examples: doc.requestBody.examples,
        },
      },
    };
  }
  op.responses = responses;
  return op;
}

function header(description: string, required: boolean, schema: Json, example: unknown): Json {
  return { description, required, schema, example };
}

const rateHeaders = {
  Limit: ['Requests allowed per window for this key (or, without a valid key, per source address).', { type: 'integer', minimum: 1 }, 1000],
  Remaining: ['Requests left in the current window.', { type: 'integer', minimum: 0 }, 999],
  Reset: [
    "Unix epoch seconds at which the oldest request counted in the caller's sliding window leaves it, i.e. when `x-ratelimit-remaining` next grows.",
    { type: 'integer' },
    1795317600,
  ],
} as const;

const noEndpoint = { replayHeader: false } as EndpointDoc;

function components(endpointDocs: Array<[HttpEndpoint, EndpointDoc]>): Json {
  const schemas: Record<string, Json> = {
    Problem: {
      type: 'object',
      description: 'RFC 9457 problem details. Never carries a stack trace, an internal message or PHI.',
      required: ['type', 'title', 'status', 'detail', 'requestId'],
      properties: {
        type: { type: 'string', enum: [...new Set(Object.values(ProblemTypes).map((t) => PROBLEM_TYPE_BASE + t.slug))] },
        title: { type: 'string', minLength: 1 },
        status: { type: 'integer', minimum: 400, maximum: 599 },
        detail: { type: 'string', minLength: 1 },
        requestId: { type: 'string', minLength: 1, description: 'equals the x-request-id response header' },
        errors: {
          type: 'array',
          description: 'every failing field (validation errors)',
          items: { $ref: '#/components/schemas/FieldError' },
        },
      },
    },
    FieldError: {
      oneOf: [
        {
          type: 'object',
          required: ['pointer', 'message'],
          properties: { pointer: { type: 'string', description: 'JSON pointer (RFC 6901) into the body' }, message: { type: 'string' } },
          additionalProperties: false,
        },
        {
          type: 'object',
          required: ['parameter', 'message'],
          properties: { parameter: { type: 'string' }, message: { type: 'string' } },
          additionalProperties: false,
        },
        {
          type: 'object',
          required: ['header', 'message'],
          properties: { header: { type: 'string' }, message: { type: 'string' } },
          additionalProperties: false,
        },
      ],
    },
    Hl7Message: {
      type: 'string',
      contentMediaType: HL7_MEDIA_TYPE,
      description:
        'HL7 v2 in ER7 encoding: one message starting with `MSH|^~\\&|`, or a batch starting with `FHS|^~\\&|` / `BHS|^~\\&|`; every segment (the last included) ends with CR (0x0D).',
      pattern: '^(MSH|FHS|BHS)\\|\\^~\\\\&\\|',
    },
    FhirResource: {
      type: 'object',
      description: 'A FHIR R4 resource (JSON), valid against the official R4 definitions (test/fhir/r4-validator.ts).',
      required: ['resourceType'],
      properties: { resourceType: { type: 'string', minLength: 1 }, id: { type: 'string' } },
    },
    FhirBundle: {
      type: 'object',
      description: 'A FHIR R4 searchset Bundle, with a `next` link while there are more pages.',
      required: ['resourceType', 'type'],
      properties: { resourceType: { const: 'Bundle' }, type: { const: 'searchset' }, link: { type: 'array' }, entry: { type: 'array' } },
    },
    OperationOutcome: {
      type: 'object',
      description: 'A FHIR R4 OperationOutcome: the refusal of a FHIR route, same status and headers as problem+json elsewhere.',
      required: ['resourceType', 'issue'],
      properties: {
        resourceType: { const: 'OperationOutcome' },
        issue: {
          type: 'array',
          minItems: 1,
          items: { type: 'object', required: ['severity', 'code'], properties: { severity: { type: 'string' }, code: { type: 'string' } } },
        },
      },
    },
    ...(ResponseSchemas as unknown as Record<string, Json>),
  };
  for (const [, doc] of endpointDocs) if (doc.requestBody) Object.assign(schemas, requestSchemaComponents(doc.requestBody.schemaFile));
  const headers: Json = {
    RequestId: header(
      "The request id: the caller's `x-request-id` when it sent a valid one, else a generated UUID. Also `requestId` in every JSON body.",
      true,
      { type: 'string', pattern: REQUEST_ID_PATTERN.source },
      EXAMPLE_REQUEST_ID,
    ),
    CacheControl: header('Always `no-store` (answers may carry PHI).', true, { const: 'no-store' }, 'no-store'),
    RetryAfter: header('Seconds to wait before retrying.', true, { type: 'integer', minimum: 1 }, 2),
    RetryAfterIfInProgress: header(
      'Seconds to wait, when the first request with this x-request-id is still in progress.',
      false,
      { type: 'integer', minimum: 1 },
      2,
    ),
    IdempotentReplayed: header(
      '`true` when this is the stored answer of an earlier request with the same x-request-id and body.',
      false,
      { const: 'true' },
      'true',
    ),
  };
  for (const [name, [description, schema, example]] of Object.entries(rateHeaders)) {
    headers[`RateLimit${name}`] = header(description, true, schema, example);
    headers[`RateLimit${name}IfCounted`] = header(
      `${description} Absent when API Gateway answers by itself (body over 10 MB, undecodable path, authorizer or function failure).`,
      false,
      schema,
      example,
    );
  }
  return {
    securitySchemes: {
      staffIdToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          "A staff member's OpenID Connect ID token (`Authorization: Bearer ...`; the Cognito user pool in the cloud, the local OpenID provider with `npm start`), accepted by the inbox operations: any signed-in staff member may read, the reviewers group may route. See docs/inbox-page.md.",
      },
      apiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'x-api-key',
        description:
          'A partner API key (issued with `npm run keys -- create`; stored only as its SHA-256). Each key carries scopes; each operation lists the scope it requires (`interop:export:hl7`, `interop:ingest:results`, `interop:ingest:forms`, `interop:inbox:review`, ...). 401 without a valid key, 403 without the scope.',
      },
    },
    responses: Object.fromEntries(
      Object.entries(sharedProblemResponses).map(([status, name]) => [name, problemResponse(Number(status), commonProblems[Number(status)]!, noEndpoint)]),
    ),
    parameters: {
      RequestId: {
        name: 'x-request-id',
        in: 'header',
        required: false,
        description:
          'Your id for this request (1-128 visible ASCII characters, else 400); echoed in the `x-request-id` response header and `requestId`. Generated (UUID) when absent.',
        schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source },
        example: 'lis-0001',
      },
      IdempotencyRequestId: {
        name: 'x-request-id',
        in: 'header',
        required: false,
        description:
          'Idempotency key (1-128 visible ASCII characters, else 400): the same id with the same body replays the first answer (`idempotent-replayed: true`), with another body it is a 409. Send a unique id per submission. Echoed in the `x-request-id` response header.',
        schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source },
        example: 'lis-0001',
      },
      PurposeOfUse: {
        name: PURPOSE_OF_USE_HEADER,
        in: 'header',
        required: false,
        description: `Why you read these records: one HL7 v3 PurposeOfUse code (${PURPOSES_OF_USE.join(', ')}), recorded with the disclosure in the patient's accounting (docs/disclosures.md). Absent: your relationship's purpose with the patient, else TREAT. Any other value is a 400 naming the header.`,
        schema: { type: 'string', enum: [...PURPOSES_OF_USE] },
        example: 'TREAT',
      },
      AcceptHl7: {
        name: 'accept',
        in: 'header',
        required: false,
        description: '`application/hl7-v2`, `application/*`, `*/*` or absent; anything excluding HL7 v2 is a 406.',
        schema: { type: 'string' },
        example: HL7_MEDIA_TYPE,
      },
    },
    headers,
    schemas,
  };
}

export interface BuildOptions {
  endpoints?: readonly HttpEndpoint[];
  docs?: Record<string, EndpointDoc>;
  version?: string;
}

/** The document; throws `MissingEndpointDocError` when an endpoint has no documentation entry. */
export function buildOpenApiDocument(options: BuildOptions = {}): Json {
  const endpoints = options.endpoints ?? HttpEndpoints;
  const docs = options.docs ?? EndpointDocs;
  const missing = endpoints.filter((e) => !Object.prototype.hasOwnProperty.call(docs, e.name)).map((e) => e.name);
  if (missing.length > 0) throw new MissingEndpointDocError(missing);
  const unknown = Object.keys(docs).filter((name) => !endpoints.some((e) => e.name === name));
  if (unknown.length > 0 && !options.endpoints)
    throw new Error(`lib/openapi/endpoint-docs.ts documents endpoints that are not in HttpEndpoints: ${unknown.join(', ')}`);
  const pairs = endpoints.map((e) => [e, docs[e.name]!] as [HttpEndpoint, EndpointDoc]);
  const paths: Record<string, Json> = {};
  for (const [endpoint, doc] of pairs) {
    const item = (paths[endpoint.path] ??= {});
    item[endpoint.method.toLowerCase()] = operation(endpoint, doc);
  }
  const tags = [...new Set(pairs.map(([, d]) => d.tag))];
  const version = options.version ?? (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Clinical interoperability partner API',
      version,
      summary: 'HL7 v2.5.1 chart exports, lab result intake, form intake and the interop inbox.',
      description:
        'Every operation needs an `x-api-key` with the scope it lists. Every answer carries `x-request-id`, `Cache-Control: no-store` and (when the request was counted) `x-ratelimit-limit`, `x-ratelimit-remaining`, `x-ratelimit-reset`; 429 and 503 carry `Retry-After`. Errors are RFC 9457 `application/problem+json` with `type`, `title`, `status`, `detail`, `requestId` and, for validation, every failing field. Generated by `npm run openapi` from the endpoint list (lib/config/service.ts) and schemas/.',
      contact: { name: 'Interop platform team', email: 'interop-platform@example.com' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      { url: 'http://127.0.0.1:3000', description: 'local stack (`npm start`)' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: 'a deployed stage (the `ApiUrl` output of the CDK stack)',
        variables: { apiId: { default: 'abcdef1234' }, region: { default: 'us-east-1' }, stage: { default: 'dev' } },
      },
    ],
    security: [{ apiKey: [] }],
    tags: tags.map((name) => ({ name, description: tagDescriptions[name] ?? name })),
    paths,
    components: components(pairs),
  };
}

const tagDescriptions: Record<string, string> = {
  'HL7 exports': 'Chart records as HL7 v2.5.1 messages (`application/hl7-v2`).',
  'Lab results': 'Lab result intake from partner laboratories.',
  'Form intake': 'Form submissions from form tools.',
  'Interop inbox': 'Staff review of form packets that could not be routed automatically.',
  'HL7 intake': 'HL7 v2 messages from partners (ORU, ADT, MDM), answered with HL7 ACKs.',
  'FHIR R4': 'FHIR R4 views of the chart and FHIR intake of lab results and forms (`application/fhir+json`); refusals are OperationOutcome.',
  Disclosures: "The accounting of disclosures of a patient (HIPAA 45 CFR 164.528), for the clinic's privacy reviewers.",
  'API reference': 'This document and its rendered page, published with every stage; no key needed.',
};

/** The file `npm run openapi` writes: 2-space JSON and a final newline. */
export function renderOpenApiDocument(document: Json = buildOpenApiDocument()): string {
  return JSON.stringify(document, null, 2) + '\n';
}
