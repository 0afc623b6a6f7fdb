/**
 * The chart table's item layout (lib/chart/chart-store.ts describes it): keys, ids, the record
 * kept in an item, and the batch retry pacing both the reader and the writer use. Shared by
 * chart-reader.ts (what the export and FHIR functions bundle) and chart-store.ts (the writes).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '../aws/attribute-values';
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
