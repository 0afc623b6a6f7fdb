/**
 * The intake mapping is the inverse of the export: a lab result with every field of the lab model
 * (test/hl7/lab-model-export.fixtures.ts), exported as a DiagnosticReport (lib/fhir/lab-report.ts) and
 * mapped back, is the same record, field by field. What FHIR cannot carry is named: a time written to
 * the minute gets its seconds (FHIR dateTime), a cancelled test's value (the export writes none), the
 * ordering provider and OBR-25 as sent (kept in the ServiceRequest, not read back), the display text
 * of a number (rebuilt from the value as written: `6.90`).
 */
import type { LabTestSummary } from '../chart/types';
import { labDiagnosticReport } from '../fhir';
import { fullLabResult } from '../../test/hl7/lab-model-export.fixtures';
import { labResultErrors } from '../results/validation';
import { labResultFromReport } from './lab-report-mapping';
import { structuralIssues } from './structure';

/** a time to the minute as FHIR writes it (seconds added) */
const toSeconds = (t: string | undefined) => t?.replace(/T(\d{2}:\d{2})([Z+-])/, 'T$1:00$2');

describe('export -> intake round trip of the full lab model', () => {
  const exported = labDiagnosticReport('demo-patient-1', fullLabResult) as unknown as Record<string, unknown>;
  const mapped = labResultFromReport(exported, { sender: 'acme-lab', path: 'DiagnosticReport', now: new Date('2024-11-08T00:00:00Z') });

  it('the exported report passes the intake structure check and maps', () => {
    expect(structuralIssues(exported, 'DiagnosticReport')).toEqual([]);
    expect(mapped.ok).toBe(true);
  });

  it('report level: accession + namespace, placer, status, resulted at, universal service, collection, specimen, comments', () => {
    if (!mapped.ok) throw new Error('not mapped');
    const { data, subject } = mapped.mapping;
    const order = fullLabResult.order!;
    expect(subject).toEqual({ kind: 'chart', patientId: 'demo-patient-1', expression: 'DiagnosticReport.subject' });
    expect(data).toMatchObject({
      senderID: 'acme-lab',
      accessionNumber: fullLabResult.accessionNumber,
      status: 'final',
      ResultedDateUTC: fullLabResult.resultedAt,
    });
    expect(data.order).toEqual({
      placerOrderNumber: order.placerOrderNumber,
      accessionNamespace: order.accessionNamespace,
      universalService: order.universalService,
      collectedAt: toSeconds(order.collectedAt),
      specimen: { ...order.specimen, collectedAt: toSeconds(order.specimen!.collectedAt) },
      comments: order.comments,
    });
  });

  it('every test: name, codes, typed value, units, flags, range, status, time, performer, comments', () => {
    if (!mapped.ok) throw new Error('not mapped');
    const results = mapped.mapping.data.results as LabTestSummary[];
    expect(results).toHaveLength(fullLabResult.results.length);
    fullLabResult.results.forEach((sent, i) => {
      const back = results[i]!;
      const cancelled = sent.observationStatus === 'X';
      const expected: Partial<LabTestSummary> = {
        testName: sent.testName,
        code: sent.code,
        codeSystem: sent.codeSystem,
        alternateCode: sent.alternateCode,
        units: cancelled ? undefined : sent.units,
        unitsCode: cancelled ? undefined : sent.unitsCode,
        referenceRange: sent.referenceRange,
        abnormalFlags: sent.abnormalFlags,
        observationStatus: sent.observationStatus === 'F' ? undefined : sent.observationStatus,
        observedAt: toSeconds(sent.observedAt),
        performingOrganization: sent.performingOrganization,
        comments: sent.comments,
        ...(cancelled
          ? { result: '' }
          : {
              valueType: sent.valueType,
              numericValue: sent.numericValue,
              structuredNumeric: sent.structuredNumeric,
              codedValue: sent.codedValue,
              textLines: sent.textLines,
              // the display text of a typed value is rebuilt from the value (`6.9` written `6.90`: the value as sent)
              result: sent.valueType === 'NM' ? sent.numericValue : sent.result,
            }),
      };
      const defined = Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined));
      expect({ i, ...back }).toEqual({ i, ...defined });
    });
  });
});

describe('a code sent without a display, issued with an offset, month and year times: kept for the exports', () => {
  const testNames = (observations: Array<Record<string, unknown>>) => {
    const report = {
      resourceType: 'DiagnosticReport',
      identifier: [{ value: 'ACC-ND' }],
      status: 'final',
      category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'LAB' }] }],
      code: { coding: [{ system: 'http://loinc.org', code: '24323-8' }] },
      subject: { reference: 'Patient/demo-patient-1' },
      effectiveDateTime: '2024-03',
      issued: '2024-03-01T10:15:00-05:00',
      contained: observations.map((o, i) => ({
        resourceType: 'Observation',
        id: `o${i}`,
        status: 'final',
        category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
        valueString: 'x',
        ...o,
      })),
      result: observations.map((_, i) => ({ reference: `#o${i}` })),
    };
    return labResultFromReport(report, { sender: 'acme-lab', path: 'DiagnosticReport', now: new Date('2024-11-08T00:00:00Z') });
  };

  it('a report effectivePeriod keeps its end (order.collectedEndAt)', () => {
    const mapped = labResultFromReport(
      {
        resourceType: 'DiagnosticReport',
        identifier: [{ value: 'ACC-24H' }],
        status: 'final',
        category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'LAB' }] }],
        code: { text: '24 hour urine' },
        subject: { reference: 'Patient/demo-patient-1' },
        effectivePeriod: { start: '2024-03-01T07:00:00-06:00', end: '2024-03-02T07:00:00-06:00' },
        contained: [
          {
            resourceType: 'Observation',
            id: 'o',
            status: 'final',
            category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
            code: { text: 'Creatinine' },
            valueString: '1.2',
          },
        ],
        result: [{ reference: '#o' }],
      },
      { sender: 'acme-lab', path: 'DiagnosticReport', now: new Date('2024-11-08T00:00:00Z') },
    );
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.issues));
    expect(mapped.mapping.data.order).toEqual({ collectedAt: '2024-03-01T07:00:00-06:00', collectedEndAt: '2024-03-02T07:00:00-06:00' });
  });

  it('maps the coding without display to testNameFrom, takes YYYY and YYYY-MM effective times (no us-core-1 refusal), keeps issued as written', () => {
    const mapped = testNames([
      { code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] }, effectiveDateTime: '2024' },
      { code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }], text: 'Glucose' }, effectiveDateTime: '2024-02' },
      { code: { coding: [{ system: 'http://loinc.org', code: '2345-7', display: 'Glucose [Mass/volume]' }] } },
      { code: { coding: [{ system: 'http://loinc.org', code: '718-7', display: 'Hemoglobin [Mass/volume] in Blood' }], text: 'Hemoglobin, Blood' } },
      { code: { coding: [{ system: 'http://loinc.org', code: '718-7', display: 'Hemoglobin' }], text: 'Hemoglobin' } },
    ]);
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.issues));
    const results = mapped.mapping.data.results as LabTestSummary[];
    expect(results.map((r) => [r.testName, r.testNameFrom, r.observedAt])).toEqual([
      ['2345-7', 'code', '2024'],
      ['Glucose', 'text', '2024-02'],
      ['Glucose [Mass/volume]', undefined, undefined],
      ['Hemoglobin, Blood', 'text', undefined],
      ['Hemoglobin', undefined, undefined],
    ]);
    expect(results.map((r) => r.codeDisplay)).toEqual([undefined, undefined, undefined, 'Hemoglobin [Mass/volume] in Blood', undefined]);
    expect(mapped.mapping.data.ResultedDateUTC).toBe('2024-03-01T15:15:00.000Z');
    expect(mapped.mapping.data.order).toMatchObject({ collectedAt: '2024-03', reportedAt: '2024-03-01T10:15:00-05:00' });
  });
});

describe('the leftovers: report performer, an Observation period end, its own issued, range units', () => {
  const base = {
    resourceType: 'DiagnosticReport',
    identifier: [{ value: 'ACC-LEFT' }],
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'LAB' }] }],
    code: { text: 'Panel' },
    subject: { reference: 'Patient/demo-patient-1' },
    effectiveDateTime: '2024-03-01T07:00:00-06:00',
    issued: '2024-03-01T12:00:00Z',
  };
  const observation = (extra: Record<string, unknown>) => ({
    resourceType: 'Observation',
    id: 'o',
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
    code: { text: 'Creatinine clearance' },
    valueQuantity: { value: 98, unit: 'mL/min', system: 'http://unitsofmeasure.org', code: 'mL/min' },
    ...extra,
  });
  const map = (report: Record<string, unknown>) =>
    labResultFromReport(report, { sender: 'acme-lab', path: 'DiagnosticReport', now: new Date('2024-11-08T00:00:00Z') });

  it('a performer by reference to a contained Organization: its name and first identifier; the sender by name alone is none', () => {
    const mapped = map({
      ...base,
      performer: [{ reference: '#lab' }, { display: 'Second Lab' }],
      contained: [
        {
          resourceType: 'Organization',
          id: 'lab',
          name: 'Acme Reference Laboratory',
          identifier: [{ system: 'urn:oid:2.16.840.1.113883.4.7', value: '05D0642827' }],
        },
        observation({}),
      ],
      result: [{ reference: '#o' }],
    });
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.issues));
    expect((mapped.mapping.data.order as Record<string, unknown>).performer).toEqual([
      { name: 'Acme Reference Laboratory', identifier: { id: '05D0642827', namespace: 'urn:oid:2.16.840.1.113883.4.7' } },
      { name: 'Second Lab' },
    ]);
    const senderOnly = map({ ...base, performer: [{ display: 'acme-lab' }], contained: [observation({})], result: [{ reference: '#o' }] });
    if (!senderOnly.ok) throw new Error(JSON.stringify(senderOnly.issues));
    expect(senderOnly.mapping.data.order).toStrictEqual({ collectedAt: base.effectiveDateTime });
  });

  it('an Observation effectivePeriod keeps its end (not one before its start), its own issued, its range bounds in their own UCUM units', () => {
    const mapped = map({
      ...base,
      contained: [
        observation({
          effectivePeriod: { start: '2024-03-01T07:00:00-06:00', end: '2024-03-02T07:00:00-06:00' },
          issued: '2024-03-02T09:00:00-06:00',
          referenceRange: [
            {
              low: { value: 1.5, unit: 'mL/s', system: 'http://unitsofmeasure.org', code: 'mL/s' },
              high: { value: 2.2, unit: 'mL/s', system: 'http://unitsofmeasure.org', code: 'mL/s' },
            },
          ],
        }),
      ],
      result: [{ reference: '#o' }],
    });
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.issues));
    expect((mapped.mapping.data.results as LabTestSummary[])[0]).toMatchObject({
      observedAt: '2024-03-01T07:00:00-06:00',
      observedEndAt: '2024-03-02T07:00:00-06:00',
      reportedAt: '2024-03-02T09:00:00-06:00',
      referenceRange: '1.5-2.2',
      referenceRangeUnits: 'mL/s',
      referenceRangeUnitsCode: 'mL/s',
    });
    const backwards = map({
      ...base,
      contained: [observation({ effectivePeriod: { start: '2024-03-02T07:00:00-06:00', end: '2024-03-01T07:00:00-06:00' } })],
      result: [{ reference: '#o' }],
    });
    if (!backwards.ok) throw new Error(JSON.stringify(backwards.issues));
    expect((backwards.mapping.data.results as LabTestSummary[])[0]!.observedEndAt).toBeUndefined();
  });

  it('issue 41: referenceRange type / appliesTo / age and a performer identifier are kept; parts the lab model would refuse are left out, never refused', () => {
    const long = 'x'.repeat(300);
    const mapped = map({
      ...base,
      contained: [
        observation({
          performer: [
            {
              display: 'North Lab',
              identifier: { system: long, value: 'N-1', type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'XX' }] } },
            },
          ],
          referenceRange: [
            {
              text: '1.5-2.2',
              type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/referencerange-meaning', code: 'normal', display: long }], text: 'Normal' },
              appliesTo: [{ text: 'Female' }, { coding: [{ code: long }] }],
              age: { low: { value: 18, unit: 'years', system: 'http://unitsofmeasure.org', code: 'a' }, high: { value: 1e40, unit: 'years' } },
            },
          ],
        }),
      ],
      result: [{ reference: '#o' }],
    });
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.issues));
    expect((mapped.mapping.data.results as LabTestSummary[])[0]).toMatchObject({
      performingOrganization: 'North Lab',
      performingOrganizationIdentifier: { id: 'N-1', type: 'XX' },
      referenceRangeType: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/referencerange-meaning', code: 'normal' }], text: 'Normal' },
      referenceRangeAppliesTo: [{ text: 'Female' }],
      referenceRangeAge: { low: { value: '18', unit: 'years', code: 'a' } },
    });
    const test = (mapped.mapping.data.results as LabTestSummary[])[0]!;
    expect(test.performingOrganizationIdentifier?.namespace).toBeUndefined();
    expect(test.referenceRangeAge?.high).toBeUndefined();
  });

  it('a second coding of a coded value the lab model would refuse (a code over 64 characters) is left out, never refused; one it takes is kept', () => {
    const concept = (second: string) => ({
      coding: [
        { system: 'http://snomed.info/sct', code: '260385009', display: 'Negative' },
        { system: 'http://acme.example/codes', code: second },
      ],
    });
    const long = map({
      ...base,
      contained: [observation({ valueQuantity: undefined, valueCodeableConcept: concept('L'.repeat(80)) })],
      result: [{ reference: '#o' }],
    });
    if (!long.ok) throw new Error(JSON.stringify(long.issues));
    const refused = (long.mapping.data.results as LabTestSummary[])[0]!;
    expect(refused.codedValue).toMatchObject({ code: '260385009' });
    expect(refused.codedValueAlternate).toBeUndefined();
    // the lab model takes what is kept (this unit's body has no patient: only the coded value's errors matter here)
    const errors = labResultErrors(long.mapping, new Date('2024-11-08T00:00:00Z')).map((e) => ('pointer' in e ? e.pointer : ''));
    expect(errors.filter((pointer) => pointer.includes('codedValue'))).toEqual([]);
    const short = map({ ...base, contained: [observation({ valueQuantity: undefined, valueCodeableConcept: concept('NEG') })], result: [{ reference: '#o' }] });
    if (!short.ok) throw new Error(JSON.stringify(short.issues));
    expect((short.mapping.data.results as LabTestSummary[])[0]!.codedValueAlternate).toMatchObject({ code: 'NEG' });
  });
});

describe('the subject names a patient of this service only', () => {
  const exported = labDiagnosticReport('demo-patient-1', fullLabResult) as unknown as Record<string, unknown>;
  const map = (reference: string) =>
    labResultFromReport({ ...exported, subject: { reference } }, { sender: 'acme-lab', path: 'DiagnosticReport', now: new Date('2024-11-08T00:00:00Z') });

  it('Patient/<id> is the chart patient the report names', () => {
    const mapped = map('Patient/demo-patient-1');
    expect(mapped.ok && mapped.mapping.subject).toEqual({ kind: 'chart', patientId: 'demo-patient-1', expression: 'DiagnosticReport.subject' });
  });

  it.each(['https://other.example/fhir/Patient/demo-patient-1', 'http://127.0.0.1:3000/fhir/Patient/demo-patient-1/_history/2'])(
    'an absolute URL of another server (%s) is refused, naming the field',
    (reference) => {
      const mapped = map(reference);
      expect(mapped.ok).toBe(false);
      if (!mapped.ok)
        expect(mapped.issues).toEqual([
          expect.objectContaining({ expression: 'DiagnosticReport.subject.reference', message: expect.stringContaining('another server') }),
        ]);
    },
  );
});
