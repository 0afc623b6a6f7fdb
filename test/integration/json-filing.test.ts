/**
 * The JSON lab path files only with a relationship (docs/write-authority.md "Filing needs a
 * relationship"), over HTTP: a partner made with the operator CLIs that names a chart patient it is
 * not related to gets the same answer as a filed result, the chart shows nothing of it, and staff see
 * it held for review; a related partner's result named by the patient's MRN is filed.
 */
import type { LocalStack } from '../../lib/local/stack';
import { labResultStore } from '../../lib/results/result-wiring';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { createPartnerKey, operator } from '../support/operator-cli';

jest.setTimeout(120_000);

let stack: LocalStack;
let rogueKey = '';
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

beforeAll(async () => {
  stack = await startTestStack();
  const created = await operator('partners', ['create', '--partner-id', 'rogue-lab', '--tier', 'standard', '--sender-id', 'ROGUE-LIS']);
  if (created.code !== 0) throw new Error(`partners create failed (${created.code}): ${created.err}`);
  rogueKey = (await createPartnerKey('rogue-lab', ['interop:ingest:results'])).secret;
});

afterAll(async () => {
  await stack?.close();
});

function submit(key: string, senderID: string, patientID: string, testName: string): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({
      data: {
        senderID,
        status: 'final',
        ResultedDateUTC: '2024-03-01T09:30:00Z',
        accessionNumber: unique('ACC'),
        patientID,
        results: { testName, result: '6.9', abnormalFlags: ['HH'] },
      },
    }),
  });
}

async function summaryOf(patientId: string): Promise<string> {
  const res = await call(stack, 'GET', `/exportHl7PatientSummary?patientId=${patientId}&limit=200`, {
    headers: { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' },
  });
  expect(res.status).toBe(200);
  return res.text;
}

interface HeldItem {
  heldId: string;
  kind: string;
  reason: string;
  partnerId: string;
}

async function heldFrom(partnerId: string): Promise<HeldItem[]> {
  const res = await call(stack, 'GET', '/interopInbox/held?state=held&limit=100', { headers: { 'x-api-key': 'demo-inbox-key' } });
  expect(res.status).toBe(200);
  return res.json<{ items: HeldItem[] }>().items.filter((i) => i.partnerId === partnerId);
}

/** the stored body of a result's current version, as the lab result store reads it back */
async function storedSubmissionOf(resultId: string): Promise<{ patientID: string; filedPatientId: string }> {
  const version = await labResultStore().readCurrent(resultId);
  return { patientID: version!.submission.data.patientID, filedPatientId: version!.filedPatientId };
}

/** the answer without what differs per submission */
const shape = (res: HttpResult) => ({ status: res.status, fields: Object.keys(res.json<Record<string, unknown>>()).sort() });

describe('POST /receiveTestData with a chart patient id', () => {
  it('an unrelated partner is answered as if filed, files nothing into the chart, and staff see the result held', async () => {
    const rogue = await submit(rogueKey, 'ROGUE-LIS', 'demo-patient-1', 'RogueKalium');
    const filed = await submit('demo-results-key', 'demo-lab', 'demo-patient-1', 'LabKalium');
    expect(rogue.status).toBe(200);
    expect(shape(rogue)).toEqual(shape(filed));
    const summary = await summaryOf('demo-patient-1');
    expect(summary).toContain('LabKalium');
    expect(summary).not.toContain('RogueKalium');
    expect(await heldFrom('rogue-lab')).toEqual([expect.objectContaining({ reason: 'no-relationship' })]);
  });

  it("a related partner's result named by the patient's MRN is filed", async () => {
    const byMrn = await submit('demo-results-key', 'demo-lab', 'DEMO-000002', 'MrnSodium');
    expect(byMrn.status).toBe(200);
    expect(await summaryOf('demo-patient-2')).toContain('MrnSodium');
  });

  it('what the lab sent is stored as sent: an MRN-filed or held result keeps its patientID; routing the held one files it without rewriting it', async () => {
    const byMrn = await submit('demo-results-key', 'demo-lab', 'DEMO-000003', 'MrnChloride');
    expect(await storedSubmissionOf(byMrn.json<{ resultId: string }>().resultId)).toEqual({ patientID: 'DEMO-000003', filedPatientId: 'demo-patient-3' });

    const before = (await heldFrom('rogue-lab')).map((h) => h.heldId);
    const held = await submit(rogueKey, 'ROGUE-LIS', 'demo-patient-4', 'RogueCalcium');
    const resultId = held.json<{ resultId: string }>().resultId;
    const stored = await storedSubmissionOf(resultId);
    expect(stored.patientID).toBe('demo-patient-4');
    expect(stored.filedPatientId).toMatch(/^hl7-[0-9a-f]{32}$/);
    expect(await summaryOf('demo-patient-4')).not.toContain('RogueCalcium');

    const record = (await heldFrom('rogue-lab')).find((h) => !before.includes(h.heldId))!;
    const routed = await call(stack, 'POST', `/interopInbox/held/${record.heldId}/route`, {
      headers: { 'x-api-key': 'demo-inbox-key', 'content-type': 'application/json', 'x-request-id': unique('route') },
      body: JSON.stringify({ patientId: 'demo-patient-4' }),
    });
    expect(routed.status).toBe(200);
    expect(await storedSubmissionOf(resultId)).toEqual({ patientID: 'demo-patient-4', filedPatientId: 'demo-patient-4' });
    expect(await summaryOf('demo-patient-4')).toContain('RogueCalcium');
  });
});

describe('a sender id that changes hands carries no results', () => {
  it("the sender id's next owner filing the same accession makes its own result; the first owner's result is unchanged", async () => {
    const run = async (argv: string[]) => {
      const out = await operator('partners', argv);
      expect([argv.join(' '), out.code, out.err]).toEqual([argv.join(' '), 0, '']);
    };
    await run(['create', '--partner-id', 'tmp-lab', '--tier', 'standard', '--sender-id', 'TMP-LIS']);
    await run(['create', '--partner-id', 'next-lab', '--tier', 'standard', '--sender-id', 'NEXT-LIS']);
    for (const partner of ['tmp-lab', 'next-lab']) await run(['relate', partner, 'demo-patient-1']);
    const tmpKey = (await createPartnerKey('tmp-lab', ['interop:ingest:results', 'interop:read:own-results'])).secret;
    const nextKey = (await createPartnerKey('next-lab', ['interop:ingest:results'])).secret;
    const accession = unique('HANDOFF');
    const send = (key: string, result: string) =>
      call(stack, 'POST', '/receiveTestData', {
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          data: {
            senderID: 'TMP-LIS',
            status: 'corrected',
            ResultedDateUTC: '2024-03-02T09:30:00Z',
            accessionNumber: accession,
            patientID: 'demo-patient-1',
            results: { testName: 'Potassium', result },
          },
        }),
      });
    const original = await send(tmpKey, '4.1');
    expect(original.status).toBe(200);
    const originalId = original.json<{ resultId: string }>().resultId;

    // the id is released by its owner and given to another partner
    await run(['update', 'tmp-lab', '--sender-id', 'TMP-NEW']);
    await run(['update', 'next-lab', '--sender-id', 'TMP-LIS']);
    const correction = await send(nextKey, '9.9');
    expect(correction.status).toBe(200);
    expect(correction.json<{ resultId: string }>().resultId).not.toBe(originalId);

    const current = await labResultStore().readCurrent(originalId);
    expect(current!.partnerId).toBe('tmp-lab');
    expect(current!.results[0]!.result).toBe('4.1');
  });
});
