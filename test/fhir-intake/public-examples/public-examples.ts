/**
 * The public example resources of the US Core and SDC implementation guides (copied verbatim into
 * us-core/ and sdc/ beside this file; origin, commit and licence in README.md) and the submissions
 * the tests build from them. Every change made to reach a chart patient or a form source of the demo
 * partner is one of the ADAPTATIONS below, applied here in code so the JSON files stay byte-for-byte
 * what the guides publish.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function example(path: string): Json {
  return JSON.parse(readFileSync(join(__dirname, path), 'utf8')) as Json;
}

/** The chart patient the lab examples are filed to (demo chart: MRN DEMO-000001 in DEMO-HOSP). */
export const CHART_PATIENT_ID = 'demo-patient-1';

/** What the tests change in the published examples, and why (the README lists the same). */
export const ADAPTATIONS = {
  labSubject:
    'DiagnosticReport, Observation, Specimen and ServiceRequest subject `Patient/example` -> `Patient/demo-patient-1` (a chart patient; the example patient is in no chart)',
  labIdentifier:
    'DiagnosticReport.identifier added (ACSN, system urn:us-core-example:accession, value = the example id + a run suffix): the examples carry none, and an accession number is what makes a lab result one result',
  narrativeWithoutDiv:
    'DiagnosticReport.text `{"status":"generated"}` removed: R4 Narrative.div is 1..1 (the IG publisher writes the div when it renders; the source file has none)',
  formSource:
    'QuestionnaireResponse.meta.source `demo-lab-forms` and identifier (system demo-lab-forms, value = the example id + a run suffix) added: the form source and submission id the form intake requires',
  formPatient:
    'the QuestionnaireResponse subject is sent as a Patient entry of a transaction Bundle with the same `Patient/<id>` (US Core: the published patient-example; SDC: a Patient with the name and birth date the response itself answers)',
} as const;

export const US_CORE_LAB_REPORTS = {
  cbc: {
    report: 'us-core/diagnosticreport-cbc.json',
    observations: ['leukocytes', 'erythrocytes', 'hemoglobin', 'hematocrit', 'mcv', 'mch', 'mchc', 'platelets'].map((n) => `us-core/observation-cbc-${n}.json`),
    /** the resources the report and its Observations reference that the guide publishes too */
    supporting: ['us-core/specimen-example-whole-blood.json'],
  },
  'metabolic-panel': {
    report: 'us-core/diagnosticreport-metabolic-panel.json',
    observations: ['sodium', 'potassium', 'creatinine', 'co2', 'chloride', 'calcium', 'bun', 'glucose'].map((n) => `us-core/observation-serum-${n}.json`),
    supporting: ['us-core/specimen-example-serum.json', 'us-core/servicerequest-bmp.json'],
  },
} as const;

export const QUESTIONNAIRE_RESPONSES = [
  'us-core/QuestionnaireResponse-phq-9-example.json',
  'us-core/QuestionnaireResponse-AUDIT-C.json',
  'sdc/QuestionnaireResponse-Cardiology-MariaSantos.json',
] as const;

const toChartPatient = (resource: Json): Json => ({ ...resource, subject: { ...resource.subject, reference: `Patient/${CHART_PATIENT_ID}` } });

/** A transaction Bundle: the DiagnosticReport, its Observations and the Specimen (and ServiceRequest) they reference, each as published but for ADAPTATIONS. */
export function labTransaction(
  name: keyof typeof US_CORE_LAB_REPORTS,
  accession: string,
): { bundle: Json; report: Json; observations: Json[]; supporting: Json[] } {
  const files = US_CORE_LAB_REPORTS[name];
  const { text: _narrative, ...published } = example(files.report);
  const report = toChartPatient({
    ...published,
    identifier: [
      {
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'ACSN' }] },
        system: 'urn:us-core-example:accession',
        value: accession,
      },
    ],
  });
  const observations = files.observations.map((file) => toChartPatient(example(file)));
  const supporting = files.supporting.map((file) => toChartPatient(example(file)));
  const entry = [report, ...observations, ...supporting].map((resource) => ({
    fullUrl: `http://hl7.org/fhir/us/core/${resource.resourceType}/${resource.id}`,
    resource,
    request: { method: 'POST', url: resource.resourceType },
  }));
  return { bundle: { resourceType: 'Bundle', type: 'transaction', entry }, report, observations, supporting };
}

/** The Patient a published QuestionnaireResponse is about, as a Bundle entry under the response's own subject reference. */
function formPatient(response: Json): Json {
  const [type, id] = String(response.subject.reference).split('/');
  if (type !== 'Patient' || !id) throw new Error(`unexpected subject ${String(response.subject.reference)}`);
  if (id === 'example') return example('us-core/patient-example.json');
  // SDC Cardiology-MariaSantos: the patient the response's own items name
  const answers = new Map<string, Json>();
  const walk = (items: Json[] = []) =>
    items.forEach((item) => {
      if (item.answer?.[0]) answers.set(item.linkId, item.answer[0]);
      walk(item.item);
      (item.answer ?? []).forEach((a: Json) => walk(a.item));
    });
  walk(response.item);
  return {
    resourceType: 'Patient',
    id,
    name: [{ family: answers.get('patient_surname')?.valueString, given: [answers.get('patient_firstname')?.valueString] }],
    birthDate: answers.get('patient_date_of_birth')?.valueDate,
  };
}

/** A transaction Bundle: the published QuestionnaireResponse (meta.source and identifier added) and its Patient. */
export function formTransaction(file: (typeof QUESTIONNAIRE_RESPONSES)[number], submissionId: string): { bundle: Json; response: Json; patient: Json } {
  const published = example(file);
  const response: Json = { ...published, meta: { ...published.meta, source: 'demo-lab-forms' }, identifier: { system: 'demo-lab-forms', value: submissionId } };
  const patient = formPatient(published);
  const entry = [patient, response].map((resource) => ({
    fullUrl: `http://example.org/fhir/${resource.resourceType}/${resource.id}`,
    resource,
    request: { method: 'POST', url: resource.resourceType },
  }));
  return { bundle: { resourceType: 'Bundle', type: 'transaction', entry }, response, patient };
}
