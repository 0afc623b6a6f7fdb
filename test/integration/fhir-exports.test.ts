/**
 * The FHIR R4 read API through the local stack (real gateway emulation, authorizer, DynamoDB, KMS):
 * every resource for every demo id validated against the official R4 definitions (0 errors), the
 * records of $everything equal to the HL7 patient summary's, values equal to the HL7 exports' values
 * for the same record (read back with @medplum/core's HL7 parser, not lib/hl7), paging, and the
 * OperationOutcome errors.
 */
import { IDENTIFIER_LENGTH, shortIdentifier } from '../../lib/hl7/identifiers';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type {
  Bundle,
  CapabilityStatement,
  DiagnosticReport,
  DocumentReference,
  Encounter,
  Observation,
  OperationOutcome,
  Patient,
  Resource,
} from '@medplum/fhirtypes';
import type { LocalStack } from '../../lib/local/stack';
import { r4Errors } from '../fhir/r4-validator';
import { parseWithMedplum, type ParsedMessage } from '../hl7/parsers';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

interface DemoPatient {
  patientId: string;
  encounters?: Array<{ encounterId: string }>;
  notes?: Array<{ noteId: string }>;
  assessments?: Array<{ assessmentId: string }>;
}
const demo = JSON.parse(readFileSync(path.resolve(__dirname, '../../lib/local/demo-chart.json'), 'utf8')) as { patients: DemoPatient[] };

const FHIR = { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' };
const HL7 = { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' };

let stack: LocalStack;
/**
 * GET through the local stack. A GET that fails at the transport level (undici reusing a keep-alive
 * socket the server closed while this test was validating, seen at load 19 on 2 cores) is sent once more.
 */
async function get(p: string, headers: Record<string, string> = FHIR): Promise<HttpResult> {
  try {
    return await call(stack, 'GET', p, { headers });
  } catch (error) {
    if ((error as Error).message !== 'fetch failed') throw error;
    return call(stack, 'GET', p, { headers });
  }
}

/** Decoded logical id parts, written independently of lib/fhir: `..` separates, `.XX` is a hex escape. */
function idParts(id: string): string[] {
  return id
    .split(/\.\.(?![0-9A-F]{2}(?:[^0-9A-F]|$))|\.\.(?=\.)/)
    .map((p) => p.replace(/\.([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))));
}

function expectValid(resource: Resource, where: string): void {
  const errors = r4Errors(resource);
  if (errors.length) throw new Error(`${where}: ${errors.join('; ')}`);
}

function expectFhir(res: HttpResult, status = 200): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/fhir+json; charset=utf-8');
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.headers.get('cache-control')).toBe('no-store');
}

/** Every page of a searchset, following `next` links (relative to the stack's URL). */
async function allPages(first: string): Promise<{ pages: Bundle[]; resources: Resource[] }> {
  const pages: Bundle[] = [];
  let next: string | undefined = first;
  while (next) {
    const res = await get(next);
    expectFhir(res);
    const bundle = res.json<Bundle>();
    expectValid(bundle as Resource, next);
    pages.push(bundle);
    const link = bundle.link?.find((l) => l.relation === 'next')?.url;
    next = link ? link.slice(link.indexOf('/fhir/')) : undefined;
    if (pages.length > 50) throw new Error('paging does not end');
  }
  return { pages, resources: pages.flatMap((b) => (b.entry ?? []).map((e) => e.resource as Resource)) };
}

const labBody = (accession: string, resultedAt: string, results: unknown) =>
  JSON.stringify({
    data: { senderID: 'demo-lab', patientID: 'demo-patient-1', accessionNumber: accession, status: 'final', ResultedDateUTC: resultedAt, results },
  });

beforeAll(async () => {
  r4Errors({ resourceType: 'Basic', code: { text: 'warm-up' } } as Resource); // index the R4 definitions before any request
  stack = await startTestStack();
  // lab results of demo-patient-1: one newer than every chart record, one in the middle, hostile text
  for (const [accession, at, results] of [
    [
      'FHIR-ACC-1',
      '2025-02-01T08:00:00Z',
      [
        { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
        { testName: 'Sodium', result: '140.0', units: 'mmol/L' },
      ],
    ],
    ['FHIR-ACC-2', '2024-06-01T12:30:00Z', { testName: 'Comment | ^ ~ \\ &', result: 'Hemolyzed <slightly>\nsee note — café', units: '' }],
  ] as const) {
    const res = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: labBody(accession, at, results),
    });
    expect(res.status).toBe(200);
  }
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe('GET /fhir/metadata', () => {
  it('answers without a key, with the rate-limit headers, a valid CapabilityStatement listing every FHIR route', async () => {
    const res = await get('/fhir/metadata', { accept: 'application/fhir+json' });
    expectFhir(res);
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
    const cs = res.json<CapabilityStatement>();
    expectValid(cs as Resource, 'metadata');
    const types = Object.fromEntries(cs.rest![0]!.resource!.map((r) => [r.type, (r.interaction ?? []).map((i) => i.code).sort()]));
    expect(types).toEqual({
      Patient: ['read', 'search-type'],
      Encounter: ['read', 'search-type'],
      DocumentReference: ['read', 'search-type'],
      Observation: ['read', 'search-type'],
      DiagnosticReport: ['create', 'read', 'search-type'],
      // FHIR intake (issue 29): POST /fhir/QuestionnaireResponse; POST /fhir is the system transaction / batch
      QuestionnaireResponse: ['create'],
    });
    expect(cs.rest![0]!.interaction!.map((i) => i.code)).toEqual(['transaction', 'batch']);
    expect(cs.rest![0]!.resource!.find((r) => r.type === 'Patient')!.operation).toEqual([
      { name: 'everything', definition: 'http://hl7.org/fhir/OperationDefinition/Patient-everything' },
    ]);
  });
});

describe('every resource for every demo id is valid R4', () => {
  for (const p of demo.patients) {
    it(`${p.patientId}: Patient, $everything (all pages), each record by id and by search`, async () => {
      const patientRes = await get(`/fhir/Patient/${p.patientId}`);
      expectFhir(patientRes);
      expectValid(patientRes.json<Patient>(), `Patient/${p.patientId}`);

      const everything = await allPages(`/fhir/Patient/${p.patientId}/$everything?_count=2`);
      for (const r of everything.resources) expectValid(r, `$everything ${r.resourceType}/${r.id}`);
      expect(everything.resources[0]).toMatchObject({ resourceType: 'Patient', id: p.patientId });

      const reads: Array<[string, string[]]> = [
        ['Encounter', (p.encounters ?? []).map((e) => e.encounterId)],
        ['DocumentReference', (p.notes ?? []).map((n) => n.noteId)],
        ['Observation', (p.assessments ?? []).map((a) => a.assessmentId)],
      ];
      for (const [type, ids] of reads) {
        for (const recordId of ids) {
          const res = await get(`/fhir/${type}/${p.patientId}..${recordId}`);
          expectFhir(res);
          expectValid(res.json<Resource>(), `${type}/${recordId}`);
          // the read and the $everything entry are the same resource
          expect(everything.resources.find((r) => r.resourceType === type && r.id === `${p.patientId}..${recordId}`)).toEqual(res.json());
        }
      }
      for (const [type, ids] of reads.slice(0, 2)) {
        const search = await allPages(`/fhir/${type}?patient=${p.patientId}&_count=1`);
        expect(search.resources.map((r) => idParts(r.id!)[1]).sort()).toEqual([...ids].sort());
        for (const r of search.resources) expectValid(r, `${type}?patient search`);
      }
      const reports = await allPages(`/fhir/DiagnosticReport?patient=Patient/${p.patientId}&_count=1`);
      expect(reports.resources.length).toBe(p.patientId === 'demo-patient-1' ? 2 : 0);
    }, 30_000);
  }
});

describe('$everything holds the same records as the HL7 patient summary', () => {
  for (const p of demo.patients) {
    it(`${p.patientId}`, async () => {
      // one ORU (demo-export-oru-key's profile), not the default FHS/BHS batch: one message to read
      const hl7 = await get(`/exportHl7PatientSummary?patientId=${p.patientId}&limit=200`, { ...HL7, 'x-api-key': 'demo-export-oru-key' });
      expect(hl7.status).toBe(200);
      const parsed = parseWithMedplum(hl7.text);
      const obrCount = parsed.segmentNames.filter((s) => s === 'OBR').length;
      const summaryIds: string[] = [];
      for (let i = 0; i < obrCount; i++) {
        const code = parsed.value({ segment: 'OBR', occurrence: i, field: 4, component: 1 });
        if (code === 'NO_RECORDS') continue;
        // an encounter's orders are their own groups (ORC SC + OBR, no OBR-3): they are part of the Encounter in FHIR
        if (code !== 'LAB' && parsed.value({ segment: 'OBR', occurrence: i, field: 3, component: 1 }) === '') continue;
        summaryIds.push(
          code === 'LAB'
            ? parsed.value({ segment: 'OBR', occurrence: i, field: 2, component: 1 })
            : parsed.value({ segment: 'OBR', occurrence: i, field: 3, component: 1 }),
        );
      }
      const { resources } = await allPages(`/fhir/Patient/${p.patientId}/$everything?_count=3`);
      // HL7 writes an id longer than EI-1's 22 characters (a lab result id) in its short form; an encounter's OBR-3 is its
      // visit number (PV1-19, CX-1 15 characters), which is the FHIR Encounter.identifier (issue 27 item 5: one external id)
      const asInHl7 = (r: Resource) =>
        r.resourceType === 'Encounter' ? (r as Encounter).identifier![0]!.value! : shortIdentifier(idParts(r.id!)[1]!, IDENTIFIER_LENGTH.ei);
      const fhirIds = resources.slice(1).map(asInHl7);
      expect(fhirIds).toEqual(summaryIds); // same records, same (newest first) order
      const one = await allPages(`/fhir/Patient/${p.patientId}/$everything?_count=200`);
      expect(one.pages).toHaveLength(1);
      expect(one.resources.slice(1).map(asInHl7)).toEqual(summaryIds);
    });
  }
});

describe('values equal the HL7 export values for the same record', () => {
  const hl7 = async (p: string, key = 'demo-export-key') => {
    const res = await get(p, { ...HL7, 'x-api-key': key });
    expect(res.status).toBe(200);
    return parseWithMedplum(res.text);
  };
  // a chart time as HL7 writes it: the FHIR dateTime's wall time, precision and offset (both as the chart stores it)
  const ts = (dateTime: string) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(dateTime);
    if (!m) throw new Error('not a FHIR dateTime with seconds and a zone');
    return `${m[1]}${m[2]}${m[3]}${m[4]}${m[5]}${m[6]}${m[7] ?? ''}${m[8] === 'Z' ? '+0000' : m[8]!.replace(':', '')}`;
  };
  // TX values are written a repetition per line
  const lines = (msg: ParsedMessage, at: { segment: string; occurrence?: number; field: number }) => {
    const out: string[] = [];
    for (let repetition = 0; repetition < 1000; repetition++) out.push(msg.value({ ...at, repetition }));
    while (out.length > 1 && out[out.length - 1] === '') out.pop();
    return out.join('\n');
  };

  it.each(demo.patients.map((p) => p.patientId))('Patient %s = PID of the ADT', async (patientId) => {
    const adt = await hl7(`/exportHl7PatientAdt?patientId=${patientId}`);
    const patient = (await get(`/fhir/Patient/${patientId}`)).json<Patient>();
    expect(patient.identifier![0]!.value).toBe(adt.value({ segment: 'PID', field: 3, component: 1 }));
    expect(patient.identifier![0]!.assigner!.display).toBe(adt.value({ segment: 'PID', field: 3, component: 4 }));
    expect(patient.name![0]!.family).toBe(adt.value({ segment: 'PID', field: 5, component: 1 }));
    expect(patient.name![0]!.given?.[0] ?? '').toBe(adt.value({ segment: 'PID', field: 5, component: 2 }));
    expect((patient.birthDate ?? '').replace(/-/g, '')).toBe(adt.value({ segment: 'PID', field: 7, component: 1 }));
    const sex = adt.value({ segment: 'PID', field: 8 });
    expect(patient.gender).toBe(({ F: 'female', M: 'male', O: 'other', U: 'unknown', A: 'other', N: 'unknown' } as Record<string, string>)[sex]);
    if (patient.address) expect(patient.address[0]!.line![0]).toBe(adt.value({ segment: 'PID', field: 11, component: 1 }));
  });

  const encounters = demo.patients.flatMap((p) => (p.encounters ?? []).map((e) => [p.patientId, e.encounterId] as const));
  it.each(encounters)('Encounter %s..%s = PV1/OBX of the encounter export', async (patientId, encounterId) => {
    const msg = await hl7(`/exportHl7Encounter?patientId=${patientId}&encounterId=${encounterId}`);
    const enc = (await get(`/fhir/Encounter/${patientId}..${encounterId}`)).json<Encounter>();
    // PV1-19 (CX-1, 15 characters) holds the visit number's short form
    expect(shortIdentifier(enc.identifier![0]!.value!, IDENTIFIER_LENGTH.cx)).toBe(msg.value({ segment: 'PV1', field: 19, component: 1 }));
    expect(ts(enc.period!.start!)).toBe(msg.value({ segment: 'PV1', field: 44 }));
    if (enc.period!.end) expect(ts(enc.period!.end)).toBe(msg.value({ segment: 'PV1', field: 45 }));
    expect(enc.location?.[0]?.location.display ?? '').toBe(msg.value({ segment: 'PV1', field: 3, component: 1 }));
    const attending = enc.participant?.[0]?.individual?.identifier?.value;
    expect(attending ? shortIdentifier(attending, IDENTIFIER_LENGTH.xcn) : '').toBe(msg.value({ segment: 'PV1', field: 7, component: 1 }));
    const diagnosisCodes = (enc.contained ?? [])
      .filter((r) => r.resourceType === 'Condition')
      .map((c) => (c as { code: { coding: Array<{ code: string }> } }).code.coding[0]!.code);
    // the encounter export is an ADT^A08: one DG1 per diagnosis, DG1-3 the code
    const dg1Count = msg.segmentNames.filter((s) => s === 'DG1').length;
    const hl7Codes: string[] = [];
    for (let i = 0; i < dg1Count; i++) hl7Codes.push(msg.value({ segment: 'DG1', occurrence: i, field: 3, component: 1 }));
    expect(diagnosisCodes).toEqual(hl7Codes);
  });

  const notes = demo.patients.flatMap((p) => (p.notes ?? []).map((n) => [p.patientId, n.noteId] as const));
  it.each(notes)('DocumentReference %s..%s text = OBX-5 of the MDM', async (patientId, noteId) => {
    const mdm = await hl7(`/exportHl7Note?patientId=${patientId}&noteId=${noteId}`);
    const doc = (await get(`/fhir/DocumentReference/${patientId}..${noteId}`)).json<DocumentReference>();
    const text = Buffer.from(doc.content[0]!.attachment.data!, 'base64').toString('utf8');
    // HL7 writes every line break (CR, LF, CRLF) as \.br\; FHIR keeps the bytes
    expect(text.replace(/\r\n|\r/g, '\n')).toBe(lines(mdm, { segment: 'OBX', field: 5 }));
    expect(ts(doc.date!)).toBe(mdm.value({ segment: 'TXA', field: 4 }));
    expect(shortIdentifier(doc.author![0]!.identifier!.value!, IDENTIFIER_LENGTH.xcn)).toBe(mdm.value({ segment: 'TXA', field: 5, component: 1 }));
  });

  const assessments = demo.patients.flatMap((p) => (p.assessments ?? []).map((a) => [p.patientId, a.assessmentId] as const));
  it.each(assessments)('Observation %s..%s components = OBX of the assessment export', async (patientId, assessmentId) => {
    const oru = await hl7(`/exportHl7Assessment?patientId=${patientId}&assessmentId=${assessmentId}`);
    const obs = (await get(`/fhir/Observation/${patientId}..${assessmentId}`)).json<Observation>();
    const obx: Record<string, number> = {};
    const obxCount = oru.segmentNames.filter((s) => s === 'OBX').length;
    for (let i = 0; i < obxCount; i++) obx[oru.value({ segment: 'OBX', occurrence: i, field: 3, component: 1 })] = i;
    const value = (code: string, component?: number) => oru.value({ segment: 'OBX', occurrence: obx[code]!, field: 5, ...(component ? { component } : {}) });
    expect(obs.component?.length).toBeGreaterThan(0);
    for (const c of obs.component ?? []) {
      const code = c.code.coding?.[0]?.code ?? '';
      expect(obx[code]).toBeDefined();
      if (c.valueCodeableConcept) expect(c.valueCodeableConcept.coding![0]!.code).toBe(value(code, 1));
      else if (c.valueQuantity) expect(String(c.valueQuantity.value)).toBe(value(code));
      else if (c.valueInteger !== undefined) expect(String(c.valueInteger)).toBe(value(code));
      else expect(c.valueString!.replace(/\r\n|\r/g, '\n')).toBe(value(code));
    }
    const obx5 = (code: string) => oru.value({ segment: 'OBX', occurrence: obx[code]!, field: 5 });
    if (obs.valueInteger !== undefined) expect(String(obs.valueInteger)).toBe(obx5('TOTAL'));
    if (obs.interpretation) expect(obs.interpretation[0]!.text).toBe(obx5('INTERPRETATION'));
    expect(obs.code.coding![0]!.code).toBe(oru.value({ segment: 'OBR', field: 4, component: 1 }));
  });

  it('DiagnosticReport values = the summary OBX of the same lab result', async () => {
    const summary = await hl7('/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', 'demo-export-oru-key');
    const { resources } = await allPages('/fhir/DiagnosticReport?patient=demo-patient-1');
    expect(resources).toHaveLength(2);
    for (const report of resources as DiagnosticReport[]) {
      const resultId = idParts(report.id!)[1]!;
      const read = await get(`/fhir/DiagnosticReport/${report.id}`);
      expectFhir(read);
      expect(read.json()).toEqual(report);
      // find the OBR of this result and the OBX that follow it
      const names = summary.segmentNames;
      let obrIndex = -1;
      let obr = -1;
      for (let i = 0; i < names.length; i++) {
        if (names[i] !== 'OBR') continue;
        obr++;
        if (summary.value({ segment: 'OBR', occurrence: obr, field: 2, component: 1 }) === shortIdentifier(resultId, IDENTIFIER_LENGTH.ei)) obrIndex = i;
      }
      expect(obrIndex).toBeGreaterThan(0);
      const obxBefore = names.slice(0, obrIndex).filter((s) => s === 'OBX').length;
      // comment rows (a test without a code named "... comment/note/remark") are NTE in HL7, not OBX
      const observations = ((report.contained ?? []) as Observation[]).filter(
        (o) =>
          !(
            !o.code.coding?.some((c) => c.system !== undefined && !c.system.includes('local')) && /\b(?:comments?|notes?|remarks?)\s*$/i.test(o.code.text ?? '')
          ),
      );
      observations.forEach((o, k) => {
        const at = { segment: 'OBX', occurrence: obxBefore + k };
        const value = o.valueQuantity ? String(o.valueQuantity.value) : o.valueString;
        expect(value?.replace(/\r\n|\r/g, '\n')).toBe(lines(summary, { ...at, field: 5 }));
        expect(o.code.text).toBe(summary.value({ ...at, field: 3, component: 2 }));
        if (o.valueQuantity) expect(o.valueQuantity.unit ?? '').toBe(summary.value({ ...at, field: 6, component: 1 }));
        expect(o.referenceRange?.[0]?.text ?? '').toBe(summary.value({ ...at, field: 7 }));
      });
      expect(report.identifier![0]!.value).toBe(
        summary.value({ segment: 'OBR', occurrence: names.slice(0, obrIndex).filter((s) => s === 'OBR').length, field: 3, component: 1 }),
      );
    }
  });
});

describe('issue 26: a search by a patient id that is no chart patient answers as for an unused id', () => {
  let labOnlyResultId: string;

  beforeAll(async () => {
    // a lab's own patient id, not a chart patient: the result is saved (held for review) under it
    const res = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        data: {
          senderID: 'demo-lab',
          patientID: 'LABMRN-777',
          accessionNumber: 'FHIR-ORACLE-1',
          status: 'final',
          ResultedDateUTC: '2025-01-01T08:00:00Z',
          results: { testName: 'Potassium', result: '4.1', units: 'mmol/L' },
        },
      }),
    });
    expect(res.status).toBe(200);
    labOnlyResultId = res.json<{ resultId: string }>().resultId;
  });

  /** The answer without what differs per request anyway (time stamps, the searched id in the links). */
  function comparable(res: HttpResult, searched: string): unknown {
    const bundle = res.json<Bundle>();
    expectValid(bundle as Resource, 'Bundle');
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      bundle: {
        ...bundle,
        meta: undefined,
        timestamp: undefined,
        link: bundle.link?.map((l) => ({ relation: l.relation, url: l.url.split(encodeURIComponent(searched)).join('<id>').split(searched).join('<id>') })),
      },
    };
  }

  it.each(['DiagnosticReport', 'Encounter', 'DocumentReference'])('%s?patient=LABMRN-777 answers as ?patient=NOPE-unused: an empty searchset', async (type) => {
    for (const form of ['', 'Patient/']) {
      const labOnly = await get(`/fhir/${type}?patient=${form}LABMRN-777`);
      const unused = await get(`/fhir/${type}?patient=${form}NOPE-unused`);
      expectFhir(labOnly);
      expectFhir(unused);
      expect(comparable(labOnly, 'LABMRN-777')).toEqual(comparable(unused, 'NOPE-unused'));
      expect(labOnly.json<Bundle>()).toMatchObject({ resourceType: 'Bundle', type: 'searchset' });
      expect(labOnly.json<Bundle>().entry).toBeUndefined();
      expect(labOnly.text).not.toContain('Potassium');
      expect(labOnly.text).not.toContain(labOnlyResultId.slice(3));
    }
  });

  it('the result read by its id answers the same 404 as an unknown id; a chart patient still gets its results', async () => {
    const resultPart = labOnlyResultId.replace('_', '.5F');
    const labOnly = await get(`/fhir/DiagnosticReport/LABMRN-777..${resultPart}`);
    const unknown = await get(`/fhir/DiagnosticReport/NOPE-unused..${resultPart}`);
    expectFhir(labOnly, 404);
    expectFhir(unknown, 404);
    expect(labOnly.json<OperationOutcome>().issue).toEqual(unknown.json<OperationOutcome>().issue);
    const { resources } = await allPages('/fhir/DiagnosticReport?patient=demo-patient-1');
    expect(resources.length).toBeGreaterThanOrEqual(2);
  });
});

describe('errors are OperationOutcome with the right status and the usual headers', () => {
  const outcome = (res: HttpResult) => {
    const body = res.json<OperationOutcome>();
    expectValid(body as Resource, 'OperationOutcome');
    expect(body.resourceType).toBe('OperationOutcome');
    return body;
  };

  it.each([
    ['/fhir/Encounter/demo-patient-1..demo-encounter-2'], // another patient's record
    ['/fhir/DocumentReference/demo-patient-2..demo-note-1'],
    ['/fhir/Observation/demo-patient-1..demo-assessment-2'],
    ['/fhir/Encounter/demo-patient-1..no-such-encounter'],
    ['/fhir/Encounter/demo-encounter-1'], // not a record id
    ['/fhir/Patient/no-such-patient'],
    ['/fhir/Patient/demo-patient-1..demo-note-1'],
    ['/fhir/Patient/no-such-patient/$everything'],
    ['/fhir/DiagnosticReport/demo-patient-2..lr.5F00000000000000000000000000000000'],
  ])('%s -> 404, same body as any unknown id', async (p) => {
    const res = await get(p);
    expectFhir(res, 404);
    expect(outcome(res).issue[0]).toMatchObject({ severity: 'error', code: 'not-found' });
  });

  it('another patient cannot read a lab result through its id', async () => {
    const { resources } = await allPages('/fhir/DiagnosticReport?patient=demo-patient-1');
    const resultPart = resources[0]!.id!.split('..')[1];
    const res = await get(`/fhir/DiagnosticReport/demo-patient-2..${resultPart}`);
    expectFhir(res, 404);
  });

  it.each([
    ['/fhir/Patient/bad_id'],
    ['/fhir/Patient/demo-patient-1?_count=5'],
    ['/fhir/Encounter?patient=demo-patient-1&date=2024'],
    ['/fhir/Encounter'],
    ['/fhir/Encounter?patient=demo-patient-1&_count=0'],
    ['/fhir/Encounter?patient=demo-patient-1&_count=201'],
    ['/fhir/DocumentReference?patient=demo-patient-1&_page_token=not-a-token'],
    ['/fhir/Patient/demo-patient-1/$everything?_page_token=eyJrIjoicyIsImEiOiJ4In0'],
    ['/fhir/DiagnosticReport?patient=a&patient=b'],
  ])('%s -> 400', async (p) => {
    const res = await get(p);
    expectFhir(res, 400);
    expect(outcome(res).issue[0]!.code).toBe('invalid');
  });

  it('406 when Accept excludes FHIR JSON (or _format asks for XML)', async () => {
    for (const [p, accept] of [
      ['/fhir/Patient/demo-patient-1', 'application/fhir+xml'],
      ['/fhir/metadata', 'text/html'],
      ['/fhir/Patient/demo-patient-1?_format=xml', 'application/fhir+json'],
    ] as const) {
      const res = await get(p, { 'x-api-key': 'demo-fhir-key', accept });
      expectFhir(res, 406);
      expect(outcome(res).issue[0]!.code).toBe('not-supported');
    }
    for (const accept of ['application/json', '*/*', 'application/*', 'application/fhir+json; fhirVersion=4.0']) {
      expect((await get('/fhir/Patient/demo-patient-1', { 'x-api-key': 'demo-fhir-key', accept })).status).toBe(200);
    }
  });

  it('401 without a key, 403 with a key lacking interop:export:fhir; demo-all-key has it', async () => {
    const none = await get('/fhir/Patient/demo-patient-1', { accept: 'application/fhir+json' });
    expectFhir(none, 401);
    expect(outcome(none).issue[0]!.code).toBe('login');
    const hl7Only = await get('/fhir/Patient/demo-patient-1', { 'x-api-key': 'demo-export-key' });
    expectFhir(hl7Only, 403);
    expect(outcome(hl7Only).issue[0]!.code).toBe('forbidden');
    expect(hl7Only.headers.get('x-ratelimit-remaining')).toBeTruthy();
    expect((await get('/fhir/Patient/demo-patient-1', { 'x-api-key': 'demo-all-key' })).status).toBe(200);
  });

  it('links are absolute URLs of this server, and x-request-id is echoed', async () => {
    const res = await get('/fhir/Encounter?patient=demo-patient-1&_count=1', { ...FHIR, 'x-request-id': 'fhir-req-1' });
    expect(res.headers.get('x-request-id')).toBe('fhir-req-1');
    const bundle = res.json<Bundle>();
    expect(bundle.link!.find((l) => l.relation === 'self')!.url).toBe(`${stack.urls.api}/fhir/Encounter?patient=demo-patient-1&_count=1`);
    expect(bundle.entry![0]!.fullUrl).toBe(`${stack.urls.api}/fhir/Encounter/${bundle.entry![0]!.resource!.id}`);
  });
});
