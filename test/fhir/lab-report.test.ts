/**
 * Issue 27: a lab result with every field of the lab model as a DiagnosticReport with contained
 * Observations, ServiceRequest and Specimen: element by element, valid R4 (test/fhir/r4-validator.ts),
 * and checked against the rules of the US Core Laboratory Result Observation and DiagnosticReport
 * (Lab) profiles written out below (the installed packages hold no US Core lab StructureDefinitions,
 * so these are checked by hand, not by a profile validator).
 */
import type { DiagnosticReport, Observation, Resource, ServiceRequest, Specimen } from '@medplum/fhirtypes';
import type { LabResultSummary } from '../../lib/chart/types';
import { labDiagnosticReport } from '../../lib/fhir';
import { labResult } from '../hl7/chart-fixtures';
import { fullLabResult } from '../hl7/lab-model-export.fixtures';
import { r4Errors } from './r4-validator';

const LOINC = 'http://loinc.org';
const UCUM = 'http://unitsofmeasure.org';
const INTERPRETATION = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';
const OBSERVATION_STATUS = ['registered', 'preliminary', 'final', 'amended', 'corrected', 'cancelled', 'entered-in-error', 'unknown'];
const REPORT_STATUS = ['registered', 'partial', 'preliminary', 'final', 'amended', 'corrected', 'appended', 'cancelled', 'entered-in-error', 'unknown'];
/** US Core us-core-1 (lab Observation effective): a dateTime at least to the day. */
const AT_LEAST_DAY = /^\d{4}-\d{2}-\d{2}/;

/** The US Core Laboratory Result Observation rules (required elements, fixed slices, invariants). */
function usCoreLabObservationErrors(o: Observation): string[] {
  const errors: string[] = [];
  if (!OBSERVATION_STATUS.includes(o.status)) errors.push('status');
  const lab = (o.category ?? []).some((c) =>
    (c.coding ?? []).some((x) => x.system === 'http://terminology.hl7.org/CodeSystem/observation-category' && x.code === 'laboratory'),
  );
  if (!lab) errors.push('category: no laboratory slice');
  if (!o.code?.coding?.length && !o.code?.text) errors.push('code');
  if (!o.subject?.reference?.startsWith('Patient/')) errors.push('subject: a Patient');
  if (o.effectiveDateTime !== undefined && !AT_LEAST_DAY.test(o.effectiveDateTime)) errors.push('us-core-1: effective at least to the day');
  const hasValue = Object.keys(o).some((k) => k.startsWith('value'));
  if (!hasValue && !o.dataAbsentReason && !o.component && !o.hasMember) errors.push('us-core-2: a value or a dataAbsentReason');
  if (hasValue && o.dataAbsentReason) errors.push('obs-6: dataAbsentReason only without a value');
  if (o.valueQuantity && o.valueQuantity.code && o.valueQuantity.system !== UCUM) errors.push('valueQuantity: a coded unit is UCUM');
  return errors;
}

/** The US Core DiagnosticReport Profile for Laboratory Results Reporting rules. */
function usCoreLabReportErrors(r: DiagnosticReport): string[] {
  const errors: string[] = [];
  if (!REPORT_STATUS.includes(r.status)) errors.push('status');
  const lab = (r.category ?? []).some((c) => (c.coding ?? []).some((x) => x.system === 'http://terminology.hl7.org/CodeSystem/v2-0074' && x.code === 'LAB'));
  if (!lab) errors.push('category: no LAB slice');
  if (!r.code?.coding?.length && !r.code?.text) errors.push('code');
  if (!r.subject?.reference?.startsWith('Patient/')) errors.push('subject: a Patient');
  if (r.effectiveDateTime === undefined && r.effectivePeriod === undefined) errors.push('effective[x] is required');
  for (const id of r.identifier ?? []) if (!id.system) errors.push('identifier without a system');
  for (const ref of r.result ?? []) {
    const target = r.contained?.find((c) => `#${c.id}` === ref.reference);
    if (target?.resourceType !== 'Observation') errors.push(`result ${ref.reference} is no contained Observation`);
    else errors.push(...usCoreLabObservationErrors(target).map((e) => `${ref.reference}: ${e}`));
  }
  return errors;
}

function contained<T extends Resource>(r: DiagnosticReport, type: T['resourceType']): T[] {
  return (r.contained ?? []).filter((c): c is T => c.resourceType === type);
}

describe('a lab result with every field of the lab model', () => {
  const report = labDiagnosticReport('demo-patient-1', fullLabResult);
  const observations = contained<Observation>(report, 'Observation');
  const [potassium, troponin, glucose, ana, hbsag, text, lipase] = observations;

  test('valid R4 (0 errors) and meets the US Core lab rules', () => {
    expect(r4Errors(report)).toEqual([]);
    expect(usCoreLabReportErrors(report)).toEqual([]);
  });

  test('DiagnosticReport: identifiers with systems, code from the universal service, effective = collection time, issued, specimen, basedOn', () => {
    expect(report.identifier).toEqual([
      expect.objectContaining({ system: 'urn:interop:sender:acme-lab:accession:ACME_LIS', value: 'A24-1107-0042' }),
      expect.objectContaining({ system: 'urn:interop:sender:acme-lab:placer:CLINIC_EHR', value: 'ORD-7781' }),
    ]);
    expect(report.identifier?.map((i) => i.type?.coding?.[0]?.code)).toEqual(['ACSN', 'PLAC']);
    expect(report.code.coding).toEqual([{ system: LOINC, code: '24323-8', display: 'Comprehensive metabolic panel' }]);
    expect(report.effectiveDateTime).toBe('2024-11-07T08:30:00-06:00');
    expect(report.issued).toBe('2024-11-07T16:05:00Z');
    expect(report.specimen).toEqual([{ reference: '#specimen' }]);
    expect(report.basedOn).toEqual([{ reference: '#order' }]);
    expect(report.result).toHaveLength(7);
    expect(report.id!.length).toBeLessThanOrEqual(64);
  });

  test('ServiceRequest (the order): placer, code, requester in the sender system, order comments as note', () => {
    const [order] = contained<ServiceRequest>(report, 'ServiceRequest');
    expect(order?.status).toBe('completed');
    expect(order?.requester).toEqual({ identifier: { system: 'urn:interop:sender:acme-lab:clinician', value: '1234567890' }, display: 'Dr Ada Okafor' });
    expect(order?.note).toEqual([{ text: 'Patient fasting 12 hours.' }]);
  });

  test('Specimen: type, collection time with its precision and offset, the lab id', () => {
    const [specimen] = contained<Specimen>(report, 'Specimen');
    expect(specimen?.type?.coding).toEqual([{ system: 'http://snomed.info/sct', code: '119364003', display: 'Serum specimen' }]);
    expect(specimen?.collection?.collectedDateTime).toBe('2024-11-07T08:30:00-06:00');
    expect(specimen?.identifier?.[0]?.value).toBe('SPC-99812');
  });

  test('NM: LOINC + alternate code, valueQuantity with UCUM and its written precision, interpretation, range, note, performer', () => {
    expect(potassium?.code.coding).toEqual([
      { system: LOINC, code: '2823-3', display: 'Potassium' },
      { system: 'urn:interop:sender:acme-lab:code:99ACM', code: 'K', display: 'Potassium' },
    ]);
    expect(potassium?.valueQuantity).toMatchObject({ value: 6.9, unit: 'mmol/L', system: UCUM, code: 'mmol/L' });
    expect((potassium?.valueQuantity as { _value?: { extension?: Array<{ valueInteger?: number }> } })._value?.extension?.[0]?.valueInteger).toBe(2);
    expect(potassium?.interpretation?.map((i) => [i.coding?.[0]?.system, i.coding?.[0]?.code])).toEqual([
      [INTERPRETATION, 'HH'],
      [INTERPRETATION, 'A'],
    ]);
    expect(potassium?.referenceRange?.[0]).toMatchObject({ text: '3.5-5.1', low: { value: 3.5, system: UCUM }, high: { value: 5.1 } });
    expect(potassium?.note).toEqual([{ text: 'Critical value called to Dr Okafor at 10:02.' }, { text: 'Repeat on new draw advised.' }]);
    expect(potassium?.performer).toEqual([{ display: 'Acme Reference Laboratory' }]);
    expect(potassium?.effectiveDateTime).toBe('2024-11-07T09:10:00-06:00');
    expect(potassium?.status).toBe('final');
    expect(potassium?.specimen).toEqual({ reference: '#specimen' });
  });

  test('SN: comparator, range, ratio; statuses corrected and entered-in-error; a date stays a date', () => {
    expect(troponin?.valueQuantity).toMatchObject({ value: 0.01, comparator: '<', system: UCUM, code: 'ng/mL' });
    expect(troponin?.status).toBe('corrected');
    expect(troponin?.effectiveDateTime).toBe('2024-11-07');
    expect(glucose?.valueRange).toMatchObject({ low: { value: 10, code: 'mg/dL' }, high: { value: 20, code: 'mg/dL' } });
    expect(glucose?.status).toBe('entered-in-error');
    expect(ana?.valueRatio).toEqual({ numerator: { value: 1 }, denominator: { value: 160 } });
  });

  test('CWE as valueCodeableConcept, TX lines as valueString, a cancelled result without a value', () => {
    expect(hbsag?.valueCodeableConcept).toEqual({ coding: [{ system: 'http://snomed.info/sct', code: '260385009', display: 'Negative' }], text: 'Negative' });
    expect(text?.valueString).toBe('Line one\nLine two');
    expect(text?.code.coding?.[0]?.system).toBe('urn:interop:sender:acme-lab:code:99ACM');
    expect(lipase?.status).toBe('cancelled');
    expect(lipase?.valueQuantity).toBeUndefined();
    expect(lipase?.dataAbsentReason?.coding?.[0]?.code).toBe('not-performed');
    expect(lipase?.note).toEqual([{ text: 'Specimen hemolyzed; test cannot be performed.' }]);
  });
});

describe('a record without the new fields', () => {
  const old: LabResultSummary = { ...labResult, resultId: 'lr_0123456789abcdef0123456789abcdef', senderId: 'demo-lab' };
  const report = labDiagnosticReport('demo-patient-1', old);

  test('valid R4 and the US Core lab rules; comment rows are a note, never an Observation', () => {
    expect(r4Errors(report)).toEqual([]);
    expect(usCoreLabReportErrors(report)).toEqual([]);
    const observations = contained<Observation>(report, 'Observation');
    expect(observations.map((o) => o.code.text)).toEqual(['Hemoglobin A1c', 'Glucose']);
    expect(contained<ServiceRequest>(report, 'ServiceRequest')[0]?.note).toEqual([{ text: 'Comment: Specimen slightly hemolyzed' }]);
  });

  test('values as before (a plain decimal as a Quantity), `<40` typed as a Quantity with its comparator; effective = resulted at', () => {
    const [a1c, glucose] = contained<Observation>(report, 'Observation');
    expect(a1c?.valueQuantity).toEqual({ value: 7.2, unit: '%' });
    expect(glucose?.valueQuantity).toEqual({ value: 40, comparator: '<', unit: 'mg/dL' });
    expect(report.effectiveDateTime).toBe(old.resultedAt);
    expect(report.code.coding?.[0]).toEqual({ system: 'urn:interop:local-code', code: 'LAB', display: 'Laboratory result' });
    expect(report.identifier?.[0]?.system).toBe('urn:interop:sender:demo-lab:accession');
  });
});

describe('issue 27 K5 / K6: an alternate-only code and the documents of a result', () => {
  const lab: LabResultSummary = {
    ...fullLabResult,
    results: [{ testName: 'Accession Number', result: 'A-1', valueType: 'ST', alternateCode: { code: '99717-5', display: 'Accession Number', system: 'L' } }],
    documents: [
      { name: 'Short report', type: 'text/plain', source: 'text', bytes: 11, data: 'Two\nlines.' },
      { name: 'Full report', type: 'application/pdf', source: 'base64', bytes: 40_000 },
    ],
  };
  const report = labDiagnosticReport('demo-patient-1', lab, { serviceBaseUrl: 'https://interop.example' });

  test('valid R4 (0 errors) and meets the US Core lab rules', () => {
    expect(r4Errors(report)).toEqual([]);
    expect(usCoreLabReportErrors(report)).toEqual([]);
  });

  test('the alternate code is the only coding, no code.text and no invented primary code', () => {
    const [observation] = contained<Observation>(report, 'Observation');
    expect(observation?.code).toEqual({ coding: [{ system: 'urn:interop:sender:acme-lab:code:L', code: '99717-5', display: 'Accession Number' }] });
  });

  test('presentedForm: a small document whole (data), a large one by url to its single-result export', () => {
    expect(report.presentedForm).toEqual([
      { contentType: 'text/plain', data: Buffer.from('Two\nlines.', 'utf8').toString('base64'), size: 11, title: 'Short report' },
      {
        contentType: 'application/pdf',
        url: `https://interop.example/exportHl7LabResult?resultId=${fullLabResult.resultId}`,
        size: 40_000,
        title: 'Full report',
      },
    ]);
  });
});
