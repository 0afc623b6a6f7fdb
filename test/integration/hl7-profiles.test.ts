/**
 * Per-partner HL7 profiles (partner record `hl7Profile`) and the summary's byte budget, through the
 * local stack as a partner uses it:
 * - demo-export-key (partner demo-ehr, no profile: the defaults): encounter ADT^A08, summary as a batch,
 *   TXA-2 PN, MSH-3/4 from configuration;
 * - demo-export-oru-key (partner demo-ehr-oru: encounterStyle oru, summaryStyle oru, TXA-2 PR, its own
 *   MSH-3/4): encounter ORU^R01, summary as one ORU^R01.
 * Every export of every style passes the v2.5.1 validator and the receiver rules.
 * Issue 12 item 5: 70 lab results with long values at limit=200 stay within the 5,000,000-byte budget
 * (the same request answered 6.8 MB before, above Lambda's 6 MB response limit).
 */
import type { LocalStack } from '../../lib/local/stack';
import { validateExport } from '../hl7/receiver-rules';
import { call, startTestStack } from '../support/local-stack';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const profiles = [
  { key: 'demo-export-key', encounter: ['ADT_A01'], summaryBatch: true, documentType: 'PN', sendingApplication: 'INTEROP' },
  { key: 'demo-export-oru-key', encounter: ['ORU_R01'], summaryBatch: false, documentType: 'PR', sendingApplication: 'INTEROP-ORU' },
] as const;

async function exportAs(key: string, pathAndQuery: string) {
  const res = await call(stack, 'GET', pathAndQuery, { headers: { 'x-api-key': key, accept: 'application/hl7-v2' } });
  expect(res.status).toBe(200);
  return res;
}

function segment(text: string, name: string): string[] {
  return (text.split('\r').find((line) => line.startsWith(`${name}|`)) ?? '').split('|');
}

describe.each(profiles)('HL7 profile of $key', (profile) => {
  test('encounter export in the profile style, valid', async () => {
    const res = await exportAs(profile.key, '/exportHl7Encounter?patientId=demo-patient-1&encounterId=demo-encounter-1');
    const report = validateExport(res.text);
    expect(report.issues).toEqual([]);
    expect(report.structures).toEqual(profile.encounter);
    expect(segment(res.text, 'MSH')[2]).toBe(profile.sendingApplication);
    if (profile.encounter[0] === 'ADT_A01') {
      expect(res.text).toContain('\rDG1|1||');
    } else {
      expect(res.text).not.toContain('\rORC|RE|');
    }
  });

  test('note export with the profile document type (TXA-2), TX lines as repetitions, valid', async () => {
    const res = await exportAs(profile.key, '/exportHl7Note?patientId=demo-patient-2&noteId=demo-note-2');
    expect(validateExport(res.text).issues).toEqual([]);
    expect(segment(res.text, 'TXA')[2]).toBe(profile.documentType);
    expect(segment(res.text, 'OBX')[5]).not.toContain('\\.br\\');
  });

  test('summary in the profile style, valid, with the truncation headers', async () => {
    const res = await exportAs(profile.key, '/exportHl7PatientSummary?patientId=demo-patient-1&limit=200');
    const report = validateExport(res.text);
    expect(report.issues).toEqual([]);
    expect(res.text.startsWith('FHS|')).toBe(profile.summaryBatch);
    if (profile.summaryBatch) {
      expect(new Set(report.structures)).toEqual(new Set(['ADT_A01', 'MDM_T02', 'ORU_R01']));
    } else {
      expect(report.structures).toEqual(['ORU_R01']);
    }
    expect(res.headers.get('x-summary-truncated')).toBe('false');
    expect(res.headers.get('x-summary-records')).toMatch(/^(\d+)\/\1$/);
  });
});

describe('issue 12 item 5: the summary never exceeds its byte budget', () => {
  const RESULTS = 70;
  beforeAll(async () => {
    for (let index = 0; index < RESULTS; index += 1) {
      const body = {
        data: {
          senderID: 'demo-lab',
          patientID: 'demo-patient-4',
          accessionNumber: `BUDGET-${String(index).padStart(3, '0')}`,
          status: 'final',
          ResultedDateUTC: new Date(Date.UTC(2025, 0, 1) + index * 60_000).toISOString().replace('.000Z', 'Z'),
          // a long free-text value full of HL7 delimiters: each | is written \F\ (and \\F\\ in JSON)
          results: [{ testName: 'Narrative', result: `Report ${index}: ${'|'.repeat(32_000)}` }],
        },
      };
      const posted = await call(stack, 'POST', '/receiveTestData', {
        headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(posted.status).toBe(200);
    }
  }, 120_000);

  test.each(profiles)(
    '70 long results at limit=200 for $key: at most 5,000,000 bytes, newest first, cut said in HL7 and headers',
    async (profile) => {
      const res = await exportAs(profile.key, '/exportHl7PatientSummary?patientId=demo-patient-4&limit=200');
      const wireBytes = Buffer.byteLength(JSON.stringify(res.text), 'utf8');
      expect(wireBytes).toBeLessThanOrEqual(5_000_000);
      expect(res.headers.get('x-summary-truncated')).toBe('true');
      const [included, available] = (res.headers.get('x-summary-records') ?? '').split('/').map(Number);
      expect(available).toBeGreaterThanOrEqual(RESULTS);
      expect(included).toBeGreaterThan(0);
      expect(included).toBeLessThan(available!);
      expect(res.text).toContain('SUMMARY_CUT^Summary cut at its size budget^L');
      expect(res.text).toContain(`This summary holds the ${included} newest of ${available} records`);
      // newest first: the latest accession number comes first
      const accessions = [...res.text.matchAll(/\|(BUDGET-\d{3})\^/g)].map((match) => match[1]);
      expect(accessions[0]).toBe('BUDGET-069');
      expect(accessions).toEqual([...accessions].sort().reverse());
      // long text travels as TX
      expect(res.text).toMatch(/\|TX\|NARRATIVE\^Narrative\^L\|/);
      expect(validateExport(res.text).issues).toEqual([]);
    },
    60_000,
  );
});
