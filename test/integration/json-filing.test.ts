/**
 * The JSON lab path files only with a relationship (docs/write-authority.md "Filing needs a
 * relationship"), over HTTP: a partner made with the operator CLIs that names a chart patient it is
 * not related to gets the same answer as a filed result, the chart shows nothing of it, and staff see
 * it held for review; a related partner's result named by the patient's MRN is filed.
 */
import type { LocalStack } from '../../lib/local/stack';
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

async function heldFrom(partnerId: string): Promise<Array<{ kind: string; reason: string }>> {
  const res = await call(stack, 'GET', '/interopInbox/held?state=held&limit=100', { headers: { 'x-api-key': 'demo-inbox-key' } });
  expect(res.status).toBe(200);
  return res.json<{ items: Array<{ kind: string; reason: string; partnerId: string }> }>().items.filter((i) => i.partnerId === partnerId);
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
});
