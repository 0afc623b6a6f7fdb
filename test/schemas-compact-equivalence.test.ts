/**
 * The compact standalone validators (scripts/compile-schemas.ts, refs: 'calls': one function per
 * $ref'd definition, errors appended by one helper) against ajv's default inlined form (refs:
 * 'inlined', the form shipped before): over valid bodies and every mutation of every field of
 * them (missing, wrong type, empty, too long, bad pattern/format/enum, unknown property, and pairs
 * of mutations), both give the same verdict and the same error list, object for object, in order
 * (instancePath, schemaPath, keyword, params, message: what lib/schemas/field-errors.ts and
 * lib/results/validation.ts turn into the problem+json's failing fields).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import { CompiledSchemas, compileSchema } from '../scripts/compile-schemas';

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function load(code: string): Validator {
  const module = { exports: {} as unknown };
  new Function('module', 'exports', 'require', code)(module, module.exports, require);
  return module.exports as Validator;
}

const root = path.resolve(__dirname, '..');

const fullLabResult = (results: Json): Json => ({
  data: {
    senderID: 'demo-lab',
    patientID: 'P-1',
    accessionNumber: 'ACC-1',
    recordNo: 'R1',
    status: 'final',
    ResultedDateUTC: '2024-04-02T17:00:00.123Z',
    extra: 'kept',
    order: {
      placerOrderNumber: { id: 'PL-1', namespace: 'DEMO-EHR' },
      accessionNamespace: 'DEMO-LAB',
      universalService: { code: '24323-8', display: 'Comprehensive metabolic panel', system: 'LN' },
      collectedAt: '2024-04-01T08:00-05:00',
      orderingProvider: { id: '1234567893', name: { family: 'Smith', given: 'John', middle: 'Q', suffix: 'Jr', prefix: 'Dr' } },
      orderStatus: 'F',
      specimen: {
        type: { code: '119297000', display: 'Blood specimen', system: 'SCT' },
        collectedAt: '2024-04-01',
        id: { id: 'SPC-1', namespace: 'DEMO-LAB' },
      },
      comments: ['Specimen slightly hemolyzed'],
    },
    reports: [{ source: 'base64', type: 'application/pdf', name: 'report.pdf', data: 'JVBERg==' }],
    results,
  },
});

const fullTestResult: Json = {
  testName: 'Glucose',
  result: '95',
  units: 'mg/dL',
  referenceRange: '70-99',
  code: '2345-7',
  codeSystem: 'LN',
  alternateCode: { code: 'GLU', display: 'Glucose', system: 'L' },
  valueType: 'NM',
  numericValue: '95.0',
  structuredNumeric: { comparator: '<', value1: '2.5', separator: '-', value2: '3' },
  codedValue: { code: '260385009', display: 'Negative', system: 'SCT' },
  textLines: ['Line one', 'Line two'],
  unitsCode: 'mg/dL',
  abnormalFlags: ['N', 'H'],
  observationStatus: 'F',
  observedAt: '2024-04-01T08:00:00.5Z',
  performingOrganization: 'North Lab',
  comments: ['a comment'],
};

/** Valid (or nearly valid) bodies per schema; the mutations start from each. */
const SEEDS: Record<string, Json[]> = {
  'schemas/lab-result.schema.json': [
    fullLabResult([fullTestResult, { testName: 'Color', result: 'Yellow' }]),
    fullLabResult(fullTestResult),
    fullLabResult({ testName: 'SN', result: '1:128', structuredNumeric: { value1: '1', separator: '+' } }),
    { data: { senderID: 'a', patientID: 'b', accessionNumber: 'c', status: 'final', ResultedDateUTC: '2024-01-01T00:00:00Z', results: [] } },
  ],
  'schemas/form-packet.schema.json': [
    {
      payload: {
        sourceSystemId: 'tool-1',
        formId: 'intake',
        formName: 'Intake',
        submissionId: 'sub-1',
        patientId: 'MRN.1',
        patient: { externalPatientId: 'ext-1', firstName: 'Ann', lastName: 'Lee', dob: '1980-02-29', email: 'ann@example.org', patientId: 'MRN:2' },
        answers: { q1: 'yes', q2: 3, q3: true, q4: null, q5: ['a', 1, false, null] },
      },
    },
  ],
  'schemas/inbox-route.schema.json': [{ patientId: 'MRN-1' }],
  'schemas/inbox-patient-search.schema.json': [{ mrn: 'M1' }, { lastName: 'Lee', firstName: 'Ann', birthDate: '1980-01-01' }],
};

/** What any one value may be replaced with. */
const REPLACEMENTS: Json[] = [
  null,
  true,
  0,
  -1.5,
  12,
  '',
  ' ',
  ' lead',
  'trail ',
  'x',
  'ZZ',
  'not-a-date',
  '2024-02-30',
  '2024-13-01T00:00:00Z',
  '2024-04-01T08:00:00Z',
  '2024-04-01T08:00',
  '1.5.5',
  'a b',
  'é',
  '\u0000',
  'x'.repeat(33),
  'x'.repeat(129),
  'x'.repeat(257),
  'x'.repeat(65537),
  'SYN-R',
  '<>',
  '/',
  {},
  { extra: 1 },
  [],
  ['x'],
  [1],
];

type Step = { path: Array<string | number>; value?: Json; remove?: boolean };

function paths(node: Json, at: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  out.push(at);
  if (Array.isArray(node)) node.forEach((child, i) => paths(child, [...at, i], out));
  else if (node && typeof node === 'object') for (const [key, child] of Object.entries(node)) paths(child, [...at, key], out);
  return out;
}

function apply(seed: Json, step: Step): Json {
  const copy = JSON.parse(JSON.stringify(seed)) as Json;
  if (step.path.length === 0) return step.remove ? (undefined as unknown as Json) : step.value!;
  let parent = copy as Record<string | number, Json>;
  for (const key of step.path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  const last = step.path[step.path.length - 1]!;
  if (step.remove) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = step.value!;
  return copy;
}

function mutationsOf(seed: Json): Step[] {
  const steps: Step[] = [];
  for (const at of paths(seed)) {
    steps.push({ path: at, remove: true });
    for (const value of REPLACEMENTS) steps.push({ path: at, value });
    const here = at.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key]!, seed);
    if (Array.isArray(here)) {
      steps.push({ path: at, value: [] });
      steps.push({ path: at, value: Array.from({ length: 201 }, () => here[0] ?? 'x') });
      steps.push({ path: at, value: [...here, ...REPLACEMENTS.slice(0, 12)] });
    } else if (here && typeof here === 'object') {
      steps.push({ path: at, value: { ...here, unknownProperty: 'x' } });
      steps.push({ path: at, value: Object.fromEntries(Object.entries(here).map(([k]) => [k, 5])) });
      steps.push({ path: at, value: Object.fromEntries(Object.entries(here).map(([k]) => [k, ''])) });
    }
  }
  return steps;
}

/** A deterministic PRNG (mulberry32) for the pairs of mutations. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function corpus(schema: string): Json[] {
  const bodies: Json[] = [undefined as unknown as Json, null, 1, 'x', [], {}];
  const next = random(31);
  for (const seed of SEEDS[schema] ?? []) {
    bodies.push(seed);
    const steps = mutationsOf(seed);
    for (const step of steps) bodies.push(apply(seed, step));
    for (let i = 0; i < 300; i++) {
      let body = apply(seed, steps[Math.floor(next() * steps.length)]!);
      try {
        body = apply(body, steps[Math.floor(next() * steps.length)]!);
      } catch {
        // the first mutation removed the second's parent: the single mutation stands
      }
      bodies.push(body);
    }
  }
  return bodies;
}

describe.each(CompiledSchemas.map((s) => [s.schema, s.output]))('%s: compact validator %s', (schema, output) => {
  const inlined = load(compileSchema(schema, { refs: 'inlined' }));
  const compact = load(readFileSync(path.join(root, output), 'utf8'));
  const bodies = corpus(schema);

  it('is smaller than the inlined form', () => {
    expect(readFileSync(path.join(root, output), 'utf8').length).toBeLessThan(compileSchema(schema, { refs: 'inlined' }).length);
  });

  it('gives the same verdict and the same errors as the inlined form on every body of the corpus', () => {
    expect(SEEDS[schema]).toBeDefined();
    let invalid = 0;
    let differing = 0;
    for (const body of bodies) {
      const expected = inlined(body);
      const expectedErrors = JSON.stringify(inlined.errors ?? null);
      const actual = compact(body);
      const actualErrors = JSON.stringify(compact.errors ?? null);
      if (!expected) invalid++;
      if (actual !== expected || actualErrors !== expectedErrors) {
        differing++;
        if (differing === 1) expect({ valid: actual, errors: actualErrors }).toEqual({ valid: expected, errors: expectedErrors });
      }
    }
    expect(differing).toBe(0);
    // the corpus exercises both verdicts, most bodies failing somewhere
    expect(invalid).toBeGreaterThan(bodies.length / 2);
    expect(bodies.length - invalid).toBeGreaterThan(0);
  });
});
