import { demoChartDocument } from '../chart/demo-data';
import type { Assessment, Encounter, Note, Patient } from '../chart/types';
import { r4Errors } from '../../test/fhir/r4-validator';
import * as fixtures from '../../test/hl7/chart-fixtures';
import { assessmentObservation, documentReferenceResource, encounterResource, noteTextOf, patientResource } from './chart-resources';
import { labDiagnosticReport } from './lab-report';
import { decodeLogicalId } from './logical-id';

type DemoPatient = Patient & { encounters?: Omit<Encounter, 'patientId'>[]; notes?: Omit<Note, 'patientId'>[]; assessments?: Omit<Assessment, 'patientId'>[] };
const demo = (demoChartDocument() as { patients: DemoPatient[] }).patients;

describe('lib/fhir resources validate against the R4 definitions', () => {
  for (const p of demo) {
    const { encounters = [], notes = [], assessments = [], ...patient } = p;
    test(`${p.patientId}: Patient and every record, 0 errors`, () => {
      expect(r4Errors(patientResource(patient))).toEqual([]);
      for (const e of encounters) expect(r4Errors(encounterResource({ ...e, patientId: p.patientId }))).toEqual([]);
      for (const n of notes) expect(r4Errors(documentReferenceResource({ ...n, patientId: p.patientId }))).toEqual([]);
      for (const a of assessments) expect(r4Errors(assessmentObservation({ ...a, patientId: p.patientId }))).toEqual([]);
    });
  }

  test('the HL7 test fixtures (delimiters, CRLF, escapes, non-ASCII) validate too', () => {
    expect(r4Errors(patientResource(fixtures.patient))).toEqual([]);
    expect(r4Errors(encounterResource(fixtures.encounter))).toEqual([]);
    expect(r4Errors(documentReferenceResource(fixtures.note))).toEqual([]);
    expect(r4Errors(assessmentObservation(fixtures.assessment))).toEqual([]);
    expect(r4Errors(labDiagnosticReport(fixtures.patient.patientId, { ...fixtures.labResult, resultId: 'lr_0123456789abcdef0123456789abcdef' }))).toEqual([]);
  });

  test('the validator is not a rubber stamp', () => {
    const bad = { ...patientResource(fixtures.patient), gender: 'woman', birthDate: '1984-13-40' } as never;
    expect(r4Errors(bad).length).toBeGreaterThanOrEqual(2);
    expect(r4Errors({ resourceType: 'Patient', id: 'a_b' })).toEqual(['Patient.id is not an R4 id']);
    expect(r4Errors({ resourceType: 'Patient', name: [{ family: '' }] } as never)).toHaveLength(1);
  });
});

describe('mapping choices', () => {
  test('note text is the attachment byte for byte', () => {
    const doc = documentReferenceResource(fixtures.note);
    expect(noteTextOf(doc)).toBe(fixtures.note.text);
    expect(doc.content[0]!.attachment.contentType).toBe('text/plain; charset=utf-8');
  });

  test('logical ids carry patient and record', () => {
    const enc = encounterResource(fixtures.encounter);
    expect(decodeLogicalId(enc.id!)).toEqual({ ok: true, parts: [fixtures.patient.patientId, fixtures.encounter.encounterId] });
    expect(enc.subject!.reference).toBe(`Patient/${fixtures.patient.patientId}`);
  });

  test('assessment: items as components, total as value, obs-7 respected', () => {
    const obs = assessmentObservation(fixtures.assessment);
    expect(obs.valueInteger).toBe(3);
    expect(obs.component).toHaveLength(fixtures.assessment.items.length);
    const repeated = assessmentObservation({ ...fixtures.assessment, items: [{ code: fixtures.assessment.code, kind: 'numeric', value: 3 }] });
    expect(repeated.valueInteger).toBeUndefined();
    expect(repeated.component!.at(-1)).toMatchObject({ code: { text: 'Total score' }, valueInteger: 3 });
  });

  test('lab values: a Quantity only when the number prints back identically (or with its comparator)', () => {
    const report = labDiagnosticReport('p', {
      ...fixtures.labResult,
      results: [
        { testName: 'A', result: '98' },
        { testName: 'B', result: '98.0' },
        { testName: 'C', result: '<40' },
      ],
    });
    const values = (report.contained as Array<{ valueQuantity?: { value: number; comparator?: string }; valueString?: string }>).map((o) =>
      o.valueQuantity ? [o.valueQuantity.comparator, o.valueQuantity.value] : o.valueString,
    );
    // issue 27: a comparator value is a Quantity with its comparator (as the HL7 exports write it as SN), not text
    expect(values).toEqual([[undefined, 98], '98.0', ['<', 40]]);
  });
});
