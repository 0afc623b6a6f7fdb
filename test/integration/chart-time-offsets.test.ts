/**
 * Chart times keep their offset in the HL7 exports (as they do in FHIR). A chart imported by
 * `npm run import` with times at -08:00 and +05:30 (one with a fraction of a second), then every export
 * that carries a chart time, over HTTP through the local stack: the note (MDM^T02: TXA-4, TXA-6,
 * TXA-22 PPN-15), the encounter (ADT^A08: PV1-44/45, DG1-5; ORU^R01: also OBR-7/8 of the visit group and
 * ORC-9, OBR-6/7 of an order), the assessment (ORU^R01: PV1-44/45, OBR-7, every OBX-14), the summary in
 * both styles (batch of those messages; one ORU^R01: the groups' OBR-7/8 and OBX-14). The message time
 * (MSH-7, EVN-2) stays UTC; the patient's demographics message carries no record time.
 * Before: every chart time was written in UTC (`2025-12-31T01:05:00-08:00` -> `20251231090500+0000`).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { LocalStack } from '../../lib/local/stack';
import { validateExport } from '../hl7/receiver-rules';
import { call, startTestStack } from '../support/local-stack';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const run = promisify(execFile);

const PATIENT = 'tz-patient-1';
const clinician = { id: 'tz-clinician-1', name: { family: 'Clock', given: 'Ada' } };

/** The chart as imported: the times as the source system wrote them. */
const TIMES = {
  admitWest: '2025-12-30T22:10:00-08:00',
  dischargeWest: '2025-12-31T02:45:00-08:00',
  orderedWest: '2025-12-30T22:30:00-08:00',
  noteWest: '2025-12-31T01:05:00-08:00',
  admitEast: '2025-12-31T09:00:00+05:30',
  dischargeEast: '2025-12-31T10:30:00+05:30',
  performedEast: '2025-12-31T09:45:30.25+05:30',
};

/** The same times as HL7 TS, offset and precision as written. */
const TS = {
  admitWest: '20251230221000-0800',
  dischargeWest: '20251231024500-0800',
  orderedWest: '20251230223000-0800',
  noteWest: '20251231010500-0800',
  admitEast: '20251231090000+0530',
  dischargeEast: '20251231103000+0530',
  performedEast: '20251231094530.25+0530',
};

const chart = {
  patients: [
    {
      patientId: PATIENT,
      mrn: 'TZ-000001',
      assigningAuthority: 'DEMO-HOSP',
      name: { family: 'Offset', given: 'Olive' },
      birthDate: '1980-02-29',
      sex: 'F',
      encounters: [
        {
          encounterId: 'tz-enc-west',
          patientClass: 'E',
          location: 'ED-1',
          attending: clinician,
          admitAt: TIMES.admitWest,
          dischargeAt: TIMES.dischargeWest,
          diagnoses: [{ code: 'I10', display: 'Essential (primary) hypertension', system: 'I10' }],
          orders: [{ orderId: 'tz-order-1', code: { code: '2345-7', display: 'Glucose', system: 'LN' }, orderedAt: TIMES.orderedWest, status: 'SC' }],
        },
        { encounterId: 'tz-enc-east', patientClass: 'O', attending: clinician, admitAt: TIMES.admitEast, dischargeAt: TIMES.dischargeEast },
      ],
      notes: [{ noteId: 'tz-note-1', encounterId: 'tz-enc-west', author: clinician, createdAt: TIMES.noteWest, text: 'Seen overnight.' }],
      assessments: [
        {
          assessmentId: 'tz-asmt-1',
          encounterId: 'tz-enc-east',
          code: { code: '44249-1', display: 'PHQ-9 quick depression assessment panel', system: 'LN' },
          performedAt: TIMES.performedEast,
          performer: clinician,
          items: [
            { code: { code: '44250-9', display: 'Little interest', system: 'LN' }, kind: 'numeric', value: 1 },
            { code: { code: '44255-8', display: 'Feeling down', system: 'LN' }, kind: 'numeric', value: 2 },
          ],
          total: 3,
        },
      ],
    },
  ],
};

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
  const dir = mkdtempSync(path.join(tmpdir(), 'chart-time-offsets-'));
  const file = path.join(dir, 'chart.json');
  writeFileSync(file, JSON.stringify(chart));
  // `npm run import -- FILE` as a user runs it, against the stack
  await run(TSX, [path.join(ROOT, 'scripts', 'import-chart.ts'), file], { cwd: ROOT, env: { ...process.env, ...stack.env } });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

type Segments = string[][];

/** The segments of a message (or of every message of a batch), each split into fields (index = field number; MSH shifted so that MSH-n is [n]). */
function segmentsOf(text: string): Segments {
  return text
    .split('\r')
    .filter(Boolean)
    .map((segment) => {
      const fields = segment.split('|');
      return fields[0] === 'MSH' || fields[0] === 'FHS' || fields[0] === 'BHS' ? [fields[0], '|', ...fields.slice(1)] : fields;
    });
}

function all(segments: Segments, name: string): string[][] {
  return segments.filter((fields) => fields[0] === name);
}

function only(segments: Segments, name: string): string[] {
  const found = all(segments, name);
  expect(found).toHaveLength(1);
  return found[0]!;
}

async function hl7(pathAndQuery: string, key = 'demo-export-key'): Promise<Segments> {
  const res = await call(stack, 'GET', pathAndQuery, { headers: { 'x-api-key': key, accept: 'application/hl7-v2' } });
  expect(res.status).toBe(200);
  expect(validateExport(res.text).issues).toEqual([]);
  return segmentsOf(res.text);
}

/** MSH-7 (and EVN-2, when there is one) stay the message time in UTC. */
function expectMessageTimeUtc(segments: Segments): void {
  for (const msh of all(segments, 'MSH')) expect(msh[7]).toMatch(/^\d{14}\+0000$/);
  for (const evn of all(segments, 'EVN')) expect(evn[2]).toMatch(/^\d{14}\+0000$/);
}

const query = (extra: string) => `patientId=${PATIENT}${extra}`;

describe('chart times with -08:00 and +05:30 offsets come out of every HL7 export as stored', () => {
  it('MDM^T02 note: TXA-4, TXA-6 and TXA-22 PPN-15 at -0800 (was 20251231090500+0000)', async () => {
    const segments = await hl7(`/exportHl7Note?${query('&noteId=tz-note-1')}`);
    const txa = only(segments, 'TXA');
    expect(txa[4]).toBe(TS.noteWest);
    expect(txa[6]).toBe(TS.noteWest);
    expect(txa[22]!.split('^')[14]).toBe(TS.noteWest);
    expectMessageTimeUtc(segments);
    expect(only(segments, 'EVN')[2]).toBe(only(segments, 'MSH')[7]);
  });

  it('ADT^A08 encounter: PV1-44/45 and DG1-5 at -0800', async () => {
    const segments = await hl7(`/exportHl7Encounter?${query('&encounterId=tz-enc-west')}`);
    const pv1 = only(segments, 'PV1');
    expect([pv1[44], pv1[45]]).toEqual([TS.admitWest, TS.dischargeWest]);
    expect(only(segments, 'DG1')[5]).toBe(TS.admitWest);
    expectMessageTimeUtc(segments);
  });

  it('ORU^R01 encounter (partner style oru): PV1-44/45, the visit group OBR-7/8, the order ORC-9 and OBR-6/7 at -0800', async () => {
    const segments = await hl7(`/exportHl7Encounter?${query('&encounterId=tz-enc-west')}`, 'demo-export-oru-key');
    const pv1 = only(segments, 'PV1');
    expect([pv1[44], pv1[45]]).toEqual([TS.admitWest, TS.dischargeWest]);
    const [visit, order] = all(segments, 'OBR');
    expect([visit![7], visit![8]]).toEqual([TS.admitWest, TS.dischargeWest]);
    expect([order![6], order![7]]).toEqual([TS.orderedWest, TS.orderedWest]);
    expect(only(segments, 'ORC')[9]).toBe(TS.orderedWest);
    expectMessageTimeUtc(segments);
  });

  it('ORU^R01 assessment: PV1-44/45 at +0530, OBR-7 and every OBX-14 at +0530 with the fraction kept', async () => {
    const segments = await hl7(`/exportHl7Assessment?${query('&assessmentId=tz-asmt-1')}`);
    const pv1 = only(segments, 'PV1');
    expect([pv1[44], pv1[45]]).toEqual([TS.admitEast, TS.dischargeEast]);
    expect(only(segments, 'OBR')[7]).toBe(TS.performedEast);
    const observations = all(segments, 'OBX');
    expect(observations).toHaveLength(3); // two items and the total
    for (const obx of observations) expect(obx[14]).toBe(TS.performedEast);
    expectMessageTimeUtc(segments);
  });

  it('summary, batch style: the same times in its ADT, MDM and ORU messages', async () => {
    const segments = await hl7(`/exportHl7PatientSummary?${query('')}`);
    const visits = all(segments, 'PV1').filter((pv1) => pv1[44]);
    expect(visits.map((pv1) => [pv1[44], pv1[45]]).sort()).toEqual(
      [
        [TS.admitEast, TS.dischargeEast], // the east encounter's ADT, and the assessment's visit
        [TS.admitEast, TS.dischargeEast],
        [TS.admitWest, TS.dischargeWest], // the west encounter's ADT, and its orders' ORU
        [TS.admitWest, TS.dischargeWest],
      ].sort(),
    );
    expect(all(segments, 'DG1').map((dg1) => dg1[5])).toEqual([TS.admitWest]);
    const txa = only(segments, 'TXA');
    expect([txa[4], txa[6], txa[22]!.split('^')[14]]).toEqual([TS.noteWest, TS.noteWest, TS.noteWest]);
    const assessmentObr = all(segments, 'OBR').find((obr) => obr[3]!.startsWith('tz-asmt-1^'));
    expect(assessmentObr?.[7]).toBe(TS.performedEast);
    const orderObr = all(segments, 'OBR').find((obr) => obr[2]!.startsWith('tz-order-1^'));
    expect([orderObr?.[6], orderObr?.[7]]).toEqual([TS.orderedWest, TS.orderedWest]);
    expect(only(segments, 'ORC')[9]).toBe(TS.orderedWest);
    expect(
      all(segments, 'OBX')
        .map((obx) => obx[14])
        .filter(Boolean),
    ).toEqual([TS.performedEast, TS.performedEast, TS.performedEast]);
    expectMessageTimeUtc(segments);
  });

  it('summary, one ORU^R01 (partner style oru): encounter groups OBR-7/8, the note and assessment groups OBR-7 and OBX-14', async () => {
    const segments = await hl7(`/exportHl7PatientSummary?${query('')}`, 'demo-export-oru-key');
    const obr = (prefix: string) => all(segments, 'OBR').find((fields) => fields[3]!.startsWith(prefix) || fields[2]!.startsWith(prefix));
    expect([obr('tz-enc-west^')?.[7], obr('tz-enc-west^')?.[8]]).toEqual([TS.admitWest, TS.dischargeWest]);
    expect([obr('tz-enc-east^')?.[7], obr('tz-enc-east^')?.[8]]).toEqual([TS.admitEast, TS.dischargeEast]);
    expect(obr('tz-note-1^')?.[7]).toBe(TS.noteWest);
    expect(obr('tz-asmt-1^')?.[7]).toBe(TS.performedEast);
    expect([obr('tz-order-1^')?.[6], obr('tz-order-1^')?.[7]]).toEqual([TS.orderedWest, TS.orderedWest]);
    const times = all(segments, 'OBX')
      .map((obx) => obx[14])
      .filter(Boolean);
    expect(times).toContain(TS.noteWest);
    expect(times.filter((time) => time === TS.performedEast)).toHaveLength(3);
    expect(times.every((time) => /^\d{14}(?:\.\d{1,4})?[+-]\d{4}$/.test(time!))).toBe(true);
    expectMessageTimeUtc(segments);
  });

  it('ADT^A08 patient: no record time; EVN-2 is the message time (UTC)', async () => {
    const segments = await hl7(`/exportHl7PatientAdt?${query('')}`);
    expect(only(segments, 'EVN')[2]).toBe(only(segments, 'MSH')[7]);
    expect(only(segments, 'PID')[7]).toBe('19800229');
    expectMessageTimeUtc(segments);
  });

  it('FHIR keeps the same times as written (unchanged)', async () => {
    const get = async (resource: string) => {
      const res = await call(stack, 'GET', `/fhir/${resource}`, { headers: { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' } });
      expect(res.status).toBe(200);
      return res.json<Record<string, unknown>>();
    };
    expect(await get(`DocumentReference/${PATIENT}..tz-note-1`)).toMatchObject({ date: TIMES.noteWest });
    expect(await get(`Encounter/${PATIENT}..tz-enc-west`)).toMatchObject({ period: { start: TIMES.admitWest, end: TIMES.dischargeWest } });
    expect(await get(`Encounter/${PATIENT}..tz-enc-east`)).toMatchObject({ period: { start: TIMES.admitEast, end: TIMES.dischargeEast } });
    expect(await get(`Observation/${PATIENT}..tz-asmt-1`)).toMatchObject({ effectiveDateTime: TIMES.performedEast });
  });
});
