/**
 * FHIR intake refuses malformed resources (issue 29): 1,200 generated resources (a fixed-seed PRNG
 * mutating the valid fixtures in 14 kinds: required element removed, wrong JSON type, unknown
 * element, bad primitive format, code outside a required value set, empty string / null / empty
 * array, two value[x], dangling reference, wrong resourceType, non-object bodies, Bundle type / entry
 * request faults, a nested Bundle, a contained resource without id, an identifier-less report) sent
 * in-process through the emulated API Gateway (authorizer + handler) to the three routes.
 *
 * Every one must get a 4xx OperationOutcome (FHIR content type, an issue whose code says the status;
 * the issues of a 400 carry `expression`), never a 5xx; and nothing may be written: item counts of
 * every table (but the rate-limit counters and the audit trail, which records each refusal), the S3
 * objects and the queue depths are the same before and after. The mutations that make a resource
 * invalid R4 are confirmed invalid by the independent validator (@medplum/core over the official R4
 * definitions, test/fhir/r4-validator.ts); the valid fixtures are confirmed valid by it.
 */
import type { LocalStack } from '../../lib/local/stack';
import { structuralIssues } from '../../lib/fhir-intake/structure';
import { r4Errors } from '../fhir/r4-validator';
import { BULK_KEYS, diffSnapshots, jsonPost, mapLimit, outcomeShapeIssues, send, snapshot, startReliabilityStack, type Res } from '../reliability/support';
import { labReport, questionnaireResponse, smallReport, type Json } from './fixtures';

const CASES = 1200;
const SEED = 29_2026;

let stack: LocalStack;
beforeAll(async () => {
  stack = await startReliabilityStack();
});
afterAll(async () => {
  await stack?.close();
});

/** mulberry32: a small deterministic PRNG */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  kind: string;
  route: '/fhir' | '/fhir/DiagnosticReport' | '/fhir/QuestionnaireResponse';
  body: unknown;
  /** the mutation breaks R4 itself (the independent validator must refuse it too) */
  r4Invalid: boolean;
  /** where the mutation went (for a failure message) */
  detail?: string;
}

type Path = Array<string | number>;

/** Every path to a value inside `value` (objects and arrays), leaves included. */
function paths(value: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...at, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...at, k], out);
  if (at.length > 0) out.push(at);
  return out;
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], value);
}
function setAt(value: unknown, path: Path, next: unknown): void {
  const parent = getAt(value, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = next;
}
function generate(count: number): Case[] {
  const random = prng(SEED);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  let n = 0;
  const sources: Array<{ route: Case['route']; make: () => Json }> = [
    { route: '/fhir/DiagnosticReport', make: () => labReport(`MAL-${++n}`) },
    { route: '/fhir/DiagnosticReport', make: () => smallReport(`MAL-${++n}`) },
    { route: '/fhir/QuestionnaireResponse', make: () => questionnaireResponse(`MAL-${++n}`) },
  ];
  const resourceKinds: Array<{ kind: string; r4Invalid: boolean; mutate: (r: Json) => void }> = [
    {
      kind: 'required element removed',
      r4Invalid: true,
      mutate: (r) => delete r[pick(r.resourceType === 'QuestionnaireResponse' ? ['status'] : ['status', 'code'])],
    },
    {
      kind: 'wrong JSON type',
      r4Invalid: true,
      mutate: (r) => {
        const leaves = paths(r).filter((p) => typeof getAt(r, p) === 'string' && p[p.length - 1] !== 'resourceType' && p[p.length - 1] !== 'div');
        setAt(r, pick(leaves), pick([42, true, { x: 1 }, [1]]));
      },
    },
    {
      kind: 'unknown element',
      r4Invalid: true,
      mutate: (r) => {
        const objects = [[], ...paths(r)].filter((p) => {
          const v = getAt(r, p as Path);
          return v !== null && typeof v === 'object' && !Array.isArray(v) && !('div' in (v as object));
        });
        const target = pick(objects) as Path;
        (getAt(r, target) as Json)[pick(['colour', 'subjectRef', 'Status', 'reference_'])] = 'x';
        r.__mutated = target.join('.');
      },
    },
    {
      kind: 'bad primitive format',
      r4Invalid: true,
      mutate: (r) => {
        // (ContactPoint.system is a code, not a uri: left out)
        const fields = paths(r).filter(
          (p) =>
            ['issued', 'effectiveDateTime', 'birthDate', 'authored', 'collectedDateTime', 'id', 'system'].includes(String(p[p.length - 1])) &&
            !p.includes('telecom'),
        );
        const path = pick(fields);
        const last = String(path[path.length - 1]);
        setAt(
          r,
          path,
          last === 'id' ? 'has spaces!' : last === 'system' ? 'no spaces allowed' : pick(['2024-13-40', 'yesterday', '2024-01-01T10:00', '24/12/2024']),
        );
        r.__mutated = path.join('.');
      },
    },
    { kind: 'code outside a required value set', r4Invalid: true, mutate: (r) => (r.status = pick(['done', 'FINAL', 'ok', ' final'])) },
    {
      kind: 'empty string, null or empty array',
      r4Invalid: true,
      mutate: (r) => {
        const leaves = paths(r).filter((p) => p[p.length - 1] !== 'resourceType' && p[p.length - 1] !== 'div' && typeof p[p.length - 1] === 'string');
        const path = pick(leaves);
        setAt(r, path, Array.isArray(getAt(r, path)) ? [] : pick(['', null, '   ']));
      },
    },
    {
      kind: 'two value[x]',
      // invalid R4 (a choice element has at most one type), which @medplum/core's validator does not check
      r4Invalid: false,
      mutate: (r) => {
        const obs = (r.contained ?? []).find((c: Json) => c.resourceType === 'Observation');
        if (obs) obs.valueString = 'also a string';
        else r.item[0].answer[0].valueString = 'also a string';
      },
    },
    {
      kind: 'dangling reference',
      r4Invalid: false,
      mutate: (r) => {
        if (r.resourceType === 'DiagnosticReport')
          r.result[0].reference = pick(['#missing', 'urn:uuid:00000000-0000-4000-8000-000000000000', 'Observation/elsewhere']);
        else r.subject.reference = pick(['#missing', 'Group/1', 'urn:uuid:00000000-0000-4000-8000-000000000000']);
      },
    },
    // valid R4 JSON, but nothing can reference it: intake refuses it
    { kind: 'contained resource without id', r4Invalid: false, mutate: (r) => delete r.contained[0].id },
    {
      kind: 'report or form without its identifier',
      r4Invalid: false,
      mutate: (r) => delete r.identifier,
    },
  ];
  const cases: Case[] = [];
  for (let i = 0; cases.length < count; i++) {
    const roll = random();
    if (roll < 0.08) {
      cases.push({
        kind: 'not a resource',
        route: pick(['/fhir', '/fhir/DiagnosticReport', '/fhir/QuestionnaireResponse'] as const),
        body: pick([[], 42, 'text', null, {}, { resourceType: 42 }, { resourceType: 'Patient', id: 'p' }]),
        r4Invalid: false,
      });
      continue;
    }
    if (roll < 0.2) {
      const inner = smallReport(`MAL-B-${i}`);
      const bundle: Json = { resourceType: 'Bundle', type: 'transaction', entry: [{ resource: inner, request: { method: 'POST', url: 'DiagnosticReport' } }] };
      const fault = pick(['type', 'method', 'url', 'nested', 'request', 'entry-invalid', 'empty']);
      // R4-invalid: a bad entry resource, an empty entry list; the others are valid R4 this endpoint does not take
      const r4Invalid = fault === 'entry-invalid' || fault === 'empty';
      const request = bundle.entry[0].request as Json;
      switch (fault) {
        case 'type':
          bundle.type = pick(['collection', 'document', 'searchset']);
          break;
        case 'method':
          request.method = pick(['GET', 'PUT', 'DELETE']);
          break;
        case 'url':
          request.url = pick(['Observation', 'DiagnosticReport/1', 'Patient']);
          break;
        case 'nested':
          bundle.entry[0].resource = { resourceType: 'Bundle', type: 'collection' };
          break;
        case 'request':
          delete bundle.entry[0].request;
          break;
        case 'entry-invalid':
          inner.status = 'bogus';
          break;
        default:
          bundle.entry = [];
      }
      cases.push({ kind: `bundle ${fault}`, route: '/fhir', body: JSON.parse(JSON.stringify(bundle)) as unknown, r4Invalid });
      continue;
    }
    const source = pick(sources);
    const resource = source.make();
    const kind = pick(resourceKinds);
    kind.mutate(resource);
    const mutated = resource.__mutated as string | undefined;
    delete resource.__mutated;
    const body = JSON.parse(JSON.stringify(resource)) as Json;
    const wrongRoute = random() < 0.05;
    cases.push({
      kind: wrongRoute ? 'wrong route' : kind.kind,
      ...(mutated ? { detail: mutated } : {}),
      route: wrongRoute ? (source.route === '/fhir/DiagnosticReport' ? '/fhir/QuestionnaireResponse' : '/fhir/DiagnosticReport') : source.route,
      body,
      r4Invalid: wrongRoute ? false : kind.r4Invalid,
    });
  }
  return cases;
}

describe('1,200 malformed FHIR resources', () => {
  const cases = generate(CASES);

  it('the valid fixtures are valid R4 (independent validator) and structurally clean here', () => {
    for (const resource of [labReport('OK-1'), smallReport('OK-2'), questionnaireResponse('OK-3')]) {
      expect(r4Errors(resource as never)).toEqual([]);
      expect(structuralIssues(resource, resource.resourceType)).toEqual([]);
    }
  });

  it('every mutation meant to break R4 does (the independent validator refuses it too)', () => {
    const escaped = cases.filter((c) => c.r4Invalid && c.body && typeof c.body === 'object' && r4Errors(c.body as never).length === 0);
    expect(escaped.map((c) => `${c.kind} ${c.detail ?? ''}`)).toEqual([]);
  });

  it('each gets a 4xx OperationOutcome, never a 5xx; nothing is stored', async () => {
    const before = await snapshot(stack);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const kinds = new Set<string>();
    await mapLimit(cases, 16, async (c, i) => {
      kinds.add(c.kind);
      const res: Res = await send(jsonPost(c.route, BULK_KEYS.all.secret, JSON.stringify(c.body), { 'content-type': 'application/fhir+json' }));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const problems = res.status >= 400 && res.status < 500 ? outcomeShapeIssues(res) : [`status ${res.status}`];
      if (res.status === 400 && c.body && typeof c.body === 'object' && !Array.isArray(c.body)) {
        const issues = (res.json<Json>().issue ?? []) as Json[];
        if (!issues.some((issue) => Array.isArray(issue.expression) && issue.expression.length > 0)) problems.push('no issue carries an expression');
      }
      if (problems.length > 0) failures.push(`#${i} ${c.kind} ${c.detail ?? ''} ${c.route}: ${problems.join('; ')}`);
    });
    const after = await snapshot(stack);
    expect(failures.slice(0, 10)).toEqual([]);
    expect(diffSnapshots(before, after, ['rateLimit', 'audit'])).toEqual([]);
    expect([...statuses.keys()].every((s) => s >= 400 && s < 500)).toBe(true);
    expect(kinds.size).toBeGreaterThanOrEqual(14);
    // the figures of the run (docs/fhir.md quotes them)
    console.info(`fhir-intake malformed: ${cases.length} cases, ${kinds.size} kinds, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});
