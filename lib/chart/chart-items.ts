/**
 * The chart table's item layout (lib/chart/chart-store.ts describes it): keys, ids, the record
 * kept in an item, and the batch retry pacing both the reader and the writer use. Shared by
 * chart-reader.ts (what the export and FHIR functions bundle), chart-store.ts (the writes) and
 * chart-note-writer.ts (intake's note writes); the item of an entry (chartItem) and the timeline
 * instant are here so that every writer keys records the one way.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import type { Assessment, ChartRecord, ChartRecordKind, Encounter, Note, Patient } from './types';

/** Ids of patients, encounters, notes and assessments; the import schema uses the same pattern. */
export const CHART_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function isChartId(value: unknown): value is string {
  return typeof value === 'string' && CHART_ID_PATTERN.test(value);
}

/** Something the chart table stores: a patient or one of the patient's records. */
export type ChartEntry =
  { kind: 'patient'; record: Patient } | { kind: 'encounter'; record: Encounter } | { kind: 'note'; record: Note } | { kind: 'assessment'; record: Assessment };

export type ChartEntryKind = ChartEntry['kind'];

/** The domain type stored for a record kind. */
export type ChartRecordOf<K extends ChartRecordKind> = Extract<ChartRecord, { kind: K }>['record'];

export interface PatientWithRecord<K extends ChartRecordKind> {
  patient?: Patient;
  record?: ChartRecordOf<K>;
}

export interface RecordContext<K extends 'note' | 'assessment'> extends PatientWithRecord<K> {
  /** the encounter the record names, when it names one and it exists */
  encounter?: Encounter;
}

/** A record with its place on the patient's timeline (the position a next page continues from). */
export interface TimelineEntry {
  record: ChartRecord;
  /** the item's `timeline` value: <UTC instant>#<kind>#<id> */
  position: string;
}

export interface PatientSummary {
  patient?: Patient;
  /** newest first */
  records: ChartRecord[];
}

export const CHART_DEPENDENCY = 'chart-table';
export const PATIENT_SK = 'PATIENT';
/** Sorts after every `YYYY-...` instant, so a newest-first timeline query meets the patient first. */
export const PATIENT_TIMELINE = 'PATIENT';
/** The chart table's local index on `timeline` (lib/config/tables.ts; checked by lib/dynamo/table-names.test.ts). */
export const TIMELINE_INDEX = 'byTimeline';
export const BATCH_RETRY_ATTEMPTS = 8;
const BATCH_RETRY_BASE_MS = 25;
const BATCH_RETRY_MAX_MS = 1000;

export const SK_PREFIX: Record<ChartRecordKind, string> = { encounter: 'ENCOUNTER#', note: 'NOTE#', assessment: 'ASSESSMENT#' };

export const patientPk = (patientId: string) => `PATIENT#${patientId}`;
export const recordSk = (kind: ChartRecordKind, id: string) => `${SK_PREFIX[kind]}${id}`;

export function keyOf(patientId: string, sk: string): Record<string, AttributeValue> {
  return { pk: { S: patientPk(patientId) }, sk: { S: sk } };
}

export const RECORD_PROJECTION = {
  ProjectionExpression: '#sk, #kind, #record',
  ExpressionAttributeNames: { '#sk': 'sk', '#kind': 'kind', '#record': 'record' },
};

export function recordOf<T>(item: Record<string, AttributeValue> | undefined): T | undefined {
  if (!item?.record) return undefined;
  return unmarshall({ record: item.record }).record as T;
}

export function chartRecordOf(item: Record<string, AttributeValue>): ChartRecord | undefined {
  const kind = item.kind?.S;
  const record = recordOf<Encounter & Note & Assessment>(item);
  if (!record) return undefined;
  switch (kind) {
    case 'encounter':
      return { kind, at: record.admitAt, record };
    case 'note':
      return { kind, at: record.createdAt, record };
    case 'assessment':
      return { kind, at: record.performedAt, record };
    default:
      return undefined;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Full-jitter exponential backoff for retrying unprocessed batch items. */
export function backoffMs(attempt: number): number {
  const ceiling = Math.min(BATCH_RETRY_MAX_MS, BATCH_RETRY_BASE_MS * 2 ** attempt);
  return Math.floor(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** Thrown by writers for a record that cannot be keyed (bad id, unparseable time); names the field only. */
export class InvalidChartRecordError extends Error {
  override readonly name = 'InvalidChartRecordError';
  constructor(
    readonly kind: ChartEntryKind,
    readonly field: string,
    reason: string,
  ) {
    super(`${kind}.${field} ${reason}`);
  }
}

/** The record's id and the instant that places it on the timeline. */
function recordFacts(entry: Exclude<ChartEntry, { kind: 'patient' }>): { id: string; idField: string; at: string; atField: string } {
  switch (entry.kind) {
    case 'encounter':
      return { id: entry.record.encounterId, idField: 'encounterId', at: entry.record.admitAt, atField: 'admitAt' };
    case 'note':
      return { id: entry.record.noteId, idField: 'noteId', at: entry.record.createdAt, atField: 'createdAt' };
    case 'assessment':
      return { id: entry.record.assessmentId, idField: 'assessmentId', at: entry.record.performedAt, atField: 'performedAt' };
  }
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** True for a real calendar date (no 30 February, 29 February only in leap years). */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]);
}

/**
 * An ISO 8601 instant as fixed-width UTC (`YYYY-MM-DDTHH:mm:ss.sssZ`), so that string order is time
 * order whatever offset the source used. Undefined unless the value has seconds and an explicit
 * offset and names a real instant (no 30 February, no leap second 23:59:60, no hour 24), in years
 * 0000-9999 once in UTC.
 */
export function timelineInstant(value: string): string | undefined {
  const match = typeof value === 'string' ? INSTANT.exec(value) : null;
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const [offsetHours, offsetMinutes] = [Number(match[9] ?? 0), Number(match[10] ?? 0)];
  if (!isCalendarDate(year, month, day) || hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  return iso.length === 24 ? iso : undefined;
}

/** The DynamoDB item for an entry. Throws InvalidChartRecordError when it cannot be keyed. */
export function chartItem(entry: ChartEntry): Record<string, AttributeValue> {
  const patientId = entry.record.patientId;
  if (!isChartId(patientId)) throw new InvalidChartRecordError(entry.kind, 'patientId', 'is not a valid chart id');
  if (entry.kind === 'patient') {
    return marshall(
      { pk: patientPk(patientId), sk: PATIENT_SK, kind: 'patient', timeline: PATIENT_TIMELINE, record: entry.record },
      { removeUndefinedValues: true },
    );
  }
  const facts = recordFacts(entry);
  if (!isChartId(facts.id)) throw new InvalidChartRecordError(entry.kind, facts.idField, 'is not a valid chart id');
  const instant = timelineInstant(facts.at);
  if (!instant) throw new InvalidChartRecordError(entry.kind, facts.atField, 'is not an ISO 8601 date-time with an offset');
  return marshall(
    {
      pk: patientPk(patientId),
      sk: recordSk(entry.kind, facts.id),
      kind: entry.kind,
      timeline: `${instant}#${entry.kind}#${facts.id}`,
      record: entry.record,
    },
    { removeUndefinedValues: true },
  );
}
