/**
 * Second-partner probe (adversarial review h41x): the attacks a second partner tried through HTTP
 * only that the service correctly refuses, kept as regression protection. The partner (probe-b,
 * its own lab sender PROBE-B, form source probe-b-forms, assigning authority PROBE-B) is onboarded
 * with the operator CLIs (partnersCli / keysCli, the code `npm run partners` / `npm run keys` run)
 * with every intake scope and both export scopes, and related to the patients it reads (`partners relate`). It aims at records of the chart (demo-patient-1,
 * MRN DEMO-000001^^^DEMO-HOSP) and of the first partner demo-lab (authority DEMO-LAB, sender
 * DEMO-LAB-LIS, document doc-9). After the attacks the owner's views (HL7 and FHIR exports, as
 * demo-ehr) are compared with the ones taken before, but for the message-time fields.
 *
 * Findings that are NOT refused (reported to the lead, not encoded here) are in the h41x report.
 */
import type { LocalStack } from '../../lib/local/stack';
import { createPartnerKey as createKey, operator, relatePartner } from '../support/operator-cli';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

jest.setTimeout(60_000);

let stack: LocalStack;
let partnerB = '';
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

const OWNER_HL7 = 'demo-export-key';
const OWNER_FHIR = 'demo-fhir-key';
const FIRST_HL7 = 'demo-hl7-key'; // demo-lab, MSH-4 DEMO-LAB-LIS, authority DEMO-LAB

function hl7(key: string, message: string): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': key, 'content-type': 'application/hl7-v2' }, body: message.replace(/\n/g, '\r') });
}

function ackOf(res: HttpResult): { code: string; errors: string[] } {
  const segments = res.text.split('\r');
  const msa = segments.find((s) => s.startsWith('MSA|'))?.split('|') ?? [];
  const errors = segments.filter((s) => s.startsWith('ERR|')).map((s) => `${s.split('|')[2]} ${(s.split('|')[3] ?? '').split('^')[0]}`);
  return { code: msa[1] ?? `HTTP ${res.status}`, errors };
}

function get(key: string, path: string): Promise<HttpResult> {
  return call(stack, 'GET', path, { headers: { 'x-api-key': key } });
}

function postJson(key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return call(stack, 'POST', path, { headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** an HL7 export without its message-time fields (MSH-7, MSH-10, EVN-2) */
function stable(text: string): string {
  return text
    .split('\r')
    .map((s) => {
      const f = s.split('|');
      if (f[0] === 'MSH') [f[6], f[9]] = ['', ''];
      if (f[0] === 'EVN') f[2] = '';
      return f.join('|');
    })
    .join('\r');
}

const OWNER_VIEWS = [
  '/exportHl7PatientAdt?patientId=demo-patient-1',
  '/exportHl7PatientAdt?patientId=demo-patient-2',
  '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1',
  '/exportHl7Note?patientId=demo-patient-1&noteId=demo-lab:doc-9',
  '/exportHl7Encounter?patientId=demo-patient-1&encounterId=demo-encounter-1',
  '/fhir/Patient/demo-patient-1',
  '/fhir/Patient/demo-patient-2',
];

async function ownerViews(): Promise<string[]> {
  const views: string[] = [];
  for (const path of OWNER_VIEWS) {
    const res = await get(path.startsWith('/fhir') ? OWNER_FHIR : OWNER_HL7, path);
    expect([path, res.status]).toEqual([path, 200]);
    views.push(path.startsWith('/fhir') ? res.text : stable(res.text));
  }
  return views;
}

const mdm = (facility: string, control: string, trigger: string, docNo: string, text: string) =>
  [
    `MSH|^~\\&|EHR|${facility}|INTEROP|DEMO-HOSP|20240301093000+0000||MDM^${trigger}^MDM_T02|${control}|P|2.5.1`,
    `EVN|${trigger}|20240301093000`,
    'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex||19800412',
    'PV1|1|O',
    `TXA|1|PN|TX|20240301093000|^Doc^A|20240301093000||||||${docNo}|${docNo}||||AU|||||^Doc^A`,
    `OBX|1|TX|NOTE||${text}||||||F`,
  ].join('\n');

const adt = (trigger: string, control: string, cx: string, extra = '') =>
  [`MSH|^~\\&|EHR|PROBE-B|||20240301||ADT^${trigger}|${control}|P|2.5.1`, `EVN|${trigger}|20240301`, `PID|1||${cx}||Evil^Mallory||19010101|M`, extra]
    .filter(Boolean)
    .join('\n');

let before: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  const created = await operator('partners', [
    'create',
    '--partner-id',
    'probe-b',
    '--tier',
    'standard',
    '--sender-id',
    'PROBE-B',
    '--form-source',
    'probe-b-forms',
    '--assigning-authority',
    'PROBE-B',
  ]);
  if (created.code !== 0) throw new Error(`partners create failed (${created.code}): ${created.err}`);
  // a partner that serves the patients it aims at: a relationship lets it read them, never touch others' records
  for (const patientId of ['demo-patient-1', 'demo-patient-5']) await relatePartner('probe-b', patientId);
  partnerB = (
    await createKey('probe-b', [
      'interop:ingest:hl7',
      'interop:ingest:results',
      'interop:ingest:forms',
      'interop:ingest:fhir',
      'interop:export:hl7',
      'interop:export:fhir',
    ])
  ).secret;
  // the first partner's own identity and document
  expect(
    ackOf(
      await hl7(
        FIRST_HL7,
        'MSH|^~\\&|EHR|DEMO-LAB-LIS|||20240301||ADT^A08|A-ADT-1|P|2.5.1\nEVN|A08|20240301\nPID|1||L-42^^^DEMO-LAB^MR||Sample^Alex||19800412',
      ),
    ).code,
  ).toBe('AA');
  expect(ackOf(await hl7(FIRST_HL7, mdm('DEMO-LAB-LIS', 'A-MDM-1', 'T02', 'doc-9', 'original text of demo-lab'))).code).toBe('AA');
  before = await ownerViews();
});

afterAll(async () => {
  await stack?.close();
});

describe('operator CLI: an authority has one owner', () => {
  it("refuses another partner's authority in any spelling, and the chart's", async () => {
    for (const authority of ['DEMO-LAB', 'demo-lab', ' DEMO-LAB ', 'DEMO-HOSP', ' demo-hosp']) {
      const run = await operator('partners', ['create', '--partner-id', 'probe-d', '--tier', 'standard', '--assigning-authority', authority]);
      expect([authority, run.code]).toEqual([authority, 1]);
    }
    expect((await operator('partners', ['show', 'probe-d'])).code).not.toBe(0);
  });
});

describe('HL7 intake as the second partner', () => {
  it("MSH-4 spoofing the first partner's sender in any spelling is AR 204", async () => {
    for (const facility of ['DEMO-LAB-LIS', 'demo-lab-lis', ' DEMO-LAB-LIS', 'DEMO-LAB-LIS^^', 'X^DEMO-LAB-LIS^ISO', 'demo-lab']) {
      const res = await hl7(
        partnerB,
        `MSH|^~\\&|LIS|${facility}|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${unique('SP')}|P|2.5.1\nPID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex\nOBR|1|ORD1|ACC-77|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240302093000+0000|||C\nOBX|1|NM|2345-7^Glucose^LN||5|mg/dL|70-99|LL|||C`,
      );
      expect([facility, res.status, ackOf(res)]).toEqual([facility, 200, { code: 'AR', errors: ['MSH^1^4 204'] }]);
    }
  });

  it("a PID-3 in the first partner's authority (any case, a subcomponent, a repetition) is AE 204 for every ADT trigger", async () => {
    for (const cx of ['L-42^^^DEMO-LAB^MR', 'L-42^^^demo-lab^MR', 'L-42^^^ DEMO-LAB ^MR', 'L-42^^^DEMO-LAB&1.2.3&ISO^MR', 'X-1~L-42^^^DEMO-LAB']) {
      for (const trigger of ['A01', 'A04', 'A08', 'A28', 'A31']) {
        const res = await hl7(partnerB, adt(trigger, unique('ADT'), cx));
        expect([cx, trigger, ackOf(res)]).toEqual([cx, trigger, { code: 'AE', errors: ['PID^1^3 204'] }]);
      }
    }
  });

  it('identity change, swap and move events are not supported (AR 201); a merge is accepted only to be held', async () => {
    for (const trigger of ['A47', 'A18', 'A34', 'A30', 'A37', 'A35']) {
      const res = await hl7(partnerB, adt(trigger, unique('MRG'), 'DEMO-000001^^^DEMO-HOSP^MR', 'MRG|DEMO-000002^^^DEMO-HOSP^MR'));
      expect([trigger, ackOf(res)]).toEqual([trigger, { code: 'AR', errors: ['MSH^1^9^^2 201'] }]);
    }
    expect(ackOf(await hl7(partnerB, adt('A40', unique('MRG'), 'DEMO-000001^^^DEMO-HOSP^MR', 'MRG|DEMO-000002^^^DEMO-HOSP^MR'))).code).toBe('AA');
  });

  it('ADT aimed at chart MRNs in every spelling is accepted as the sender’s own view only', async () => {
    for (const cx of ['DEMO-000001^^^DEMO-HOSP^MR', 'demo-000001^^^demo-hosp^MR', 'DEMO-000001^^^^MR', 'DEMO-000002^^^DEMO-HOSP^MR']) {
      for (const trigger of ['A01', 'A04', 'A08', 'A28', 'A31']) expect(ackOf(await hl7(partnerB, adt(trigger, unique('ADT'), cx))).code).toBe('AA');
    }
  });

  it('document cancel / addendum triggers are AR 201; T02/T08/T10 with the first partner’s or the chart’s document numbers stay the sender’s own', async () => {
    for (const trigger of ['T04', 'T06', 'T11']) expect(ackOf(await hl7(partnerB, mdm('PROBE-B', unique('MDM'), trigger, 'doc-9', 'x'))).code).toBe('AR');
    for (const docNo of ['doc-9', 'demo-note-1'])
      for (const trigger of ['T02', 'T08', 'T10'])
        expect(ackOf(await hl7(partnerB, mdm('PROBE-B', unique('MDM'), trigger, docNo, 'overwrite by probe-b'))).code).toBe('AA');
    // a note id with the owner's prefix is not a document number
    expect(ackOf(await hl7(partnerB, mdm('PROBE-B', unique('MDM'), 'T10', 'demo-lab:doc-9', 'x'))).errors).toEqual(['TXA^1^12 102']);
  });

  it('a batch mixing the partner’s own, a spoofed and a foreign-authority message acknowledges each on its own', async () => {
    const t = unique('BAT');
    const own = `MSH|^~\\&|X|PROBE-B|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${t}-1|P|2.5.1\nPID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex\nOBR|1|O|ACC-${t}|GLU^G^L|||20240301|||||||||||||||20240301|||F\nOBX|1|NM|2345-7^G^LN||7|mg|||||F`;
    const foreign = `MSH|^~\\&|X|PROBE-B|||20240301||ADT^A08^ADT_A01|${t}-2|P|2.5.1\nEVN|A08|20240301\nPID|1||L-42^^^DEMO-LAB^MR||Evil^Mallory||19010101`;
    const spoofed = `MSH|^~\\&|X|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${t}-3|P|2.5.1\nPID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex\nOBR|1|O|ACC-77|GLU^G^L|||20240301|||||||||||||||20240301|||C\nOBX|1|NM|2345-7^G^LN||0|mg|||||C`;
    const res = await hl7(
      partnerB,
      `FHS|^~\\&|X|DEMO-LAB-LIS|||20240301||||F-${t}\nBHS|^~\\&|X|PROBE-B|||20240301||||B-${t}\n${own}\n${foreign}\n${spoofed}\nBTS|3\nFTS|1`,
    );
    expect(res.status).toBe(200);
    const codes = res.text
      .split('\r')
      .filter((s) => s.startsWith('MSA|'))
      .map((s) => s.split('|')[1]);
    expect(codes).toEqual(['AA', 'AE', 'AR']);
  });
});

describe('FHIR intake as the second partner', () => {
  const obs = {
    resourceType: 'Observation',
    id: 'o1',
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
    code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }], text: 'Glucose' },
    valueQuantity: { value: 5.4, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
  };
  const report = (subject: unknown, contained: unknown[] = []) => ({
    resourceType: 'DiagnosticReport',
    contained: [...contained, obs],
    identifier: [{ system: 'urn:x:accession', value: unique('F') }],
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'LAB' }] }],
    code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] },
    subject,
    effectiveDateTime: '2024-11-20T07:30:00Z',
    issued: '2024-11-20T09:00:00Z',
    result: [{ reference: '#o1' }],
  });
  const fhirPost = (path: string, body: unknown) =>
    call(stack, 'POST', path, {
      headers: { 'x-api-key': partnerB, 'content-type': 'application/fhir+json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it("a Patient identifier system that is the first partner's authority (any spelling) is 403, by contained Patient or logical reference", async () => {
    for (const system of ['DEMO-LAB', 'demo-lab', 'urn:interop:mrn:DEMO-LAB', 'urn:interop:mrn:demo-lab', 'DEMO-EHR']) {
      const patient = { resourceType: 'Patient', id: 'p', identifier: [{ system, value: 'L-42' }], name: [{ family: 'Sample', given: ['Alex'] }] };
      const res = await fhirPost('/fhir/DiagnosticReport', report({ reference: '#p' }, [patient]));
      expect([system, res.status]).toEqual([system, 403]);
    }
    const logical = await fhirPost('/fhir/DiagnosticReport', report({ identifier: { system: 'urn:interop:mrn:DEMO-LAB', value: 'L-42' } }));
    expect(logical.status).toBe(403);
  });

  it('transaction entries other than POST, conditional references and deep JSON are 400', async () => {
    for (const method of ['PUT', 'PATCH']) {
      const res = await fhirPost('/fhir', {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [{ resource: report({ reference: 'Patient/demo-patient-1' }), request: { method, url: 'DiagnosticReport/demo-patient-1..lr.5Fx' } }],
      });
      expect([method, res.status]).toEqual([method, 400]);
    }
    const conditional = await fhirPost('/fhir/DiagnosticReport', report({ reference: 'Patient?identifier=urn:interop:mrn:DEMO-HOSP|DEMO-000001' }));
    expect(conditional.status).toBe(400);
    const deep = await fhirPost('/fhir', '{"resourceType":"Bundle","type":"batch","entry":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}');
    expect(deep.status).toBe(400);
  });
});

describe('JSON and form intake as the second partner', () => {
  it("another partner's x-request-id is not shared: the second partner's own submission is stored (no 409, no replay)", async () => {
    const requestId = unique('lis-a');
    const data = {
      patientID: 'demo-patient-1',
      accessionNumber: unique('ACC'),
      status: 'final',
      ResultedDateUTC: '2024-03-01T09:30:00Z',
      results: { testName: 'Glucose', result: '98', units: 'mg/dL' },
    };
    const first = await postJson('demo-results-key', '/receiveTestData', { data: { ...data, senderID: 'demo-lab' } }, { 'x-request-id': requestId });
    expect(first.status).toBe(200);
    const spoofed = await postJson(partnerB, '/receiveTestData', { data: { ...data, senderID: 'demo-lab' } }, { 'x-request-id': requestId });
    expect(spoofed.status).toBe(403);
    const own = await postJson(partnerB, '/receiveTestData', { data: { ...data, senderID: 'PROBE-B' } }, { 'x-request-id': requestId });
    expect(own.status).toBe(200);
    expect(own.json<{ resultId: string; duplicate: boolean }>()).toMatchObject({ duplicate: false });
    expect(own.json<{ resultId: string }>().resultId).not.toBe(first.json<{ resultId: string }>().resultId);
  });

  it("a form packet under another partner's form source is 403", async () => {
    const res = await postJson(partnerB, '/receiveFormIntakeScope', {
      payload: {
        sourceSystemId: 'demo-forms',
        formId: 'intake-v1',
        formName: 'x',
        submissionId: unique('sub'),
        patient: { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12' },
        answers: { q1: 'yes' },
      },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });
});

describe('reads as the second partner', () => {
  it('the inbox and held records are 403 for a partner key', async () => {
    for (const path of ['/interopInbox', '/interopInbox/held', '/interopInbox/held/held-x'])
      expect([path, (await get(partnerB, path)).status]).toEqual([path, 403]);
  });

  it('a chart id it does not serve and an unused id get the same FHIR search answer; another partner’s identity is not found', async () => {
    const related = await get(partnerB, '/fhir/DiagnosticReport?patient=demo-patient-5');
    expect(related.status).toBe(200);
    const known = await get(partnerB, '/fhir/DiagnosticReport?patient=demo-patient-3');
    const unknown = await get(partnerB, '/fhir/DiagnosticReport?patient=no-such-patient-77');
    expect([known.status, unknown.status]).toEqual([403, 403]);
    const withoutRequestId = (r: HttpResult) => JSON.stringify(r.json()).replace(/[0-9a-f-]{36}/g, 'ID');
    expect(withoutRequestId(unknown)).toEqual(withoutRequestId(known));
    // the first partner's own identity L-42 is not a chart patient: not found by its identifier
    const foreignIdentity = await get(partnerB, '/fhir/Patient?identifier=urn:interop:mrn:DEMO-LAB|L-42');
    expect(foreignIdentity.status).toBe(200);
    expect(foreignIdentity.json<{ entry?: unknown[] }>().entry ?? []).toEqual([]);
  });
});

describe("the owner's views after every attack above", () => {
  it('are unchanged but for the message time, and every export answers 200 twice', async () => {
    const after = await ownerViews();
    expect(after).toEqual(before);
    expect(after[3]).toContain('original text of demo-lab');
    for (let round = 0; round < 2; round++) {
      for (const key of [OWNER_HL7, 'demo-export-oru-key', partnerB]) {
        const summary = await get(key, '/exportHl7PatientSummary?patientId=demo-patient-1&limit=200');
        expect([key, summary.status]).toEqual([key, 200]);
      }
      expect((await get(OWNER_FHIR, '/fhir/Patient/demo-patient-1/$everything?_count=200')).status).toBe(200);
    }
  });
});

describe('key revocation', () => {
  it('a revoked key of the second partner is 401 on the next request', async () => {
    const key = await createKey('probe-b', ['interop:export:fhir']);
    expect((await get(key.secret, '/fhir/Patient/demo-patient-5')).status).toBe(200);
    const revoked = await operator('keys', ['revoke', key.keyId]);
    expect(revoked.code).toBe(0);
    const res = await get(key.secret, '/fhir/Patient/demo-patient-5');
    expect(res.status).toBe(401);
  });
});
