/**
 * Issue 11 end to end: patients written by the REAL import CLI (a child process, against the local
 * stack) are matched by the real worker; namesakes go to review; a rename moves the patient's index
 * entries; `npm run reindex` fills the index of a chart written before writers kept it, resumably;
 * every routing by the matcher is in the audit trail (`npm run audit`, a child process).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { dynamoDbClient } from '../../lib/aws/clients';
import { ChartStore } from '../../lib/chart/chart-store';
import type { ImportPatient } from '../../lib/chart/chart-import';
import { formsDependencies } from '../../lib/forms/forms-wiring';
import { blockingKeys } from '../../lib/forms/match-keys';
import { FormsStore } from '../../lib/forms/packet-store';
import type { LocalStack } from '../../lib/local/stack';
import { runReindex } from '../../scripts/reindex';
import { call, startTestStack } from '../support/local-stack';
import { relatePartner } from '../support/operator-cli';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const run = promisify(execFile);

let stack: LocalStack;
let dir: string;

beforeAll(async () => {
  stack = await startTestStack({ backgroundWorkers: true });
  dir = mkdtempSync(path.join(tmpdir(), 'import-matching-'));
});

afterAll(async () => {
  await stack?.close();
});

/** A chart patient the clinic's form tool (demo-forms) serves: the import relates them (source import). */
function patient(patientId: string, given: string, family: string, birthDate: string, extra: Partial<ImportPatient> = {}): ImportPatient {
  return {
    patientId,
    mrn: `MRN-${patientId}`,
    assigningAuthority: 'TEST-HOSP',
    name: { given, family },
    birthDate,
    relationships: [{ partnerId: 'demo-forms' }],
    ...extra,
  };
}

/** `npm run import -- FILE` as a user runs it, against the stack (its environment, as a deployed stage's). */
async function importWithCli(patients: ImportPatient[]): Promise<string> {
  const file = path.join(dir, `${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify({ patients }));
  const { stdout } = await run(TSX, [path.join(ROOT, 'scripts', 'import-chart.ts'), file], { cwd: ROOT, env: { ...process.env, ...stack.env } });
  return stdout;
}

interface Packet {
  state: string;
  reason?: string;
  patientId?: string;
  candidates: Array<{ patientId: string; score: number; reasons: string[] }>;
}

async function postAndDecide(person: { firstName: string; lastName: string; dob: string; email?: string }): Promise<Packet & { packetId: string }> {
  const res = await call(stack, 'POST', '/receiveFormIntakeScope', {
    headers: { 'x-api-key': 'demo-forms-key', 'content-type': 'application/json' },
    body: JSON.stringify({
      payload: { sourceSystemId: 'demo-form-tool', formId: 'intake', submissionId: `s-${randomUUID()}`, patient: person, answers: { q: 'a' } },
    }),
  });
  expect(res.status).toBe(202);
  const { packetId } = res.json<{ packetId: string }>();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const view = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: { 'x-api-key': 'demo-inbox-key' } });
    if (view.status === 200) {
      const p = view.json<Packet>();
      if (p.state !== 'pending_match') return { ...p, packetId };
    }
    if (Date.now() > deadline) throw new Error(`packet ${packetId} not decided within 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('chart import keeps the match index in step', () => {
  it('a brand-new patient imported with `npm run import` is matched by the worker within seconds', async () => {
    const out = await importWithCli([patient('pat-new-1', 'Quinta', 'Newcomb', '1991-02-03')]);
    expect(out).toContain('imported 1 patients');
    expect(out).toContain('; 1 partner relationships');
    expect(out).toContain('1 patients indexed for form matching');
    const started = Date.now();
    const p = await postAndDecide({ firstName: 'Quinta', lastName: 'Newcomb', dob: '1991-02-03' });
    expect(p).toMatchObject({ state: 'matched', reason: 'score', patientId: 'pat-new-1' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(p.candidates[0]!.reasons).toEqual(expect.arrayContaining(['dob_exact:+14.6', 'first_name_exact:+7.8', 'last_name_exact:+8.8']));
  });

  it('a patient imported with `npm run import` is found by PID-3: an inbound ORU is filed under it, no second chart patient', async () => {
    const out = await importWithCli([patient('hl7-imp-1', 'Imara', 'Odum', '1979-09-09')]);
    expect(out).toContain('indexed for form matching and by MRN');
    await relatePartner('demo-lab', 'hl7-imp-1');
    const accession = `ACC${Date.now().toString(36).toUpperCase()}`;
    const message =
      [
        `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|TEST-HOSP|20240301093000+0000||ORU^R01^ORU_R01|C${accession}|P|2.5.1`,
        'PID|1||MRN-hl7-imp-1^^^TEST-HOSP^MR||Odum^Imara||19790909|F',
        `OBR|1|ORD1|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
        'OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F',
      ].join('\r') + '\r';
    const ack = await call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' }, body: message });
    expect(ack.status).toBe(200);
    expect(ack.text).toMatch(/\rMSA\|AA\|/);
    const summary = await call(stack, 'GET', '/exportHl7PatientSummary?patientId=hl7-imp-1&limit=50', { headers: { 'x-api-key': 'demo-export-oru-key' } });
    expect(summary.status).toBe(200);
    expect(summary.text).toContain(`|${accession}^`);
  });

  it("a namesake of a demo patient (an imported pat-1001 with demo-patient-1's name and birth date) sends the packet to review as ambiguous", async () => {
    await importWithCli([patient('pat-1001', 'Alex', 'Sample', '1980-04-12')]);
    const p = await postAndDecide({ firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12' });
    expect(p).toMatchObject({ state: 'pending_review', reason: 'ambiguous' });
    expect(p.candidates.map((c) => c.patientId).sort()).toEqual(['demo-patient-1', 'pat-1001']);
  });

  it('a renamed patient is re-indexed: the old entries are removed, the new name matches, the old one does not', async () => {
    await importWithCli([patient('pat-rename-1', 'Orla', 'Beckwith', '1970-09-09')]);
    const key = (await formsDependencies().keys().key({ create: false }))!;
    const store = new FormsStore(dynamoDbClient(), stack.tables.forms);
    const oldKeys = blockingKeys(key, 'Orla', 'Beckwith', '1970-09-09');
    expect(await store.queryMatchIndex(oldKeys[0]!)).toContain('pat-rename-1');

    await importWithCli([patient('pat-rename-1', 'Orla', 'Castellane', '1970-09-10')]);
    for (const k of oldKeys) expect(await store.queryMatchIndex(k)).not.toContain('pat-rename-1');
    expect((await postAndDecide({ firstName: 'Orla', lastName: 'Beckwith', dob: '1970-09-09' })).state).toBe('pending_review');
    expect(await postAndDecide({ firstName: 'Orla', lastName: 'Castellane', dob: '1970-09-10' })).toMatchObject({
      state: 'matched',
      patientId: 'pat-rename-1',
    });
  });

  it('`npm run reindex` indexes a chart written without the index, page by page, and resumes after an interruption', async () => {
    // a stage loaded before this fix: patients in the chart, nothing in the index
    const chart = new ChartStore(dynamoDbClient(), stack.tables.chart);
    const surnames = ['Ashdown', 'Brackley', 'Cranmore', 'Dunmere', 'Elsworth', 'Fairholm', 'Garside', 'Hollins', 'Ingleby', 'Jessop', 'Kettering', 'Lowther'];
    const old = surnames.map((family, i) => patient(`pat-old-${i}`, 'Petra', family, '1955-05-05'));
    await chart.putAll(old.map((record) => ({ kind: 'patient' as const, record })));
    const before = await postAndDecide({ firstName: 'Petra', lastName: 'Cranmore', dob: '1955-05-05' });
    expect(before).toMatchObject({ state: 'pending_review', reason: 'no_candidates' });

    const lines: string[] = [];
    const io = { env: { ...stack.env }, out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    expect(await runReindex(['--page-size', '5'], { ...io, maxPages: 2 })).toBe(1); // interrupted
    expect(lines.join('\n')).toMatch(/page 2: \d+ patients read/);
    const progress = await new FormsStore(dynamoDbClient(), stack.tables.forms).getReindexProgress();
    expect(progress?.pages).toBe(2);

    lines.length = 0;
    expect(await runReindex(['--page-size', '5'], io)).toBe(0);
    expect(lines[0]).toMatch(/^resuming after page 2/);
    expect(lines.at(-1)).toMatch(/^done: \d+ patients, \d+ indexed/);
    expect(await new FormsStore(dynamoDbClient(), stack.tables.forms).getReindexProgress()).toBeUndefined();
    // idempotent: a second full run changes nothing and succeeds
    expect(await runReindex(['--restart'], io)).toBe(0);

    // written without the import: the form tool is related to the patient by the operator
    await relatePartner('demo-forms', 'pat-old-2');
    expect(await postAndDecide({ firstName: 'Petra', lastName: 'Cranmore', dob: '1955-05-05' })).toMatchObject({ state: 'matched', patientId: 'pat-old-2' });
  });

  it('lab results stored for a chart patient (JSON and HL7) are in `npm run audit -- --patient <chart id>`; an unknown lab patient id is not', async () => {
    await importWithCli([patient('audit-lab-1', 'Ola', 'Audit', '1970-07-07')]);
    await relatePartner('demo-lab', 'audit-lab-1');
    const lab = (patientID: string, accessionNumber: string) =>
      call(stack, 'POST', '/receiveTestData', {
        headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
        body: JSON.stringify({
          data: {
            senderID: 'demo-lab',
            patientID,
            accessionNumber,
            status: 'final',
            ResultedDateUTC: '2024-03-01T09:30:00Z',
            results: { testName: 'Glucose', result: '98.4', units: 'mg/dL' },
          },
        }),
      });
    const known = await lab('audit-lab-1', `AUD${Date.now().toString(36)}`);
    expect(known.status).toBe(200);
    expect(known.json()).not.toHaveProperty('patientMatched');
    expect((await lab('lab-own-id-77', `AUX${Date.now().toString(36)}`)).status).toBe(200);
    const accession = `AUH${Date.now().toString(36).toUpperCase()}`;
    const hl7 =
      [
        `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|TEST-HOSP|20240301093000+0000||ORU^R01^ORU_R01|C${accession}|P|2.5.1`,
        'PID|1||MRN-audit-lab-1^^^TEST-HOSP^MR||Audit^Ola',
        `OBR|1|ORD1|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
        'OBX|1|NM|2345-7^Glucose^LN||98.4|mg/dL|70-99|N|||F',
      ].join('\r') + '\r';
    expect(
      (await call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' }, body: hl7 })).text,
    ).toMatch(/MSA\|AA\|/);
    const { stdout } = await run(TSX, [path.join(ROOT, 'scripts', 'audit.ts'), '--patient', 'audit-lab-1'], {
      cwd: ROOT,
      env: { ...process.env, ...stack.env },
    });
    expect(stdout).toContain(`results.store`);
    expect(stdout).toContain(`resultId=${known.json<{ resultId: string }>().resultId}`);
    expect(stdout).toContain('hl7.oru.results_store');
    const other = await run(TSX, [path.join(ROOT, 'scripts', 'audit.ts'), '--patient', 'lab-own-id-77'], { cwd: ROOT, env: { ...process.env, ...stack.env } });
    expect(other.stdout).not.toContain('results.store');
  });

  it('every routing by the matcher is in the audit trail: `npm run audit -- --patient` shows it', async () => {
    const routed = await postAndDecide({ firstName: 'Quinta', lastName: 'Newcomb', dob: '1991-02-03' });
    expect(routed.state).toBe('matched');
    const { stdout } = await run(TSX, [path.join(ROOT, 'scripts', 'audit.ts'), '--patient', 'pat-new-1'], { cwd: ROOT, env: { ...process.env, ...stack.env } });
    const lines = stdout.split('\n').filter((l) => l.includes('forms.match'));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(stdout).toContain(`packetId=${routed.packetId} rule=score`);
    expect(stdout).not.toMatch(/Quinta|Newcomb|1991-02-03/);
  });
});
