/**
 * A note or an assessment with its patient and the encounter it names, for the note and assessment
 * exports: one BatchGetItem, then one GetItem only when the record names an encounter (and the
 * patient exists). Functions over the record reader rather than its methods: a class is bundled
 * whole, so the functions that never read a record's context (the encounter and patient exports, the
 * FHIR reads) do not carry these (issue 31 item 5).
 */
import type { ChartRecordReader } from './chart-reader';
import type { RecordContext } from './chart-items';
import type { Assessment, Note } from './types';

type ContextReads = Pick<ChartRecordReader, 'getPatientWith' | 'getRecord'>;

/** Patient, note and the note's encounter. */
export function noteContext(chart: ContextReads, patientId: string, noteId: string): Promise<RecordContext<'note'>> {
  return recordContext(chart, patientId, 'note', noteId);
}

/** Patient, assessment and the assessment's encounter; the same calls as noteContext. */
export function assessmentContext(chart: ContextReads, patientId: string, assessmentId: string): Promise<RecordContext<'assessment'>> {
  return recordContext(chart, patientId, 'assessment', assessmentId);
}

async function recordContext<K extends 'note' | 'assessment'>(chart: ContextReads, patientId: string, kind: K, id: string): Promise<RecordContext<K>> {
  const found = await chart.getPatientWith(patientId, kind, id);
  const encounterId = (found.record as Note | Assessment | undefined)?.encounterId;
  if (!found.patient || !found.record || !encounterId) return found;
  return { ...found, encounter: await chart.getRecord(patientId, 'encounter', encounterId) };
}
