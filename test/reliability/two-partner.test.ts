/**
 * Reliability suite: two partners and write authority (issue 26, docs/write-authority.md).
 *
 * The local stack runs in-process; a SECOND partner is onboarded with the project's own operator
 * CLIs (partnersCli / keysCli, the code `npm run partners` and `npm run keys` run, against the
 * running stack as an operator would against `npm start`): partner rel-second (lab sender
 * SECOND-LIS, form source second-forms) with an intake key (HL7, results, forms) and, separately,
 * an export key (HL7, FHIR). Every case then goes through the stack's HTTP endpoints as that
 * partner. What counts as a failure:
 *   - any change to the chart's demographics, encounters, notes, assessments or another partner's
 *     results (the HL7 and FHIR exports of the demo chart, byte for byte but for the message-time
 *     fields MSH-7/MSH-10, EVN-2, FHS/BHS-7/11 and a Bundle's id/timestamp);
 *   - an answer that differs between a known and an unknown patient (status, MSA-1, ERR codes,
 *     body shape);
 *   - a 5xx; a refused message (AE/AR) that stored anything (chart, results, forms, idempotency
 *     tables, documents bucket).
 * Every check is counted in a Tally (support.ts) and printed.
 */
import { unmarshall } from '../../lib/aws/attribute-values';
import { Env, type TableId } from '../../lib/config/service';
import { logicalId } from '../../lib/fhir/logical-id';
import type { LocalStack } from '../../lib/local/stack';
import { startWebhookSink, type WebhookSink } from '../../lib/local/webhook-sink';
import { runWebhooksCli } from '../../lib/webhooks/cli';
import { call, type HttpResult } from '../support/local-stack';
import { createPartnerKey, operator } from '../support/operator-cli';
import { BULK_KEYS, countItems, listObjectKeys, scanAll, startReliabilityStack, Tally } from './support';

jest.setTimeout(60_000);

let stack: LocalStack;
const tally = new Tally('two-partner');

/** the chart owner's views (demo-ehr) and staff (demo-staff) */
const OWNER_HL7 = BULK_KEYS.export.secret;
const OWNER_FHIR = BULK_KEYS.fhir.secret;
const STAFF = BULK_KEYS.inbox.secret;
const FIRST_LAB = BULK_KEYS.results.secret; // demo-lab, results
const FIRST_LAB_HL7 = 'demo-hl7-key'; // demo-lab, MSH-4 DEMO-LAB-LIS
const ORU_PROFILE_EXPORT = 'demo-export-oru-key'; // demo-ehr-oru

/** secrets printed once by `keys create` */
const second = { intake: '', export: '' };
let intakeOnlyResults = '';

const SENDER = 'SECOND-LIS';
const FORM_SOURCE = 'second-forms';

// ------------------------------------------------------------------ the operator CLIs

async function createKey(partner: string, scopes: string[]): Promise<string> {
  return (await createPartnerKey(partner, scopes, `${partner} two-partner`)).secret;
}

// ------------------------------------------------------------------ setup

/** demo-lab's results the second partner must never change (patient id -> result id) */
const firstLabResults: Array<{ patientId: string; resultId: string }> = [];

beforeAll(async () => {
  stack = await startReliabilityStack({
    backgroundWorkers: true,
    env: { [Env.webhookRetryScale]: String(1 / 21_600), [Env.webhookTimeoutMs]: '400' },
  });
  const created = await operator('partners', [
    'create',
    '--partner-id',
    'rel-second',
    '--tier',
    'standard',
    '--name',
    'Second LIS',
    '--sender-id',
    SENDER,
    '--form-source',
    FORM_SOURCE,
    '--receiving-application',
    'SECOND-EHR',
    '--receiving-facility',
    'SECOND-CLINIC',
    '--rate-limit',
    '100000/60s',
  ]);
  if (created.code !== 0) throw new Error(`partners create failed (${created.code}): ${created.err}`);
  // a second lab serving the demo patients: write authority is tested between partners that both may file for them
  for (let i = 1; i <= 5; i += 1) {
    const related = await operator('partners', ['relate', 'rel-second', `demo-patient-${i}`]);
    if (related.code !== 0) throw new Error(`partners relate failed (${related.code}): ${related.err}`);
  }
  second.intake = await createKey('rel-second', ['interop:ingest:hl7', 'interop:ingest:results', 'interop:ingest:forms']);
  second.export = await createKey('rel-second', ['interop:export:hl7', 'interop:export:fhir']);
  // a third partner whose only key is an intake key (webhooks follow read access, case 9)
  const third = await operator('partners', [
    'create',
    '--partner-id',
    'rel-intake-only',
    '--tier',
    'standard',
    '--sender-id',
    'INTAKE-ONLY-LIS',
    '--rate-limit',
    '100000/60s',
  ]);
  if (third.code !== 0) throw new Error(`partners create failed (${third.code}): ${third.err}`);
  intakeOnlyResults = await createKey('rel-intake-only', ['interop:ingest:results']);
  // the first partner's results, part of the chart snapshot
  for (const patientId of ['demo-patient-1', 'demo-patient-2']) {
    const res = await postJson('/receiveTestData', FIRST_LAB, labData({ senderID: 'demo-lab', patientID: patientId }));
    if (res.status !== 200) throw new Error(`demo-lab result: ${res.status} ${res.text}`);
    firstLabResults.push({ patientId, resultId: res.json<{ resultId: string }>().resultId });
  }
  baseline = await chartSnapshot();
});

afterAll(async () => {
  for (const sink of sinks) await sink.close();
  tally.print();
  await stack?.close();
});

// ------------------------------------------------------------------ requests

let seq = 0;
const unique = (prefix: string): string => `${prefix}${Date.now().toString(36).toUpperCase()}${(++seq).toString(36).toUpperCase()}`;

/** 5xx answers seen since the current case started (every request of the suite is watched) */
let serverErrors: string[] = [];
let all5xx = 0;

async function watched(method: string, url: string, init: { headers: Record<string, string>; body?: string }): Promise<HttpResult> {
  const res = await call(stack, method, url, init);
  if (res.status >= 500) {
    all5xx++;
    serverErrors.push(`${res.status} from ${method} ${url.split('?')[0]}`);
  }
  return res;
}

function get(url: string, key: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  return watched('GET', url, { headers: { 'x-api-key': key, ...headers } });
}

function postJson(url: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return watched('POST', url, { headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

function postHl7(message: string, key = second.intake, headers: Record<string, string> = {}): Promise<HttpResult> {
  return watched('POST', '/receiveHl7', { headers: { 'x-api-key': key, 'content-type': 'application/hl7-v2', ...headers }, body: message });
}

function labData(data: Record<string, unknown>): { data: Record<string, unknown> } {
  return {
    data: {
      accessionNumber: unique('ACC-'),
      status: 'final',
      ResultedDateUTC: '2024-03-01T09:30:00Z',
      results: { testName: 'Potassium', result: '4.1', units: 'mmol/L', referenceRange: '3.5-5.1' },
      ...data,
    },
  };
}

// ------------------------------------------------------------------ HL7 messages of the second partner

const NOW = '20240301093000+0000';

interface Pid {
  /** PID-3, e.g. DEMO-000001^^^DEMO-HOSP^MR */
  cx: string;
  family: string;
  given: string;
  /** YYYYMMDD */
  dob?: string;
  sex?: string;
  /** PID-11 */
  address?: string;
}

const pidSegment = (p: Pid): string => `PID|1||${p.cx}||${p.family}^${p.given}||${p.dob ?? ''}|${p.sex ?? ''}|||${p.address ?? ''}`;

function msh(type: string, controlId: string, options: { sender?: string; processing?: string; time?: string } = {}): string {
  return `MSH|^~\\&|SECOND-APP|${options.sender ?? SENDER}|INTEROP|DEMO-HOSP|${options.time ?? NOW}||${type}|${controlId}|${options.processing ?? 'P'}|2.5.1`;
}

function adt(p: Pid, controlId = unique('A'), trigger = 'A08', options: { sender?: string; processing?: string } = {}): string {
  return [msh(`ADT^${trigger}^ADT_A01`, controlId, options), `EVN|${trigger}|${NOW}`, pidSegment(p), 'PV1|1|O'].join('\r') + '\r';
}

function obrGroup(setId: number, accession: string): string[] {
  return [
    `OBR|${setId}|ORD${setId}|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
    `OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F`,
  ];
}

function oru(p: Pid, controlId = unique('R'), groups = 1, options: { sender?: string } = {}): string {
  const accession = unique('ACC');
  const lines = [msh('ORU^R01^ORU_R01', controlId, options), pidSegment(p)];
  for (let i = 1; i <= groups; i++) lines.push(...obrGroup(i, `${accession}-${i}`));
  return lines.join('\r') + '\r';
}

function mdm(
  p: Pid,
  documentNumber: string,
  options: { controlId?: string; trigger?: string; text?: string; time?: string; sender?: string; parent?: string } = {},
): string {
  const trigger = options.trigger ?? 'T02';
  const time = options.time ?? '20240301093000+0000';
  const txa = `TXA|1|PN|TX|${time}||${time}|||^Second^Author|||${documentNumber}|${options.parent ?? ''}`;
  return (
    [
      msh(`MDM^${trigger}^MDM_T02`, options.controlId ?? unique('D'), { sender: options.sender }),
      `EVN|${trigger}|${NOW}`,
      pidSegment(p),
      'PV1|1|O',
      txa,
      `OBX|1|TX|NOTE^Note^L||${options.text ?? 'A note of the second partner.'}`,
    ].join('\r') + '\r'
  );
}

// ------------------------------------------------------------------ ACKs

interface Ack {
  status: number;
  msa1: string;
  errCodes: string[];
  /** the ACK with MSH-7, MSH-10 and MSA-2 blanked, or a JSON answer without its requestId (for "same answer" comparisons) */
  shape: string;
  text: string;
}

function readAck(res: HttpResult): Ack {
  const segments = res.text.split(/\r\n|\r|\n/).filter(Boolean);
  const normalised = segments.map((s) => {
    const f = s.split('|');
    if (f[0] === 'MSH') {
      f[6] = '<time>';
      f[9] = '<control>';
    }
    if (f[0] === 'MSA') f[2] = '<echo>';
    return f.join('|');
  });
  const msa = segments.find((s) => s.startsWith('MSA|'))?.split('|') ?? [];
  const errCodes = segments.filter((s) => s.startsWith('ERR|')).map((s) => (s.split('|')[3] ?? '').split('^')[0]!);
  const type = res.headers.get('content-type') ?? '';
  let body: unknown = normalised;
  if (type.includes('json')) {
    try {
      const { requestId: _r, ...rest } = res.json<Record<string, unknown>>();
      body = rest;
    } catch {
      // not JSON: the text as is
    }
  }
  return {
    status: res.status,
    msa1: msa[1] ?? '',
    errCodes,
    shape: JSON.stringify({ status: res.status, type, body }),
    text: res.text,
  };
}

// ------------------------------------------------------------------ chart snapshots

const DEMO_PATIENTS = ['demo-patient-1', 'demo-patient-2', 'demo-patient-3', 'demo-patient-4', 'demo-patient-5'];
const CHART_RECORDS: Array<{ patientId: string; kind: 'Encounter' | 'Note' | 'Assessment'; id: string }> = [
  { patientId: 'demo-patient-1', kind: 'Encounter', id: 'demo-encounter-1' },
  { patientId: 'demo-patient-1', kind: 'Encounter', id: 'demo-encounter-3' },
  { patientId: 'demo-patient-1', kind: 'Encounter', id: 'demo-encounter-4' },
  { patientId: 'demo-patient-2', kind: 'Encounter', id: 'demo-encounter-2' },
  { patientId: 'demo-patient-1', kind: 'Note', id: 'demo-note-1' },
  { patientId: 'demo-patient-1', kind: 'Note', id: 'demo-note-3' },
  { patientId: 'demo-patient-1', kind: 'Note', id: 'demo-note-4' },
  { patientId: 'demo-patient-2', kind: 'Note', id: 'demo-note-2' },
  { patientId: 'demo-patient-1', kind: 'Assessment', id: 'demo-assessment-1' },
  { patientId: 'demo-patient-1', kind: 'Assessment', id: 'demo-assessment-3' },
  { patientId: 'demo-patient-2', kind: 'Assessment', id: 'demo-assessment-2' },
];
const FHIR_TYPE = { Encounter: 'Encounter', Note: 'DocumentReference', Assessment: 'Observation' } as const;
const HL7_QUERY = { Encounter: 'encounterId', Note: 'noteId', Assessment: 'assessmentId' } as const;

/** HL7 text without its message-time fields: MSH-7, MSH-10, EVN-2, FHS/BHS-7 and -11. */
function hl7Normalised(text: string): string {
  return text
    .split('\r')
    .map((s) => {
      const f = s.split('|');
      if (f[0] === 'MSH') {
        f[6] = '<time>';
        f[9] = '<control>';
      } else if (f[0] === 'EVN') f[2] = '<time>';
      else if (f[0] === 'FHS' || f[0] === 'BHS') {
        f[6] = '<time>';
        f[10] = '<control>';
      }
      return f.join('|');
    })
    .join('\r');
}

/** FHIR JSON without a Bundle's id, timestamp and meta (lastUpdated is the time of the search). */
function fhirNormalised(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (body.resourceType === 'Bundle') {
      delete body.id;
      delete body.timestamp;
      delete body.meta;
    }
    return JSON.stringify(body);
  } catch {
    return text;
  }
}

/** url -> "status normalised-body" of every chart export (HL7 and FHIR) of the demo chart and of demo-lab's results. */
async function chartSnapshot(): Promise<Map<string, string>> {
  const urls: Array<{ url: string; key: string; kind: 'hl7' | 'fhir' }> = [];
  for (const p of DEMO_PATIENTS) {
    urls.push({ url: `/exportHl7PatientAdt?patientId=${p}`, key: OWNER_HL7, kind: 'hl7' });
    urls.push({ url: `/fhir/Patient/${p}`, key: OWNER_FHIR, kind: 'fhir' });
  }
  for (const r of CHART_RECORDS) {
    urls.push({ url: `/exportHl7${r.kind}?patientId=${r.patientId}&${HL7_QUERY[r.kind]}=${r.id}`, key: OWNER_HL7, kind: 'hl7' });
    urls.push({ url: `/fhir/${FHIR_TYPE[r.kind]}/${logicalId(r.patientId, r.id)}`, key: OWNER_FHIR, kind: 'fhir' });
  }
  for (const r of firstLabResults) {
    urls.push({ url: `/exportHl7LabResult?resultId=${r.resultId}`, key: OWNER_HL7, kind: 'hl7' });
    urls.push({ url: `/fhir/DiagnosticReport/${logicalId(r.patientId, r.resultId)}`, key: OWNER_FHIR, kind: 'fhir' });
  }
  const out = new Map<string, string>();
  for (const { url, key, kind } of urls) {
    const res = await get(url, key);
    out.set(url, `${res.status} ${kind === 'hl7' ? hl7Normalised(res.text) : fhirNormalised(res.text)}`);
  }
  return out;
}

let baseline: Map<string, string>;

function snapshotDiff(before: Map<string, string>, after: Map<string, string>): string[] {
  const issues: string[] = [];
  for (const [url, value] of before) {
    const now = after.get(url);
    if (now !== value) issues.push(`chart export changed: ${url} (${value.slice(0, 3)} -> ${(now ?? 'missing').slice(0, 3)})`);
  }
  return issues;
}

// ------------------------------------------------------------------ "nothing stored"

const STORED_TABLES: TableId[] = ['chart', 'results', 'forms', 'idempotency'];

async function storedCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const id of STORED_TABLES) counts[id] = await countItems(stack.tables[id]);
  counts.s3 = (await listObjectKeys(stack)).length;
  return counts;
}

function countDiff(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys(before)
    .filter((k) => before[k] !== after[k])
    .map((k) => `stored: ${k} ${before[k]} -> ${after[k]}`);
}

// ------------------------------------------------------------------ forms and the inbox

interface PacketView {
  state: string;
  reason?: string;
  patientId?: string;
}

async function postPacket(patient: Record<string, unknown>, patientId?: string): Promise<{ res: HttpResult; packetId?: string }> {
  const payload = {
    sourceSystemId: FORM_SOURCE,
    formId: 'intake-v3',
    formName: 'Intake',
    submissionId: unique('sub-'),
    patient: { externalPatientId: unique('ext-'), ...patient },
    answers: { smoker: 'no' },
    ...(patientId ? { patientId } : {}),
  };
  const res = await postJson('/receiveFormIntakeScope', second.intake, { payload });
  return { res, packetId: res.status === 202 ? res.json<{ packetId: string }>().packetId : undefined };
}

/**
 * The packet as staff see it, once the matcher decided (state other than pending_match), within
 * 15 s. A packet routed at intake to the patient it named was never in the inbox: the inbox answers
 * 404 for it (docs/forms.md), shown here as state `routed-at-intake` with the patient its intake
 * audit record names.
 */
async function packetView(packetId: string): Promise<PacketView> {
  const deadline = Date.now() + 15_000;
  let notFound = 0;
  for (;;) {
    const res = await get(`/interopInbox/${packetId}`, STAFF);
    if (res.status === 200) {
      const view = res.json<PacketView>();
      if (view.state !== 'pending_match') return view;
    } else if (res.status === 404 && ++notFound >= 5) {
      // where it went: the intake's audit record names the patient (staff-only data)
      const intake = (await scanAll(stack.tables.audit))
        .map((i) => unmarshall(i))
        .find((r) => r.action === 'forms.receive' && (r.resourceIds as Record<string, string> | undefined)?.packetId === packetId);
      return { state: 'routed-at-intake', patientId: intake?.patientId as string | undefined };
    }
    if (Date.now() > deadline) throw new Error(`packet ${packetId} undecided (${res.status})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const intakeAnswerShape = (res: HttpResult): string => {
  let body: Record<string, unknown> = {};
  try {
    body = res.json<Record<string, unknown>>();
  } catch {
    // not JSON
  }
  return `${res.status} ${Object.keys(body).sort().join(',')} ${String(body.status)}`;
};

// ------------------------------------------------------------------ webhooks

const sinks: WebhookSink[] = [];

/** `npm run webhooks -- add` in-process; a sink on 127.0.0.1 that verifies with the printed secret. */
async function subscribedSink(partnerId: string): Promise<WebhookSink> {
  const placeholder = await startWebhookSink({ port: 0, secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64') });
  const port = Number(new URL(placeholder.url).port);
  await placeholder.close();
  const lines: string[] = [];
  const code = await runWebhooksCli(['add', '--partner', partnerId, '--url', `http://127.0.0.1:${port}/hooks`, '--events', 'lab-result.saved'], {
    out: (l) => lines.push(l),
    err: (l) => lines.push(l),
  });
  const secret = /shown once\): (whsec_\S+)/.exec(lines.join('\n'))?.[1];
  if (code !== 0 || !secret) throw new Error(`webhooks add failed: ${lines.join(' | ')}`);
  const sink = await startWebhookSink({ port, secret });
  sinks.push(sink);
  return sink;
}

let webhookRun: Promise<{ exportSink: WebhookSink; intakeOnlySink: WebhookSink; resultIds: string[] }> | undefined;

/**
 * Both partners subscribe; demo-lab saves two results (a chart patient: resultIds[0]; a patient id the
 * chart does not know, so not filed to the chart: resultIds[1]); waits for the chart result's event.
 */
function webhookTraffic() {
  webhookRun ??= (async () => {
    const exportSink = await subscribedSink('rel-second');
    const intakeOnlySink = await subscribedSink('rel-intake-only');
    const resultIds: string[] = [];
    for (const patientID of ['demo-patient-1', 'LABMRN-WH-UNKNOWN']) {
      const res = await postJson('/receiveTestData', FIRST_LAB, labData({ senderID: 'demo-lab', patientID }));
      if (res.status !== 200) throw new Error(`demo-lab result: ${res.status}`);
      resultIds.push(res.json<{ resultId: string }>().resultId);
    }
    const deadline = Date.now() + 20_000;
    const heard = () => exportSink.requests.some((r) => String(r.event?.data.resultId) === resultIds[0]);
    while (!heard() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1_000)); // anything else for either partner would have arrived by now
    return { exportSink, intakeOnlySink, resultIds };
  })();
  return webhookRun;
}

// ------------------------------------------------------------------ cases

/** Runs a case: every problem (and any thrown error) is counted; the test fails on any. */
async function runCase(name: string, body: (issues: string[]) => Promise<void>): Promise<void> {
  const issues: string[] = [];
  serverErrors = [];
  try {
    await body(issues);
  } catch (error) {
    issues.push(`threw ${(error as Error).message.split('\n')[0]}`);
  }
  issues.push(...serverErrors);
  tally.record(issues, () => name);
  if (issues.length) console.log(`two-partner failure: ${name}: ${issues.join('; ')}`);
  expect(issues).toEqual([]);
}

const alex: Pid = { cx: 'DEMO-000001^^^DEMO-HOSP^MR', family: 'Sample', given: 'Alex', dob: '19800412', sex: 'F' };
const zoe: Pid = { cx: 'DEMO-000002^^^DEMO-HOSP^MR', family: 'Ødegård', given: 'Zoë', dob: '19921103', sex: 'F' };
const alexForm = { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12', email: 'alex.sample@example.com' };
const zoeForm = { firstName: 'Zoë', lastName: 'Ødegård', dob: '1992-11-03', email: 'zoe.odegard@example.org' };

describe('two partners: the second partner writes only what it owns (issue 26)', () => {
  it('0. the snapshot is stable: two snapshots in a row are identical (the normalisation is complete)', async () => {
    await runCase('snapshot stable', async (issues) => {
      issues.push(...snapshotDiff(baseline, await chartSnapshot()));
      for (const [url, value] of baseline) if (!value.startsWith('200 ')) issues.push(`baseline ${url}: ${value.slice(0, 60)}`);
    });
  });

  it('onboarding: `partners show rel-second` lists its sender id, form source and the two keys the CLI issued', async () => {
    await runCase('onboarding with the CLIs', async (issues) => {
      const shown = await operator('partners', ['show', 'rel-second', '--json']);
      if (shown.code !== 0) issues.push(`partners show: exit ${shown.code} ${shown.err}`);
      else {
        const { partner, keys } = JSON.parse(shown.out) as {
          partner: { allowedSenderIds: string[]; allowedFormSourceIds?: string[]; policy: string };
          keys: Array<{ scopes: string[]; status: string }>;
        };
        if (partner.allowedSenderIds.join(',') !== SENDER) issues.push(`sender ids ${partner.allowedSenderIds.join(',')}`);
        if ((partner.allowedFormSourceIds ?? []).join(',') !== FORM_SOURCE) issues.push(`form sources ${(partner.allowedFormSourceIds ?? []).join(',')}`);
        const scopes = keys.map((k) => `${k.status}:${[...k.scopes].sort().join(',')}`).sort();
        const want = ['active:interop:export:fhir,interop:export:hl7', 'active:interop:ingest:forms,interop:ingest:hl7,interop:ingest:results'];
        if (scopes.join(' ') !== want.join(' ')) issues.push(`keys ${scopes.join(' ')}`);
      }
    });
  });

  it("1. ADT^A08 naming another patient's MRN with invented demographics -> AA, the chart is unchanged, form matching unaffected", async () => {
    await runCase('ADT A08 with invented demographics', async (issues) => {
      // control: the real person's packet is auto-matched before the ADT
      const control = await postPacket(alexForm);
      const controlView = await packetView(control.packetId!);
      if (controlView.state !== 'matched' || controlView.patientId !== 'demo-patient-1')
        issues.push(`precondition: the real person's packet was ${controlView.state}/${controlView.reason ?? ''} before the ADT`);
      const before = await chartSnapshot();
      const invented: Pid = { ...alex, family: 'Intruder', given: 'Ivan', dob: '19700101', sex: 'M', address: '1 Fake Road^^Nowhere^NV^00000' };
      const reply = readAck(await postHl7(adt(invented)));
      if (reply.msa1 !== 'AA') issues.push(`MSA-1 ${reply.msa1} (want AA) ${reply.errCodes.join(',')}`);
      issues.push(...snapshotDiff(before, await chartSnapshot()));
      const real = await postPacket(alexForm);
      const realView = await packetView(real.packetId!);
      if (realView.state !== 'matched' || realView.patientId !== 'demo-patient-1')
        issues.push(`the real person's packet after the ADT: ${realView.state}/${realView.reason ?? ''}/${realView.patientId ?? ''}`);
      const fake = await postPacket({ firstName: 'Ivan', lastName: 'Intruder', dob: '1970-01-01' });
      const fakeView = await packetView(fake.packetId!);
      if (fakeView.patientId === 'demo-patient-1' || ['matched', 'routed'].includes(fakeView.state))
        issues.push(`the invented person's packet was filed: ${fakeView.state} ${fakeView.patientId ?? ''}`);
      const named = await postPacket({ firstName: 'Ivan', lastName: 'Intruder', dob: '1970-01-01' }, 'demo-patient-1');
      const namedView = await packetView(named.packetId!);
      if (namedView.state !== 'pending_review') issues.push(`the invented person's packet naming demo-patient-1 was not held: ${namedView.state}`);
    });
  });

  it('2. MDM^T02 whose TXA-12 names a chart note -> the chart note is unchanged, the document is a separate note', async () => {
    await runCase('MDM T02 over a chart note id', async (issues) => {
      const noteUrl = '/exportHl7Note?patientId=demo-patient-2&noteId=demo-note-2';
      const before = hl7Normalised((await get(noteUrl, OWNER_HL7)).text);
      const text = `Second partner text ${unique('T')}`;
      const reply = readAck(await postHl7(mdm(zoe, 'demo-note-2', { text })));
      if (reply.msa1 !== 'AA') issues.push(`MSA-1 ${reply.msa1} (want AA) ${reply.errCodes.join(',')}`);
      const after = await get(noteUrl, OWNER_HL7);
      if (hl7Normalised(after.text) !== before) issues.push('the chart note demo-note-2 changed');
      if (after.text.includes(text)) issues.push("the chart note carries the sender's text");
      const fhir = await get(`/fhir/DocumentReference/${logicalId('demo-patient-2', 'demo-note-2')}`, OWNER_FHIR);
      if (`${fhir.status} ${fhirNormalised(fhir.text)}` !== baseline.get(`/fhir/DocumentReference/${logicalId('demo-patient-2', 'demo-note-2')}`))
        issues.push('the chart note changed in FHIR');
      const own = await get(`/exportHl7Note?patientId=demo-patient-2&noteId=${encodeURIComponent('rel-second:demo-note-2')}`, OWNER_HL7);
      if (own.status !== 200) issues.push(`the sender's document rel-second:demo-note-2 is not a note of the patient (${own.status})`);
      else if (!own.text.includes(text)) issues.push("the sender's document does not carry its text");
      // the same id again with other content is refused (use T10) and changes nothing
      const again = readAck(await postHl7(mdm(zoe, 'demo-note-2', { text: 'Other content' })));
      if (again.msa1 === 'AA') issues.push('the same document id with other content was accepted (want AE: use T10)');
      const ownAfter = await get(`/exportHl7Note?patientId=demo-patient-2&noteId=${encodeURIComponent('rel-second:demo-note-2')}`, OWNER_HL7);
      if (ownAfter.text.includes('Other content')) issues.push("the sender's document was overwritten by a T02");
      if (hl7Normalised((await get(noteUrl, OWNER_HL7)).text) !== before) issues.push('the chart note demo-note-2 changed');
    });
  });

  it('3. ADT^A08 whose family name is only \\X00\\ -> AE; every HL7 export of the patient answers 200 for every partner', async () => {
    await runCase('ADT A08 with a NUL family name', async (issues) => {
      const counts = await storedCounts();
      const reply = readAck(await postHl7(adt({ ...alex, family: '\\X00\\' })));
      if (reply.msa1 !== 'AE') issues.push(`MSA-1 ${reply.msa1} (want AE)`);
      issues.push(...countDiff(counts, await storedCounts()));
      const urls = [
        '/exportHl7PatientAdt?patientId=demo-patient-1',
        '/exportHl7PatientSummary?patientId=demo-patient-1&limit=50',
        ...CHART_RECORDS.filter((r) => r.patientId === 'demo-patient-1').map(
          (r) => `/exportHl7${r.kind}?patientId=demo-patient-1&${HL7_QUERY[r.kind]}=${r.id}`,
        ),
        `/exportHl7LabResult?resultId=${firstLabResults[0]!.resultId}`,
      ];
      for (const key of [OWNER_HL7, ORU_PROFILE_EXPORT, second.export])
        for (const url of urls) {
          const res = await get(url, key);
          if (res.status !== 200) issues.push(`${url.split('?')[0]} with ${key === second.export ? 'rel-second' : key}: ${res.status}`);
        }
      const fhir = await get('/fhir/Patient/demo-patient-1/$everything', second.export);
      if (fhir.status !== 200) issues.push(`FHIR $everything: ${fhir.status}`);
    });
  });

  describe('4. existence oracle: known and unknown MRNs get the same ACK', () => {
    const unknown = (p: Pid): Pid => ({ ...p, cx: `${unique('ZZ-')}^^^DEMO-HOSP^MR` });
    const builders: Array<[string, (p: Pid) => string]> = [
      ['ADT^A08', (p) => adt(p)],
      ['ADT^A04', (p) => adt(p, unique('A'), 'A04')],
      ['ORU^R01', (p) => oru(p)],
      ['MDM^T02', (p) => mdm(p, unique('doc-'))],
    ];
    it.each(builders)('%s: the chart demographics and invented ones, known vs unknown MRN', async (name, build) => {
      await runCase(`oracle ${name}`, async (issues) => {
        for (const [label, person] of [
          ['chart demographics', alex],
          ['invented demographics', { ...alex, family: 'Probe', given: 'Petra', dob: '19660606' }],
        ] as const) {
          const known = readAck(await postHl7(build(person)));
          const other = readAck(await postHl7(build(unknown(person))));
          if (known.msa1 !== 'AA' || other.msa1 !== 'AA') issues.push(`${label}: MSA-1 ${known.msa1}/${other.msa1} (want AA/AA)`);
          if (known.shape !== other.shape) issues.push(`${label}: the ACKs differ: ${known.shape.slice(0, 300)} vs ${other.shape.slice(0, 300)}`);
        }
      });
    });

    it('refusals answer the same for a known and an unknown MRN', async () => {
      await runCase('oracle in refusals', async (issues) => {
        const refusals: Array<[string, (p: Pid) => string]> = [
          ['ADT with a NUL family name', (p) => adt({ ...p, family: '\\X00\\' })],
          ['MDM dated 9999 -1400', (p) => mdm(p, unique('doc-'), { time: '99991231235959-1400' })],
          ['MDM without TXA-12', (p) => mdm(p, '')],
          ['ORU in training (MSH-11 T)', (p) => oru(p).replace('|P|2.5.1', '|T|2.5.1')],
          ['ORU without OBR-25', (p) => oru(p).replace(/\|F\r/, '|\r')],
        ];
        for (const [label, build] of refusals) {
          const known = readAck(await postHl7(build(alex)));
          const other = readAck(await postHl7(build(unknown(alex))));
          if (known.shape !== other.shape)
            issues.push(`${label}: answers differ (${known.status} ${known.msa1} ${known.errCodes} vs ${other.status} ${other.msa1} ${other.errCodes})`);
        }
      });
    });

    it('an ADT for demo-000002 (lower case) creates no decoy: staff MRN search finds only the real patient; her packets stay unambiguous', async () => {
      await runCase('oracle lower-case MRN decoy', async (issues) => {
        const control = await postPacket(zoeForm);
        const controlView = await packetView(control.packetId!);
        if (controlView.state !== 'matched' || controlView.patientId !== 'demo-patient-2')
          issues.push(`precondition: her packet was ${controlView.state}/${controlView.reason ?? ''} before the ADT`);
        const before = await chartSnapshot();
        for (const cx of ['demo-000002^^^DEMO-HOSP^MR', ' demo-000002 ^^^demo-hosp^MR']) {
          const reply = readAck(await postHl7(adt({ ...zoe, cx })));
          if (reply.msa1 !== 'AA') issues.push(`${cx}: MSA-1 ${reply.msa1} (want AA) ${reply.errCodes.join(',')}`);
        }
        issues.push(...snapshotDiff(before, await chartSnapshot()));
        // staff search by MRN, in a held packet (a patientId nobody has)
        const held = await postPacket({ firstName: 'Nobody', lastName: 'Known', dob: '1950-05-05' }, 'demo-patient-404');
        for (const mrn of ['DEMO-000002', 'demo-000002']) {
          const res = await postJson(`/interopInbox/${held.packetId}/patientSearch`, STAFF, { mrn });
          const ids = res.status === 200 ? res.json<{ charts: Array<{ patientId: string }> }>().charts.map((c) => c.patientId) : [];
          if (res.status !== 200 || ids.join(',') !== 'demo-patient-2') issues.push(`staff search ${mrn}: ${res.status} [${ids.join(',')}]`);
        }
        const after = await postPacket(zoeForm);
        const afterView = await packetView(after.packetId!);
        if (afterView.state !== 'matched' || afterView.patientId !== 'demo-patient-2')
          issues.push(`her packet after the ADT: ${afterView.state}/${afterView.reason ?? ''}/${afterView.patientId ?? ''}`);
      });
    });
  });

  it('5. FHIR DiagnosticReport search for a lab patient id answers as for an unused id; webhook events carry no patientMatched', async () => {
    await runCase('FHIR search and webhook oracle', async (issues) => {
      for (const [key, senderID] of [
        [second.intake, SENDER],
        [FIRST_LAB, 'demo-lab'],
      ] as const) {
        const res = await postJson('/receiveTestData', key, labData({ senderID, patientID: 'LABMRN-777' }));
        if (res.status !== 200) issues.push(`result for LABMRN-777 from ${senderID}: ${res.status}`);
      }
      const norm = (res: HttpResult, id: string) =>
        `${res.status} ${fhirNormalised(res.text)
          .split(id)
          .join('<id>')
          .split(res.headers.get('x-request-id') ?? '\u0000')
          .join('<request-id>')}`;
      for (const key of [second.export, OWNER_FHIR]) {
        const who = key === second.export ? 'rel-second' : 'demo-ehr';
        for (const [used, unused] of [
          ['LABMRN-777', 'LABMRN-000'],
          ['Patient/LABMRN-777', 'Patient/LABMRN-000'],
        ]) {
          const a = await get(`/fhir/DiagnosticReport?patient=${encodeURIComponent(used)}`, key);
          const b = await get(`/fhir/DiagnosticReport?patient=${encodeURIComponent(unused)}`, key);
          if (norm(a, 'LABMRN-777') !== norm(b, 'LABMRN-000')) issues.push(`${who}: DiagnosticReport?patient=${used} differs from an unused id`);
        }
        const everything = await get('/fhir/Patient/LABMRN-777/$everything', key);
        const unusedEverything = await get('/fhir/Patient/LABMRN-000/$everything', key);
        if (norm(everything, 'LABMRN-777') !== norm(unusedEverything, 'LABMRN-000')) issues.push(`${who}: $everything differs from an unused id`);
      }
      const { exportSink, resultIds } = await webhookTraffic();
      const events = exportSink.requests.filter((r) => resultIds.includes(String(r.event?.data.resultId)));
      if (events.length === 0) issues.push('no event reached the export partner (cannot check the event shape)');
      for (const e of events) if (e.event && 'patientMatched' in e.event.data) issues.push(`event ${String(e.event.data.resultId)} carries patientMatched`);
      for (const r of exportSink.requests) if (r.body.includes('patientMatched')) issues.push('a delivery body names patientMatched');
    });
  });

  it('6. ORU for an unknown MRN with 60 OBR groups -> 200 with an ACK (AA, or AE over the cap), audited, no 5xx', async () => {
    await runCase('ORU with 60 OBR groups', async (issues) => {
      const counts = await storedCounts();
      const requestId = unique('rel-oru60-');
      const res = await postHl7(oru({ ...alex, cx: `${unique('UNK-')}^^^DEMO-HOSP^MR`, family: 'Unknown', given: 'Uma' }, unique('R'), 60), second.intake, {
        'x-request-id': requestId,
      });
      const reply = readAck(res);
      if (res.status !== 200) issues.push(`status ${res.status}`);
      if (reply.msa1 !== 'AA' && reply.msa1 !== 'AE') issues.push(`MSA-1 ${reply.msa1} (want AA or AE)`);
      if (reply.msa1 === 'AE') issues.push(...countDiff(counts, await storedCounts()));
      const audit = (await scanAll(stack.tables.audit)).map((i) => unmarshall(i)).filter((r) => r.requestId === requestId);
      if (audit.length !== 1) issues.push(`${audit.length} audit records for the request (want 1)`);
    });
  });

  it('7. a packet naming demo-patient-2 with only the right surname is held, and answered as for an unknown patientId', async () => {
    await runCase('form packet with the right surname only', async (issues) => {
      const shapes = new Set<string>();
      for (const [label, patient] of [
        ['right surname and birth date', { firstName: 'Mallory', lastName: 'Ødegård', dob: '1992-11-03' }],
        ['right surname, no birth date', { firstName: 'Mallory', lastName: 'Ødegård' }],
      ] as const) {
        const named = await postPacket(patient, 'demo-patient-2');
        const unknownId = await postPacket(patient, 'demo-patient-404');
        shapes.add(intakeAnswerShape(named.res)).add(intakeAnswerShape(unknownId.res));
        if (!named.packetId) {
          issues.push(`${label}: ${named.res.status}`);
          continue;
        }
        const view = await packetView(named.packetId);
        if (view.patientId === 'demo-patient-2' || view.state !== 'pending_review')
          issues.push(`${label}: not held (${view.state}${view.patientId ? ` to ${view.patientId}` : ''})`);
      }
      if (shapes.size !== 1) issues.push(`answers differ: ${[...shapes].join(' | ')}`);
    });
  });

  describe('8. refused messages store nothing', () => {
    it('an MDM dated 99991231235959-1400 -> AE, nothing stored', async () => {
      await runCase('MDM dated 9999 -1400', async (issues) => {
        const counts = await storedCounts();
        const reply = readAck(await postHl7(mdm(alex, unique('doc-'), { time: '99991231235959-1400' })));
        if (reply.msa1 !== 'AE') issues.push(`MSA-1 ${reply.msa1} (want AE)`);
        issues.push(...countDiff(counts, await storedCounts()));
      });
    });

    it('an ADT record over 400 KB -> AE, nothing stored, no 5xx', async () => {
      await runCase('ADT over 400 KB', async (issues) => {
        const counts = await storedCounts();
        const res = await postHl7(adt({ ...alex, cx: `${unique('BIG-')}^^^DEMO-HOSP^MR`, address: `${'A'.repeat(420_000)}^^Springfield` }));
        const reply = readAck(res);
        if (reply.msa1 !== 'AE') issues.push(`MSA-1 ${reply.msa1} (want AE) ${reply.errCodes.join(',')}`);
        issues.push(...countDiff(counts, await storedCounts()));
      });
    });

    it('MSH-11 T (training) -> AR with ERR 202, nothing stored', async () => {
      await runCase('MSH-11 training', async (issues) => {
        for (const [name, message] of [
          ['ADT', adt(alex, unique('A'), 'A08', { processing: 'T' })],
          ['ORU', oru(alex).replace('|P|2.5.1', '|T|2.5.1')],
          ['MDM', mdm(alex, unique('doc-')).replace('|P|2.5.1', '|T|2.5.1')],
        ] as const) {
          const counts = await storedCounts();
          const reply = readAck(await postHl7(message));
          if (reply.msa1 !== 'AR' || !reply.errCodes.includes('202')) issues.push(`${name}: MSA-1 ${reply.msa1} ERR ${reply.errCodes.join(',')} (want AR 202)`);
          issues.push(...countDiff(counts, await storedCounts()).map((d) => `${name}: ${d}`));
        }
      });
    });
  });

  it("9. webhooks follow read access: an intake-only partner hears nothing of demo-lab's results; an export partner hears of its chart results only", async () => {
    await runCase('webhooks follow read access', async (issues) => {
      const { exportSink, intakeOnlySink, resultIds } = await webhookTraffic();
      const [chartResult, unfiledResult] = resultIds as [string, string];
      if (intakeOnlySink.requests.length > 0) issues.push(`the intake-only partner heard ${intakeOnlySink.requests.length} event(s)`);
      const heard = new Set(exportSink.requests.map((r) => String(r.event?.data.resultId)));
      if (!heard.has(chartResult)) issues.push(`the export partner did not hear the chart result ${chartResult}`);
      // a result not filed to the chart is demo-lab's only: no event, and its export is the 404 of an unknown id
      if (heard.has(unfiledResult)) issues.push(`the export partner heard of the unfiled result ${unfiledResult}`);
      const unfiledExport = await get(`/exportHl7LabResult?resultId=${unfiledResult}`, second.export);
      if (unfiledExport.status !== 404) issues.push(`the export partner reads the unfiled result: ${unfiledExport.status}`);
      // the intake-only key cannot read what an event would point to either
      const res = await get(`/exportHl7LabResult?resultId=${resultIds[0]}`, intakeOnlyResults);
      if (res.status !== 403) issues.push(`the intake-only key reads a result: ${res.status}`);
    });
  });

  describe('10. added cases', () => {
    it("MDM^T10 by the second partner replacing demo-lab's document changes nothing (it is held for review), answered as for a document nobody has", async () => {
      await runCase("MDM T10 over demo-lab's document", async (issues) => {
        const documentNumber = unique('lab-doc-');
        const original = readAck(await postHl7(mdm(alex, documentNumber, { sender: 'DEMO-LAB-LIS', text: 'The lab original text.' }), FIRST_LAB_HL7));
        if (original.msa1 !== 'AA') issues.push(`precondition: demo-lab's T02 got ${original.msa1}`);
        const labUrl = `/exportHl7Note?patientId=demo-patient-1&noteId=${encodeURIComponent(`demo-lab:${documentNumber}`)}`;
        const before = await get(labUrl, OWNER_HL7);
        if (before.status !== 200) issues.push(`precondition: demo-lab's document not exported (${before.status})`);
        const chartKeys = async () => new Set((await scanAll(stack.tables.chart)).map((item) => `${item.pk?.S}\u0000${item.sk?.S}`));
        const keysBefore = await chartKeys();
        const attempts: Array<[string, string, string]> = [
          ['T10 same id', documentNumber, unique('nobody-doc-')],
          ['T08 same id', documentNumber, unique('nobody-doc-')],
          ['T10 namespaced id', `demo-lab:${documentNumber}`, `demo-lab:${unique('nobody-doc-')}`],
        ];
        for (const [label, id, nobody] of attempts) {
          const trigger = label.slice(0, 3);
          const hit = readAck(await postHl7(mdm(alex, id, { trigger, text: 'Replaced by the second partner.', parent: id })));
          const miss = readAck(await postHl7(mdm(alex, nobody, { trigger, text: 'Replaced by the second partner.', parent: nobody })));
          // the sender has no such document of its own: its replacement is held for a reviewer (AA, as for any held
          // document: an AE would tell whether the patient is known); demo-lab's document is never touched
          if (hit.shape !== miss.shape) issues.push(`${label}: answers differ for demo-lab's document and none: ${hit.errCodes}/${miss.errCodes}`);
        }
        const added = [...(await chartKeys())].filter((key) => !keysBefore.has(key));
        // held records live in pk HELD#<shard> (write sharding), older ones in HELD; the second partner's own
        // register of the document numbers it used (DOCNO#rel-second:...) is the only other write
        const notHeld = added.filter((key) => !/^HELD(#\d+)?\u0000/.test(key) && !key.startsWith('DOCNO#rel-second:'));
        if (notHeld.length > 0) issues.push(`chart items other than held records written: ${notHeld.length}`);
        const after = await get(labUrl, OWNER_HL7);
        if (hl7Normalised(after.text) !== hl7Normalised(before.text)) issues.push("demo-lab's document changed");
      });
    });

    it('a PID-3 identifier in an authority owned by another partner (DEMO-LAB) -> AE 204, nothing stored', async () => {
      await runCase("identifier in demo-lab's authority", async (issues) => {
        const owner = await operator('partners', ['show', 'demo-lab', '--json']);
        const authorities =
          owner.code === 0 ? ((JSON.parse(owner.out) as { partner: { assigningAuthorities?: string[] } }).partner.assigningAuthorities ?? []) : [];
        if (!authorities.includes('DEMO-LAB')) issues.push(`precondition: demo-lab owns [${authorities.join(',')}], not DEMO-LAB`);
        for (const [name, build] of [
          ['ADT', (p: Pid) => adt(p)],
          ['ORU', (p: Pid) => oru(p)],
          ['MDM', (p: Pid) => mdm(p, unique('doc-'))],
        ] as const) {
          const counts = await storedCounts();
          const reply = readAck(await postHl7(build({ ...alex, cx: `${unique('LAB-')}^^^DEMO-LAB^MR` })));
          if (reply.msa1 !== 'AE' || !reply.errCodes.includes('204')) issues.push(`${name}: MSA-1 ${reply.msa1} ERR ${reply.errCodes.join(',')} (want AE 204)`);
          else if (!/\nERR\|[^|]*\|PID\^1\^3(\^|\|)/.test(`\n${reply.text.replace(/\r/g, '\n')}`)) issues.push(`${name}: ERR-2 is not PID-3`);
          issues.push(...countDiff(counts, await storedCounts()).map((d) => `${name}: ${d}`));
        }
      });
    });

    it("demo-lab's own message replayed with the second partner's key is refused (AR 204), never answered with demo-lab's stored ACK", async () => {
      await runCase("replay of demo-lab's message", async (issues) => {
        const message = oru(alex, unique('LAB'), 1, { sender: 'DEMO-LAB-LIS' });
        const first = await postHl7(message, FIRST_LAB_HL7);
        if (readAck(first).msa1 !== 'AA') issues.push(`precondition: demo-lab got ${readAck(first).msa1}`);
        const counts = await storedCounts();
        const replay = await postHl7(message);
        const reply = readAck(replay);
        if (reply.msa1 !== 'AR' || !reply.errCodes.includes('204')) issues.push(`MSA-1 ${reply.msa1} ERR ${reply.errCodes.join(',')} (want AR 204)`);
        if (replay.text === first.text) issues.push("answered with demo-lab's stored ACK");
        issues.push(...countDiff(counts, await storedCounts()));
      });
    });

    it("a batch mixing its own sender and demo-lab's: one ACK per message, AR 204 for the foreign one, only its own stored", async () => {
      await runCase('batch with a foreign MSH-4', async (issues) => {
        const ids = [unique('B'), unique('B')];
        const body = `FHS|^~\\&|SECOND-APP|${SENDER}\rBHS|^~\\&|SECOND-APP|${SENDER}\r${oru(alex, ids[0])}${oru(alex, ids[1], 1, { sender: 'DEMO-LAB-LIS' })}BTS|2\rFTS|1\r`;
        const before = await countItems(stack.tables.results);
        const res = await postHl7(body);
        const lines = res.text.split('\r').filter(Boolean);
        const msas = lines.filter((l) => l.startsWith('MSA')).map((l) => `${l.split('|')[1]}:${l.split('|')[2]}`);
        if (msas.join(' ') !== `AA:${ids[0]} AR:${ids[1]}`) issues.push(`MSAs ${msas.join(' ')}`);
        const added = (await countItems(stack.tables.results)) - before;
        const single = await countItems(stack.tables.results);
        const control = await postHl7(oru(alex));
        const perResult = (await countItems(stack.tables.results)) - single;
        if (readAck(control).msa1 !== 'AA' || added !== perResult) issues.push(`results items +${added}, one result is +${perResult}`);
      });
    });

    it("no partner can be given the chart's assigning authority or one another partner owns (partners create refuses, nothing written)", async () => {
      await runCase('authority claims with the CLI', async (issues) => {
        for (const [partnerId, authority] of [
          ['rel-squatter-chart', 'DEMO-HOSP'],
          ['rel-squatter-chart-lc', ' demo-hosp '],
          ['rel-squatter-lab', 'demo-lab'],
        ] as const) {
          const run = await operator('partners', ['create', '--partner-id', partnerId, '--tier', 'standard', '--assigning-authority', authority]);
          if (run.code !== 1) issues.push(`${authority}: exit ${run.code} (want 1) ${run.err.trim()}`);
          const shown = await operator('partners', ['show', partnerId]);
          if (shown.code === 0) issues.push(`${authority}: partner ${partnerId} was written`);
        }
      });
    });

    it("JSON results from the second partner naming another sender or the chart's patient never touch demo-lab's results", async () => {
      await runCase('results under another sender', async (issues) => {
        const first = firstLabResults[0]!;
        const res = await postJson('/receiveTestData', second.intake, labData({ senderID: 'demo-lab', patientID: first.patientId }));
        if (res.status !== 403) issues.push(`senderID demo-lab from rel-second: ${res.status} (want 403)`);
        const own = await postJson('/receiveTestData', second.intake, labData({ senderID: SENDER, patientID: first.patientId }));
        if (own.status !== 200) issues.push(`its own sender: ${own.status}`);
        else if (own.json<{ resultId: string }>().resultId === first.resultId) issues.push("its result shares demo-lab's result id");
      });
    });

    it('ADT^A40 merge from the second partner naming two chart patients merges nothing', async () => {
      await runCase('ADT A40 of chart patients', async (issues) => {
        const message = [msh('ADT^A40^ADT_A39', unique('M')), `EVN|A40|${NOW}`, pidSegment(alex), 'MRG|DEMO-000002^^^DEMO-HOSP^MR'].join('\r') + '\r';
        const before = await chartSnapshot();
        const reply = readAck(await postHl7(message));
        if (reply.msa1 === 'AR') issues.push(`MSA-1 ${reply.msa1}`);
        issues.push(...snapshotDiff(before, await chartSnapshot()));
      });
    });
  });

  it('0 cross-partner changes to the chart after every case, 0 5xx in the whole suite', async () => {
    await runCase('chart unchanged at the end', async (issues) => {
      issues.push(...snapshotDiff(baseline, await chartSnapshot()));
      if (all5xx > 0) issues.push(`${all5xx} answer(s) 5xx during the suite`);
    });
  });
});
