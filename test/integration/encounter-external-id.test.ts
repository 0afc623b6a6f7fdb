/**
 * Issue 27 item 5: an encounter has one external id in every export: the visit number exactly as PV1-19
 * writes it (CX-1: the chart's encounter id, or its stable short form, CX-4 the namespace) is OBR-3 of the
 * encounter's group in the ORU styles (the `oru` encounter export and the ORU summary) and FHIR
 * Encounter.identifier (type VN, system urn:interop:visit-number:<namespace>). Before, OBR-3 held the EI
 * form (22 characters: `demo-encounter-1` there, `_QE6…` in PV1-19) and FHIR the chart id without a system.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Encounter } from '@medplum/fhirtypes';
import { parseHl7Message, valueAt, type ParsedSegment } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const demo = JSON.parse(readFileSync(path.resolve(__dirname, '../../lib/local/demo-chart.json'), 'utf8')) as {
  patients: Array<{ patientId: string; encounters?: Array<{ encounterId: string }> }>;
};
const encounters = demo.patients.flatMap((p) => (p.encounters ?? []).map((e) => [p.patientId, e.encounterId] as const));

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

async function text(p: string, headers: Record<string, string>): Promise<string> {
  const res = await call(stack, 'GET', p, { headers });
  expect(res.status).toBe(200);
  return res.text;
}

const segments = (message: string, name: string): ParsedSegment[] => parseHl7Message(message).segments.filter((s) => s.name === name);
const cx = (s: ParsedSegment | undefined) => `${valueAt(s, 19, 1)}|${valueAt(s, 19, 4)}`;

describe('issue 27 item 5: one external id per encounter in HL7 and FHIR', () => {
  it('has demo encounters, one of them with an id too long for CX-1 (its short form is compared)', () => {
    expect(encounters.length).toBeGreaterThan(0);
    expect(encounters.some(([, id]) => id.length > 15)).toBe(true);
  });

  it.each(encounters)('%s..%s: PV1-19 = OBR-3 (oru encounter, ORU summary) = FHIR Encounter.identifier', async (patientId, encounterId) => {
    const adt = await text(`/exportHl7Encounter?patientId=${patientId}&encounterId=${encounterId}`, {
      'x-api-key': 'demo-export-key',
      accept: 'application/hl7-v2',
    });
    const visit = segments(adt, 'PV1')[0];
    const [id, namespace] = cx(visit).split('|');
    expect(valueAt(visit, 19, 5)).toBe('VN');
    expect(id).not.toBe('');

    const oruHeaders = { 'x-api-key': 'demo-export-oru-key', accept: 'application/hl7-v2' };
    const oru = await text(`/exportHl7Encounter?patientId=${patientId}&encounterId=${encounterId}`, oruHeaders);
    const encounterGroup = segments(oru, 'OBR').find((obr) => valueAt(obr, 4, 1) === 'ENCOUNTER');
    expect(cx(segments(oru, 'PV1')[0])).toBe(`${id}|${namespace}`);
    expect(`${valueAt(encounterGroup, 3, 1)}|${valueAt(encounterGroup, 3, 2)}`).toBe(`${id}|${namespace}`);

    const summary = await text(`/exportHl7PatientSummary?patientId=${patientId}&limit=200`, oruHeaders);
    const summaryGroups = segments(summary, 'OBR').filter((obr) => valueAt(obr, 4, 1) === 'ENCOUNTER' && valueAt(obr, 3, 1) === id);
    expect(summaryGroups.map((obr) => valueAt(obr, 3, 2))).toEqual([namespace]);

    const fhir = JSON.parse(
      await text(`/fhir/Encounter/${patientId}..${encounterId}`, { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' }),
    ) as Encounter;
    expect(fhir.identifier).toEqual([
      {
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'VN', display: 'Visit number' }] },
        system: `urn:interop:visit-number:${namespace}`,
        value: id,
      },
    ]);
  });
});
