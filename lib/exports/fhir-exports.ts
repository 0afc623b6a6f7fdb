/**
 * The FHIR R4 reads as domain operations: read what the resource needs from the chart and the lab
 * results by keys that include the patient (a logical id carries it, lib/fhir/logical-id.ts), map
 * with lib/fhir. An id of another patient's record, an id that names no record and an id of the
 * wrong shape all give the same RecordNotFoundError: existence is never revealed.
 *
 * Only chart patients' records are served (issue 26). Lab results are stored under whatever patient
 * id the lab sent, also one that is no chart patient (saved and held for review); a search or read
 * of lab results first checks that the named patient is a chart patient (one GetItem) and otherwise
 * answers exactly as for an unused id. Chart records (Encounter, DocumentReference, Observation)
 * live only in chart patients' partitions, so their searches need no such check.
 */
import type { Bundle, DiagnosticReport, DocumentReference, Encounter, Observation, Patient, Resource } from '@medplum/fhirtypes';
import type { ChartReader } from '../chart/chart-reader';
import type { ChartRecord, Patient as ChartPatient } from '../chart/types';
import type { Scope } from '../config/scopes';
import { InvalidParameterError, RecordNotFoundError } from '../domain-errors';
import {
  assessmentObservation,
  documentReferenceResource,
  encounterResource,
  labDiagnosticReport,
  serviceBaseOf,
  logicalId,
  patientIdOf,
  patientResource,
  recordIdsOf,
  searchsetBundle,
  type LabReportOptions,
  type LabResultRecord,
  type VisitNumber,
} from '../fhir';
import { IDENTIFIER_LENGTH, shortIdentifier } from '../hl7';
import type { Principal } from '../keys/access-decision';
import { hl7ClinicianAndOrderIds, hl7ExternalIds } from './external-ids';
import { PageBudget } from './fhir-page-budget';
import { decodePageToken, encodePageToken } from './fhir-page-token';
import { newestMerged } from './merged-timeline';
import { identifierNamespace } from './message-header';

/** A lab result as the FHIR reads get it: the record and the partner that sent its current version (when known). */
export type SentLabResult = LabResultRecord & { partnerId?: string };

/** Lab results as the FHIR reads need them (decrypted summaries, keyed by patient). */
export interface LabResultPages {
  page(patientId: string, limit: number, before?: string): Promise<Array<{ summary: SentLabResult; position: string }>>;
  one(patientId: string, resultId: string): Promise<SentLabResult | undefined>;
}

/**
 * Whose lab results a read returns: `sentBy` a partner id for a reader holding only
 * interop:read:own-results (the results that partner sent, and only those); absent: every result of
 * a patient the reader may read (the patient gate decided that before the read).
 */
export interface ResultReadScope {
  sentBy?: string;
}

/**
 * The read scope of a caller: holding the route's export scope, every result of the patients its
 * patient access reaches; holding only interop:read:own-results, the results its partner sent.
 */
export function resultReadScopeOf(principal: Pick<Principal, 'partnerId' | 'scopes'>, exportScope: Scope): ResultReadScope {
  return principal.scopes.includes(exportScope) ? {} : { sentBy: principal.partnerId };
}

/** Whether a result is within the read's scope. */
export function withinReadScope(result: { partnerId?: string }, scope: ResultReadScope): boolean {
  return scope.sentBy === undefined || result.partnerId === scope.sentBy;
}

export interface FhirExportDependencies {
  chart: ChartReader;
  labs?: LabResultPages;
}

class InvalidPageTokenError extends InvalidParameterError {
  constructor() {
    super('_page_token', 'is not a page token this server issued for this search');
  }
}

export interface SearchRequest {
  /** the Patient logical id from `patient=` or the path */
  patient: string;
  count: number;
  pageToken?: string;
  baseUrl: string;
  now: Date;
  /** the page's byte budget (default FHIR_PAGE_MAX_BYTES, fhir-page-budget.ts) */
  maxBytes?: number;
}

export async function readPatient(deps: FhirExportDependencies, id: string): Promise<{ patientId: string; resource: Patient }> {
  const patientId = patientIdOf(id);
  const patient = patientId === undefined ? undefined : await deps.chart.getPatient(patientId);
  if (!patientId || !patient) throw new RecordNotFoundError('Patient');
  return { patientId, resource: patientResource(patient, hl7ClinicianAndOrderIds()) };
}

type ChartRead<R> = { patientId: string; recordId: string; resource: R };

/** Pages read at most when a hashed logical id is looked up among a patient's records (100 records a page). */
const HASHED_ID_MAX_PAGES = 50;
const HASHED_ID_PAGE = 100;

type Ids = { patientId: string; recordId: string; recordHash?: string };

/**
 * The record id a logical id names: as written, or (a hashed record part, logical-id.ts) the id of
 * the patient's record of that kind whose logical id it is, found by reading the patient's records in
 * pages; undefined when none is.
 */
async function resolveChartRecordId(
  deps: FhirExportDependencies,
  id: string,
  ids: Ids,
  kind: 'encounter' | 'note' | 'assessment',
): Promise<string | undefined> {
  if (ids.recordHash === undefined) return ids.recordId;
  const idOf = (record: unknown): string =>
    kind === 'encounter'
      ? (record as { encounterId: string }).encounterId
      : kind === 'note'
        ? (record as { noteId: string }).noteId
        : (record as { assessmentId: string }).assessmentId;
  let after: string | undefined;
  for (let page = 0; page < HASHED_ID_MAX_PAGES; page += 1) {
    const records = await deps.chart.recordsOfKind(ids.patientId, kind, HASHED_ID_PAGE, after);
    const found = records.map(idOf).find((recordId) => logicalId(ids.patientId, recordId) === id);
    if (found !== undefined || records.length < HASHED_ID_PAGE) return found;
    after = idOf(records[records.length - 1]);
  }
  return undefined;
}

export async function readEncounter(deps: FhirExportDependencies, id: string): Promise<ChartRead<Encounter>> {
  const ids = recordIdsOf(id);
  const recordId = ids ? await resolveChartRecordId(deps, id, ids, 'encounter') : undefined;
  const record = ids && recordId ? await deps.chart.getRecord(ids.patientId, 'encounter', recordId) : undefined;
  if (!ids || !recordId || !record) throw new RecordNotFoundError('Encounter');
  return { patientId: ids.patientId, recordId, resource: encounterResource(record, visitNumberOf(record), hl7ClinicianAndOrderIds()) };
}

export async function readDocumentReference(deps: FhirExportDependencies, id: string): Promise<ChartRead<DocumentReference>> {
  const ids = recordIdsOf(id);
  const recordId = ids ? await resolveChartRecordId(deps, id, ids, 'note') : undefined;
  const record = ids && recordId ? await deps.chart.getRecord(ids.patientId, 'note', recordId) : undefined;
  if (!ids || !recordId || !record) throw new RecordNotFoundError('DocumentReference');
  return { patientId: ids.patientId, recordId, resource: documentReferenceResource(record, hl7ExternalIds()) };
}

export async function readAssessmentObservation(deps: FhirExportDependencies, id: string): Promise<ChartRead<Observation>> {
  const ids = recordIdsOf(id);
  const recordId = ids ? await resolveChartRecordId(deps, id, ids, 'assessment') : undefined;
  const record = ids && recordId ? await deps.chart.getRecord(ids.patientId, 'assessment', recordId) : undefined;
  if (!ids || !recordId || !record) throw new RecordNotFoundError('Observation');
  return { patientId: ids.patientId, recordId, resource: assessmentObservation(record, hl7ClinicianAndOrderIds()) };
}

/** `baseUrl` the FHIR base of the request: presentedForm urls are absolute, as in the searches and $everything. */
export async function readDiagnosticReport(
  deps: FhirExportDependencies,
  id: string,
  baseUrl: string,
  scope: ResultReadScope = {},
): Promise<ChartRead<DiagnosticReport>> {
  const ids = recordIdsOf(id);
  // result ids (`lr_` + 32 hex) always have a compact form: a DiagnosticReport id never hashes its record part
  const usable = ids && ids.recordHash === undefined ? ids : undefined;
  // the result and the chart patient in parallel: a result filed under a non-chart patient id is not served
  const [lab, patient] =
    usable && deps.labs ? await Promise.all([deps.labs.one(usable.patientId, usable.recordId), deps.chart.getPatient(usable.patientId)]) : [];
  if (!usable || !lab || !patient || !withinReadScope(lab, scope)) throw new RecordNotFoundError('DiagnosticReport');
  return { patientId: usable.patientId, recordId: usable.recordId, resource: labDiagnosticReport(usable.patientId, lab, labReportOptions(baseUrl)) };
}

/**
 * The encounter's visit number as the HL7 exports write it (PV1-19, the encounter group's OBR-3): one
 * external id in HL7 and FHIR (issue 27 item 5; README "Identifiers").
 */
function visitNumberOf(encounter: { encounterId: string }): VisitNumber {
  return { value: shortIdentifier(encounter.encounterId, IDENTIFIER_LENGTH.cx), namespace: identifierNamespace() };
}

/** How lab results are written in every FHIR answer: presentedForm urls absolute under the request's base, the HL7 ids. */
export function labReportOptions(fhirBaseUrl: string): LabReportOptions {
  return { serviceBaseUrl: serviceBaseOf(fhirBaseUrl), externalIds: hl7ClinicianAndOrderIds() };
}

function chartResource(record: ChartRecord): Resource {
  switch (record.kind) {
    case 'encounter':
      return encounterResource(record.record, visitNumberOf(record.record), hl7ClinicianAndOrderIds());
    case 'note':
      return documentReferenceResource(record.record, hl7ExternalIds());
    case 'assessment':
      return assessmentObservation(record.record, hl7ClinicianAndOrderIds());
  }
}

function query(count: number, token?: string): string {
  return `_count=${count}${token ? `&_page_token=${token}` : ''}`;
}

/**
 * Patient/{id}/$everything: the Patient (first page only) and the same records as the HL7 patient
 * summary (encounters, notes, assessments, lab results), newest first, `count` per page. Both
 * sources are read from where the previous page stopped, in chunks (merged-timeline.ts: about
 * count + 1 items in all, +1 to know whether more exist) and merged as the summary merges them: by instant, a lab result before a chart record
 * only when strictly newer. A page also ends before the record that would take its JSON past the
 * byte budget (fhir-page-budget.ts); `next` then continues with that record.
 */
export async function patientEverything(deps: FhirExportDependencies, request: SearchRequest): Promise<{ patientId: string; bundle: Bundle; records: number }> {
  const patientId = patientIdOf(request.patient);
  if (!patientId) throw new RecordNotFoundError('Patient');
  const token = request.pageToken === undefined ? undefined : decodePageToken(request.pageToken, 'e');
  if (request.pageToken !== undefined && !token) throw new InvalidPageTokenError();
  let firstPagePatient: ChartPatient | undefined;
  const [{ entries: merged }, patientAgain] = await Promise.all([
    // the newest `count` + 1 of both sources merged (+1: whether more remain), read in chunks
    newestMerged(
      {
        start: token?.c,
        read: async (limit, before) => {
          const page = await deps.chart.timelinePage(patientId, limit, before);
          // the timeline gives the patient only on the first page (it sorts before every record)
          if (before === undefined) firstPagePatient = page.patient;
          return page.entries;
        },
        positionOf: (entry) => entry.position,
        timeOf: (entry) => entry.record.at,
      },
      deps.labs
        ? {
            start: token?.l,
            read: (limit, before) => deps.labs!.page(patientId, limit, before),
            positionOf: (lab) => lab.position,
            timeOf: (lab) => lab.summary.resultedAt,
          }
        : undefined,
      request.count + 1,
    ),
    token ? deps.chart.getPatient(patientId) : Promise.resolve(undefined),
  ]);
  const patient = token ? patientAgain : firstPagePatient;
  if (!patient) throw new RecordNotFoundError('Patient');
  let c = token?.c;
  let l = token?.l;
  const budget = new PageBudget(request.baseUrl, request.maxBytes);
  const resources: Resource[] = [];
  if (!token) {
    const patientEntry = patientResource(patient, hl7ClinicianAndOrderIds());
    budget.take(patientEntry);
    resources.push(patientEntry);
  }
  // at most `count` records, and only while the page's JSON stays within its byte budget
  let records = 0;
  for (const entry of merged.slice(0, request.count)) {
    const resource =
      entry.kind === 'record' ? chartResource(entry.record.record) : labDiagnosticReport(patientId, entry.lab.summary, labReportOptions(request.baseUrl));
    if (!budget.take(resource)) break;
    resources.push(resource);
    records += 1;
    if (entry.kind === 'record') c = entry.record.position;
    else l = entry.lab.position;
  }
  const self = `Patient/${request.patient}/$everything?${query(request.count, request.pageToken)}`;
  const next = merged.length > records ? encodePageToken({ k: 'e', ...(c ? { c } : {}), ...(l ? { l } : {}) }) : undefined;
  const bundle = searchsetBundle({
    baseUrl: request.baseUrl,
    selfPath: self,
    nextPath: next ? `Patient/${request.patient}/$everything?${query(request.count, next)}` : undefined,
    resources,
    now: request.now,
  });
  return { patientId, bundle, records };
}

const SEARCH_KIND = { Encounter: 'encounter', DocumentReference: 'note' } as const;

/** Encounter?patient= / DocumentReference?patient=: the patient's records of one kind in id order. */
export async function searchChartRecords(
  deps: FhirExportDependencies,
  type: keyof typeof SEARCH_KIND,
  request: SearchRequest,
): Promise<{ patientId?: string; bundle: Bundle; records: number }> {
  const patientId = patientIdOf(request.patient);
  const token = request.pageToken === undefined ? undefined : decodePageToken(request.pageToken, 's');
  if (request.pageToken !== undefined && !token) throw new InvalidPageTokenError();
  const kind = SEARCH_KIND[type];
  const found = patientId ? await deps.chart.recordsOfKind(patientId, kind, request.count + 1, token?.a) : [];
  const candidates = found.slice(0, request.count);
  const all = candidates.map((record) =>
    kind === 'encounter'
      ? encounterResource(
          record as Parameters<typeof encounterResource>[0],
          visitNumberOf(record as Parameters<typeof encounterResource>[0]),
          hl7ClinicianAndOrderIds(),
        )
      : documentReferenceResource(record as Parameters<typeof documentReferenceResource>[0], hl7ExternalIds()),
  );
  // at most `count`, and only while the page's JSON stays within its byte budget (a note can be long)
  const budget = new PageBudget(request.baseUrl, request.maxBytes);
  const fitting = all.findIndex((resource) => !budget.take(resource));
  const resources = fitting === -1 ? all : all.slice(0, fitting);
  const page = candidates.slice(0, resources.length);
  const lastId = (record: (typeof page)[number]): string =>
    kind === 'encounter' ? (record as { encounterId: string }).encounterId : (record as { noteId: string }).noteId;
  const next = found.length > page.length && page.length > 0 ? encodePageToken({ k: 's', a: lastId(page[page.length - 1]!) }) : undefined;
  const patientParam = `patient=${request.patient}`;
  const bundle = searchsetBundle({
    baseUrl: request.baseUrl,
    selfPath: `${type}?${patientParam}&${query(request.count, request.pageToken)}`,
    nextPath: next ? `${type}?${patientParam}&${query(request.count, next)}` : undefined,
    resources,
    now: request.now,
  });
  return { patientId, bundle, records: page.length };
}

export { logicalId };
