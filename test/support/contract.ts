/**
 * The contract check: every HTTP answer the integration and reliability suites receive from the
 * local stack is checked against docs/openapi.json by `checkContract` (hooked into `call()` in
 * ./local-stack.ts and `send()` in test/reliability/support.ts):
 *   - the status is declared for the operation (method + path template),
 *   - every required header of that response is present and every documented header valid,
 *   - the Content-Type is a declared media type and the body is valid against its schema.
 * A violation throws (the request's test fails) and is also remembered: the file's afterAll fails
 * when any violation was seen, even one a test caught and ignored.
 *
 * Coverage: the (operation, status) pairs seen are written to .local/contract-coverage/ per test
 * file; test/support/contract-report.ts prints the table operation x status after the run and
 * fails when an operation's success status was never seen (see jest.config.js).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { OpenApiSchemas } from './openapi-schemas';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = path.resolve(__dirname, '..', '..');
export const COVERAGE_DIR = path.join(ROOT, '.local', 'contract-coverage');
export const UNMATCHED = '(no operation: unknown route or method)';

export interface ContractRequest {
  method: string;
  /** path and query */
  url: string;
}

export interface ContractResponse {
  status: number;
  /** any case */
  headers: Record<string, string> | Headers;
  body: string;
}

interface Operation {
  id: string;
  method: string;
  pattern: RegExp;
  op: Json;
}

let loaded: { document: Json; operations: Operation[]; schemas: OpenApiSchemas } | undefined;

function contract() {
  if (!loaded) {
    const document = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8')) as Json;
    const operations: Operation[] = [];
    for (const [template, item] of Object.entries(document.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        // `{name+}` (API Gateway's greedy parameter, `/fhir/{proxy+}`) takes one or more segments
        const pattern = new RegExp(
          `^${template
            .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
            .replace(/\{\w+\\\+\}/g, '[^/].*')
            .replace(/\{\w+\}/g, '[^/]+')}$`,
        );
        operations.push({ id: (op as Json).operationId as string, method: method.toUpperCase(), pattern, op: op as Json });
      }
    }
    // a greedy template only takes what no other operation matches (as the gateway routes)
    operations.sort((a, b) => Number(a.pattern.source.includes('[^/].*')) - Number(b.pattern.source.includes('[^/].*')));
    loaded = { document, operations, schemas: new OpenApiSchemas(document) };
  }
  return loaded;
}

function deref(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, part) => at[part] as Json, contract().document);
}

function lowerHeaders(headers: Record<string, string> | Headers): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
  } else for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = String(v);
  return out;
}

// ------------------------------------------------------------------ what this test file saw

const seen = new Map<string, number>();
const violations: string[] = [];
let testFile: string | undefined;

function currentTestFile(): string {
  try {
    return path.relative(ROOT, (expect.getState().testPath as string | undefined) ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

function flush(): void {
  if (!testFile) return;
  mkdirSync(COVERAGE_DIR, { recursive: true });
  const name = `${createHash('sha256').update(testFile).digest('hex').slice(0, 16)}-${process.pid}.json`;
  writeFileSync(path.join(COVERAGE_DIR, name), JSON.stringify({ testFile, seen: Object.fromEntries(seen), violations: violations.length }));
}

if (typeof afterAll === 'function') {
  afterAll(() => {
    testFile ??= currentTestFile();
    flush();
    if (violations.length > 0) {
      throw new Error(`contract: ${violations.length} answer(s) did not match docs/openapi.json:\n${[...new Set(violations)].slice(0, 20).join('\n')}`);
    }
  });
}

// ------------------------------------------------------------------ the check

/** Problems of one answer against the document; empty when it conforms. */
export function contractIssues(req: ContractRequest, res: ContractResponse): { operation: string; issues: string[] } {
  const { operations, schemas } = contract();
  const pathname = new URL(req.url, 'http://localhost').pathname;
  const method = req.method.toUpperCase();
  const headers = lowerHeaders(res.headers);
  const mediaType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const match = operations.find((o) => o.method === method && o.pattern.test(pathname));
  const issues: string[] = [];
  if (!match) {
    // API Gateway's own answer for a route that does not exist: still a problem+json
    if (mediaType !== 'application/problem+json') issues.push(`content-type ${mediaType || '(none)'} is not application/problem+json`);
    // a HEAD answer has the GET answer's headers and no body (RFC 9110)
    else if (method !== 'HEAD') issues.push(...bodyIssues(schemas, { $ref: '#/components/schemas/Problem' }, res.body, mediaType));
    return { operation: UNMATCHED, issues };
  }
  const declared = match.op.responses[String(res.status)] as Json | undefined;
  if (!declared) {
    return { operation: match.id, issues: [`status ${res.status} is not declared for ${match.id} (declared: ${Object.keys(match.op.responses).join(', ')})`] };
  }
  const response = deref(declared);
  for (const [name, ref] of Object.entries((response.headers ?? {}) as Json)) {
    const header = deref(ref as Json);
    const value = headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) issues.push(`header ${name} missing`);
      continue;
    }
    const typed = header.schema?.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    for (const e of schemas.errors(header.schema ?? {}, typed)) issues.push(`header ${name}: ${e}`);
  }
  const content = (response.content ?? {}) as Json;
  const media = content[mediaType] as Json | undefined;
  if (!media) issues.push(`content-type ${mediaType || '(none)'} is not declared for ${match.id} ${res.status} (declared: ${Object.keys(content).join(', ')})`);
  else if (method !== 'HEAD') issues.push(...bodyIssues(schemas, media.schema, res.body, mediaType));
  return { operation: match.id, issues };
}

function bodyIssues(schemas: OpenApiSchemas, schema: unknown, body: string, mediaType: string): string[] {
  if (!mediaType.endsWith('json')) return schemas.errors(schema, body).map((e) => `body ${e}`);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return ['body is not JSON'];
  }
  return schemas.errors(schema, value).map((e) => `body ${e}`);
}

/** Checks one answer and records it for the coverage table; throws when it breaks the contract. */
export function checkContract(req: ContractRequest, res: ContractResponse): void {
  testFile ??= currentTestFile();
  const { operation, issues } = contractIssues(req, res);
  const key = `${operation} ${res.status}`;
  seen.set(key, (seen.get(key) ?? 0) + 1);
  if (issues.length > 0) {
    const message = `contract: ${req.method} ${req.url.slice(0, 120)} -> ${res.status}: ${issues.join('; ')}`;
    violations.push(message);
    throw new Error(message);
  }
}
