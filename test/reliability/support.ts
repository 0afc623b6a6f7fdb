/**
 * Shared helpers of the reliability suites (test/reliability/*.test.ts).
 *
 * - `startReliabilityStack()`: the whole local stack in-process (test/support/local-stack.ts) plus
 *   one high-limit API key per demo partner for bulk traffic, and a high anonymous limit.
 * - `send()`: one request through the emulated API Gateway in-process (`dispatch`: authorizer +
 *   handler), no HTTP; the answer with lower-case headers.
 * - `problemIssues()`: what is wrong with an answer that should be a 4xx problem+json.
 * - `snapshot()` / `diffSnapshots()`: item counts of every table (Scan, tests only), S3 objects and
 *   queue depths, to prove "nothing written".
 * - `FaultInjector`: jest spies on the shared SDK clients' `send` (lib/aws/clients.ts) that record
 *   every AWS call and can fail the Nth one with a throttling / timeout / internal error.
 * - `captureLogs()`: every log line at debug level, through setLogSink.
 * - `Tally`: counts cases and prints `<suite>: <N> passed, <M> failed (<T> cases)`.
 * - PHI fixtures: the PHI strings of the demo chart and of the traffic the suites send.
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { dynamoDbClient, kmsClient, s3Client, sqsClient } from '../../lib/aws/clients';
import { ALL_SCOPES, Scopes, type Scope, type TableId } from '../../lib/config/service';
import { hashApiKey, keyIdFromHash } from '../../lib/keys/api-key';
import { ApiKeyStore } from '../../lib/keys/api-key-store';
import { dispatch, type GatewayRequest } from '../../lib/local/api-gateway';
import type { LocalStack, LocalStackOptions } from '../../lib/local/stack';
import { setLogSink } from '../../lib/observability/logger';
import { checkContract } from '../support/contract';
import { startTestStack } from '../support/local-stack';
import { unique } from '../support/lab-bodies';

// ------------------------------------------------------------------ stack and keys

/** High-limit keys for bulk traffic (rate limit 10,000,000 per window), one per demo partner. */
export const BULK_KEYS = {
  export: { secret: 'rel-bulk-export-key', partnerId: 'demo-ehr', scopes: [Scopes.exportHl7] as Scope[] },
  results: { secret: 'rel-bulk-results-key', partnerId: 'demo-lab', scopes: [Scopes.ingestResults] as Scope[] },
  forms: { secret: 'rel-bulk-forms-key', partnerId: 'demo-forms', scopes: [Scopes.ingestForms] as Scope[] },
  inbox: { secret: 'rel-bulk-inbox-key', partnerId: 'demo-staff', scopes: [Scopes.inboxReview] as Scope[] },
  fhir: { secret: 'rel-bulk-fhir-key', partnerId: 'demo-ehr', scopes: [Scopes.exportFhir] as Scope[] },
  /** every scope, partner demo-lab (like demo-all-key, plus the inbox) */
  all: { secret: 'rel-bulk-all-key', partnerId: 'demo-lab', scopes: [...ALL_SCOPES] as Scope[] },
} as const;

export const BULK_RATE_LIMIT = 10_000_000;
export const HIGH_ANON_LIMIT = '10000000';

export async function createKey(
  stack: LocalStack,
  key: { secret: string; partnerId: string; scopes: Scope[]; rateLimit?: number; rateWindowSeconds?: number; status?: 'active' | 'revoked' },
): Promise<{ keyHash: string; keyId: string }> {
  const keyHash = hashApiKey(key.secret);
  const keyId = keyIdFromHash(keyHash);
  await new ApiKeyStore(dynamoDbClient(), stack.tables.keys).putKey({
    keyHash,
    keyId,
    partnerId: key.partnerId,
    label: `reliability ${key.partnerId}`,
    scopes: key.scopes,
    status: key.status ?? 'active',
    rateLimit: key.rateLimit,
    rateWindowSeconds: key.rateWindowSeconds,
    createdAt: new Date().toISOString(),
  });
  return { keyHash, keyId };
}

export function keyStore(stack: LocalStack): ApiKeyStore {
  return new ApiKeyStore(dynamoDbClient(), stack.tables.keys);
}

/** The local stack (free ports, in memory, demo data, no background workers) with the bulk keys. */
export async function startReliabilityStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stack = await startTestStack({ ...options, env: { ANON_RATE_LIMIT: HIGH_ANON_LIMIT, ...(options.env ?? {}) } });
  for (const key of Object.values(BULK_KEYS)) await createKey(stack, { ...key, scopes: [...key.scopes], rateLimit: BULK_RATE_LIMIT, rateWindowSeconds: 60 });
  return stack;
}

// ------------------------------------------------------------------ requests

export interface Res {
  status: number;
  /** lower-case names */
  headers: Record<string, string>;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

export interface Req {
  method: string;
  /** path and query */
  url: string;
  /** raw pairs (repeats allowed) or a map */
  headers?: Array<[string, string]> | Record<string, string>;
  body?: string | Buffer;
  sourceIp?: string;
}

function toResult(result: APIGatewayProxyResult): Res {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k.toLowerCase()] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k.toLowerCase()] = v.map(String).join(', ');
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64').toString('utf8') : (result.body ?? '');
  return { status: result.statusCode, headers, body, json: <T>() => JSON.parse(body) as T };
}

/** One request through the emulated API Gateway, in-process. */
export async function send(req: Req): Promise<Res> {
  return checked(req, toResult(await dispatch(gatewayRequest(req))));
}

/** Every answer is checked against docs/openapi.json (test/support/contract.ts). */
function checked(req: Req, res: Res): Res {
  checkContract(req, { status: res.status, headers: res.headers, body: res.body });
  return res;
}

function gatewayRequest(req: Req): GatewayRequest {
  const headers = Array.isArray(req.headers) ? req.headers : Object.entries(req.headers ?? {});
  const body = req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : req.body;
  return { method: req.method, url: req.url, headers, body, sourceIp: req.sourceIp ?? '127.0.0.1' };
}

/**
 * One request through the emulated gateway whose endpoint handler gets a Lambda context with its
 * deadline `remainingMs` away: for "the function runs out of time" cases.
 */
export async function invokeWithDeadline(req: Req, remainingMs: number): Promise<Res> {
  return checked(req, toResult(await dispatch(gatewayRequest(req), { handlerDeadlineMs: remainingMs })));
}

export function jsonPost(url: string, key: string | undefined, body: unknown, extra: Record<string, string> = {}): Req {
  return {
    method: 'POST',
    url,
    headers: { ...(key ? { 'x-api-key': key } : {}), 'content-type': 'application/json', ...extra },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(workers);
  return out;
}

// ------------------------------------------------------------------ problem+json

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * What is wrong with `res` as a client-error problem answer: 4xx, Content-Type
 * application/problem+json, a JSON body with type/title/status/detail/requestId (status equal to the
 * HTTP status, requestId equal to the x-request-id header), Cache-Control no-store.
 * `expected` narrows the status. Empty when all is well.
 */
export function problemIssues(res: Res, expected?: number | readonly number[], format: 'problem' | 'fhir' = 'problem'): string[] {
  const issues: string[] = [];
  const allowed = expected === undefined ? undefined : Array.isArray(expected) ? expected : [expected as number];
  if (res.status < 400 || res.status > 499) issues.push(`status ${res.status} is not 4xx`);
  if (allowed && !allowed.includes(res.status)) issues.push(`status ${res.status}, expected ${allowed.join('/')}`);
  return issues.concat(format === 'fhir' ? outcomeShapeIssues(res) : problemShapeIssues(res));
}

const ISSUE_CODE_FOR_STATUS: Record<number, string> = {
  400: 'invalid',
  401: 'login',
  403: 'forbidden',
  404: 'not-found',
  406: 'not-supported',
  413: 'too-costly',
  415: 'not-supported',
  429: 'throttled',
  500: 'exception',
  503: 'transient',
};

/** The FHIR routes' error shape: an OperationOutcome whose issue code says the status, same headers. */
export function outcomeShapeIssues(res: Res): string[] {
  const issues: string[] = [];
  if (res.headers['content-type'] !== 'application/fhir+json; charset=utf-8') issues.push(`content-type ${res.headers['content-type']}`);
  let body: { resourceType?: unknown; issue?: Array<{ severity?: unknown; code?: unknown; diagnostics?: unknown }>; text?: { div?: unknown } } | undefined;
  try {
    body = JSON.parse(res.body) as typeof body;
  } catch {
    issues.push('body is not JSON');
  }
  if (body) {
    if (body.resourceType !== 'OperationOutcome') issues.push('not an OperationOutcome');
    const first = body.issue?.[0];
    if (!first) issues.push('no issue');
    else {
      if (first.severity !== 'error' && first.severity !== 'fatal') issues.push(`severity ${String(first.severity)}`);
      if (ISSUE_CODE_FOR_STATUS[res.status] && first.code !== ISSUE_CODE_FOR_STATUS[res.status])
        issues.push(`issue code ${String(first.code)} for status ${res.status}`);
      if (typeof first.diagnostics !== 'string' || first.diagnostics === '') issues.push('diagnostics missing');
    }
    const requestId = res.headers['x-request-id'];
    if (!requestId) issues.push('x-request-id missing');
    else if (
      typeof body.text?.div !== 'string' ||
      !body.text.div.includes(requestId.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'))
    )
      issues.push('requestId not in the narrative');
  }
  if (res.headers['cache-control'] !== 'no-store') issues.push('cache-control is not no-store');
  return issues;
}

/** The problem+json shape checks alone (any status). */
export function problemShapeIssues(res: Res): string[] {
  const issues: string[] = [];
  if (res.headers['content-type'] !== PROBLEM_CONTENT_TYPE) issues.push(`content-type ${res.headers['content-type']}`);
  let body: Record<string, unknown> | undefined;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    issues.push('body is not JSON');
  }
  if (body) {
    if (typeof body.type !== 'string' || !body.type.startsWith('/problems/')) issues.push('type missing');
    if (typeof body.title !== 'string' || body.title === '') issues.push('title missing');
    if (body.status !== res.status) issues.push(`body status ${String(body.status)} != ${res.status}`);
    if (typeof body.detail !== 'string' || body.detail === '') issues.push('detail missing');
    if (typeof body.requestId !== 'string' || body.requestId === '') issues.push('requestId missing');
    else if (res.headers['x-request-id'] !== body.requestId) issues.push('requestId differs from x-request-id');
  }
  if (res.headers['cache-control'] !== 'no-store') issues.push('cache-control is not no-store');
  return issues;
}

// ------------------------------------------------------------------ storage snapshots

export async function scanAll(table: string, db: DynamoDBClient = dynamoDbClient()): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await db.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

export async function countItems(table: string): Promise<number> {
  let count = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await dynamoDbClient().send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, Select: 'COUNT', ConsistentRead: true }));
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

export async function listObjectKeys(stack: LocalStack): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const out = await s3Client().send(new ListObjectsV2Command({ Bucket: stack.bucket, ContinuationToken: token }));
    for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = out.NextContinuationToken;
  } while (token);
  return keys;
}

export async function queueDepth(url: string): Promise<number> {
  const out = await sqsClient().send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
}

export interface Snapshot {
  tables: Record<TableId, number>;
  s3Objects: number;
  queues: Record<string, number>;
}

export async function snapshot(stack: LocalStack): Promise<Snapshot> {
  const tables = {} as Record<TableId, number>;
  for (const [id, name] of Object.entries(stack.tables)) tables[id as TableId] = await countItems(name);
  const queues: Record<string, number> = {};
  for (const [id, q] of Object.entries(stack.queues)) {
    queues[id] = await queueDepth(q.url);
    queues[`${id}-dlq`] = await queueDepth(q.dlqUrl);
  }
  return { tables, s3Objects: (await listObjectKeys(stack)).length, queues };
}

/** Every difference between two snapshots, except the tables named in `ignore`. */
export function diffSnapshots(before: Snapshot, after: Snapshot, ignore: readonly TableId[] = []): string[] {
  const out: string[] = [];
  for (const id of Object.keys(before.tables) as TableId[]) {
    if (ignore.includes(id)) continue;
    if (before.tables[id] !== after.tables[id]) out.push(`table ${id}: ${before.tables[id]} -> ${after.tables[id]}`);
  }
  if (before.s3Objects !== after.s3Objects) out.push(`s3 objects: ${before.s3Objects} -> ${after.s3Objects}`);
  for (const q of Object.keys(before.queues)) if (before.queues[q] !== after.queues[q]) out.push(`queue ${q}: ${before.queues[q]} -> ${after.queues[q]}`);
  return out;
}

/** Items of a table as a map pk|sk -> item (to find what a batch added). */
export async function itemsByKey(table: string): Promise<Map<string, Record<string, AttributeValue>>> {
  const map = new Map<string, Record<string, AttributeValue>>();
  for (const item of await scanAll(table)) map.set(`${item.pk?.S ?? ''}|${item.sk?.S ?? ''}`, item);
  return map;
}

export async function newItems(table: string, before: Map<string, Record<string, AttributeValue>>): Promise<Record<string, AttributeValue>[]> {
  const after = await itemsByKey(table);
  return [...after.entries()].filter(([k]) => !before.has(k)).map(([, v]) => v);
}

/** JSON text of an item with binary attributes as base64 (for "does this contain" checks). */
export function itemText(item: unknown): string {
  return JSON.stringify(item, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v));
}

// ------------------------------------------------------------------ fault injection

export type FaultKind = 'throttling' | 'timeout' | 'internal' | 'denied';
/** the retryable kinds every write-path step is tried with ('denied' is a lasting, non-retryable error) */
export const FAULT_KINDS: readonly FaultKind[] = ['throttling', 'timeout', 'internal'];

/** An error shaped like the one the SDK raises for this kind of failure. */
export function faultError(kind: FaultKind): Error {
  switch (kind) {
    case 'throttling':
      return Object.assign(new Error('Rate exceeded (injected)'), {
        name: 'ThrottlingException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        $retryable: { throttling: true },
      });
    case 'timeout':
      // what @smithy/node-http-handler raises when the socket or request times out
      return Object.assign(new Error('Connection timed out after 1000 ms (injected)'), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} });
    case 'internal':
      return Object.assign(new Error('We encountered an internal error (injected)'), {
        name: 'InternalServerError',
        $fault: 'server',
        $metadata: { httpStatusCode: 500 },
      });
    case 'denied':
      return Object.assign(new Error('User is not authorized to perform this action (injected)'), {
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
      });
  }
}

export type ServiceName = 'dynamodb' | 'kms' | 'sqs' | 's3';

export interface RecordedCall {
  /** 1-based, across all four clients */
  n: number;
  service: ServiceName;
  command: string;
  /** the command's input as JSON (for "the secret never appears" checks) */
  input: string;
  failed?: FaultKind;
}

type Sendable = { send: (...args: unknown[]) => Promise<unknown> };

/**
 * Spies on the shared clients' `send`: records every call and, when armed, fails the Nth call of
 * the armed window (`arm(n, kind)`: counting restarts at arm). A timeout fails after a short delay,
 * like a socket timeout; the other kinds fail at once. Nothing else is changed.
 */
export class FaultInjector {
  calls: RecordedCall[] = [];
  private counter = 0;
  private failAt: number | undefined;
  private kind: FaultKind = 'throttling';
  private hangMs = 0;
  private spies: jest.SpyInstance[] = [];
  /** optional extra filter: only calls for which it returns true are counted (and can fail) */
  filter: ((service: ServiceName, command: string) => boolean) | undefined;

  install(): this {
    const clients: Array<[ServiceName, Sendable]> = [
      ['dynamodb', dynamoDbClient() as unknown as Sendable],
      ['kms', kmsClient() as unknown as Sendable],
      ['sqs', sqsClient() as unknown as Sendable],
      ['s3', s3Client() as unknown as Sendable],
    ];
    for (const [service, client] of clients) {
      const original = client.send.bind(client);
      const spy = jest.spyOn(client, 'send').mockImplementation((...args: unknown[]) => {
        const command = args[0] as { constructor: { name: string }; input: unknown };
        const name = command.constructor.name;
        if (this.filter && !this.filter(service, name)) return original(...args);
        const n = ++this.counter;
        const call: RecordedCall = { n, service, command: name, input: itemText(command.input) };
        this.calls.push(call);
        if (this.failAt === n && this.hangMs > 0) {
          // a dependency that answers late (slower than the function's deadline), then normally
          return new Promise((resolve) => setTimeout(resolve, this.hangMs)).then(() => original(...args));
        }
        if (this.failAt === n) {
          call.failed = this.kind;
          const error = faultError(this.kind);
          return this.kind === 'timeout' ? new Promise((_, reject) => setTimeout(() => reject(error), 15)) : Promise.reject(error);
        }
        return original(...args);
      });
      this.spies.push(spy);
    }
    return this;
  }

  /** Starts a new window: records from scratch; fails call `failAt` of the window (none when undefined). */
  arm(failAt: number | undefined, kind: FaultKind = 'throttling'): void {
    this.calls = [];
    this.counter = 0;
    this.failAt = failAt;
    this.kind = kind;
    this.hangMs = 0;
  }

  /** Starts a new window in which call `at` answers only after `ms` (then passes through). */
  armHang(at: number, ms: number): void {
    this.arm(at);
    this.hangMs = ms;
  }

  disarm(): void {
    this.failAt = undefined;
  }

  restore(): void {
    for (const spy of this.spies) spy.mockRestore();
    this.spies = [];
  }

  trace(): string[] {
    return this.calls.map((c) => `${c.service}:${c.command}`);
  }
}

// ------------------------------------------------------------------ logs

export interface LogCapture {
  lines: string[];
  restore(): void;
}

/** Captures every log line (LOG_LEVEL=debug) until `restore()`. */
export function captureLogs(): LogCapture {
  const lines: string[] = [];
  const previousLevel = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = 'debug';
  const previousSink = setLogSink((line) => lines.push(line));
  return {
    lines,
    restore: () => {
      setLogSink(previousSink);
      if (previousLevel === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = previousLevel;
    },
  };
}

/** Keeps the expected warn/error lines of fault suites out of the test output; returns them. */
export function quietLogs(): LogCapture {
  const lines: string[] = [];
  const previousSink = setLogSink((line) => lines.push(line));
  return { lines, restore: () => void setLogSink(previousSink) };
}

// ------------------------------------------------------------------ tallies

/** Counts the cases of a suite; keeps the first failures for the assertion message. */
export class Tally {
  passed = 0;
  failed = 0;
  readonly failures: string[] = [];
  constructor(readonly suite: string) {}

  record(issues: readonly string[], describe: () => string): void {
    if (issues.length === 0) this.passed++;
    else {
      this.failed++;
      if (this.failures.length < 25) this.failures.push(`${describe()}: ${issues.join('; ')}`);
    }
  }

  get total(): number {
    return this.passed + this.failed;
  }

  /** Prints the summary line and returns it. */
  print(extra = ''): string {
    const line = `${this.suite}: ${this.passed} passed, ${this.failed} failed (${this.total} cases${extra ? `, ${extra}` : ''})`;
    console.log(line);
    return line;
  }

  /** The failures as one message (for expect(...).toEqual([]) style assertions). */
  report(): string[] {
    return this.failures;
  }
}

// ------------------------------------------------------------------ PHI fixtures

/** PHI of the demo chart (lib/local/demo-chart.json) that exports read. */
export const CHART_PHI = [
  // patient 1
  'Sample',
  'Quinn',
  '1980-04-12',
  '19800412',
  'DEMO-000001',
  'alex.sample@example.com',
  '100 Example Street',
  '555-0100',
  'Annual physical. Feels well',
  'Continue metformin and lisinopril',
  // patient 2
  'Ødegård',
  'Odegard',
  'Zoë',
  '1992-11-03',
  '19921103',
  'DEMO-000002',
  'zoe.odegard@example.org',
  "7 Rue d'Exemple",
  'Left knee',
  'Severe pain, improving',
  // patient 3/4
  '1975-06-30',
  'DEMO-000003',
] as const;

/** PHI the suites send in lab results (values distinctive enough that a hit is a leak). */
export const LAB_PHI = {
  patientID: 'LABPAT-QZX-4471',
  accessionNumber: 'ACC-QZX-PHI-9931',
  recordNo: 'REC-QZX-5512',
  testName: 'Hemoglobin QZX-test',
  result: '13.9 QZX-result',
  referenceRange: '12.0-15.5 QZX-range',
  reportName: 'zebra-jane-qzx.pdf',
  reportText: 'Jane Q. Zebra narrative QZX report',
  extra: 'Dr. Quentin Zebra-QZX',
} as const;

/** PHI the suites send in form packets. */
export const FORM_PHI = {
  firstName: 'Quillon',
  lastName: 'Vastergaard',
  dob: '1969-07-20',
  email: 'quillon.vastergaard@example.test',
  externalPatientId: 'ext-qzx-6620',
  answer: 'penicillin-allergy-qzx',
  formName: 'Intake questionnaire QZX',
} as const;

export const ALL_PHI_STRINGS: readonly string[] = [...CHART_PHI, ...Object.values(LAB_PHI), ...Object.values(FORM_PHI)];

/** The PHI strings `text` contains (case-insensitive). */
export function phiIn(text: string, phi: readonly string[] = ALL_PHI_STRINGS): string[] {
  const lower = text.toLowerCase();
  return phi.filter((p) => lower.includes(p.toLowerCase()));
}

// ------------------------------------------------------------------ request bodies

export { labBody, unique } from '../support/lab-bodies';

export function formBody(overrides: Record<string, unknown> = {}, patient: Record<string, unknown> = {}): { payload: Record<string, unknown> } {
  return {
    payload: {
      sourceSystemId: 'demo-form-tool',
      formId: 'intake-v3',
      formName: 'Intake',
      submissionId: unique('sub'),
      patient: { firstName: 'Casey', lastName: 'Nobody', dob: '1990-01-01', email: 'casey@example.test', externalPatientId: unique('ext'), ...patient },
      answers: { smoker: 'no', visits: 2 },
      ...overrides,
    },
  };
}

export const ENDPOINT_URLS = {
  exportHl7PatientAdt: '/exportHl7PatientAdt?patientId=demo-patient-1',
  exportHl7PatientSummary: '/exportHl7PatientSummary?patientId=demo-patient-1&limit=5',
  exportHl7Encounter: '/exportHl7Encounter?patientId=demo-patient-1&encounterId=demo-encounter-1',
  exportHl7Note: '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1',
  exportHl7Assessment: '/exportHl7Assessment?patientId=demo-patient-1&assessmentId=demo-assessment-1',
} as const;

/** A packet in the inbox (pending_match, or pending_review when `unknownPatientId` is given), created through the API. */
export async function inboxPacket(options: { unknownPatientId?: string; key?: string; patient?: Record<string, unknown> } = {}): Promise<string> {
  const body = formBody(options.unknownPatientId ? { patientId: options.unknownPatientId } : {}, options.patient ?? {});
  const res = await send(jsonPost('/receiveFormIntakeScope', options.key ?? BULK_KEYS.forms.secret, body));
  if (res.status !== 202) throw new Error(`inbox packet not created: ${res.status} ${res.body}`);
  return res.json<{ packetId: string }>().packetId;
}
