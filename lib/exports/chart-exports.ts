/**
 * The five HL7 chart exports as domain operations: read what the message needs from the chart
 * (by keys that include the patient, so another patient's record is simply "not found"), build the
 * message with lib/hl7. Not-found never says which part was missing.
 */
import type { ChartStore } from '../chart/chart-store';
import { mergeNewestFirst } from '../chart/timeline';
import type { LabResultSummary } from '../chart/types';
import { RecordNotFoundError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { encodeAssessmentMessage, encodeEncounterMessage, encodeNoteMessage, encodePatientAdtMessage, encodePatientSummary, type PatientSummary } from '../hl7';
import { hl7ProfileOf, messageHeaderFor } from './message-header';

export interface ExportContext {
  principal: Principal;
  now: Date;
}

export interface ChartExportDependencies {
  chart: ChartStore;
  /** the patient's most recent lab results, newest first (decrypted); absent = none */
  recentLabResults?: (patientId: string, limit: number) => Promise<LabResultSummary[]>;
}

export const SUMMARY_LIMIT = { min: 1, max: 200, fallback: 20 } as const;

export async function exportNoteMessage(deps: ChartExportDependencies, ids: { patientId: string; noteId: string }, ctx: ExportContext): Promise<string> {
  const { patient, record: note, encounter } = await deps.chart.getNoteContext(ids.patientId, ids.noteId);
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
  const { patient, record: assessment, encounter } = await deps.chart.getAssessmentContext(ids.patientId, ids.assessmentId);
  if (!patient || !assessment) throw new RecordNotFoundError('assessment');
  return encodeAssessmentMessage({ header: messageHeaderFor(ctx.principal, ctx.now), patient, assessment, encounter });
}

/**
 * The longitudinal summary: the `limit` most recent records across encounters, notes, assessments
 * and lab results, newest first, in the partner's summary style, cut (newest kept) at the byte
 * budget (`maxBytes`, default lib/hl7 DEFAULT_SUMMARY_MAX_BYTES, below Lambda's 6 MB response limit).
 */
export async function exportPatientSummary(
  deps: ChartExportDependencies,
  ids: { patientId: string; limit: number },
  ctx: ExportContext & { maxBytes?: number },
): Promise<PatientSummary> {
  const [{ patient, records }, labResults] = await Promise.all([
    deps.chart.getPatientSummary(ids.patientId, ids.limit),
    deps.recentLabResults ? deps.recentLabResults(ids.patientId, ids.limit) : Promise.resolve([] as LabResultSummary[]),
  ]);
  if (!patient) throw new RecordNotFoundError('patient');
  // the newest `limit` entries of both newest-first lists (the same merge the message applies)
  const newest = mergeNewestFirst(
    records,
    (record) => record.at,
    labResults,
    (lab) => lab.resultedAt,
  ).slice(0, ids.limit);
  const profile = hl7ProfileOf(ctx.principal);
  return encodePatientSummary({
    header: messageHeaderFor(ctx.principal, ctx.now),
    patient,
    records: newest.flatMap((entry) => (entry.kind === 'record' ? [entry.record] : [])),
    labResults: newest.flatMap((entry) => (entry.kind === 'lab' ? [entry.lab] : [])),
    style: profile.summaryStyle,
    noteDocumentType: profile.noteDocumentType,
    ...(ctx.maxBytes !== undefined ? { maxBytes: ctx.maxBytes } : {}),
  });
}
