/**
 * The five HL7 chart exports as domain operations: read what the message needs from the chart
 * (by keys that include the patient, so another patient's record is simply "not found"), build the
 * message with lib/hl7. Not-found never says which part was missing.
 */
import type { ChartReader, ChartRecordReader } from '../chart/chart-reader';
import { assessmentContext, noteContext } from '../chart/record-context';
import type { LabResultSummary, Patient } from '../chart/types';
import { InvalidParameterError, RecordNotFoundError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { encodeAssessmentMessage, encodeEncounterMessage, encodeNoteMessage, encodePatientAdtMessage, encodePatientSummary, type PatientSummary } from '../hl7';
import { decodePageToken, encodePageToken } from './fhir-page-token';
import { newestMerged } from './merged-timeline';
import { hl7ProfileOf, messageHeaderFor } from './message-header';

export interface ExportContext {
  principal: Principal;
  now: Date;
}

export interface ChartExportDependencies {
  chart: ChartRecordReader;
  /**
   * Up to `limit` of the patient's lab results (decrypted summaries), newest first, strictly older
   * than the position `before` (one returned earlier) when given; absent = none.
   */
  labResultsPage?: (patientId: string, limit: number, before?: string) => Promise<Array<{ summary: LabResultSummary; position: string }>>;
}

/** The summary export also pages the patient's timeline. */
export interface PatientSummaryExportDependencies extends ChartExportDependencies {
  chart: ChartReader;
}

/** The summary's continuation (`cursor`) is not one this server issued for this export. */
export class InvalidSummaryCursorError extends InvalidParameterError {
  constructor() {
    super('cursor', 'is not a cursor this server issued for the summary export');
  }
}

/** The summary of one page and where the next one continues (absent: nothing older is left). */
export interface PatientSummaryPage extends PatientSummary {
  nextCursor?: string;
}

export const SUMMARY_LIMIT = { min: 1, max: 200, fallback: 20 } as const;

export async function exportNoteMessage(deps: ChartExportDependencies, ids: { patientId: string; noteId: string }, ctx: ExportContext): Promise<string> {
  const { patient, record: note, encounter } = await noteContext(deps.chart, ids.patientId, ids.noteId);
  if (!patient || !note) throw new RecordNotFoundError('note');
  const { noteDocumentType } = hl7ProfileOf(ctx.principal);
  return encodeNoteMessage({ header: messageHeaderFor(ctx.principal, ctx.now), patient, note, encounter, documentType: noteDocumentType });
}

export async function exportPatientAdtMessage(deps: ChartExportDependencies, ids: { patientId: string }, ctx: ExportContext): Promise<string> {
  const patient = await deps.chart.getPatient(ids.patientId);
  if (!patient) throw new RecordNotFoundError('patient');
  return encodePatientAdtMessage({ header: messageHeaderFor(ctx.principal, ctx.now), patient });
}

export async function exportEncounterMessage(
  deps: ChartExportDependencies,
  ids: { patientId: string; encounterId: string },
  ctx: ExportContext,
): Promise<string> {
  const { patient, record: encounter } = await deps.chart.getPatientWith(ids.patientId, 'encounter', ids.encounterId);
  if (!patient || !encounter) throw new RecordNotFoundError('encounter');
  const { encounterStyle } = hl7ProfileOf(ctx.principal);
  return encodeEncounterMessage({ header: messageHeaderFor(ctx.principal, ctx.now), patient, encounter, style: encounterStyle });
}

export async function exportAssessmentMessage(
  deps: ChartExportDependencies,
  ids: { patientId: string; assessmentId: string },
  ctx: ExportContext,
): Promise<string> {
  const { patient, record: assessment, encounter } = await assessmentContext(deps.chart, ids.patientId, ids.assessmentId);
  if (!patient || !assessment) throw new RecordNotFoundError('assessment');
  return encodeAssessmentMessage({ header: messageHeaderFor(ctx.principal, ctx.now), patient, assessment, encounter });
}

/**
 * The longitudinal summary: the `limit` most recent records across encounters, notes, assessments
 * and lab results, newest first, in the partner's summary style, cut (newest kept) at the byte
 * budget (`maxBytes`, default lib/hl7 DEFAULT_SUMMARY_MAX_BYTES, below Lambda's 6 MB response limit).
 *
 * Paging (issue 31 item 4: a chart of 10,000 records is walked, never held in one response): each
 * source is read from where `cursor` stopped, in chunks (merged-timeline.ts: about `limit` + 1 items in
 * all, +1 to know whether more exist, not `limit` + 1 from each); `nextCursor` is given while older records remain, also those the byte budget
 * cut, so following it page after page yields every record exactly once, newest first. The cursor
 * (lib/exports/fhir-page-token.ts, kind `h`) only moves the start inside this patient's partitions.
 */
export async function exportPatientSummary(
  deps: PatientSummaryExportDependencies,
  ids: { patientId: string; limit: number; cursor?: string },
  ctx: ExportContext & { maxBytes?: number },
): Promise<PatientSummaryPage> {
  const token = ids.cursor === undefined ? undefined : decodePageToken(ids.cursor, 'h');
  if (ids.cursor !== undefined && !token) throw new InvalidSummaryCursorError();
  let firstPagePatient: Patient | undefined;
  const [{ entries: merged }, patientAgain] = await Promise.all([
    // the newest `limit` + 1 of both sources merged (+1: whether more remain), read in chunks
    newestMerged(
      {
        start: token?.c,
        read: async (limit, before) => {
          const page = await deps.chart.timelinePage(ids.patientId, limit, before);
          // the timeline gives the patient only on the first page (it sorts before every record)
          if (before === undefined) firstPagePatient = page.patient;
          return page.entries;
        },
        positionOf: (entry) => entry.position,
        timeOf: (entry) => entry.record.at,
      },
      deps.labResultsPage
        ? {
            start: token?.l,
            read: (limit, before) => deps.labResultsPage!(ids.patientId, limit, before),
            positionOf: (lab) => lab.position,
            timeOf: (lab) => lab.summary.resultedAt,
          }
        : undefined,
      ids.limit + 1,
    ),
    token ? deps.chart.getPatient(ids.patientId) : Promise.resolve(undefined),
  ]);
  const patient = token ? patientAgain : firstPagePatient;
  if (!patient) throw new RecordNotFoundError('patient');
  const newest = merged.slice(0, ids.limit);
  const profile = hl7ProfileOf(ctx.principal);
  const summary = encodePatientSummary({
    header: messageHeaderFor(ctx.principal, ctx.now),
    patient,
    records: newest.flatMap((entry) => (entry.kind === 'record' ? [entry.record.record] : [])),
    labResults: newest.flatMap((entry) => (entry.kind === 'lab' ? [entry.lab.summary] : [])),
    style: profile.summaryStyle,
    noteDocumentType: profile.noteDocumentType,
    ...(ctx.maxBytes !== undefined ? { maxBytes: ctx.maxBytes } : {}),
  });
  // the message holds the first `recordsIncluded` of `newest` (it merges them the same way)
  let c = token?.c;
  let l = token?.l;
  for (const entry of newest.slice(0, summary.recordsIncluded)) {
    if (entry.kind === 'record') c = entry.record.position;
    else l = entry.lab.position;
  }
  const more = merged.length > summary.recordsIncluded;
  // a page that holds nothing (one record alone above the budget) cannot move on: no cursor then
  const nextCursor = more && summary.recordsIncluded > 0 ? encodePageToken({ k: 'h', ...(c ? { c } : {}), ...(l ? { l } : {}) }) : undefined;
  return { ...summary, ...(nextCursor ? { nextCursor } : {}) };
}
