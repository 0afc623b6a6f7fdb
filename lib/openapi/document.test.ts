import { readFileSync } from 'node:fs';
import { validate, compileErrors } from '@readme/openapi-parser';
import { HttpEndpoints, routeScopes, type HttpEndpoint } from '../config/service';
import { OpenApiSchemas } from '../../test/support/openapi-schemas';
import { MissingEndpointDocError, OPENAPI_FILE, buildOpenApiDocument, renderOpenApiDocument, securityFor } from './document';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const generated = renderOpenApiDocument();
const document = JSON.parse(generated) as Json;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function operations(): Array<{ path: string; method: string; op: Json }> {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op: op as Json })),
  );
}

function deref(node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, part) => at[part.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, document);
}

describe('docs/openapi.json', () => {
  it('is what `npm run openapi` generates (byte for byte)', () => {
    let committed = '';
    try {
      committed = readFileSync(OPENAPI_FILE, 'utf8');
    } catch {
      // missing: reported below
    }
    if (committed !== generated) {
      throw new Error(
        'docs/openapi.json is stale (it differs from what the endpoint list, schemas/ and lib/openapi/endpoint-docs.ts generate): run `npm run openapi` and commit docs/openapi.json',
      );
    }
  });

  it('generates the same bytes twice', () => {
    expect(renderOpenApiDocument()).toBe(generated);
  });

  it('is a valid OpenAPI 3.1 document (@readme/openapi-parser, no warnings)', async () => {
    const result = await validate(structuredClone(document) as never);
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.warnings).toEqual([]);
    expect(result.specification).toBe('OpenAPI');
  });

  it('has one operation per endpoint of the endpoint list, with its scope', () => {
    const ops = operations();
    expect(ops.map((o) => o.op.operationId).sort()).toEqual(HttpEndpoints.map((e) => e.name).sort());
    for (const endpoint of HttpEndpoints) {
      const op = document.paths[endpoint.path][endpoint.method.toLowerCase()] as Json;
      expect(op.security).toEqual(securityFor(endpoint));
      if (endpoint.anonymous) expect(op.security).toEqual([]);
      else {
        // a route taking any of several scopes: one security requirement each (any one satisfies)
        expect(op.security[0]).toEqual({ apiKey: [routeScopes(endpoint)[0]] });
        expect(op['x-required-scope']).toBe(routeScopes(endpoint).join(' '));
      }
    }
  });

  it('fails clearly for an endpoint without documentation', () => {
    const extra: HttpEndpoint = { ...HttpEndpoints[0]!, name: 'exportSomethingNew', path: '/exportSomethingNew' };
    expect(() => buildOpenApiDocument({ endpoints: [...HttpEndpoints, extra] })).toThrow(MissingEndpointDocError);
    expect(() => buildOpenApiDocument({ endpoints: [...HttpEndpoints, extra] })).toThrow(/exportSomethingNew.*lib\/openapi\/endpoint-docs\.ts/);
  });

  // the checks of a linter's recommended rules that matter for partners, made hard failures
  it('lint: every operation has a title, a tag, a 2xx, 4xx and 5xx answer, and documented headers', () => {
    const tagNames = new Set((document.tags as Json[]).map((t) => t.name));
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      expect({ where, summary: typeof op.summary === 'string' && op.summary.length > 0 }).toEqual({ where, summary: true });
      expect(op.tags.every((t: string) => tagNames.has(t))).toBe(true);
      const statuses = Object.keys(op.responses).map(Number);
      // the FHIR catch-all (GET /fhir/{proxy+}) exists to refuse: its only answers are 4xx/5xx
      const refusesOnly = op.operationId === 'fhirRouteNotFound';
      expect({
        where,
        ok: (refusesOnly || statuses.some((s) => s >= 200 && s < 300)) && statuses.some((s) => s >= 400 && s < 500) && statuses.some((s) => s >= 500),
      }).toEqual({ where, ok: true });
      for (const status of op.security.length === 0 ? [400, 429, 500, 503] : [400, 401, 403, 429, 500, 503])
        expect({ where, status, declared: statuses.includes(status) }).toEqual({ where, status, declared: true });
      for (const [status, ref] of Object.entries(op.responses as Json)) {
        const response = deref(ref as Json);
        for (const name of ['x-request-id', 'cache-control', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
          expect({ where, status, name, documented: name in (response.headers ?? {}) }).toEqual({ where, status, name, documented: true });
        }
        if (status === '429' || status === '503') expect(deref(response.headers['retry-after']).required).toBe(true);
      }
    }
  });

  it('every request and response example is valid against its own schema', () => {
    const schemas = new OpenApiSchemas(document);
    let checked = 0;
    const check = (where: string, media: Json) => {
      const examples: unknown[] = media.examples ? Object.values(media.examples as Json).map((e) => (e as Json).value) : [media.example];
      expect({ where, hasExample: examples.length > 0 && examples.every((e) => e !== undefined) }).toEqual({ where, hasExample: true });
      for (const value of examples) {
        expect({ where, errors: schemas.errors(media.schema, value) }).toEqual({ where, errors: [] });
        checked++;
      }
    };
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters as Json[]) {
        const param = deref(p);
        expect({ where, param: param.name, example: param.example !== undefined }).toEqual({ where, param: param.name, example: true });
        expect(schemas.errors(param.schema, param.example)).toEqual([]);
      }
      if (op.requestBody) for (const [type, media] of Object.entries(op.requestBody.content as Json)) check(`${where} request ${type}`, media as Json);
      for (const [status, ref] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries((deref(ref as Json).content ?? {}) as Json)) check(`${where} ${status} ${type}`, media as Json);
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('every HL7 example is a v2.5.1 message with CR segment terminators', () => {
    for (const { op } of operations()) {
      const media = op.responses['200']?.content?.['application/hl7-v2'] as Json | undefined;
      if (!media) continue;
      const message = media.example as string;
      // one message, or an FHS/BHS batch of messages (the patient summary)
      expect(message.startsWith('MSH|^~\\&|') || message.startsWith('FHS|^~\\&|')).toBe(true);
      expect(message.endsWith('\r')).toBe(true);
      expect(message.includes('\n')).toBe(false);
      const headers = message.split('\r').filter((segment) => segment.startsWith('MSH|'));
      expect(headers.length).toBeGreaterThan(0);
      for (const msh of headers) expect(msh.split('|')[11]).toBe('2.5.1');
    }
  });

  it('references no request schema by copy: request bodies come from schemas/', () => {
    for (const { op } of operations()) {
      // an HL7 request body (POST /receiveHl7) is text, not a JSON schema
      if (!op.requestBody || !op.requestBody.content['application/json']) continue;
      const ref = op.requestBody.content['application/json'].schema.$ref as string;
      expect(ref).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
    }
    const lab = JSON.parse(readFileSync(`${__dirname}/../../schemas/lab-result.schema.json`, 'utf8')) as Json;
    expect(document.components.schemas.LabResult.properties.data.required).toEqual(lab.properties.data.required);
  });
});
