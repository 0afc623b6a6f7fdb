/**
 * fast-check arbitraries of strictly invalid requests, one family per endpoint, and the oracle
 * that says what each must be answered with (independently of the code under test: the rules come
 * from the spec, the schemas and the endpoint docs). Used by bad-input.test.ts.
 *
 * A case carries its expected status and, when the handler has already declared its audit event
 * before refusing (inbox read / route with an unknown packet, inbox list with a bad cursor), the
 * audit record it must leave.
 */
import { checkLabResultValues } from '../../lib/chart/record-rules';
import fc from 'fast-check';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/body-limit';
import { BULK_KEYS } from './support';

export type Pairs = Array<[string, string]>;

/**
 * The audit record a refused request leaves: action, outcome and status only. The ids such a request
 * named are unverified caller text, so the record keeps none (no patientId, no resourceIds; subject
 * UNRESOLVED#<day>).
 */
export interface AuditExpectation {
  action: string;
  outcome: 'invalid' | 'not_found';
  status: number;
}

export interface BadCase {
  category: string;
  method: string;
  url: string;
  headers: Pairs;
  body?: Buffer;
  expect: number;
  audit?: AuditExpectation;
  /** answered by the gateway itself (no route, too large): header abuse does not change the answer */
  gateway?: boolean;
  /** give this case a unique valid x-request-id */
  assignRequestId?: boolean;
  /** error body the endpoint answers with: problem+json (default) or a FHIR OperationOutcome */
  format?: 'fhir';
}

// ------------------------------------------------------------------ building blocks

const charOf = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCharCode(c));
export const visibleAscii = (minLength: number, maxLength: number) => fc.string({ unit: charOf(0x21, 0x7e), minLength, maxLength });
export const printableAscii = (minLength: number, maxLength: number) => fc.string({ unit: charOf(0x20, 0x7e), minLength, maxLength });
const controlChar = fc.oneof(charOf(0x00, 0x1f), fc.constant('\x7f'));
const nonAsciiChar = fc.oneof(charOf(0x80, 0x2fff), fc.constantFrom('ü', 'Ø', '😀', '\u200b', '\ufeff', '中', '\u202e'));
const repeatChar = (min: number, max: number, chars = 'aZ9-') =>
  fc.tuple(fc.integer({ min, max }), fc.constantFrom(...chars.split(''))).map(([n, c]) => c.repeat(n));
/** A string with `bad` somewhere inside visible ASCII. */
const withInside = (bad: fc.Arbitrary<string>, inner = visibleAscii(0, 20)) => fc.tuple(inner, bad, inner).map(([a, b, c]) => a + b + c);

const CHART_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const validChartId = fc.oneof(
  fc.constantFrom('demo-patient-1', 'demo-patient-2', 'no-such-id', 'a', 'A.b_c:d-9'),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
);

/** Query values a chart id parameter must refuse (the server sees them decoded). */
export const badChartId = fc.oneof(
  fc.constant(''),
  repeatChar(129, 10_000),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => !CHART_ID.test(s)),
  withInside(fc.oneof(controlChar, nonAsciiChar, fc.constantFrom(' ', '#', '/', '?', '&', '=', '%', '+', '"', "'", '<', '\\', '*', '!', '~'))).filter(
    (s) => !CHART_ID.test(s),
  ),
  fc.constantFrom(
    ' demo-patient-1',
    'demo-patient-1 ',
    'demo patient',
    'demo/patient-1',
    'PATIENT#demo-patient-1',
    "' OR 1=1 --",
    '../../etc/passwd',
    '${jndi:x}',
    'demo-patient-1\n',
    '\u0000',
  ),
);

export const validRequestId = visibleAscii(1, 64);

// ------------------------------------------------------------------ header abuse

export interface HeaderAbuse {
  kind: string;
  /** replaces every x-request-id header */
  requestIds?: string[];
  /** replaces every x-api-key header */
  apiKeys?: string[];
  expect: 400 | 401;
}

const KNOWN_SECRETS = new Set([
  ...Object.values(BULK_KEYS).map((k) => k.secret),
  'demo-export-key',
  'demo-results-key',
  'demo-forms-key',
  'demo-all-key',
  'demo-revoked-key',
  'demo-blocked-key',
  'demo-limited-key',
  'demo-inbox-key',
  'demo-fhir-key',
]);

const requestIdAbuse: fc.Arbitrary<HeaderAbuse> = fc.oneof<fc.Arbitrary<HeaderAbuse>[]>(
  fc.integer({ min: 129, max: 5000 }).map((n) => ({ kind: 'x-request-id over 128', requestIds: ['r'.repeat(n)], expect: 400 as const })),
  withInside(controlChar).map((v) => ({ kind: 'x-request-id control character', requestIds: [v], expect: 400 as const })),
  withInside(nonAsciiChar).map((v) => ({ kind: 'x-request-id non-ASCII', requestIds: [v], expect: 400 as const })),
  withInside(fc.constant(' ')).map((v) => ({ kind: 'x-request-id with space', requestIds: [v], expect: 400 as const })),
  fc.constant({ kind: 'x-request-id empty', requestIds: [''], expect: 400 as const }),
  fc
    .tuple(validRequestId, validRequestId)
    .filter(([a, b]) => a !== b)
    .map(([a, b]) => ({ kind: 'x-request-id repeated', requestIds: [a, b], expect: 400 as const })),
);

const apiKeyAbuse = (validKey: string): fc.Arbitrary<HeaderAbuse> =>
  fc.oneof<fc.Arbitrary<HeaderAbuse>[]>(
    fc.integer({ min: 257, max: 20_000 }).map((n) => ({ kind: 'x-api-key oversized', apiKeys: [validKey + 'k'.repeat(n)], expect: 401 as const })),
    visibleAscii(1, 40).map((other) => ({ kind: 'x-api-key repeated, different values', apiKeys: [validKey, validKey + other], expect: 401 as const })),
    withInside(fc.oneof(controlChar, nonAsciiChar)).map((v) => ({ kind: 'x-api-key control/non-ASCII', apiKeys: [v], expect: 401 as const })),
    visibleAscii(1, 256)
      .filter((k) => !KNOWN_SECRETS.has(k))
      .map((k) => ({ kind: 'x-api-key unknown', apiKeys: [k], expect: 401 as const })),
    fc.constantFrom('', '   ', ' ,').map((keys) => ({ kind: 'x-api-key empty', apiKeys: keys.split(','), expect: 401 as const })),
  );

export const headerAbuse = (validKey: string): fc.Arbitrary<HeaderAbuse | undefined> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: requestIdAbuse },
    { weight: 1, arbitrary: apiKeyAbuse(validKey) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(requestIdAbuse, apiKeyAbuse(validKey))
        .map(([r, k]) => ({ kind: `${r.kind} + ${k.kind}`, requestIds: r.requestIds, apiKeys: k.apiKeys, expect: 400 as const })),
    },
  );

/** Applies the abuse to a case: header abuse is answered before the endpoint's own checks. */
export function withAbuse(c: BadCase, abuse: HeaderAbuse | undefined): BadCase {
  if (!abuse) return c;
  let headers = c.headers;
  if (abuse.apiKeys) headers = [...headers.filter(([n]) => n.toLowerCase() !== 'x-api-key'), ...abuse.apiKeys.map((k): [string, string] => ['x-api-key', k])];
  if (abuse.requestIds)
    headers = [...headers.filter(([n]) => n.toLowerCase() !== 'x-request-id'), ...abuse.requestIds.map((r): [string, string] => ['X-Request-Id', r])];
  if (c.gateway) return { ...c, headers, category: `${c.category} + ${abuse.kind}`, assignRequestId: false, format: undefined };
  return { ...c, headers, category: `${c.category} + ${abuse.kind}`, expect: abuse.expect, audit: undefined, assignRequestId: false };
}

/** Headers nobody reads, with odd names (Object.prototype members among them) and values. */
export const noiseHeaders: fc.Arbitrary<Pairs> = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'x-forwarded-for', 'X-Amzn-Trace-Id', 'user-agent', 'x-empty'),
      fc.stringMatching(/^x-[a-z0-9-]{1,12}$/),
    ),
    fc.oneof(fc.constantFrom('', '1', 'null', '{}', '__proto__'), visibleAscii(1, 40), repeatChar(1000, 8000)),
  ),
  { maxLength: 3 },
);

/** Query parameters nobody reads, with absurd values. */
export const noiseParams = (exclude: readonly string[]) =>
  fc.array(
    fc.tuple(
      // names of Object.prototype members included: they once crashed the local gateway (fixed in ebaed43)
      fc
        .oneof(
          fc.constantFrom(
            'limit',
            'foo',
            'patientid',
            'PatientId',
            '',
            'a[]',
            '__proto__',
            'constructor',
            'toString',
            'hasOwnProperty',
            'noteId',
            'state',
            'cursor',
          ),
          fc.string({ maxLength: 12 }),
        )
        .filter((n) => !exclude.includes(n)),
      fc.oneof(
        fc.constantFrom('', '-1', '1.5', 'NaN', '1e309', '%', 'null', 'undefined', '[]'),
        fc.string({ unit: 'binary', maxLength: 30 }),
        repeatChar(1000, 10_000),
      ),
    ),
    { maxLength: 3 },
  );

/** URL with these pairs, in this order; an optional raw suffix the parser must survive. */
export function buildUrl(path: string, pairs: Array<[string, string]>, rawSuffix = ''): string {
  const qs = new URLSearchParams(pairs).toString();
  return `${path}${qs || rawSuffix ? '?' : ''}${qs}${rawSuffix}`;
}
const rawSuffix = fc.constantFrom('', '', '', '&', '&&', '&=', '&=x', '#frag', '&%', '&%zz');

// ------------------------------------------------------------------ exports (GET, query parameters)

export const ACCEPT_OK = ['*/*', 'application/*', 'application/hl7-v2', 'APPLICATION/HL7-V2', 'text/html, */*;q=0.1'];
export const ACCEPT_REFUSED = [
  'application/json',
  'text/plain',
  'application/hl7-v2;q=0',
  '*/*;q=0',
  'application/xml, text/*',
  'application/fhir+json',
  'image/png',
];

const ID_RULE = /^[A-Za-z0-9._:-]{1,128}$/;
const INT_RULE = /^-?\d{1,10}$/;

/** Every value of a parameter, repeats kept: any repeat (identical or not) is a 400 naming it (README). */
function allValues(params: URLSearchParams, name: string): string[] {
  return params.getAll(name);
}

function headerList(headers: Pairs, name: string): string[] {
  return headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
}

/** The oracle for an export request: the status it must get (200/404 = a valid request). */
export function exportOracle(required: readonly string[], hasLimit: boolean, url: string, headers: Pairs): number {
  const params = new URL(url, 'http://localhost').searchParams;
  for (const name of required) {
    const list = allValues(params, name);
    if (list.length !== 1 || !ID_RULE.test(list[0]!)) return 400;
  }
  if (hasLimit) {
    const list = allValues(params, 'limit');
    if (list.length > 1) return 400;
    if (list.length === 1 && (!INT_RULE.test(list[0]!) || Number(list[0]) < 1 || Number(list[0]) > 200)) return 400;
  }
  const accept = headerList(headers, 'accept').join(', ');
  if (accept !== '' && !ACCEPT_OK.some((a) => a.toLowerCase() === accept.toLowerCase())) return 406;
  return 200;
}

const badLimit = fc.oneof(
  fc.constantFrom('', '0', '-1', '201', '1.5', '1e2', '0x10', ' 5', '5 ', '+5', 'NaN', 'Infinity', '٣', '99999999999', '-0.0', '20abc', '１０'),
  fc.integer({ min: -1_000_000_000, max: 0 }).map(String),
  fc.integer({ min: 201, max: 2_000_000_000 }).map(String),
  fc
    .double({ noNaN: true })
    .map(String)
    .filter((s) => !INT_RULE.test(s) || Number(s) < 1 || Number(s) > 200),
  repeatChar(10_000, 10_000, '9'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).filter((s) => !INT_RULE.test(s)),
);

export function exportCases(path: string, required: readonly string[], demo: Record<string, string>, hasLimit: boolean): fc.Arbitrary<BadCase> {
  const validFor = (name: string) => fc.oneof(fc.constant(demo[name]!), validChartId);
  const slotValues = (name: string): fc.Arbitrary<string[]> =>
    fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
      { weight: 4, arbitrary: validFor(name).map((v) => [v]) },
      { weight: 1, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: badChartId.map((v) => [v]) },
      { weight: 1, arbitrary: fc.tuple(validFor(name), validFor(name)).map(([a, b]) => [a, b]) },
    );
  const forcedBad = (name: string): fc.Arbitrary<{ values: string[]; kind: string }> =>
    fc.oneof<fc.Arbitrary<{ values: string[]; kind: string }>[]>(
      fc.constant({ values: [] as string[], kind: `${name} missing` }),
      fc.constant({ values: [''], kind: `${name} empty` }),
      badChartId.map((v) => ({ values: [v], kind: `${name} invalid` })),
      fc
        .tuple(validFor(name), validChartId)
        .filter(([a, b]) => a !== b)
        .map(([a, b]) => ({ values: [a, b], kind: `${name} repeated` })),
      repeatChar(129, 10_000).map((v) => ({ values: [v], kind: `${name} 10k chars` })),
    );
  const slots = [...required, ...(hasLimit ? ['limit'] : []), 'accept'];
  const names = [...required, ...(hasLimit ? ['limit'] : [])];
  return fc
    .record({
      forced: fc.constantFrom(...slots),
      values: fc.tuple(...required.map((n) => slotValues(n))),
      limit: hasLimit
        ? fc.oneof(
            fc.constant([] as string[]),
            fc.integer({ min: 1, max: 200 }).map((n) => [String(n)]),
            badLimit.map((v) => [v]),
          )
        : fc.constant([] as string[]),
      badRequired: fc.tuple(...required.map((n) => forcedBad(n))),
      badLimit: fc.oneof(
        badLimit.map((v) => ({ values: [v], kind: 'limit invalid' })),
        fc
          .tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 200 }))
          .filter(([a, b]) => a !== b)
          .map(([a, b]) => ({ values: [String(a), String(b)], kind: 'limit repeated' })),
      ),
      accept: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...ACCEPT_OK, ...ACCEPT_REFUSED) }),
      refused: fc.constantFrom(...ACCEPT_REFUSED),
      noise: noiseParams(names),
      suffix: rawSuffix,
      shuffle: fc.boolean(),
      abuse: headerAbuse(BULK_KEYS.export.secret),
      rid: fc.boolean(),
    })
    .map((g) => {
      const byName = new Map<string, string[]>();
      required.forEach((n, i) => byName.set(n, g.values[i]!));
      if (hasLimit) byName.set('limit', g.limit);
      let accept = g.accept;
      let kind: string;
      if (g.forced === 'accept') {
        accept = g.refused;
        kind = 'accept refuses HL7';
      } else if (g.forced === 'limit') {
        byName.set('limit', g.badLimit.values);
        kind = g.badLimit.kind;
      } else {
        const bad = g.badRequired[required.indexOf(g.forced)]!;
        byName.set(g.forced, bad.values);
        kind = bad.kind;
      }
      let pairs: Array<[string, string]> = [];
      for (const [n, vs] of byName) for (const v of vs) pairs.push([n, v]);
      pairs.push(...g.noise);
      if (g.shuffle) pairs = pairs.reverse();
      const headers: Pairs = [['x-api-key', BULK_KEYS.export.secret]];
      if (accept !== undefined) headers.push(['accept', accept]);
      const url = buildUrl(path, pairs, g.suffix);
      const c: BadCase = { category: kind, method: 'GET', url, headers, expect: exportOracle(required, hasLimit, url, headers), assignRequestId: g.rid };
      return withAbuse(c, g.abuse);
    });
}

// ------------------------------------------------------------------ JSON bodies: shared raw-level mutations

/** the app's body limit; a body up to ~1.5 MiB over it still fits Lambda's 6 MB event and gets the app's 413 */
export const MAX_JSON_BYTES = MAX_REQUEST_BODY_BYTES;
export const GATEWAY_MAX_BYTES = 10 * 1024 * 1024;

const WRONG_CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonp',
  'json',
  'text/json',
  'application/json-seq',
  'application/ld+xml',
  '',
  'application/octet-stream',
  '*/*',
  'application/json, text/plain',
];

function isMalformed(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

const INVALID_UTF8: number[][] = [[0xff], [0xfe], [0xc0, 0x80], [0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc3]];

function nest(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { n: v };
  return v;
}

export interface RawMutation {
  kind: string;
  body?: Buffer;
  contentType?: string | null;
  expect: number;
  gateway?: boolean;
}

/**
 * Request-level mutations of a valid JSON body: wrong content type (415), empty (400), malformed
 * (400), invalid UTF-8 (400), nested deeper than 32 (400), over 6 MB (413), over 10 MB (gateway 413).
 */
export function rawMutations(validBody: fc.Arbitrary<unknown>, deepAt: (body: unknown, deep: unknown) => unknown): fc.Arbitrary<RawMutation> {
  return fc.oneof(
    {
      weight: 60,
      arbitrary: fc.tuple(validBody, fc.constantFrom<string | null>(...WRONG_CONTENT_TYPES, null)).map(([b, ct]) => ({
        kind: `content-type ${ct === null ? 'absent' : JSON.stringify(ct)}`,
        body: Buffer.from(JSON.stringify(b)),
        contentType: ct,
        expect: 415,
      })),
    },
    { weight: 20, arbitrary: fc.constant({ kind: 'empty body', body: Buffer.alloc(0), expect: 400 }) },
    {
      weight: 60,
      arbitrary: fc
        .tuple(
          validBody,
          fc.nat(),
          fc.constantFrom('truncate', 'insert', 'replace'),
          fc.constantFrom(',', ':', '{', '}', '[', ']', '"', '\\', 'x', "'", 'NaN', '//', '/*', '\uFEFF', ',}', 'undefined'),
        )
        .map(([b, pos, op, junk]) => {
          const text = JSON.stringify(b);
          const at = 1 + (pos % Math.max(1, text.length - 1));
          const out =
            op === 'truncate' ? text.slice(0, at) : op === 'insert' ? text.slice(0, at) + junk + text.slice(at) : text.slice(0, at) + junk + text.slice(at + 1);
          return out;
        })
        .filter(isMalformed)
        .map((text) => ({ kind: 'malformed JSON', body: Buffer.from(text, 'utf8'), expect: 400 })),
    },
    {
      weight: 20,
      arbitrary: fc
        .oneof(
          fc.string({ minLength: 1, maxLength: 200 }),
          fc.constantFrom('   ', '\n', 'null null', '{}{}', '[1,]', "{'a':1}", '{"a":1,}', '\uFEFF{}', 'true false', '{"payload":', '{"data":'),
        )
        .filter(isMalformed)
        .map((text) => ({ kind: 'not JSON', body: Buffer.from(text, 'utf8'), expect: 400 })),
    },
    {
      weight: 40,
      arbitrary: fc.tuple(validBody, fc.nat(), fc.constantFrom(...INVALID_UTF8)).map(([b, pos, bytes]) => {
        const raw = Buffer.from(JSON.stringify(b), 'utf8');
        const at = pos % raw.length;
        return { kind: 'invalid UTF-8', body: Buffer.concat([raw.subarray(0, at), Buffer.from(bytes), raw.subarray(at)]), expect: 400 };
      }),
    },
    {
      weight: 40,
      arbitrary: fc.tuple(validBody, fc.integer({ min: 33, max: 3000 }), fc.boolean(), fc.boolean()).map(([b, depth, asArray, top]) => ({
        kind: `nested ${depth} deep`,
        body: Buffer.from(JSON.stringify(top ? nest(depth, b, asArray) : deepAt(b, nest(depth, 1, asArray)))),
        expect: 400,
      })),
    },
    {
      weight: 3,
      arbitrary: fc
        .integer({ min: 1, max: 1024 * 1024 })
        .map((extra) => ({ kind: 'body over 4 MiB', body: Buffer.alloc(MAX_JSON_BYTES + extra, 0x20), expect: 413 })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'body over 10 MB', body: Buffer.alloc(GATEWAY_MAX_BYTES + 1, 0x20), expect: 413, gateway: true }) },
  );
}

/** Extra properties (never named like a real field). */
export const extraProps = fc.dictionary(
  fc.string({ maxLength: 10 }).map((s) => `x_${s}`),
  fc.jsonValue({ maxDepth: 3 }),
  { maxKeys: 3 },
);

const nonString = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
);

// ------------------------------------------------------------------ POST /receiveTestData

const LAB_ID = /^[!-~]([ -~]*[!-~])?$/;
const isLabId = (s: string) => s.length <= 128 && LAB_ID.test(s);
export const labId = fc.stringMatching(/^[!-~]([ -~]{0,20}[!-~])?$/);
const STATUS_VOCAB = ['preliminary', 'p', 'final', 'f', 'corrected', 'c', 'amended', 'cancelled', 'canceled', 'x'];
const isStatus = (s: string) => STATUS_VOCAB.includes(s.trim().toLowerCase());
const STRICT_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const isCanonicalBase64 = (s: string) => s.length % 4 === 0 && Buffer.from(s, 'base64').toString('base64') === s;

const testResult = fc.record(
  {
    // the record rules: a test name holds a letter or a digit
    testName: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => /[A-Za-z0-9]/.test(s)),
    result: fc.string({ maxLength: 30 }),
    units: fc.string({ maxLength: 10 }),
    referenceRange: fc.string({ maxLength: 20 }),
  },
  { requiredKeys: ['testName', 'result'] },
);
const report = fc.oneof(
  fc.record({
    source: fc.constantFrom('base64', 'BASE64', 'Base64'),
    type: fc.constantFrom('pdf', 'narrative'),
    name: fc.constantFrom('r.pdf', 'report.txt'),
    data: fc.uint8Array({ minLength: 1, maxLength: 60 }).map((b) => Buffer.from(b).toString('base64')),
  }),
  fc.record({
    source: fc.constantFrom('text', 'utf8', 'hl7'),
    type: fc.constantFrom('narrative'),
    name: fc.constantFrom('n.txt'),
    data: fc.string({ minLength: 1, maxLength: 60 }),
  }),
);
const pastInstant = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2025-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());

export const validLabData = fc
  .record(
    {
      senderID: fc.constantFrom('demo-lab', 'DEMO-LAB-LIS'),
      patientID: fc.oneof(fc.constantFrom('demo-patient-1', 'demo-patient-2'), labId),
      accessionNumber: labId,
      recordNo: labId,
      status: fc.constantFrom('final', 'F', 'preliminary', 'Corrected', ' amended ', 'X', 'canceled'),
      ResultedDateUTC: pastInstant,
      results: fc.oneof(testResult, fc.array(testResult, { minLength: 1, maxLength: 4 })),
      reports: fc.array(report, { maxLength: 3 }),
    },
    { requiredKeys: ['senderID', 'patientID', 'accessionNumber', 'status', 'ResultedDateUTC', 'results'] },
  )
  .filter((data) => checkLabResultValues(data, new Date()).length === 0); // valid: the record rules accept it too
export const validLabBody = validLabData.map((data) => ({ data: data as Record<string, unknown> }));

const LAB_REQUIRED = ['senderID', 'patientID', 'accessionNumber', 'status', 'ResultedDateUTC', 'results'] as const;
const LAB_IDS = ['senderID', 'patientID', 'accessionNumber', 'recordNo'] as const;

const badLabId = fc
  .oneof(
    fc.constant(''),
    repeatChar(129, 2000),
    withInside(fc.oneof(controlChar, nonAsciiChar)),
    visibleAscii(1, 20).map((s) => ` ${s}`),
    visibleAscii(1, 20).map((s) => `${s} `),
  )
  .filter((s) => !isLabId(s));

const badInstant = fc.oneof(
  fc.string({ maxLength: 40 }).filter((s) => !STRICT_INSTANT.test(s)),
  fc.constantFrom(
    '2024-02-30T00:00:00Z',
    '2023-02-29T12:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-00-10T00:00:00Z',
    '2024-01-32T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-06-30T23:59:60Z',
    '2024-01-01T00:60:00Z',
    '1899-12-31T23:59:59Z',
    '0001-01-01T00:00:00Z',
    '2024-03-01T09:30:00+01:00',
    '2024-03-01T09:30:00z',
    '2024-03-01 09:30:00Z',
    '2024-03-01T09:30:00.1234567890Z',
    '2024-03-01',
    '2024-03-01T09:30:00Z ',
    '+002024-03-01T09:30:00Z',
    '9999-12-31T23:59:59Z',
  ),
  fc.integer({ min: 2, max: 36_500 }).map((days) => new Date(Date.now() + days * 86_400_000).toISOString()),
);

const badTestResult = fc.oneof(
  testResult.map(({ testName: _t, ...r }) => r),
  testResult.map(({ result: _r, ...r }) => r),
  testResult.map((r) => ({ ...r, testName: '' })),
  fc.tuple(testResult, repeatChar(257, 2000)).map(([r, s]) => ({ ...r, testName: s })),
  fc.tuple(testResult, fc.integer({ min: 65_537, max: 200_000 })).map(([r, n]) => ({ ...r, result: 'r'.repeat(n) })),
  fc.tuple(testResult, repeatChar(65, 1000)).map(([r, s]) => ({ ...r, units: s })),
  fc.tuple(testResult, repeatChar(257, 1000)).map(([r, s]) => ({ ...r, referenceRange: s })),
  fc.tuple(testResult, fc.constantFrom('testName', 'result', 'units', 'referenceRange'), nonString).map(([r, k, v]) => ({ ...r, [k]: v })),
);

const badReport = fc.oneof(
  fc.tuple(report, fc.constantFrom('source', 'type', 'name', 'data')).map(([r, k]) => {
    const rest: Record<string, unknown> = { ...r };
    delete rest[k];
    return rest;
  }),
  fc.tuple(report, fc.constantFrom('source', 'type', 'name', 'data')).map(([r, k]) => ({ ...r, [k]: '' })),
  fc.tuple(report, fc.constantFrom('source', 'type', 'name', 'data'), nonString).map(([r, k, v]) => ({ ...r, [k]: v })),
  fc.tuple(report, repeatChar(33, 500)).map(([r, s]) => ({ ...r, source: s })),
  fc.tuple(report, repeatChar(65, 500)).map(([r, s]) => ({ ...r, type: s })),
  fc.tuple(report, repeatChar(256, 1000)).map(([r, s]) => ({ ...r, name: s })),
  // invalid base64 under a base64 source (any case)
  fc
    .tuple(
      fc.constantFrom('base64', 'BASE64', 'Base64'),
      fc.oneof(
        fc.string({ minLength: 1, maxLength: 80 }),
        fc.uint8Array({ minLength: 1, maxLength: 60 }).map((b) => Buffer.from(b).toString('base64').replace(/=+$/, '')),
        fc.uint8Array({ minLength: 3, maxLength: 60 }).map((b) =>
          Buffer.from(b)
            .toString('base64')
            .replace(/(.{4})/, '$1\n'),
        ),
        fc.uint8Array({ minLength: 1, maxLength: 60 }).map((b) => Buffer.from(b).toString('base64url') + '!'),
        fc.constantFrom('QQ=', 'QR==', 'Q===', '====', 'QUJD RA==', 'QUJD\r\nRA==', 'QUJDRA', '*AAA'),
      ),
    )
    .filter(([, d]) => d.length > 0 && !isCanonicalBase64(d))
    .map(([source, data]) => ({ source, type: 'pdf', name: 'bad.pdf', data })),
  nonString.filter((v) => !(typeof v === 'object' && v !== null && !Array.isArray(v))),
);

type LabData = Record<string, unknown>;
interface BodyMutation {
  kind: string;
  apply: (data: LabData) => unknown;
  expect: number;
}

const labDataMutations: fc.Arbitrary<BodyMutation> = fc.oneof(
  fc.subarray([...LAB_REQUIRED], { minLength: 1 }).map((fields) => ({
    kind: `missing ${fields.join(',')}`,
    expect: 400,
    apply: (d: LabData) => {
      const out = { ...d };
      for (const f of fields) delete out[f];
      return { data: out };
    },
  })),
  fc
    .tuple(fc.constantFrom(...LAB_IDS, 'status', 'ResultedDateUTC'), nonString)
    .map(([f, v]) => ({ kind: `${f} wrong type`, expect: 400, apply: (d: LabData) => ({ data: { ...d, [f]: v } }) })),
  fc
    .tuple(fc.constantFrom(...LAB_IDS), badLabId)
    .map(([f, v]) => ({ kind: `${f} invalid id`, expect: 400, apply: (d: LabData) => ({ data: { ...d, [f]: v } }) })),
  fc
    .string({ maxLength: 60 })
    .filter((s) => !isStatus(s))
    .map((s) => ({ kind: 'status not in vocabulary', expect: 400, apply: (d: LabData) => ({ data: { ...d, status: s } }) })),
  badInstant.map((s) => ({ kind: 'ResultedDateUTC invalid', expect: 400, apply: (d: LabData) => ({ data: { ...d, ResultedDateUTC: s } }) })),
  fc
    .oneof(
      fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)).map((v) => ({ v, k: 'results not object/array' })),
      fc.constant({ v: [] as unknown, k: 'results empty array' }),
      fc
        .integer({ min: 201, max: 260 })
        .map((n) => ({ v: Array.from({ length: n }, () => ({ testName: 't', result: 'r' })) as unknown, k: 'results over 200' })),
      fc.tuple(fc.array(testResult, { maxLength: 3 }), badTestResult, fc.nat()).map(([list, bad, at]) => {
        const arr: unknown[] = [...list];
        arr.splice(at % (list.length + 1), 0, bad);
        return { v: arr as unknown, k: 'results item invalid' };
      }),
      badTestResult.map((v) => ({ v: v as unknown, k: 'result invalid' })),
    )
    .map(({ v, k }) => ({ kind: k, expect: 400, apply: (d: LabData) => ({ data: { ...d, results: v } }) })),
  fc
    .oneof(
      fc
        .oneof(fc.string(), fc.integer(), fc.constant(null), fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 })))
        .map((v) => ({ v: v as unknown, k: 'reports not an array' })),
      fc.tuple(fc.array(report, { maxLength: 3 }), badReport, fc.nat()).map(([list, bad, at]) => {
        const arr: unknown[] = [...list];
        arr.splice(at % (list.length + 1), 0, bad);
        return { v: arr as unknown, k: 'report invalid' };
      }),
      fc.array(report, { minLength: 21, maxLength: 25 }).map((v) => ({ v: v as unknown, k: 'reports over 20' })),
    )
    .map(({ v, k }) => ({ kind: k, expect: 400, apply: (d: LabData) => ({ data: { ...d, reports: v } }) })),
  labId
    .filter((s) => s !== 'demo-lab' && s !== 'DEMO-LAB-LIS')
    .map((s) => ({ kind: 'senderID not allowed for the partner', expect: 403, apply: (d: LabData) => ({ data: { ...d, senderID: s } }) })),
  fc
    .jsonValue({ maxDepth: 3 })
    .filter(
      (v) =>
        !(
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          typeof (v as Record<string, unknown>).data === 'object' &&
          (v as Record<string, unknown>).data !== null &&
          !Array.isArray((v as Record<string, unknown>).data)
        ),
    )
    .map((v) => ({ kind: 'no data object', expect: 400, apply: () => v })),
);

function withExtras(body: unknown, top: Record<string, unknown>, inner: Record<string, unknown>, innerKey: string): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const b = body as Record<string, unknown>;
  const innerValue = b[innerKey];
  const withInner =
    typeof innerValue === 'object' && innerValue !== null && !Array.isArray(innerValue) ? { ...b, [innerKey]: { ...(innerValue as object), ...inner } } : b;
  return { ...withInner, ...top };
}

function jsonCase(path: string, key: string, m: RawMutation | { kind: string; body: unknown; expect: number }, rid: boolean): BadCase {
  if ('contentType' in m || Buffer.isBuffer(m.body)) {
    const raw = m as RawMutation;
    const headers: Pairs = [['x-api-key', key]];
    if (raw.contentType === undefined) headers.push(['content-type', 'application/json']);
    else if (raw.contentType !== null) headers.push(['Content-Type', raw.contentType]);
    return { category: raw.kind, method: 'POST', url: path, headers, body: raw.body, expect: raw.expect, gateway: raw.gateway, assignRequestId: rid };
  }
  return {
    category: m.kind,
    method: 'POST',
    url: path,
    headers: [
      ['x-api-key', key],
      ['content-type', 'application/json; charset=utf-8'],
    ],
    body: Buffer.from(JSON.stringify(m.body), 'utf8'),
    expect: m.expect,
    assignRequestId: rid,
  };
}

export function labCases(): fc.Arbitrary<BadCase> {
  const deepAt = (b: unknown, deep: unknown) => ({ ...(b as object), data: { ...((b as { data: object }).data ?? {}), x_deep: deep } });
  const semantic = fc
    .tuple(validLabData, labDataMutations, extraProps, extraProps)
    .map(([data, m, top, inner]) => ({ kind: m.kind, body: withExtras(m.apply(data as LabData), top, inner, 'data'), expect: m.expect }));
  return fc
    .tuple(
      fc.oneof({ weight: 5, arbitrary: semantic }, { weight: 2, arbitrary: rawMutations(validLabBody, deepAt) }),
      noiseParams([]),
      headerAbuse(BULK_KEYS.results.secret),
      fc.boolean(),
    )
    .map(([m, noise, abuse, rid]) => {
      const c = jsonCase('/receiveTestData', BULK_KEYS.results.secret, m, rid);
      return withAbuse({ ...c, url: buildUrl(c.url, noise) }, abuse);
    });
}

// ------------------------------------------------------------------ POST /receiveFormIntakeScope

const EXTERNAL_ID = /^[!-~]{1,128}$/;
export const externalId = visibleAscii(1, 30);
const personName = fc.oneof(
  fc.constantFrom('Casey', 'Zoë', "O'Brien", 'Ana María', '李'),
  fc.string({ minLength: 1, maxLength: 30 }).filter((s) => /\S/.test(s)),
);
const pastDate = fc
  .date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2020-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));
const answerValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null)), { maxLength: 4 }),
);

export const validFormPayload = fc.record(
  {
    // a source system the sending partner (demo-forms) owns: any other is a 403 (issue 12)
    sourceSystemId: fc.constantFrom('demo-form-tool', 'demo-forms'),
    formId: externalId,
    formName: fc.string({ maxLength: 40 }),
    submissionId: fc.uuid().map((u) => `sub-${u}`),
    patient: fc.record(
      {
        externalPatientId: externalId,
        firstName: personName,
        lastName: personName,
        dob: pastDate,
        email: fc.constantFrom('casey@example.test', 'a.b+c@example.org'),
      },
      { requiredKeys: ['firstName', 'lastName'] },
    ),
    answers: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), answerValue, { maxKeys: 5 }),
  },
  { requiredKeys: ['sourceSystemId', 'formId', 'submissionId', 'patient', 'answers'] },
);
export const validFormBody = validFormPayload.map((payload) => ({ payload: payload as Record<string, unknown> }));

const badExternalId = fc
  .oneof(fc.constant(''), repeatChar(129, 2000), withInside(fc.oneof(controlChar, nonAsciiChar, fc.constant(' '))))
  .filter((s) => !EXTERNAL_ID.test(s));
const badPersonName = fc.oneof(fc.constantFrom('', ' ', '\t\n', '   '), repeatChar(101, 1000));
const badDate = fc.oneof(
  fc.constantFrom(
    '1990-13-01',
    '1990-00-10',
    '1990-02-30',
    '2023-02-29',
    '1990-04-31',
    '90-01-01',
    '1990/01/01',
    '01-02-1990',
    '1990-1-1',
    '1990-01-01T00:00:00Z',
    '',
    'yesterday',
    '19900101',
    '1990-01-32',
  ),
  fc.string({ maxLength: 20 }).filter((s) => !/^\d{4}-\d{2}-\d{2}$/.test(s)),
  fc.integer({ min: 2, max: 20_000 }).map((days) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)),
);
const badEmail = fc.oneof(
  fc.constantFrom(
    'plainaddress',
    '@example.com',
    'a@',
    'a@@example.com',
    'a b@example.com',
    'a@example..com',
    '',
    'a@-example.com',
    '"a"@',
    'quillon@',
    `${'a'.repeat(250)}@example.com`,
  ),
  fc.string({ maxLength: 40 }).filter((s) => !s.includes('@')),
);

type FormPayload = Record<string, unknown>;
const FORM_REQUIRED = ['sourceSystemId', 'formId', 'submissionId', 'patient', 'answers'] as const;

const formMutations: fc.Arbitrary<BodyMutation> = fc.oneof(
  fc.subarray([...FORM_REQUIRED], { minLength: 1 }).map((fields) => ({
    kind: `missing ${fields.join(',')}`,
    expect: 400,
    apply: (p: FormPayload) => {
      const out = { ...p };
      for (const f of fields) delete out[f];
      return { payload: out };
    },
  })),
  fc.subarray(['firstName', 'lastName'], { minLength: 1 }).map((fields) => ({
    kind: `missing patient.${fields.join(',')}`,
    expect: 400,
    apply: (p: FormPayload) => {
      const patient = { ...(p.patient as object) } as Record<string, unknown>;
      for (const f of fields) delete patient[f];
      return { payload: { ...p, patient } };
    },
  })),
  fc.tuple(fc.constantFrom('sourceSystemId', 'formId', 'submissionId', 'formName', 'patientId', 'patient'), nonString).map(([f, v]) => ({
    kind: `${f} wrong type`,
    expect: 400,
    apply: (p: FormPayload) => ({ payload: { ...p, [f]: f === 'patient' && typeof v === 'object' && v !== null && !Array.isArray(v) ? 'not a patient' : v } }),
  })),
  fc.tuple(fc.constantFrom('externalPatientId', 'firstName', 'lastName', 'dob', 'email', 'patientId'), nonString).map(([f, v]) => ({
    kind: `patient.${f} wrong type`,
    expect: 400,
    apply: (p: FormPayload) => ({ payload: { ...p, patient: { ...(p.patient as object), [f]: v } } }),
  })),
  fc
    .tuple(fc.constantFrom('sourceSystemId', 'formId', 'submissionId'), badExternalId)
    .map(([f, v]) => ({ kind: `${f} invalid`, expect: 400, apply: (p: FormPayload) => ({ payload: { ...p, [f]: v } }) })),
  badExternalId.map((v) => ({
    kind: 'patient.externalPatientId invalid',
    expect: 400,
    apply: (p: FormPayload) => ({ payload: { ...p, patient: { ...(p.patient as object), externalPatientId: v } } }),
  })),
  fc.tuple(fc.boolean(), badChartId).map(([nested, v]) => ({
    kind: `${nested ? 'patient.' : ''}patientId invalid`,
    expect: 400,
    apply: (p: FormPayload) => (nested ? { payload: { ...p, patient: { ...(p.patient as object), patientId: v } } } : { payload: { ...p, patientId: v } }),
  })),
  fc.tuple(fc.constantFrom('firstName', 'lastName'), badPersonName).map(([f, v]) => ({
    kind: `patient.${f} invalid`,
    expect: 400,
    apply: (p: FormPayload) => ({ payload: { ...p, patient: { ...(p.patient as object), [f]: v } } }),
  })),
  badDate.map((v) => ({
    kind: 'patient.dob invalid or future',
    expect: 400,
    apply: (p: FormPayload) => ({ payload: { ...p, patient: { ...(p.patient as object), dob: v } } }),
  })),
  badEmail.map((v) => ({
    kind: 'patient.email invalid',
    expect: 400,
    apply: (p: FormPayload) => ({ payload: { ...p, patient: { ...(p.patient as object), email: v } } }),
  })),
  repeatChar(501, 3000).map((v) => ({ kind: 'formName over 500', expect: 400, apply: (p: FormPayload) => ({ payload: { ...p, formName: v } }) })),
  fc
    .tuple(validChartId, validChartId)
    .filter(([a, b]) => a !== b)
    .map(([a, b]) => ({
      kind: 'two different patientIds',
      expect: 400,
      apply: (p: FormPayload) => ({ payload: { ...p, patientId: a, patient: { ...(p.patient as object), patientId: b } } }),
    })),
  fc
    .oneof(
      fc
        .oneof(fc.array(fc.string(), { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null), fc.boolean())
        .map((v) => ({ v: v as unknown, k: 'answers not an object' })),
      fc
        .tuple(
          fc.string({ minLength: 1, maxLength: 10 }),
          fc.oneof(
            fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 })),
            fc.array(fc.array(fc.string(), { maxLength: 2 }), { minLength: 1, maxLength: 2 }),
          ),
        )
        .map(([k, v]) => ({ v: { [k]: v } as unknown, k: 'answer of a wrong type' })),
      fc.integer({ min: 501, max: 600 }).map((n) => ({ v: { many: Array.from({ length: n }, () => 'x') } as unknown, k: 'answer list over 500' })),
      fc.integer({ min: 100_001, max: 150_000 }).map((n) => ({ v: { long: 'a'.repeat(n) } as unknown, k: 'answer over 100000 chars' })),
      fc.integer({ min: 10_001, max: 20_000 }).map((n) => ({ v: { list: ['a'.repeat(n)] } as unknown, k: 'answer list item over 10000 chars' })),
      fc
        .integer({ min: 2001, max: 2100 })
        .map((n) => ({ v: Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, 'a'])) as unknown, k: 'over 2000 answers' })),
      fc.constant({ v: { '': 'empty question key' } as unknown, k: 'empty answer key' }),
      fc.integer({ min: 257, max: 1000 }).map((n) => ({ v: { ['q'.repeat(n)]: 'a' } as unknown, k: 'answer key over 256' })),
    )
    .map(({ v, k }) => ({ kind: k, expect: 400, apply: (p: FormPayload) => ({ payload: { ...p, answers: v } }) })),
  fc.integer({ min: 3, max: 10 }).map((n) => ({
    kind: 'content over 200 KiB',
    expect: 413,
    apply: (p: FormPayload) => ({ payload: { ...p, answers: Object.fromEntries(Array.from({ length: n }, (_, i) => [`long${i}`, 'z'.repeat(90_000)])) } }),
  })),
  fc
    .jsonValue({ maxDepth: 3 })
    .filter(
      (v) =>
        !(
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          typeof (v as Record<string, unknown>).payload === 'object' &&
          (v as Record<string, unknown>).payload !== null &&
          !Array.isArray((v as Record<string, unknown>).payload)
        ),
    )
    .map((v) => ({ kind: 'no payload object', expect: 400, apply: () => v })),
);

export function formCases(): fc.Arbitrary<BadCase> {
  const deepAt = (b: unknown, deep: unknown) => ({ ...(b as object), payload: { ...((b as { payload: object }).payload ?? {}), x_deep: deep } });
  const semantic = fc
    .tuple(validFormPayload, formMutations, extraProps, extraProps)
    .map(([payload, m, top, inner]) => ({ kind: m.kind, body: withExtras(m.apply(payload as FormPayload), top, inner, 'payload'), expect: m.expect }));
  return fc
    .tuple(
      fc.oneof({ weight: 5, arbitrary: semantic }, { weight: 2, arbitrary: rawMutations(validFormBody, deepAt) }),
      noiseParams([]),
      headerAbuse(BULK_KEYS.forms.secret),
      fc.boolean(),
    )
    .map(([m, noise, abuse, rid]) => {
      const c = jsonCase('/receiveFormIntakeScope', BULK_KEYS.forms.secret, m, rid);
      return withAbuse({ ...c, url: buildUrl(c.url, noise) }, abuse);
    });
}

// ------------------------------------------------------------------ inbox: path ids

/** Packet ids that are not inbox packets: random text, valid-looking ids, huge, unicode. */
export const badPacketId = fc
  .oneof(
    fc.stringMatching(/^fp_[0-9a-f]{32}$/),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
    repeatChar(129, 10_000),
    fc.tuple(repeatChar(127, 127, 'a'), fc.constantFrom('😀', '中', 'é')).map(([a, b]) => a + b + 'tail'),
    fc.constantFrom(
      'fp_',
      'FP_0123456789ABCDEF0123456789ABCDEF',
      'fp_0123456789abcdef0123456789abcde',
      'PACKET#fp_x',
      'null',
      'undefined',
      '%',
      '%25',
      '?',
      '#',
      ' ',
      '\u0000',
      'route',
    ),
  )
  .filter((s) => s !== '' && s !== '.' && s !== '..');

/** Encodes a path segment as a client would (lone surrogates become U+FFFD first). */
export function encodeSegment(s: string): string {
  return encodeURIComponent(s.toWellFormed ? s.toWellFormed() : s.replace(/[\ud800-\udfff]/g, '\ufffd'));
}

declare global {
  interface String {
    toWellFormed?(): string;
  }
}

/** The packet id the server sees (what it decodes from the path). */
export function serverSegment(s: string): string {
  return decodeURIComponent(encodeSegment(s));
}

/** Path segments that are not valid percent-encoding (API Gateway answers 400). */
const undecodable = fc.oneof(
  fc.constantFrom('%zz', '%', '%E0%A4%A', '%C3', 'abc%2', '%FF%FE', '%ED%A0%80', 'fp_%G0'),
  fc
    .tuple(
      visibleAscii(0, 10).map((s) => encodeURIComponent(s)),
      fc.constantFrom('%', '%1', '%zz', '%C3%', '%E2%82'),
    )
    .map(([a, b]) => a + b),
);

const gatewayPaths = (prefix: string, suffix: string) => fc.constantFrom(`${prefix}/${suffix}`, `${prefix}/.${suffix}`, `${prefix}/..${suffix}`);

export function getPacketCases(): fc.Arbitrary<BadCase> {
  return fc
    .tuple(
      fc.oneof(
        { weight: 12, arbitrary: badPacketId.map((id) => ({ id, gateway: false })) },
        { weight: 1, arbitrary: gatewayPaths('/interopInbox', '').map((p) => ({ id: p, gateway: true })) },
        { weight: 1, arbitrary: undecodable.map((raw) => ({ id: raw, gateway: true, undecodable: true })) },
        {
          weight: 1,
          arbitrary: fc.tuple(badPacketId, fc.constantFrom('PUT', 'DELETE', 'PATCH', 'POST', 'OPTIONS')).map(([id, m]) => ({ id, gateway: true, method: m })),
        },
      ),
      noiseParams([]),
      headerAbuse(BULK_KEYS.inbox.secret),
      fc.boolean(),
    )
    .map(([p, noise, abuse, rid]) => {
      const headers: Pairs = [['x-api-key', BULK_KEYS.inbox.secret]];
      if ('method' in p) {
        return withAbuse(
          {
            category: `method ${p.method}`,
            method: p.method!,
            url: buildUrl(`/interopInbox/${encodeSegment(p.id)}`, noise),
            headers,
            expect: 405,
            gateway: true,
            assignRequestId: rid,
          },
          abuse,
        );
      }
      if ('undecodable' in p)
        return withAbuse(
          { category: 'undecodable path', method: 'GET', url: `/interopInbox/${p.id}`, headers, expect: 400, gateway: true, assignRequestId: rid },
          abuse,
        );
      if (p.gateway)
        return withAbuse({ category: `no route ${p.id}`, method: 'GET', url: p.id, headers, expect: 404, gateway: true, assignRequestId: rid }, abuse);
      const c: BadCase = {
        category: 'unknown packet id',
        method: 'GET',
        url: buildUrl(`/interopInbox/${encodeSegment(p.id)}`, noise),
        headers,
        expect: 404,
        audit: { action: 'inbox.read', outcome: 'not_found', status: 404 },
        assignRequestId: rid,
      };
      return withAbuse(c, abuse);
    });
}

export function routeCases(): fc.Arbitrary<BadCase> {
  const validRouteBody = validChartId.map((patientId) => ({ patientId }));
  const deepAt = (b: unknown, deep: unknown) => ({ ...(b as object), x: deep });
  const bodyMutation = fc.oneof(
    { weight: 2, arbitrary: rawMutations(validRouteBody, deepAt) },
    {
      weight: 4,
      arbitrary: fc.oneof(
        fc.constant({ kind: 'empty object', body: {} as unknown, expect: 400 }),
        fc
          .tuple(
            validChartId,
            fc.dictionary(
              fc.string({ maxLength: 10 }).filter((k) => k !== 'patientId'),
              fc.jsonValue({ maxDepth: 2 }),
              { minKeys: 1, maxKeys: 3 },
            ),
          )
          .map(([id, extra]) => ({ kind: 'extra property', body: { ...extra, patientId: id } as unknown, expect: 400 })),
        nonString.map((v) => ({ kind: 'patientId wrong type', body: { patientId: v } as unknown, expect: 400 })),
        badChartId.map((v) => ({ kind: 'patientId invalid', body: { patientId: v } as unknown, expect: 400 })),
        fc
          .jsonValue({ maxDepth: 2 })
          .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
          .map((v) => ({ kind: 'not an object', body: v as unknown, expect: 400 })),
        fc
          .dictionary(
            fc.string({ maxLength: 10 }).filter((k) => k !== 'patientId'),
            fc.jsonValue({ maxDepth: 2 }),
            { minKeys: 1, maxKeys: 3 },
          )
          .map((v) => ({ kind: 'patientId missing', body: v as unknown, expect: 400 })),
      ),
    },
  );
  type Plan =
    | { kind: 'body'; m: RawMutation | { kind: string; body: unknown; expect: number }; id: string }
    | { kind: 'path' | 'gateway'; patientId: string; id: string }
    | { kind: 'method'; patientId: string; id: string; method: string }
    | { kind: 'undecodable'; patientId: string; id: string };
  return fc
    .tuple(
      fc.oneof<fc.MaybeWeightedArbitrary<Plan>[]>(
        { weight: 6, arbitrary: fc.tuple(bodyMutation, badPacketId).map(([m, id]): Plan => ({ kind: 'body', m, id })) },
        { weight: 6, arbitrary: fc.tuple(validChartId, badPacketId).map(([patientId, id]): Plan => ({ kind: 'path', patientId, id })) },
        { weight: 1, arbitrary: fc.tuple(validChartId, fc.constantFrom('', '.', '..')).map(([patientId, id]): Plan => ({ kind: 'gateway', patientId, id })) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(validChartId, badPacketId, fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH'))
            .map(([patientId, id, method]): Plan => ({ kind: 'method', patientId, id, method })),
        },
        { weight: 1, arbitrary: fc.tuple(validChartId, undecodable).map(([patientId, id]): Plan => ({ kind: 'undecodable', patientId, id })) },
      ),
      noiseParams([]),
      headerAbuse(BULK_KEYS.inbox.secret),
      fc.boolean(),
    )
    .map(([p, noise, abuse, rid]) => {
      const key = BULK_KEYS.inbox.secret;
      if (p.kind === 'body') {
        const c = jsonCase(`/interopInbox/${encodeSegment(p.id)}/route`, key, p.m, rid);
        return withAbuse({ ...c, url: buildUrl(c.url, noise) }, abuse);
      }
      const headers: Pairs = [
        ['x-api-key', key],
        ['content-type', 'application/json'],
      ];
      const body = Buffer.from(JSON.stringify({ patientId: p.patientId }));
      if (p.kind === 'gateway') {
        // '' and '..' leave no route (404); '.' normalises to /interopInbox/route, a GET-only path (405)
        return withAbuse(
          {
            category: `no route (packet id ${JSON.stringify(p.id)})`,
            method: 'POST',
            url: `/interopInbox/${p.id}/route`,
            headers,
            body,
            expect: p.id === '.' ? 405 : 404,
            gateway: true,
            assignRequestId: rid,
          },
          abuse,
        );
      }
      if (p.kind === 'undecodable') {
        return withAbuse(
          { category: 'undecodable path', method: 'POST', url: `/interopInbox/${p.id}/route`, headers, body, expect: 400, gateway: true, assignRequestId: rid },
          abuse,
        );
      }
      if (p.kind === 'method') {
        return withAbuse(
          {
            category: `method ${p.method}`,
            method: p.method,
            url: `/interopInbox/${encodeSegment(p.id)}/route`,
            headers,
            body,
            expect: 405,
            gateway: true,
            assignRequestId: rid,
          },
          abuse,
        );
      }
      const c: BadCase = {
        category: 'unknown packet id, valid body',
        method: 'POST',
        url: buildUrl(`/interopInbox/${encodeSegment(p.id)}/route`, noise),
        headers,
        body,
        expect: 404,
        audit: { action: 'inbox.route', outcome: 'not_found', status: 404 },
        assignRequestId: rid,
      };
      return withAbuse(c, abuse);
    });
}

// ------------------------------------------------------------------ GET /interopInbox (list)

const LISTABLE = ['pending_review', 'pending_match'];

function cursorOk(state: string, cursor: string): boolean {
  if (cursor.length === 0 || cursor.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return false;
  let body: { v?: unknown; s?: unknown; k?: Record<string, unknown> };
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof body;
  } catch {
    return false;
  }
  const k = body?.k;
  return (
    !!k &&
    typeof k === 'object' &&
    body.v === 1 &&
    body.s === state &&
    Object.keys(k).length === 4 &&
    ['pk', 'sk', 'statePk', 'stateSk'].every((n) => typeof k[n] === 'string') &&
    k.statePk === `STATE#${state}` &&
    k.sk === 'PACKET' &&
    /^PACKET#fp_[0-9a-f]{32}$/.test(String(k.pk))
  );
}

/** Oracle of the list: status and whether the audit event was declared before the refusal. */
export function listOracle(url: string): { status: number; auditedState?: string } {
  const params = new URL(url, 'http://localhost').searchParams;
  const states = allValues(params, 'state');
  if (states.length > 1) return { status: 400 };
  const state = states[0] ?? 'pending_review';
  if (!LISTABLE.includes(state)) return { status: 400 };
  const limits = allValues(params, 'limit');
  if (limits.length > 1) return { status: 400 };
  if (limits.length === 1 && (!INT_RULE.test(limits[0]!) || Number(limits[0]) < 1 || Number(limits[0]) > 100)) return { status: 400 };
  const cursors = allValues(params, 'cursor');
  if (cursors.length > 1) return { status: 400 };
  if (cursors.length === 1 && !cursorOk(state, cursors[0]!)) return { status: 400, auditedState: state };
  return { status: 200 };
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
const badCursor = fc.oneof(
  fc.constant(''),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }),
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b).toString('base64url')),
  repeatChar(2049, 10_000, 'A'),
  fc
    .record({
      v: fc.constantFrom<unknown>(1, 2, '1', null),
      s: fc.constantFrom<unknown>('pending_review', 'pending_match', 'routed', 1),
      pk: fc.oneof(fc.stringMatching(/^PACKET#fp_[0-9a-f]{32}$/), fc.constantFrom('PACKET#x', 'CONFIG#match-index-key', 'LINK#x')),
      sk: fc.constantFrom('PACKET', 'LINK', 'v1'),
      statePk: fc.constantFrom('STATE#pending_review', 'STATE#pending_match', 'PATIENT#demo-patient-1'),
      stateSk: fc.string({ maxLength: 30 }),
      extra: fc.boolean(),
    })
    .map((r) => b64url({ v: r.v, s: r.s, k: { pk: r.pk, sk: r.sk, statePk: r.statePk, stateSk: r.stateSk, ...(r.extra ? { x: 1 } : {}) } })),
  fc.constantFrom('null', 'e30', 'W10', 'MQ', 'eyJ2IjoxfQ', '....', 'a b', 'a+b/c='),
);

export function listCases(): fc.Arbitrary<BadCase> {
  const stateValues: fc.Arbitrary<string[]> = fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
    { weight: 3, arbitrary: fc.constantFrom<string[]>([], ['pending_review'], ['pending_match'], ['pending_review', 'pending_review']) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          fc.constantFrom('', 'routed', 'matched', 'PENDING_REVIEW', 'pending_review ', 'all', '*'),
          fc.string({ unit: 'binary', maxLength: 30 }),
          repeatChar(1000, 10_000),
        )
        .map((v) => [v]),
    },
    { weight: 1, arbitrary: fc.constant(['pending_review', 'pending_match']) },
  );
  const limitValues: fc.Arbitrary<string[]> = fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
    {
      weight: 3,
      arbitrary: fc.oneof(
        fc.constant([] as string[]),
        fc.integer({ min: 1, max: 100 }).map((n) => [String(n)]),
      ),
    },
    { weight: 1, arbitrary: badLimit.map((v) => [v]) },
    { weight: 1, arbitrary: fc.constant(['5', '6']) },
  );
  const cursorValues: fc.Arbitrary<string[]> = fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
    { weight: 2, arbitrary: fc.constant([] as string[]) },
    { weight: 3, arbitrary: badCursor.map((v) => [v]) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(badCursor, badCursor)
        .filter(([a, b]) => a !== b)
        .map(([a, b]) => [a, b]),
    },
  );
  return fc
    .record({
      state: stateValues,
      limit: limitValues,
      cursor: cursorValues,
      noise: noiseParams(['state', 'limit', 'cursor']),
      suffix: rawSuffix,
      abuse: headerAbuse(BULK_KEYS.inbox.secret),
      rid: fc.boolean(),
      forceCursor: badCursor,
    })
    .map((g) => {
      const pairs: Array<[string, string]> = [
        ...g.state.map((v): [string, string] => ['state', v]),
        ...g.limit.map((v): [string, string] => ['limit', v]),
        ...g.cursor.map((v): [string, string] => ['cursor', v]),
        ...g.noise,
      ];
      let url = buildUrl('/interopInbox', pairs, g.suffix);
      let oracle = listOracle(url);
      if (oracle.status === 200) {
        // every case must be invalid: add a bad cursor
        url = buildUrl('/interopInbox', [...pairs.filter(([n]) => n !== 'cursor'), ['cursor', g.forceCursor]], g.suffix);
        oracle = listOracle(url);
      }
      const kind = oracle.auditedState ? 'cursor invalid (audited)' : 'state/limit/cursor invalid';
      const c: BadCase = {
        category: kind,
        method: 'GET',
        url,
        headers: [['x-api-key', BULK_KEYS.inbox.secret]],
        expect: oracle.status,
        audit: oracle.auditedState ? { action: 'inbox.list', outcome: 'invalid', status: 400 } : undefined,
        assignRequestId: g.rid,
      };
      return withAbuse(c, g.abuse);
    });
}

// ------------------------------------------------------------------ FHIR routes (GET, path id + query)

export const FHIR_ACCEPT_OK = [
  '*/*',
  'application/*',
  'application/fhir+json',
  'application/json',
  'APPLICATION/FHIR+JSON',
  'application/fhir+json; fhirVersion=4.0',
  'text/html, */*;q=0.1',
];
export const FHIR_ACCEPT_REFUSED = [
  'application/hl7-v2',
  'text/plain',
  'application/fhir+json;q=0',
  '*/*;q=0',
  'application/xml, text/*',
  'application/fhir+xml',
  'image/png',
];
const FORMAT_OK = ['json', 'application/json', 'application/fhir+json', 'JSON'];
const FORMAT_REFUSED = ['xml', 'application/fhir+xml', 'html', 'ttl', '', 'jsonp'];
const FHIR_ID_RULE = /^[A-Za-z0-9\-.]{1,800}$/;
const TOKEN_RULE = /^[A-Za-z0-9_-]{1,1024}$/;
const COUNT_RULE = /^\d{1,4}$/;

export interface FhirRoute {
  /** path with `{id}` where the logical id goes */
  path: string;
  /** query parameters the route understands (besides _format) */
  accepted: ReadonlyArray<'patient' | '_count' | '_page_token'>;
  /** a valid id for this route (when it has one) */
  validId?: string;
  /** the audit action the handler declares before reading (a bad page token is refused after it) */
  auditAction?: string;
  /** answered without a key (x-api-key abuse changes nothing) */
  public?: boolean;
}

/** Path ids a FHIR route must refuse with 400 (decoded by the gateway; never one that changes the route). */
const badFhirId = fc
  .oneof(
    withInside(fc.oneof(controlChar, nonAsciiChar, fc.constantFrom('_', ':', ' ', '#', '?', '%', '+', '"', "'", '<', '\\', '*', '!', '~', '/', '$', '&', '='))),
    fc.integer({ min: 801, max: 5000 }).map((n) => 'a'.repeat(n)),
    fc.constantFrom(
      'demo_patient_1',
      'demo-patient-1:x',
      'Patient/demo-patient-1',
      ' demo-patient-1',
      'demo-patient-1 ',
      "' OR 1=1 --",
      '${jndi:x}',
      'PATIENT#demo-patient-1',
    ),
  )
  .filter((s) => {
    try {
      encodeURIComponent(s);
      return !FHIR_ID_RULE.test(s);
    } catch {
      return false; // an unpaired surrogate cannot be put in a URL
    }
  });

/** Page tokens a route must refuse: bad syntax (400 before reading), or well-formed text it never issued (400 after the audit event). */
const badTokenSyntax = fc.oneof(
  fc.constant(''),
  withInside(fc.constantFrom('+', '/', '=', '.', ' ', '%', '~', '!', '*')),
  fc.integer({ min: 1025, max: 4000 }).map((n) => 'A'.repeat(n)),
);
const unissuedToken = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/),
  fc
    .constantFrom(
      '{"k":"z"}',
      'null',
      '[]',
      '{"k":"e","c":1}',
      '{"k":"s","a":"x y"}',
      '{"k":"l","l":"$$"}',
      '{"k":"e","c":"2024-01-01T00:00:00.000Z#note#x","x":1}',
    )
    .map((json) => Buffer.from(json).toString('base64url')),
);

const badCount = fc.oneof(
  fc.constantFrom('', '0', '-1', '201', '1.5', '1e2', '0x10', ' 5', '5 ', '+5', 'NaN', '٣', '99999', '20abc', '１０'),
  fc.integer({ min: 201, max: 2_000_000_000 }).map(String),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).filter((s) => !COUNT_RULE.test(s)),
);

const badPatient = fc.oneof(
  fc.constant(''),
  // (a bad path id can be a good `patient` value: Patient/<id>)
  badFhirId.filter((v) => !(v.startsWith('Patient/') && FHIR_ID_RULE.test(v.slice('Patient/'.length)))),
  badFhirId.map((id) => `Patient/${id}`),
  fc.constantFrom('Encounter/demo-patient-1', 'patient/demo-patient-1', 'http://x/Patient/demo-patient-1'),
);

/** The oracle for a FHIR route: the status and (for an unissued page token) the audit record. */
export function fhirOracle(route: FhirRoute, id: string | undefined, url: string, headers: Pairs): { expect: number; audit?: AuditExpectation } {
  if (id !== undefined && !FHIR_ID_RULE.test(id)) return { expect: 400 };
  const params = new URL(url, 'http://localhost').searchParams;
  const known = new Set<string>([...route.accepted, '_format']);
  for (const name of params.keys()) if (!known.has(name)) return { expect: 400 };
  const one = (name: string) => allValues(params, name);
  if (route.accepted.includes('_count')) {
    const list = one('_count');
    if (list.length > 1) return { expect: 400 };
    if (list.length === 1 && !(COUNT_RULE.test(list[0]!) && Number(list[0]) >= 1 && Number(list[0]) <= 200)) return { expect: 400 };
  }
  let token: string | undefined;
  if (route.accepted.includes('_page_token')) {
    const list = one('_page_token');
    if (list.length > 1) return { expect: 400 };
    if (list.length === 1 && !TOKEN_RULE.test(list[0]!)) return { expect: 400 };
    token = list[0];
  }
  if (route.accepted.includes('patient')) {
    const list = one('patient');
    if (list.length !== 1 || list[0] === '') return { expect: 400 };
    const p = list[0]!.startsWith('Patient/') ? list[0]!.slice('Patient/'.length) : list[0]!;
    if (!FHIR_ID_RULE.test(p)) return { expect: 400 };
  }
  const format = params.getAll('_format');
  if (format.length > 0) {
    if (format.length !== 1 || !FORMAT_OK.some((f) => f.toLowerCase() === format[0]!.toLowerCase())) return { expect: 406 };
  } else {
    const accept = headerList(headers, 'accept').join(', ');
    if (accept !== '' && !FHIR_ACCEPT_OK.some((a) => a.toLowerCase() === accept.toLowerCase())) return { expect: 406 };
  }
  // every generated token is one the server never issued
  if (token !== undefined) return { expect: 400, audit: route.auditAction ? { action: route.auditAction, outcome: 'invalid', status: 400 } : undefined };
  return { expect: 200 };
}

export function fhirCases(route: FhirRoute): fc.Arbitrary<BadCase> {
  const hasId = route.path.includes('{id}');
  const slots = [...(hasId ? ['id'] : []), ...route.accepted, 'unknown parameter', 'accept', '_format'];
  const okValue = (name: string): fc.Arbitrary<string[]> => {
    switch (name) {
      case '_count':
        return fc.oneof(
          fc.constant([] as string[]),
          fc.integer({ min: 1, max: 200 }).map((n) => [String(n)]),
        );
      case 'patient':
        return fc.constantFrom(['demo-patient-1'], ['Patient/demo-patient-2'], ['no-such-patient']);
      default:
        return fc.constant([] as string[]);
    }
  };
  const forcedBad = (name: string): fc.Arbitrary<{ values: string[]; kind: string }> => {
    switch (name) {
      case '_count':
        return fc.oneof(
          badCount.map((v) => ({ values: [v], kind: '_count invalid' })),
          fc
            .tuple(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 101, max: 200 }))
            .map(([a, b]) => ({ values: [String(a), String(b)], kind: '_count repeated' })),
        );
      case '_page_token':
        return fc.oneof(
          badTokenSyntax.map((v) => ({ values: [v], kind: '_page_token malformed' })),
          unissuedToken.map((v) => ({ values: [v], kind: '_page_token not issued' })),
        );
      case 'patient':
        return fc.oneof(
          fc.constant({ values: [] as string[], kind: 'patient missing' }),
          badPatient.map((v) => ({ values: [v], kind: 'patient invalid' })),
          fc.constant({ values: ['demo-patient-1', 'demo-patient-2'] as string[], kind: 'patient repeated' }),
        );
      default:
        return fc.constant({ values: [] as string[], kind: name });
    }
  };
  const unknownParams = fc.array(
    fc.tuple(
      fc
        .oneof(
          fc.constantFrom(
            'date',
            '_include',
            '_revinclude',
            '_sort',
            'subject',
            'limit',
            'foo',
            '',
            'a[]',
            '__proto__',
            'constructor',
            'toString',
            'cursor',
            '_summary',
            '_elements',
            'Patient',
            '_COUNT',
          ),
          fc.string({ maxLength: 12 }),
        )
        .filter((n) => !route.accepted.includes(n as never) && n !== '_format'),
      fc.oneof(fc.constantFrom('', '1', 'eq2024', 'null', '%'), fc.string({ unit: 'binary', maxLength: 30 }), repeatChar(1000, 10_000)),
    ),
    { minLength: 1, maxLength: 3 },
  );
  return fc
    .record({
      forced: fc.constantFrom(...slots),
      goodId: hasId ? fc.oneof(fc.constant(route.validId ?? 'demo-patient-1'), fc.stringMatching(/^[A-Za-z0-9-]{1,30}$/)) : fc.constant(''),
      badId: badFhirId,
      values: fc.tuple(...route.accepted.map((n) => okValue(n))),
      bad: fc.tuple(...route.accepted.map((n) => forcedBad(n))),
      unknown: unknownParams,
      accept: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...FHIR_ACCEPT_OK, ...FHIR_ACCEPT_REFUSED) }),
      refused: fc.constantFrom(...FHIR_ACCEPT_REFUSED),
      format: fc.oneof({ weight: 4, arbitrary: fc.constant([] as string[]) }, { weight: 1, arbitrary: fc.constantFrom(...FORMAT_OK).map((f) => [f]) }),
      badFormat: fc.oneof(
        fc.constantFrom(...FORMAT_REFUSED).map((f) => [f]),
        fc.constant(['json', 'json'] as string[]),
      ),
      suffix: fc.constantFrom('', '', '&', '&&', '#frag'),
      shuffle: fc.boolean(),
      abuse: headerAbuse(BULK_KEYS.fhir.secret),
      rid: fc.boolean(),
    })
    .map((g) => {
      const byName = new Map<string, string[]>();
      route.accepted.forEach((n, i) => byName.set(n, g.values[i]!));
      byName.set('_format', g.format);
      let id = hasId ? g.goodId : undefined;
      let accept = g.accept;
      let kind: string;
      let extra: Pairs = [];
      if (g.forced === 'id') {
        id = g.badId;
        kind = 'id invalid';
      } else if (g.forced === 'unknown parameter') {
        extra = g.unknown;
        kind = 'unsupported parameter';
      } else if (g.forced === 'accept') {
        accept = g.refused;
        byName.set('_format', []);
        kind = 'accept refuses FHIR JSON';
      } else if (g.forced === '_format') {
        byName.set('_format', g.badFormat);
        kind = '_format not json';
      } else {
        const bad = g.bad[route.accepted.indexOf(g.forced as never)]!;
        byName.set(g.forced, bad.values);
        kind = bad.kind;
      }
      let pairs: Pairs = [];
      for (const [n, vs] of byName) for (const v of vs) pairs.push([n, v]);
      pairs.push(...extra);
      if (g.shuffle) pairs = pairs.reverse();
      const headers: Pairs = [['x-api-key', BULK_KEYS.fhir.secret]];
      if (accept !== undefined) headers.push(['accept', accept]);
      const path = id === undefined ? route.path : route.path.replace('{id}', encodeURIComponent(id));
      const url = buildUrl(path, pairs, g.suffix);
      const oracle = fhirOracle(route, id, url, headers);
      const c: BadCase = { category: kind, method: 'GET', url, headers, expect: oracle.expect, audit: oracle.audit, assignRequestId: g.rid, format: 'fhir' };
      if (route.public && g.abuse && !g.abuse.requestIds) return { ...withAbuse(c, g.abuse), expect: c.expect, audit: c.audit };
      return withAbuse(c, g.abuse);
    })
    .filter((c) => c.expect >= 400); // strictly invalid requests only
}
