/**
 * The shipped validators (lib/<domain>/generated/<name>.validator.js: the schema as data, run by
 * lib/schemas/schema-interpreter.ts) against ajv compiled at test time from the same schema file
 * (allErrors, strict, allowUnionTypes, ajv-formats: what the validators were before issue 31 row
 * 31.5): on every body of two corpora, both give the same verdict and the same error list, object
 * for object, in order (instancePath, schemaPath, keyword, params, message, propertyName: what
 * lib/schemas/field-errors.ts and lib/results/validation.ts turn into the problem+json's failing
 * fields), compared as JSON text so one differing field of one error fails.
 * - mutations of hand-written valid bodies (SEEDS): every field missing, replaced by each of
 *   REPLACEMENTS, grown, emptied, and random pairs of those;
 * - bodies generated from the schema itself (SchemaBodies): valid and invalid values for every
 *   property at every depth (wrong types, missing required, extra properties, strings at and past
 *   their length limits, failing patterns and formats, values outside each enum, arrays at and past
 *   their item limits, map keys that are not allowed), at four mutation rates.
 * Every error site of ajv's code for the schema (each schemaPath it can report) is hit by the corpora,
 * except the few no JSON body can reach (UNREACHABLE).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone';
import { CompiledSchemas, withoutAnnotations } from '../scripts/compile-schemas';

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

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

type Schema = { [keyword: string]: unknown };

/** Strings a generated string value is drawn from: each kept where the string's own schema (ajv) accepts it, or rejects it for an invalid value. */
const STRINGS: string[] = [
  'A',
  'ab',
  'Ann',
  'Lee',
  'MRN-1',
  'MRN.1:2',
  'demo-lab',
  'ACC 1',
  'final',
  'F',
  'NM',
  'CWE',
  'LN',
  'SCT',
  '99zzz',
  'L.1-2',
  '2345-7',
  '95',
  '95.0',
  '-1.5',
  '+.5',
  '6.',
  'mg/dL',
  '10*3/uL',
  '{ratio}',
  'a@example.org',
  'a.b+c@mail.example.org',
  'a@b',
  'Zoë',
  'Ünal',
  '😀',
  '😀😀',
  '1980-02-29',
  '1981-02-29',
  '2024-04-01',
  '2024',
  '2024-04',
  '2024-04-01T08',
  '2024-04-01T08:00',
  '2024-04-01T08:00Z',
  '2024-04-01T08:00:00',
  '2024-04-01T08:00:00Z',
  '2024-04-01T08:00:00.123456789Z',
  '2024-04-01T08:00:00.1234567890Z',
  '2024-04-01T08:00:00+05:30',
  '2024-04-01T08:00:00-05:00',
  '2024-04-01t08:00:00z',
  '2024-04-01 08:00:00Z',
  '2016-12-31T23:59:60Z',
  '2024-02-30T00:00:00Z',
  '2024-04-01T24:00:00Z',
  '',
  ' ',
  ' lead',
  'trail ',
  'tab\tin',
  'line\nbreak',
  '\u0000',
  '<>',
  '/',
  '~',
  '-',
  ':',
  '+',
  '<=',
  'code',
  'text',
  'SYN-R',
  'H',
  'zz',
];

/** Strings of every length around the limits a schema sets (n-1, n, n+1), in ASCII and in astral characters (one code point, two UTF-16 units). */
function lengthStrings(schema: Schema): string[] {
  const out: string[] = [];
  for (const limit of [schema.minLength, schema.maxLength])
    if (typeof limit === 'number')
      for (const n of [limit - 1, limit, limit + 1])
        if (n >= 0) {
          out.push('x'.repeat(n), '😀'.repeat(n));
          if (n > 1) out.push(`A${'b'.repeat(n - 2)}C`);
        }
  return out;
}

const WRONG_TYPES: Json[] = [null, true, false, 0, 7, -1.5, 'x', '', [], ['x'], {}, { a: 1 }];

/**
 * Bodies generated from a schema: each value drawn for its own (sub)schema, valid with
 * probability 1 - rate at every node, else one of the ways it can fail there.
 */
class SchemaBodies {
  private readonly ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
  private readonly stringChoices = new Map<Schema, { valid: string[]; invalid: string[] }>();

  constructor(
    private readonly root: Schema,
    private readonly next: () => number,
  ) {
    addFormats(this.ajv);
  }

  private pick<T>(items: T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  private resolve(schema: Schema): Schema {
    let node = schema;
    while (typeof node.$ref === 'string') node = (this.root.definitions as Record<string, Schema>)[node.$ref.replace('#/definitions/', '')]!;
    return node;
  }

  /** The schema with one branch of its if/then/else or oneOf folded in (the generated value aims at that branch). */
  private branch(schema: Schema): Schema {
    const branches: Schema[] = [];
    if (schema.then !== undefined) branches.push(schema.then as Schema);
    if (schema.else !== undefined) branches.push(schema.else as Schema);
    if (Array.isArray(schema.oneOf)) branches.push(...(schema.oneOf as Schema[]));
    if (branches.length === 0) return schema;
    const chosen = this.resolve(this.pick(branches));
    return {
      ...schema,
      ...chosen,
      required: [...((schema.required as string[]) ?? []), ...((chosen.required as string[]) ?? [])],
      properties: { ...((schema.properties as object) ?? {}), ...((chosen.properties as object) ?? {}) },
    };
  }

  private strings(schema: Schema): { valid: string[]; invalid: string[] } {
    let choices = this.stringChoices.get(schema);
    if (!choices) {
      const { type: _type, ...constraints } = schema;
      const accepts = this.ajv.compile({ type: 'string', ...constraints });
      const candidates = [...STRINGS, ...lengthStrings(schema), ...((schema.enum as string[]) ?? [])];
      choices = { valid: candidates.filter((s) => accepts(s)), invalid: candidates.filter((s) => !accepts(s)) };
      this.stringChoices.set(schema, choices);
    }
    return choices;
  }

  value(input: Schema, rate: number, depth = 0): Json {
    const schema = this.branch(this.resolve(input));
    const fail = this.next() < rate;
    if (fail && this.next() < 0.3) return this.pick(WRONG_TYPES);
    const types = schema.type === undefined ? ['string'] : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    const type = this.pick(types);
    if (type === 'string') {
      const { valid, invalid } = this.strings(schema);
      // strings of thousands of characters (the 65,536 limits) now and then only: they make the run slow
      const some = (list: string[]) => (this.next() < 0.03 ? list : list.filter((s) => s.length <= 1000));
      const [good, bad] = [some(valid), some(invalid)];
      return this.pick(fail && bad.length > 0 ? bad : good.length > 0 ? good : bad);
    }
    if (type === 'number') return this.pick([0, 1, -2.5, 1e21]);
    if (type === 'boolean') return this.next() < 0.5;
    if (type === 'null') return null;
    if (type === 'array') return this.array(schema, fail, rate, depth);
    return this.object(schema, fail, rate, depth);
  }

  private array(schema: Schema, fail: boolean, rate: number, depth: number): Json {
    const min = (schema.minItems as number | undefined) ?? 0;
    const max = (schema.maxItems as number | undefined) ?? min + 3;
    let length = min + Math.floor(this.next() * (Math.min(max, min + 3) - min + 1));
    if (fail) length = this.pick([0, Math.max(min - 1, 0), max + 1]);
    const items = (schema.items as Schema | undefined) ?? {};
    // a long array repeats one value (its count is what fails)
    if (length > 20) return new Array<Json>(length).fill(this.value(items, 0, depth + 3));
    return Array.from({ length }, () => this.value(items, rate, depth + 1));
  }

  private object(schema: Schema, fail: boolean, rate: number, depth: number): Json {
    const out: { [key: string]: Json } = {};
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = (schema.required as string[] | undefined) ?? [];
    for (const [name, sub] of Object.entries(properties))
      if (required.includes(name) || this.next() < (depth > 3 ? 0.2 : 0.5)) out[name] = this.value(sub, rate, depth + 1);
    // valid unless failing: each present property's dependencies, and enough properties
    for (const [property, deps] of Object.entries((schema.dependencies ?? {}) as Record<string, string[]>))
      if (out[property] !== undefined) for (const dep of deps) out[dep] ??= this.value(properties[dep] ?? {}, rate, depth + 1);
    for (const [name, sub] of Object.entries(properties))
      if (Object.keys(out).length < ((schema.minProperties as number | undefined) ?? 0)) out[name] ??= this.value(sub, rate, depth + 1);
    const additional = schema.additionalProperties;
    if (additional && typeof additional === 'object') {
      const count = Math.floor(this.next() * 4);
      for (let i = 0; i < count; i++)
        out[this.pick(['q1', 'q2', 'a/b', 'a~b', 'é', 'x'.repeat(256), 'x'.repeat(257), ''])] = this.value(additional as Schema, rate, depth + 1);
    }
    if (fail) {
      const how = this.pick(['drop required', 'extra property', 'dependency', 'too many', 'empty']);
      if (how === 'drop required' && required.length > 0) delete out[this.pick(required)];
      else if (how === 'extra property') out[this.pick(['unknownProperty', 'extra', '~/'])] = 'x';
      else if (how === 'dependency' && schema.dependencies) {
        const [property] = this.pick(Object.entries(schema.dependencies as Record<string, string[]>));
        out[property] = this.value(properties[property] ?? {}, 0, depth + 1);
        for (const deps of Object.values(schema.dependencies as Record<string, string[]>)) for (const dep of deps) if (this.next() < 0.7) delete out[dep];
      } else if (how === 'too many' && typeof schema.maxProperties === 'number') for (let i = 0; i <= schema.maxProperties; i++) out[`k${i}`] = 'x';
      else if (how === 'empty') for (const key of Object.keys(out)) delete out[key];
    }
    return out;
  }
}

/** Bodies generated from `schemaFile` at each mutation rate. */
function generatedBodies(schemaFile: string, perRate: number): Json[] {
  const schema = withoutAnnotations(JSON.parse(readFileSync(path.join(root, schemaFile), 'utf8'))) as Schema;
  const bodies = new SchemaBodies(schema, random(315));
  const out: Json[] = [];
  for (const rate of [0, 0.03, 0.1, 0.3]) for (let i = 0; i < perRate; i++) out.push(bodies.value(schema, rate));
  return out;
}

/**
 * ajv's error sites that no JSON body reaches: a property name is always a string, so the `type`
 * of propertyNames never fails; the lab result's `results` runs its `then` (type array) only when
 * its `if` (type array) holds.
 */
const UNREACHABLE = new Set(['#/properties/payload/properties/answers/propertyNames/type', '#/properties/data/properties/results/then/type']);

/** Every schemaPath ajv's code for `schema` can report (ajv's standalone code, refs inlined as ajv does by default). */
function errorSites(schema: object): string[] {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, code: { source: true } });
  addFormats(ajv);
  const code = standaloneCode(ajv, ajv.compile(schema));
  return [...new Set([...code.matchAll(/schemaPath:"([^"]*)"/g)].map((m) => m[1]!))].filter((site) => !UNREACHABLE.has(site)).sort();
}

/** How many bodies give a different verdict or error list (the first one is shown by a failing expect). */
function differences(shipped: Validator, reference: Validator, bodies: Json[]): { differing: number; invalid: number; sites: Set<string> } {
  let invalid = 0;
  let differing = 0;
  const sites = new Set<string>();
  for (const body of bodies) {
    const expected = reference(body);
    const expectedErrors = JSON.stringify(reference.errors ?? null);
    const actual = shipped(body);
    const actualErrors = JSON.stringify(shipped.errors ?? null);
    if (!expected) invalid++;
    for (const error of reference.errors ?? []) sites.add(error.schemaPath);
    if (actual !== expected || actualErrors !== expectedErrors) {
      differing++;
      if (differing === 1) expect({ valid: actual, errors: actualErrors }).toEqual({ valid: expected, errors: expectedErrors });
    }
  }
  return { differing, invalid, sites };
}

describe.each(CompiledSchemas.map((s) => [s.schema, s.output]))('%s: shipped validator %s', (schemaFile, output) => {
  const schema = JSON.parse(readFileSync(path.join(root, schemaFile), 'utf8')) as object;
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  const reference = ajv.compile(schema) as Validator;
  // jest's require: the generated module requires the interpreter (TypeScript) beside it
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const shipped = require(path.join(root, output)) as Validator;
  const mutated = corpus(schemaFile);
  const generated = generatedBodies(schemaFile, 1000);
  let compared: { mutated: ReturnType<typeof differences>; generated: ReturnType<typeof differences> } | undefined;
  const comparison = () => (compared ??= { mutated: differences(shipped, reference, mutated), generated: differences(shipped, reference, generated) });

  it("requires no ajv but its runtime's ucs2length: the schema as data for the interpreter, or ajv's compacted standalone code", () => {
    const code = readFileSync(path.join(root, output), 'utf8');
    const requires = [...code.matchAll(/require\("([^"]*)"\)/g)].map((m) => m[1]!);
    expect(requires.filter((r) => !/^(\.\.\/)+schemas\/(schema-interpreter|string-formats|date-format)$|^ajv\/dist\/runtime\/ucs2length$/.test(r))).toEqual([]);
    // the large schemas are interpreted (issue 31 row 31.5: the lab result validator was 35.85 KB of ajv code)
    if (/lab-result|form-packet/.test(schemaFile)) expect(requires).toEqual(['../../schemas/schema-interpreter']);
  });

  it('gives the verdict and the errors of ajv on every mutation of the hand-written bodies', () => {
    expect(SEEDS[schemaFile]).toBeDefined();
    const { differing, invalid } = comparison().mutated;
    expect(differing).toBe(0);
    // the corpus exercises both verdicts, most bodies failing somewhere
    expect(invalid).toBeGreaterThan(mutated.length / 2);
    expect(mutated.length - invalid).toBeGreaterThan(0);
  });

  it('gives the verdict and the errors of ajv on every body generated from the schema', () => {
    const { differing, invalid } = comparison().generated;
    expect(differing).toBe(0);
    // both verdicts, in numbers
    expect(invalid).toBeGreaterThan(generated.length / 10);
    expect(generated.length - invalid).toBeGreaterThan(generated.length / 10);
  });

  it("reaches every error site of ajv's code for the schema", () => {
    const sites = new Set([...comparison().mutated.sites, ...comparison().generated.sites]);
    expect(errorSites(schema).filter((site) => !sites.has(site))).toEqual([]);
  });

  it('fails when one field of one error differs (the comparison can fail)', () => {
    const body = mutated.find((b) => !reference(b))!;
    const planted = ((data: unknown) => {
      const valid = shipped(data);
      planted.errors = shipped.errors?.map((e, i) => (i === 0 ? { ...e, schemaPath: `${e.schemaPath}/x` } : e));
      return valid;
    }) as Validator;
    expect(() => differences(planted, reference, [body])).toThrow();
  });
});
