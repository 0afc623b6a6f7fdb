/**
 * Issue 31 item 4: the HL7 patient summary pages. A chart larger than one response (`limit` at most
 * 200, 5,000,000 bytes) is walked with `cursor` = the previous page's `x-summary-next-cursor`; the
 * pages together hold every record exactly once, newest first, in the order of one big page, also
 * when records and lab results share an instant and when the byte budget cuts a page.
 * Through the local stack (dynalite, local KMS): chart records imported by the chart import, lab
 * results posted to /receiveTestData by a lab related to the patient with `npm run partners -- relate`.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LocalStack } from '../../lib/local/stack';
import { importChart } from '../../lib/chart/chart-import';
import { ChartStore } from '../../lib/chart/chart-store';
import { exportPatientSummary } from '../../lib/exports/chart-exports';
import { validateExport } from '../hl7/receiver-rules';
import { call, startTestStack } from '../support/local-stack';
import { relatePartner } from '../support/operator-cli';

const PATIENT = 'paging-patient-1';
const clinician = { id: 'paging-clinician', name: { family: 'Practitioner', given: 'Pat' } };
const at = (minute: number) => new Date(Date.UTC(2025, 2, 1, 8, 0) + minute * 60_000).toISOString().replace('.000Z', 'Z');
const ENCOUNTERS = 9;
const NOTES = 8;
const ASSESSMENTS = 6;
const LABS = 7;
const TOTAL = ENCOUNTERS + NOTES + ASSESSMENTS + LABS;

let stack: LocalStack;
let db: DynamoDBClient;

beforeAll(async () => {
  stack = await startTestStack();
  db = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const imported = await importChart(new ChartStore(db, stack.tables.chart), {
    patients: [
      {
        patientId: PATIENT,
        mrn: 'PAGING-0001',
        assigningAuthority: 'DEMO-HOSP',
        name: { family: 'Paging', given: 'Sam' },
        birthDate: '1970-05-06',
        sex: 'F',
        encounters: Array.from({ length: ENCOUNTERS }, (_v, i) => ({
          encounterId: `pg-enc-${i}`,
          patientClass: 'O',
          admitAt: at(i * 10),
          attending: clinician,
          reason: 'Follow-up',
        })),
        // notes 0-3 at the same instant as encounters 0-3 (ties broken by the timeline key)
        notes: Array.from({ length: NOTES }, (_v, i) => ({
          noteId: `pg-note-${i}`,
          author: clinician,
          createdAt: at(i < 4 ? i * 10 : i * 10 + 3),
          text: `Note ${i}`,
        })),
        assessments: Array.from({ length: ASSESSMENTS }, (_v, i) => ({
          assessmentId: `pg-asmt-${i}`,
          code: { code: '44249-1', display: 'PHQ-9 quick depression assessment panel', system: 'LN' },
          performedAt: at(i * 10 + 5),
          performer: clinician,
          items: [{ code: { code: '44261-6', display: 'PHQ-9 total score', system: 'LN' }, kind: 'numeric', value: i }],
        })),
      },
    ],
  });
  expect(imported.ok).toBe(true);
  // the lab files only into a patient it serves
  await relatePartner('demo-lab', PATIENT);
  for (let i = 0; i < LABS; i += 1) {
    const posted = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        data: {
          senderID: 'demo-lab',
          patientID: PATIENT,
          accessionNumber: `PAGING-${i}`,
          status: 'final',
          // labs 0-2 at the same instant as a chart record (a lab goes first only when strictly newer)
          ResultedDateUTC: at(i < 3 ? i * 10 + 5 : i * 10 + 7),
          results: [{ testName: 'Glucose', result: String(90 + i), units: 'mg/dL' }],
        },
      }),
    });
    expect(posted.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  db?.destroy();
  await stack?.close();
});

async function summary(query: string, key = 'demo-export-oru-key') {
  return call(stack, 'GET', `/exportHl7PatientSummary?patientId=${PATIENT}${query}`, { headers: { 'x-api-key': key, accept: 'application/hl7-v2' } });
}

/** OBR-3 of every record group (one ORU^R01, `oru` style): the records in the message's order. */
function recordIds(text: string): string[] {
  return text
    .split('\r')
    .filter((line) => line.startsWith('OBR|'))
    .map((line) => line.split('|')[3]!)
    .filter((filler) => filler !== '');
}

async function walk(limit: number, key = 'demo-export-oru-key'): Promise<{ pages: number; ids: string[]; counts: string[] }> {
  const ids: string[] = [];
  const counts: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await summary(`&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, key);
    expect(res.status).toBe(200);
    expect(validateExport(res.text).issues).toEqual([]);
    ids.push(...recordIds(res.text));
    counts.push(res.headers.get('x-summary-records') ?? '');
    cursor = res.headers.get('x-summary-next-cursor') ?? undefined;
    pages += 1;
    expect(pages).toBeLessThanOrEqual(TOTAL);
  } while (cursor);
  return { pages, ids, counts };
}

describe('the HL7 summary pages with x-summary-next-cursor', () => {
  test('one page of limit=200 holds every record and gives no cursor', async () => {
    const res = await summary('&limit=200');
    expect(res.headers.get('x-summary-records')).toBe(`${TOTAL}/${TOTAL}`);
    expect(res.headers.get('x-summary-next-cursor')).toBeNull();
  });

  test.each([1, 4, 7, 29])('pages of %i hold every record exactly once, in the order of one page', async (limit) => {
    const whole = recordIds((await summary('&limit=200')).text);
    expect(whole).toHaveLength(TOTAL);
    const walked = await walk(limit);
    expect(walked.pages).toBe(Math.ceil(TOTAL / limit));
    expect(walked.ids).toEqual(whole);
    expect(walked.counts.slice(0, -1).every((c) => c === `${limit}/${limit}`)).toBe(true);
  });

  test('the batch style pages the same way (FHS/BHS batch per page)', async () => {
    const walked = await walk(6, 'demo-export-key');
    expect(walked.pages).toBe(Math.ceil(TOTAL / 6));
    expect(walked.counts.map((c) => Number(c.split('/')[0])).reduce((a, b) => a + b, 0)).toBe(TOTAL);
  });

  test('a cursor that was not issued, or is of another kind, is a 400 naming cursor; nothing else answers', async () => {
    const everythingToken = Buffer.from(JSON.stringify({ k: 'e' })).toString('base64url');
    for (const cursor of ['zzz', everythingToken, Buffer.from(JSON.stringify({ k: 'h', c: 'not a position' })).toString('base64url')]) {
      const res = await summary(`&limit=5&cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const body = res.json<{ errors: Array<{ parameter: string }>; requestId: string }>();
      expect(body.errors.map((e) => e.parameter)).toEqual(['cursor']);
      expect(body.requestId).toBeTruthy();
    }
    const twice = await summary('&limit=5&cursor=a&cursor=b');
    expect(twice.status).toBe(400);
  });

  test("another patient's cursor only moves the start inside the patient named (never reaches the other chart)", async () => {
    const first = await summary('&limit=3');
    const cursor = first.headers.get('x-summary-next-cursor')!;
    const other = await call(stack, 'GET', `/exportHl7PatientSummary?patientId=demo-patient-1&limit=200&cursor=${cursor}`, {
      headers: { 'x-api-key': 'demo-export-oru-key' },
    });
    expect(other.status).toBe(200);
    expect(recordIds(other.text).some((id) => id.startsWith('pg-'))).toBe(false);
  });

  test('a page cut by the byte budget continues with the first record it left out', async () => {
    const chart = new ChartStore(db, stack.tables.chart);
    const principal = { keyId: 'k', partnerId: 'demo-ehr-oru', scopes: [], hl7Profile: { summaryStyle: 'oru' } } as unknown as Parameters<
      typeof exportPatientSummary
    >[2]['principal'];
    const deps = { chart };
    const now = new Date('2026-01-01T00:00:00Z');
    const all = await exportPatientSummary(deps, { patientId: PATIENT, limit: 200 }, { principal, now });
    const whole = recordIds(all.text);
    // room for the header and about four records besides the reserve the cut notice keeps (4096 bytes)
    const maxBytes = 4096 + Math.ceil((all.wireBytes / whole.length) * 4);
    const ids: string[] = [];
    let cursor: string | undefined;
    let cutPages = 0;
    do {
      const page = await exportPatientSummary(deps, { patientId: PATIENT, limit: 10, cursor }, { principal, now, maxBytes });
      if (page.cut) cutPages += 1;
      expect(page.recordsIncluded).toBeGreaterThan(0);
      ids.push(...recordIds(page.text).slice(0, page.recordsIncluded));
      cursor = page.nextCursor;
    } while (cursor);
    expect(cutPages).toBeGreaterThan(0);
    expect(ids).toEqual(whole.slice(0, ids.length));
    expect(ids).toHaveLength(ENCOUNTERS + NOTES + ASSESSMENTS);
  });
});
