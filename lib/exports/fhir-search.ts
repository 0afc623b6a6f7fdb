/**
 * The FHIR searches with filters (issue 27) and the lab Observation read, as domain operations:
 *
 *   Observation?patient=&category=&code=&date=   lab Observations (category laboratory, newest
 *                                                result first), then assessments (category survey, id order)
 *   DiagnosticReport?patient=&category=&date=    lab results, newest first
 *   Patient?identifier=system|value&_id=         through the chart's MRN index: at most one GetItem
 *                                                of the index and one GetItem per patient
 *   Observation/{id} of a lab Observation        `<patient>..<result>..<n>` (lib/fhir/lab-observation.ts)
 *
 * Only chart patients' records are served (issue 26): a search that reads lab results first reads
 * the chart patient (one GetItem) and answers an id that is no chart patient exactly as an unused id.
 *
 * Filters on `code` and `date` are applied to the resources as they are served (the results are
 * stored encrypted; there is no index by code or date), so a filtered search reads the patient's
 * results in batches of {@link SCAN_BATCH}, at most {@link SCAN_BUDGET} per page. When the budget
 * runs out before the page is full, the page is shorter and its `next` link continues the scan.
 * A `category` that names no category of a source reads nothing from that source.
 */
import type { Bundle, CodeableConcept, DiagnosticReport, Observation, Patient } from '@medplum/fhirtypes';
import { normaliseAuthority, normaliseMrn } from '../chart/identifiers';
import type { Assessment } from '../chart/types';
import { InvalidParameterError, RecordNotFoundError } from '../domain-errors';
import {
  assessmentObservation,
  labDiagnosticReport,
  labObservationIdsOf,
  labObservationSource,
  labObservations,
  matchesDate,
  matchesToken,
  mrnAuthorityOf,
  patientIdOf,
  patientResource,
  searchsetBundle,
  Systems,
  type DateCondition,
  type TokenValue,
} from '../fhir';
import { labReportOptions, withinReadScope, type FhirExportDependencies } from './fhir-exports';
import { hl7ClinicianAndOrderIds } from './external-ids';
import { PageBudget } from './fhir-page-budget';
import { decodePageToken, encodePageToken, type ObservationToken } from './fhir-page-token';

/** Results read per Query of a filtered scan, and at most per page. */
export const SCAN_BATCH = 50;
export const SCAN_BUDGET = 500;

class InvalidPageTokenError extends InvalidParameterError {
  constructor() {
    super('_page_token', 'is not a page token this server issued for this search');
  }
}

export interface FilteredSearch {
  patient: string;
  count: number;
  pageToken?: string;
  category?: TokenValue[];
  code?: TokenValue[];
  date: DateCondition[];
  /** the search parameters as sent, repeated in `self` and `next` */
  search: Array<[string, string]>;
  baseUrl: string;
  now: Date;
  /** the page's byte budget (default FHIR_PAGE_MAX_BYTES, fhir-page-budget.ts) */
  maxBytes?: number;
  /** DiagnosticReport: only the results this partner sent (a reader of its own results: fhir-exports.ts ResultReadScope) */
  sentBy?: string;
}

const LAB_OBSERVATION_CATEGORY: CodeableConcept = { coding: [{ system: Systems.observationCategory, code: 'laboratory' }] };
const SURVEY_CATEGORY: CodeableConcept = { coding: [{ system: Systems.observationCategory, code: 'survey' }] };
const LAB_REPORT_CATEGORY: CodeableConcept = { coding: [{ system: Systems.v2DiagnosticService, code: 'LAB' }] };

function selfQuery(search: Array<[string, string]>, count: number, token?: string): string {
  const params = [...search, ['_count', String(count)], ...(token ? [['_page_token', token]] : [])];
  return params.map(([name, value]) => `${name}=${encodeURIComponent(value!)}`).join('&');
}

function bundleOf(type: string, request: FilteredSearch, resources: Array<Observation | DiagnosticReport | Patient>, next?: string): Bundle {
  return searchsetBundle({
    baseUrl: request.baseUrl,
    selfPath: `${type}?${selfQuery(request.search, request.count, request.pageToken)}`,
    nextPath: next ? `${type}?${selfQuery(request.search, request.count, next)}` : undefined,
    resources,
    now: request.now,
  });
}

/** The date a lab Observation or DiagnosticReport is searched by: effective[x], else issued. */
function searchDate(resource: Observation | DiagnosticReport): string | undefined {
  return (
    resource.effectiveDateTime ?? resource.effectivePeriod?.start ?? ('effectiveInstant' in resource ? resource.effectiveInstant : undefined) ?? resource.issued
  );
}

/** A lab Observation read by its id: the result (and the chart patient) read as for its DiagnosticReport. */
export async function readLabObservation(
  deps: FhirExportDependencies,
  id: string,
): Promise<{ patientId: string; recordId: string; resource: Observation } | undefined> {
  const ids = labObservationIdsOf(id);
  if (!ids) return undefined;
  const [lab, patient] = deps.labs ? await Promise.all([deps.labs.one(ids.patientId, ids.resultId), deps.chart.getPatient(ids.patientId)]) : [];
  if (!lab || !patient) throw new RecordNotFoundError('Observation');
  // the report's Observations (as its DiagnosticReport contains them; built without the report's own elements)
  const found = labObservations(labObservationSource(ids.patientId, lab)).find((o) => o.n === ids.n);
  if (!found) throw new RecordNotFoundError('Observation');
  return { patientId: ids.patientId, recordId: ids.resultId, resource: found.observation };
}

/**
 * Observation?patient=: the patient's lab Observations (category laboratory; newest result first,
 * in each result the tests' order), then the assessments (category survey; id order), filtered by
 * `category`, `code` (Observation.code) and `date` (effective[x]; a lab Observation without one by
 * its issued time). `count` per page.
 */
export async function searchObservations(
  deps: FhirExportDependencies,
  request: FilteredSearch,
): Promise<{ patientId?: string; bundle: Bundle; records: number }> {
  const patientId = patientIdOf(request.patient);
  let token: ObservationToken | undefined;
  if (request.pageToken !== undefined) {
    token = decodePageToken(request.pageToken, 'o');
    if (!token) throw new InvalidPageTokenError();
  }
  const wantLab = !request.category || matchesToken([LAB_OBSERVATION_CATEGORY], request.category);
  const wantSurvey = !request.category || matchesToken([SURVEY_CATEGORY], request.category);
  const chartPatient = patientId && (wantLab || wantSurvey) ? await deps.chart.getPatient(patientId) : undefined;
  const matches = (o: Observation) => (!request.code || matchesToken([o.code], request.code)) && matchesDate(searchDate(o), request.date);
  const found: Observation[] = [];
  // a page ends at `count` matches or before the match that would pass the byte budget
  const budget = new PageBudget(request.baseUrl, request.maxBytes);
  const full = (observation: Observation) => found.length === request.count || !budget.take(observation);
  let next: ObservationToken | undefined;
  let scanned = 0;
  if (patientId && chartPatient && wantLab && deps.labs && token?.p !== 'a') {
    // lab results newest first; `skip` matching Observations of the first result were given before
    let before = token?.l;
    let skip = token?.n === undefined ? 0 : Number(token.n);
    scan: while (scanned < SCAN_BUDGET) {
      const batch = await deps.labs.page(patientId, SCAN_BATCH, before);
      for (const entry of batch) {
        scanned += 1;
        const observations = labObservations(labObservationSource(patientId, entry.summary))
          .map((o) => o.observation)
          .filter(matches)
          .slice(skip);
        for (const [i, observation] of observations.entries()) {
          if (full(observation)) {
            next = { k: 'o', ...(before !== undefined ? { l: before } : {}), ...(skip + i > 0 ? { n: String(skip + i) } : {}) };
            break scan;
          }
          found.push(observation);
        }
        skip = 0;
        before = entry.position;
        if (scanned >= SCAN_BUDGET && batch.length > 0) {
          next = { k: 'o', l: before };
          break scan;
        }
      }
      if (batch.length < SCAN_BATCH) break;
    }
  }
  // the assessments once the lab results are done (when the page is full: to know whether a next page exists)
  if (patientId && chartPatient && wantSurvey && !next) {
    let after = token?.p === 'a' ? token.a : undefined;
    scan: while (scanned < SCAN_BUDGET) {
      const batch: Assessment[] = await deps.chart.recordsOfKind(patientId, 'assessment', SCAN_BATCH, after);
      for (const assessment of batch) {
        scanned += 1;
        const observation = assessmentObservation(assessment, hl7ClinicianAndOrderIds());
        if (matches(observation)) {
          if (full(observation)) {
            next = { k: 'o', p: 'a', ...(after !== undefined ? { a: after } : {}) };
            break scan;
          }
          found.push(observation);
        }
        after = assessment.assessmentId;
        if (scanned >= SCAN_BUDGET) {
          next = { k: 'o', p: 'a', a: after };
          break scan;
        }
      }
      if (batch.length < SCAN_BATCH) break;
    }
  }
  const nextToken = next ? encodePageToken(next) : undefined;
  return { patientId, bundle: bundleOf('Observation', request, found, nextToken), records: found.length };
}

/**
 * DiagnosticReport?patient=: the patient's lab results, newest first, filtered by `category`
 * (always LAB here) and `date` (effective[x], else issued). Only for a chart patient (issue 26):
 * one GetItem of the chart patient before the results are queried and decrypted.
 */
export async function searchDiagnosticReports(
  deps: FhirExportDependencies,
  request: FilteredSearch,
): Promise<{ patientId?: string; bundle: Bundle; records: number }> {
  const patientId = patientIdOf(request.patient);
  const token = request.pageToken === undefined ? undefined : decodePageToken(request.pageToken, 'l');
  if (request.pageToken !== undefined && !token) throw new InvalidPageTokenError();
  const wanted = !request.category || matchesToken([LAB_REPORT_CATEGORY], request.category);
  const chartPatient = patientId && deps.labs && wanted ? await deps.chart.getPatient(patientId) : undefined;
  const found: DiagnosticReport[] = [];
  // a page ends at `count` matches or before the match that would pass the byte budget
  const budget = new PageBudget(request.baseUrl, request.maxBytes);
  let next: string | undefined;
  if (patientId && deps.labs && chartPatient) {
    // a reader of its own results filters too: its results are among every partner's
    const filtered = request.date.length > 0 || request.sentBy !== undefined;
    let before = token?.l;
    let scanned = 0;
    scan: while (scanned < SCAN_BUDGET) {
      // unfiltered: exactly count + 1 (one Query, as before); filtered: batches
      const batch = await deps.labs.page(patientId, filtered ? SCAN_BATCH : request.count + 1, before);
      for (const entry of batch) {
        scanned += 1;
        const report = withinReadScope(entry.summary, request) ? labDiagnosticReport(patientId, entry.summary, labReportOptions(request.baseUrl)) : undefined;
        if (report && matchesDate(searchDate(report), request.date)) {
          if (found.length === request.count || !budget.take(report)) {
            next = before;
            break scan;
          }
          found.push(report);
        }
        before = entry.position;
        if (filtered && scanned >= SCAN_BUDGET) {
          next = before;
          break scan;
        }
      }
      if (!filtered || batch.length < SCAN_BATCH) break;
    }
  }
  const nextToken = next ? encodePageToken({ k: 'l', l: next }) : undefined;
  return { patientId, bundle: bundleOf('DiagnosticReport', request, found, nextToken), records: found.length };
}

/** The chart's MRN index: the chart patient holding (assigning authority, MRN), compared normalised. */
export interface PatientIdentifierIndex {
  find(assigningAuthority: string, mrn: string): Promise<string | undefined>;
}

export interface PatientSearch {
  identifier?: { system: string; value: string };
  ids?: string[];
  search: Array<[string, string]>;
  count: number;
  baseUrl: string;
  now: Date;
  /** the candidates the caller may read (its patient access), asked before any patient is read; absent: all */
  readable?: (patientIds: string[]) => Promise<string[]>;
}

/**
 * Patient?identifier=system|value and/or _id=: the chart patients matching every parameter sent.
 * The identifier is the Patient resource's MRN identifier (system `urn:interop:mrn:<authority>`):
 * one GetItem of the MRN index, then one GetItem of the patient (whose MRN must still be the one
 * searched). `_id` reads each named patient (one GetItem each). No parameter: a 400, a server
 * never lists every patient.
 */
export async function searchPatients(
  deps: FhirExportDependencies & { identifiers: PatientIdentifierIndex },
  request: PatientSearch,
): Promise<{ patientIds: string[]; bundle: Bundle }> {
  if (!request.identifier && !request.ids) throw new InvalidParameterError('identifier', 'or _id is required (a server never lists every patient)');
  let candidates: string[] | undefined = request.ids?.map(patientIdOf).filter((id): id is string => id !== undefined);
  if (request.identifier) {
    const authority = mrnAuthorityOf(request.identifier.system);
    const holder = authority === undefined ? undefined : await deps.identifiers.find(authority, request.identifier.value);
    const byIdentifier = holder === undefined ? [] : [holder];
    candidates = candidates === undefined ? byIdentifier : candidates.filter((id) => byIdentifier.includes(id));
  }
  // a patient the caller may not read is no match, the same as an identifier no patient holds
  const reachable = request.readable ? await request.readable(candidates ?? []) : (candidates ?? []);
  const patients = await Promise.all(reachable.slice(0, request.count).map((id) => deps.chart.getPatient(id)));
  const matching = patients.filter(
    (p): p is NonNullable<typeof p> =>
      p !== undefined &&
      (!request.identifier ||
        (normaliseMrn(p.mrn) === normaliseMrn(request.identifier.value) &&
          normaliseAuthority(p.assigningAuthority) === normaliseAuthority(mrnAuthorityOf(request.identifier.system) ?? '\u0000'))),
  );
  const bundle = searchsetBundle({
    baseUrl: request.baseUrl,
    selfPath: `Patient?${selfQuery(request.search, request.count)}`,
    resources: matching.map((patient) => patientResource(patient, hl7ClinicianAndOrderIds())),
    now: request.now,
  });
  return { patientIds: matching.map((p) => p.patientId), bundle };
}
