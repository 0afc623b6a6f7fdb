/**
 * The FHIR searches of issue 27 through the local stack: lab Observations readable and searchable
 * (`Observation?patient=&category=&code=&date=`), `DiagnosticReport?patient=&category=&date=`, every
 * date prefix, `Patient?identifier=system|value` and `_id` (hit and miss), the issue 26 rule (an id
 * that is no chart patient answers as an unused id), and OperationOutcome for an unsupported
 * parameter (400) and an unknown FHIR route (404). Every resource returned is validated against R4.
 */
import type { Bundle, CapabilityStatement, DiagnosticReport, Observation, OperationOutcome, Patient, Resource } from '@medplum/fhirtypes';
import type { LocalStack } from '../../lib/local/stack';
import { r4Errors } from '../fhir/r4-validator';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

const FHIR = { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' };
const PATIENT = 'demo-patient-3';
const LOINC = 'http://loinc.org';

let stack: LocalStack;

async function get(p: string, headers: Record<string, string> = FHIR): Promise<HttpResult> {
  try {
    return await call(stack, 'GET', p, { headers });
  } catch (error) {
    if ((error as Error).message !== 'fetch failed') throw error;
    return call(stack, 'GET', p, { headers });
  }
}

function expectValid(resource: Resource, where: string): void {
  const errors = r4Errors(resource);
  if (errors.length) throw new Error(`${where}: ${errors.join('; ')}`);
}

function expectFhir(res: HttpResult, status = 200): void {
  expect({ status: res.status, body: res.status === status ? '' : res.text.slice(0, 300) }).toEqual({ status, body: '' });
  expect(res.headers.get('content-type')).toBe('application/fhir+json; charset=utf-8');
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

/** Every page of a searchset, following `next` links; every Bundle and resource validated. */
async function search<R extends Resource>(first: string): Promise<R[]> {
  const resources: R[] = [];
  let next: string | undefined = first;
  let pages = 0;
  while (next) {
    const res = await get(next);
    expectFhir(res);
    const bundle = res.json<Bundle>();
    expectValid(bundle as Resource, next);
    expect(bundle.type).toBe('searchset');
    resources.push(...(bundle.entry ?? []).map((e) => e.resource as R));
    const link = bundle.link?.find((l) => l.relation === 'next')?.url;
    next = link ? link.slice(link.indexOf('/fhir/')) : undefined;
    if (++pages > 50) throw new Error('paging does not end');
  }
  return resources;
}

function outcome(res: HttpResult, status: number, code: string): OperationOutcome {
  expectFhir(res, status);
  const body = res.json<OperationOutcome>();
  expectValid(body as Resource, 'OperationOutcome');
  expect(body.resourceType).toBe('OperationOutcome');
  expect(body.issue[0]!.code).toBe(code);
  return body;
}

const labBody = (patientID: string, accessionNumber: string, ResultedDateUTC: string, results: unknown) =>
  JSON.stringify({ data: { senderID: 'demo-lab', patientID, accessionNumber, status: 'final', ResultedDateUTC, results } });

/** The lab results of demo-patient-3 posted here (the local stack's demo data has none for it). */
const RESULTS = [
  {
    accession: 'SEARCH-1',
    at: '2024-01-10T08:00:00Z',
    tests: [
      { testName: 'Glucose', code: '2345-7', codeSystem: 'LN', result: '98', units: 'mg/dL' },
      { testName: 'Sodium', code: '2951-2', codeSystem: 'LN', result: '140', units: 'mmol/L' },
    ],
  },
  { accession: 'SEARCH-2', at: '2024-06-15T12:00:00Z', tests: [{ testName: 'Potassium', code: '2823-3', codeSystem: 'LN', result: '4.1', units: 'mmol/L' }] },
  { accession: 'SEARCH-3', at: '2025-03-01T00:30:00Z', tests: [{ testName: 'Glucose', code: '2345-7', codeSystem: 'LN', result: '105', units: 'mg/dL' }] },
] as const;
const resultIds = new Map<string, string>();
let labOnlyResultId: string;

beforeAll(async () => {
  r4Errors({ resourceType: 'Basic', code: { text: 'warm-up' } } as Resource);
  stack = await startTestStack();
  for (const r of RESULTS) {
    const res = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: labBody(PATIENT, r.accession, r.at, r.tests),
    });
    expect(res.status).toBe(200);
    resultIds.set(r.accession, res.json<{ resultId: string }>().resultId);
  }
  // demo-patient-1 (two assessments) gets a lab result too
  const p1 = await call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
    body: labBody('demo-patient-1', 'SEARCH-P1', '2024-02-02T10:00:00Z', [
      { testName: 'Hemoglobin', code: '718-7', codeSystem: 'LN', result: '13.5', units: 'g/dL' },
    ]),
  });
  expect(p1.status).toBe(200);
  // a lab's own patient id, no chart patient: saved and held for review under it
  const res = await call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
    body: labBody('LABMRN-888', 'SEARCH-ORACLE', '2024-06-15T12:00:00Z', [{ testName: 'Potassium', code: '2823-3', codeSystem: 'LN', result: '4.1' }]),
  });
  expect(res.status).toBe(200);
  labOnlyResultId = res.json<{ resultId: string }>().resultId;
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

/** The result part of a lab Observation or DiagnosticReport id (`<patient>..<result>[..<n>]`). */
const resultOf = (id: string) => id.split('..')[1]!;
const resultPart = (accession: string) => resultIds.get(accession)!.replace('_', '.5F');
/** The accessions of lab Observations, one per Observation, in the order served. */
const accessionsOf = (resources: Resource[]) =>
  resources.map((r) => [...resultIds.entries()].find(([, id]) => resultOf(r.id!) === id.replace('_', '.5F'))?.[0] ?? `other:${r.id}`);

describe('lab Observations are resources of their own: searchable and readable', () => {
  it('Observation?patient=&category=laboratory: every test of every result, newest result first; each read by its id gives the same resource', async () => {
    const observations = await search<Observation>(`/fhir/Observation?patient=${PATIENT}&category=laboratory`);
    expect(accessionsOf(observations)).toEqual(['SEARCH-3', 'SEARCH-2', 'SEARCH-1', 'SEARCH-1']);
    expect(observations.map((o) => o.code.text)).toEqual(['Glucose', 'Potassium', 'Glucose', 'Sodium']);
    for (const o of observations) {
      expect(o.id).toMatch(/^demo-patient-3\.\.lr\.5F[0-9a-f]{32}\.\.[12]$/);
      expect(o.id!.length).toBeLessThanOrEqual(64);
      expect(o.category![0]!.coding![0]).toMatchObject({ code: 'laboratory' });
      expect(o.subject).toEqual({ reference: `Patient/${PATIENT}` });
      const read = await get(`/fhir/Observation/${o.id}`);
      expectFhir(read);
      expect(read.json<Observation>()).toEqual(o);
    }
    // the DiagnosticReport contains the same Observations
    const report = (await get(`/fhir/DiagnosticReport/${PATIENT}..${resultPart('SEARCH-1')}`)).json<DiagnosticReport>();
    const contained = (report.contained ?? []).filter((r) => r.resourceType === 'Observation') as Observation[];
    expect(contained.map((o) => o.code.text)).toEqual(['Glucose', 'Sodium']);
    expect(contained.map((o) => o.valueQuantity ?? o.valueString)).toEqual(
      observations.filter((o) => accessionsOf([o])[0] === 'SEARCH-1').map((o) => o.valueQuantity ?? o.valueString),
    );
  });

  it('pages of _count=1 and _count=3 give the same Observations in the same order', async () => {
    const all = await search<Observation>(`/fhir/Observation?patient=${PATIENT}&category=laboratory`);
    for (const count of [1, 3]) {
      const paged = await search<Observation>(`/fhir/Observation?patient=${PATIENT}&category=laboratory&_count=${count}`);
      expect(paged.map((o) => o.id)).toEqual(all.map((o) => o.id));
    }
  });

  it('a lab Observation id of another patient, a position past the last test, or a result under a non-chart id: the same 404', async () => {
    for (const id of [
      `demo-patient-2..${resultPart('SEARCH-1')}..1`,
      `${PATIENT}..${resultPart('SEARCH-1')}..3`,
      `LABMRN-888..${labOnlyResultId.replace('_', '.5F')}..1`,
      `NOPE-unused..${labOnlyResultId.replace('_', '.5F')}..1`,
    ]) {
      outcome(await get(`/fhir/Observation/${id}`), 404, 'not-found');
    }
  });

  it('without category: the lab Observations, then the assessments (category survey)', async () => {
    const all = await search<Observation>('/fhir/Observation?patient=demo-patient-1&_count=2');
    const categories = all.map((o) => o.category![0]!.coding![0]!.code);
    const firstSurvey = categories.indexOf('survey');
    expect(firstSurvey).toBeGreaterThan(0);
    expect(categories.slice(firstSurvey)).toEqual(['survey', 'survey']);
    expect(categories.slice(0, firstSurvey).every((c) => c === 'laboratory')).toBe(true);
    const surveys = await search<Observation>('/fhir/Observation?patient=demo-patient-1&category=survey');
    expect(surveys.map((o) => o.id).sort()).toEqual(['demo-patient-1..demo-assessment-1', 'demo-patient-1..demo-assessment-3']);
    const system = await search<Observation>(
      `/fhir/Observation?patient=demo-patient-1&category=${encodeURIComponent('http://terminology.hl7.org/CodeSystem/observation-category|survey')}`,
    );
    expect(system.map((o) => o.id)).toEqual(surveys.map((o) => o.id));
    expect(await search(`/fhir/Observation?patient=${PATIENT}&category=vital-signs`)).toEqual([]);
    expect(await search(`/fhir/Observation?patient=${PATIENT}&category=${encodeURIComponent('http://other.example|laboratory')}`)).toEqual([]);
  });

  it('code: system|code, code alone, |code, system|, an OR list; a code under another system matches nothing', async () => {
    const token = async (value: string) =>
      (await search<Observation>(`/fhir/Observation?patient=demo-patient-1&code=${encodeURIComponent(value)}`)).map((o) => o.id);
    expect(await token(`${LOINC}|44249-1`)).toEqual(['demo-patient-1..demo-assessment-1']);
    expect(await token('44249-1')).toEqual(['demo-patient-1..demo-assessment-1']);
    expect(await token(`${LOINC}|`)).toContain('demo-patient-1..demo-assessment-1');
    expect(await token('http://snomed.info/sct|44249-1')).toEqual([]);
    expect(await token('|44249-1')).toEqual([]);
    expect(await token(`nope,${LOINC}|44249-1`)).toEqual(['demo-patient-1..demo-assessment-1']);
    // lab Observations: exactly those whose code carries the token as served
    const labs = await search<Observation>(`/fhir/Observation?patient=${PATIENT}&category=laboratory`);
    const carrying = labs.filter((o) => o.code.coding?.some((c) => c.system === LOINC && c.code === '2345-7')).map((o) => o.id);
    const found = await search<Observation>(`/fhir/Observation?patient=${PATIENT}&category=laboratory&code=${encodeURIComponent(`${LOINC}|2345-7`)}`);
    expect(found.map((o) => o.id)).toEqual(carrying);
    if (labs.some((o) => o.code.coding?.length)) expect(carrying).toHaveLength(2);
  });
});

describe('date: every prefix, partial dates, AND', () => {
  // searched by effective[x], else issued: here the resulted time of each result
  it.each([
    ['2024', ['SEARCH-2', 'SEARCH-1', 'SEARCH-1']],
    ['eq2024-06', ['SEARCH-2']],
    ['eq2024-06-15', ['SEARCH-2']],
    ['eq2024-06-15T12:00Z', ['SEARCH-2']],
    ['ne2024', ['SEARCH-3']],
    ['ge2024-06-15', ['SEARCH-3', 'SEARCH-2']],
    ['gt2024-06-15', ['SEARCH-3']],
    ['le2024-06-15', ['SEARCH-2', 'SEARCH-1', 'SEARCH-1']],
    ['lt2024-06-15', ['SEARCH-1', 'SEARCH-1']],
    ['sa2024', ['SEARCH-3']],
    ['eb2025', ['SEARCH-2', 'SEARCH-1', 'SEARCH-1']],
    ['lt2025-03-01T01:00:00+01:00', ['SEARCH-2', 'SEARCH-1', 'SEARCH-1']],
    ['ge2025-03-01T01:00:00+01:00', ['SEARCH-3']],
    ['ge2024-01-01&date=lt2025-01-01', ['SEARCH-2', 'SEARCH-1', 'SEARCH-1']],
    ['gt2030', []],
  ])('Observation date=%s', async (date, expected) => {
    const query = date
      .split('&date=')
      .map((d) => `date=${encodeURIComponent(d)}`)
      .join('&');
    const found = await search<Observation>(`/fhir/Observation?patient=${PATIENT}&category=laboratory&${query}`);
    expect(accessionsOf(found)).toEqual(expected);
    // paged one by one: the same
    const paged = await search<Observation>(`/fhir/Observation?patient=${PATIENT}&category=laboratory&${query}&_count=1`);
    expect(paged.map((o) => o.id)).toEqual(found.map((o) => o.id));
  });

  it('assessments are searched by their effective time', async () => {
    const ids = async (date: string) =>
      (await search<Observation>(`/fhir/Observation?patient=demo-patient-1&category=survey&date=${encodeURIComponent(date)}`)).map((o) => o.id);
    expect(await ids('2024-09-10')).toEqual(['demo-patient-1..demo-assessment-1']);
    expect(await ids('lt2024-02')).toEqual(['demo-patient-1..demo-assessment-3']);
  });
});

describe('DiagnosticReport?patient=&category=&date=', () => {
  const reports = async (query: string) => {
    const found = await search<DiagnosticReport>(`/fhir/DiagnosticReport?patient=${PATIENT}${query}`);
    return found.map((r) => [...resultIds.entries()].find(([, id]) => resultOf(r.id!) === id.replace('_', '.5F'))?.[0]);
  };

  it('category LAB (with or without its system) gives every report; another category none', async () => {
    expect(await reports('')).toEqual(['SEARCH-3', 'SEARCH-2', 'SEARCH-1']);
    expect(await reports('&category=LAB')).toEqual(['SEARCH-3', 'SEARCH-2', 'SEARCH-1']);
    expect(await reports(`&category=${encodeURIComponent('http://terminology.hl7.org/CodeSystem/v2-0074|LAB')}`)).toEqual(['SEARCH-3', 'SEARCH-2', 'SEARCH-1']);
    expect(await reports('&category=RAD')).toEqual([]);
  });

  it.each([
    ['ge2024-06-01', ['SEARCH-3', 'SEARCH-2']],
    ['lt2024-06-01', ['SEARCH-1']],
    ['le2024-06-15', ['SEARCH-2', 'SEARCH-1']],
    ['gt2024-06-15', ['SEARCH-3']],
    ['eq2024', ['SEARCH-2', 'SEARCH-1']],
    ['2025-03', ['SEARCH-3']],
  ])('date=%s', async (date, expected) => {
    expect(await reports(`&category=LAB&date=${encodeURIComponent(date)}`)).toEqual(expected);
    expect(await reports(`&date=${encodeURIComponent(date)}&_count=1`)).toEqual(expected);
  });
});

describe('issue 26 holds for the new searches: a non-chart id answers as an unused id', () => {
  function comparable(res: HttpResult, searched: string): unknown {
    const bundle = res.json<Bundle>();
    expectValid(bundle as Resource, 'Bundle');
    return {
      status: res.status,
      bundle: {
        ...bundle,
        meta: undefined,
        timestamp: undefined,
        link: bundle.link?.map((l) => ({ relation: l.relation, url: l.url.split(searched).join('<id>') })),
      },
    };
  }
  it.each([
    ['Observation', ''],
    ['Observation', '&category=laboratory'],
    ['Observation', `&code=${encodeURIComponent(`${LOINC}|2823-3`)}&date=ge2024`],
    ['DiagnosticReport', '&category=LAB&date=2024-06-15'],
  ])('%s?patient=LABMRN-888%s', async (type, query) => {
    const labOnly = await get(`/fhir/${type}?patient=LABMRN-888${query}`);
    const unused = await get(`/fhir/${type}?patient=NOPE-unused${query}`);
    expectFhir(labOnly);
    expect(labOnly.json<Bundle>().entry).toBeUndefined();
    expect(labOnly.text).not.toContain('Potassium');
    expect(comparable(labOnly, 'LABMRN-888')).toEqual(comparable(unused, 'NOPE-unused'));
  });
});

describe('Patient?identifier=system|value and _id', () => {
  const ids = async (query: string) => (await search<Patient>(`/fhir/Patient?${query}`)).map((p) => p.id);
  const identifier = (system: string, value: string) => `identifier=${encodeURIComponent(`${system}|${value}`)}`;

  it('the system as Patient.identifier writes it finds the patient (MRN and authority normalised); a miss is an empty Bundle', async () => {
    const patient = (await get(`/fhir/Patient/${PATIENT}`)).json<Patient>();
    const mrn = patient.identifier!.find((i) => i.type?.coding?.[0]?.code === 'MR')!;
    expect(mrn.system).toBe('urn:interop:mrn:DEMO-HOSP');
    expect(await ids(identifier(mrn.system!, mrn.value!))).toEqual([PATIENT]);
    const found = await search<Patient>(`/fhir/Patient?${identifier(mrn.system!, mrn.value!)}`);
    expect(found[0]).toEqual(patient);
    expect(await ids(identifier('urn:interop:mrn:demo-hosp', ` ${mrn.value!.toLowerCase()} `))).toEqual([PATIENT]);
    expect(await ids(identifier(mrn.system!, 'DEMO-999999'))).toEqual([]);
    expect(await ids(identifier('urn:interop:mrn:OTHER-HOSP', mrn.value!))).toEqual([]);
    expect(await ids(identifier('http://hospital.example/mrn', mrn.value!))).toEqual([]);
  });

  it('_id: one or several ids (OR); with an identifier, both must match', async () => {
    expect(await ids('_id=demo-patient-2')).toEqual(['demo-patient-2']);
    expect(await ids('_id=demo-patient-2,NOPE-unused,demo-patient-1')).toEqual(['demo-patient-2', 'demo-patient-1']);
    expect(await ids('_id=NOPE-unused')).toEqual([]);
    expect(await ids(`_id=${PATIENT}&${identifier('urn:interop:mrn:DEMO-HOSP', 'DEMO-000003')}`)).toEqual([PATIENT]);
    expect(await ids(`_id=demo-patient-1&${identifier('urn:interop:mrn:DEMO-HOSP', 'DEMO-000003')}`)).toEqual([]);
  });

  it('without a system, without any parameter, or with another parameter: 400 OperationOutcome', async () => {
    for (const query of ['identifier=DEMO-000003', '', 'name=Smith', `identifier=${encodeURIComponent('|DEMO-000003')}`, '_id=bad_id']) {
      outcome(await get(`/fhir/Patient?${query}`), 400, 'invalid');
    }
  });
});

describe('refusals a FHIR client reads as FHIR', () => {
  it.each([
    ['/fhir/Observation?patient=demo-patient-1&_sort=date'],
    ['/fhir/Observation?patient=demo-patient-1&code:text=glucose'],
    ['/fhir/Observation?category=laboratory'],
    ['/fhir/Observation?patient=demo-patient-1&date=ap2024'],
    ['/fhir/Observation?patient=demo-patient-1&date=2024-13'],
    ['/fhir/Observation?patient=demo-patient-1&date=yesterday'],
    ['/fhir/Observation?patient=demo-patient-1&code='],
    ['/fhir/Observation?patient=demo-patient-1&_page_token=eyJrIjoibCIsImwiOiJ4In0'],
    ['/fhir/DiagnosticReport?patient=demo-patient-1&code=LAB'],
    ['/fhir/DiagnosticReport?patient=demo-patient-1&_include=DiagnosticReport:result'],
    ['/fhir/Encounter?patient=demo-patient-1&date=2024'],
  ])('unsupported or malformed parameter %s -> 400 OperationOutcome', async (p) => {
    outcome(await get(p), 400, 'invalid');
  });

  it.each([
    ['/fhir/Condition?patient=demo-patient-1'],
    ['/fhir/Condition/demo-patient-1..x'],
    ['/fhir/MedicationRequest'],
    ['/fhir/Patient/demo-patient-1/_history'],
    ['/fhir/Observation/demo-patient-1..demo-assessment-1/_history/1'],
    ['/fhir/Patient/demo-patient-1/%24everything'],
  ])('unknown FHIR route %s -> 404 OperationOutcome', async (p) => {
    const body = outcome(await get(p), 404, 'not-found');
    expect(body.issue[0]!.diagnostics).toContain('DiagnosticReport, DocumentReference, Encounter, Observation, Patient');
  });

  it('an unknown route needs the key like every FHIR route (401 OperationOutcome without one); another method is a 405', async () => {
    outcome(await get('/fhir/Condition', { accept: 'application/fhir+json' }), 401, 'login');
    const post = await call(stack, 'POST', '/fhir/Condition', { headers: { ...FHIR, 'content-type': 'application/fhir+json' }, body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });
});

describe('CapabilityStatement', () => {
  it('lists every interaction and search parameter', async () => {
    const res = await get('/fhir/metadata', { accept: 'application/fhir+json' });
    expectFhir(res);
    const cs = res.json<CapabilityStatement>();
    expectValid(cs as Resource, 'metadata');
    const resources = cs.rest![0]!.resource!;
    const summary = Object.fromEntries(
      resources.map((r) => [r.type, { interactions: (r.interaction ?? []).map((i) => i.code).sort(), params: (r.searchParam ?? []).map((p) => p.name) }]),
    );
    expect(summary).toEqual({
      Patient: { interactions: ['read', 'search-type'], params: ['identifier', '_id', '_count'] },
      Encounter: { interactions: ['read', 'search-type'], params: ['patient', '_count', '_page_token'] },
      DocumentReference: { interactions: ['read', 'search-type'], params: ['patient', '_count', '_page_token'] },
      Observation: { interactions: ['read', 'search-type'], params: ['patient', 'category', 'code', 'date', '_count', '_page_token'] },
      DiagnosticReport: { interactions: ['create', 'read', 'search-type'], params: ['patient', 'category', 'date', '_count', '_page_token'] },
      // FHIR intake (issue 29)
      QuestionnaireResponse: { interactions: ['create'], params: [] },
    });
  });
});
