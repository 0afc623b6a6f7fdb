/**
 * One request per HTTP endpoint on its common (success) path, used by the cold start invocation,
 * the call counts, the warm latency runs and the load runs.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { HttpEndpoints, type HttpEndpoint } from '../lib/config/service';
import { randomUUID } from 'node:crypto';
import { questionnaireResponse, smallReport } from '../test/fhir-intake/fixtures';
import { BENCH_KEYS, DEMO, formPacketBody, labResultBody, type BenchKey, type RequestSpec } from './fixtures';

export interface Scenario {
  endpoint: HttpEndpoint;
  key: BenchKey;
  /** what this request exercises */
  path: string;
  /** request `n` (unique bodies where the endpoint stores something) */
  request(n: number): RequestSpec;
  okStatus: number[];
}

let unique = 0;
const runTag = Date.now().toString(36);
/** A fresh suffix for bodies that must not repeat (stored results, form submissions). */
export function freshId(): string {
  unique += 1;
  return `${runTag}-${unique}`;
}

/** Set by the bench once it has created inbox packets (getInboxPacket needs one). */
export const inboxState: { packetId?: string; routablePacketIds: string[] } = { routablePacketIds: [] };

const UNKNOWN_HEX = '0123456789abcdef0123456789abcdef';
/** lib/intake/held-records.ts: held-<14 digits>-<24 hex> */
const UNKNOWN_HELD_ID = 'held-20240301093000-0123456789abcdef01234567';

const FHIR_JSON = { 'content-type': 'application/fhir+json' };

/** An ORU^R01 from the demo lab's LIS for a chart patient (as test/integration/hl7-acks.test.ts sends). */
function oruMessage(id: string): string {
  return (
    [
      `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${id}|P|2.5.1`,
      'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex',
      `OBR|1||ACC-${id}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
      'OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F',
    ].join('\r') + '\r'
  );
}

const SCENARIOS: Record<string, Omit<Scenario, 'endpoint'>> = {
  exportHl7PatientAdt: { key: BENCH_KEYS.export, path: 'patient found', request: () => ({ query: { patientId: DEMO.patientId } }), okStatus: [200] },
  exportHl7PatientSummary: {
    key: BENCH_KEYS.export,
    path: 'patient found, default limit 20',
    request: () => ({ query: { patientId: DEMO.patientId } }),
    okStatus: [200],
  },
  exportHl7Encounter: {
    key: BENCH_KEYS.export,
    path: 'encounter found',
    request: () => ({ query: { patientId: DEMO.patientId, encounterId: DEMO.encounterId } }),
    okStatus: [200],
  },
  exportHl7Note: {
    key: BENCH_KEYS.export,
    path: 'note found (names an encounter)',
    request: () => ({ query: { patientId: DEMO.patientId, noteId: DEMO.noteId } }),
    okStatus: [200],
  },
  exportHl7Assessment: {
    key: BENCH_KEYS.export,
    path: 'assessment found',
    request: () => ({ query: { patientId: DEMO.patientId, assessmentId: DEMO.assessmentId } }),
    okStatus: [200],
  },
  receiveTestData: {
    key: BENCH_KEYS.results,
    path: 'new result, no x-request-id',
    request: () => ({ body: JSON.stringify(labResultBody(freshId())) }),
    okStatus: [200],
  },
  receiveFormIntakeScope: {
    key: BENCH_KEYS.forms,
    path: 'new packet for a known patient (routed, 202)',
    request: () => ({ body: JSON.stringify(formPacketBody(freshId())) }),
    okStatus: [202],
  },
  listInteropInbox: { key: BENCH_KEYS.inbox, path: 'default state pending_review', request: () => ({}), okStatus: [200] },
  getInboxPacket: {
    key: BENCH_KEYS.inbox,
    path: 'packet in the inbox',
    request: () => ({ pathParameters: { packetId: inboxState.packetId ?? 'fp_0123456789abcdef0123456789abcdef' } }),
    okStatus: [200],
  },
  routeInboxPacket: {
    key: BENCH_KEYS.inbox,
    path: 'route a pending_review packet',
    request: () => ({
      pathParameters: { packetId: inboxState.routablePacketIds.shift() ?? 'fp_0123456789abcdef0123456789abcdef' },
      body: JSON.stringify({ patientId: DEMO.patientId }),
    }),
    okStatus: [200],
  },
  // FHIR reads (warm latency: Patient read and $everything; the others for cold start and call counts)
  fhirMetadata: { key: BENCH_KEYS.fhir, path: 'CapabilityStatement', request: () => ({}), okStatus: [200] },
  fhirPatientRead: { key: BENCH_KEYS.fhir, path: 'patient found', request: () => ({ pathParameters: { id: DEMO.patientId } }), okStatus: [200] },
  fhirPatientEverything: {
    key: BENCH_KEYS.fhir,
    path: 'first page, _count 20 (Patient + chart records + lab results, newest first)',
    request: () => ({ pathParameters: { id: DEMO.patientId }, query: { _count: '20' } }),
    okStatus: [200],
  },
  fhirEncounterRead: {
    key: BENCH_KEYS.fhir,
    path: 'encounter found',
    request: () => ({ pathParameters: { id: `${DEMO.patientId}..${DEMO.encounterId}` } }),
    okStatus: [200],
  },
  fhirEncounterSearch: { key: BENCH_KEYS.fhir, path: 'patient with 3 encounters', request: () => ({ query: { patient: DEMO.patientId } }), okStatus: [200] },
  fhirDocumentReferenceRead: {
    key: BENCH_KEYS.fhir,
    path: 'note found',
    request: () => ({ pathParameters: { id: `${DEMO.patientId}..${DEMO.noteId}` } }),
    okStatus: [200],
  },
  fhirDocumentReferenceSearch: { key: BENCH_KEYS.fhir, path: 'patient with 3 notes', request: () => ({ query: { patient: DEMO.patientId } }), okStatus: [200] },
  fhirObservationRead: {
    key: BENCH_KEYS.fhir,
    path: 'assessment found',
    request: () => ({ pathParameters: { id: `${DEMO.patientId}..${DEMO.assessmentId}` } }),
    okStatus: [200],
  },
  fhirDiagnosticReportRead: {
    key: BENCH_KEYS.fhir,
    path: 'unknown result (404; one GetItem)',
    request: () => ({ pathParameters: { id: `${DEMO.patientId}..lr.5F0123456789abcdef0123456789abcdef` } }),
    okStatus: [404],
  },
  fhirDiagnosticReportSearch: {
    key: BENCH_KEYS.fhir,
    path: "the patient's lab results",
    request: () => ({ query: { patient: DEMO.patientId } }),
    okStatus: [200],
  },
  // the endpoints below have a scenario for the cold-start event only (bench/cold-start.ts): a request
  // that passes validation and reaches the function's first SDK call (ids of the right format; an
  // unknown one answers 404 after its read)
  exportHl7LabResult: {
    key: BENCH_KEYS.export,
    path: 'unknown result (404; one read)',
    request: () => ({ query: { resultId: `lr_${UNKNOWN_HEX}` } }),
    okStatus: [404],
  },
  listHeldRecords: { key: BENCH_KEYS.inbox, path: 'default state held', request: () => ({}), okStatus: [200] },
  getHeldRecord: {
    key: BENCH_KEYS.inbox,
    path: 'unknown held record (404; one read)',
    request: () => ({ pathParameters: { heldId: UNKNOWN_HELD_ID } }),
    okStatus: [404],
  },
  routeHeldRecord: {
    key: BENCH_KEYS.inbox,
    path: 'unknown held record (404)',
    request: () => ({ pathParameters: { heldId: UNKNOWN_HELD_ID }, body: JSON.stringify({ patientId: DEMO.patientId }) }),
    okStatus: [404],
  },
  searchHeldPatients: {
    key: BENCH_KEYS.inbox,
    path: 'unknown held record (404)',
    request: () => ({ pathParameters: { heldId: UNKNOWN_HELD_ID }, body: JSON.stringify({ mrn: 'MRN-1001' }) }),
    okStatus: [404],
  },
  searchInboxPatients: {
    key: BENCH_KEYS.inbox,
    path: 'unknown packet (404)',
    request: () => ({ pathParameters: { packetId: `fp_${UNKNOWN_HEX}` }, body: JSON.stringify({ mrn: 'MRN-1001' }) }),
    okStatus: [404],
  },
  getInboxCandidates: {
    key: BENCH_KEYS.inbox,
    path: 'unknown packet (404)',
    request: () => ({ pathParameters: { packetId: `fp_${UNKNOWN_HEX}` } }),
    okStatus: [404],
  },
  receiveHl7: {
    key: BENCH_KEYS.hl7,
    path: 'ORU^R01 for a chart patient (cold start only)',
    request: () => ({ headers: { 'content-type': 'application/hl7-v2' }, body: oruMessage(freshId()) }),
    okStatus: [200],
  },
  receiveFhirDiagnosticReport: {
    key: BENCH_KEYS.fhirIngest,
    path: 'US Core lab report (cold start only)',
    request: () => ({ headers: FHIR_JSON, body: JSON.stringify(smallReport(`BENCH-${freshId()}`)) }),
    okStatus: [200, 201],
  },
  receiveFhirQuestionnaireResponse: {
    key: BENCH_KEYS.fhirIngest,
    path: 'SDC QuestionnaireResponse (cold start only)',
    request: () => ({ headers: FHIR_JSON, body: JSON.stringify(questionnaireResponse(`BENCH-${freshId()}`)) }),
    okStatus: [200, 201],
  },
  receiveFhirBundle: {
    key: BENCH_KEYS.fhirIngest,
    path: 'transaction of one QuestionnaireResponse (cold start only)',
    request: () => ({
      headers: FHIR_JSON,
      body: JSON.stringify({
        resourceType: 'Bundle',
        type: 'transaction',
        identifier: { system: 'urn:demo-lab:bundles', value: `BENCH-${freshId()}` },
        entry: [
          {
            fullUrl: `urn:uuid:${randomUUID()}`,
            resource: questionnaireResponse(`BENCH-${freshId()}`),
            request: { method: 'POST', url: 'QuestionnaireResponse' },
          },
        ],
      }),
    }),
    okStatus: [200],
  },
  fhirPatientSearch: { key: BENCH_KEYS.fhir, path: 'by _id', request: () => ({ query: { _id: DEMO.patientId } }), okStatus: [200] },
  fhirObservationSearch: { key: BENCH_KEYS.fhir, path: "the patient's observations", request: () => ({ query: { patient: DEMO.patientId } }), okStatus: [200] },
};

export function scenarioFor(name: string): Scenario | undefined {
  const endpoint = HttpEndpoints.find((e) => e.name === name);
  const s = SCENARIOS[name];
  return endpoint && s ? { endpoint, ...s } : undefined;
}

export const LAB_INTAKE = 'receiveTestData';

/** The lab intake exists when its function file exists and it is in the endpoint list. */
export function labIntakePresent(root: string): boolean {
  return existsSync(path.join(root, 'functions', `${LAB_INTAKE}.ts`)) && HttpEndpoints.some((e) => e.name === LAB_INTAKE);
}

/** A form packet for an unknown patient id: held in the inbox (pending_review, 202). */
export function inboxPacketBody(): Record<string, unknown> {
  const body = formPacketBody(freshId()) as { payload: Record<string, unknown> };
  return { payload: { ...body.payload, patientId: 'bench-unknown-patient' } };
}
