/**
 * The reading half of the chart store (lib/chart/chart-store.ts describes the table): what the
 * export, FHIR and inbox functions bundle, without the writers (issue 31 item 5: a class is
 * bundled whole, so the writes live in ChartStore, which extends ChartReader). ChartRecordReader
 * reads one patient or record (the single-record exports; a note's or assessment's context, its
 * encounter too, is record-context.ts); ChartReader adds the timeline and record pages (Query).
 *
 * Throttling, timeouts and 5xx from DynamoDB surface as DependencyUnavailableError (the caller
 * answers 503); every other error is rethrown unchanged. No error message carries a value from the
 * chart.
 */
import { BatchGetItemCommand, GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { queryPages } from '../aws/query-pages';
import { awsCall } from '../aws/dependency-calls';
import { DependencyUnavailableError } from '../domain-errors';
import {
  BATCH_RETRY_ATTEMPTS,
  CHART_DEPENDENCY,
  PATIENT_SK,
  RECORD_PROJECTION,
  SK_PREFIX,
  TIMELINE_INDEX,
  backoffMs,
  chartRecordOf,
  isChartId,
  keyOf,
  patientPk,
  recordOf,
  recordSk,
  sleep,
  type ChartRecordOf,
  type PatientSummary,
  type PatientWithRecord,
  type TimelineEntry,
} from './chart-items';
import type { ChartRecord, ChartRecordKind, Patient } from './types';

/**
 * One patient, or one record of a patient, by id: one GetItem each. What a function that only asks
 * for a patient or a note bundles (the lab result writers, HL7 intake, the held route; issue 31
 * item 5: a class is bundled whole).
 */
export class ChartItemReader {
  constructor(
    protected readonly db: DynamoDBClient,
    protected readonly table: string,
  ) {}

  getPatient(patientId: string): Promise<Patient | undefined> {
    return this.getOne<Patient>(patientId, PATIENT_SK);
  }

  /** One record of the patient by kind and id (a class is bundled whole: no per-kind wrappers here; ChartStore has them). */
  getRecord<K extends ChartRecordKind>(patientId: string, kind: K, id: string): Promise<ChartRecordOf<K> | undefined> {
    if (!isChartId(id)) return Promise.resolve(undefined);
    return this.getOne<ChartRecordOf<K>>(patientId, recordSk(kind, id));
  }

  // ---- internals ----

  protected async getOne<T>(patientId: string, sk: string): Promise<T | undefined> {
    if (!isChartId(patientId)) return undefined;
    const out = await this.call(() =>
      this.db.send(
        new GetItemCommand({
          TableName: this.table,
          Key: keyOf(patientId, sk),
          ProjectionExpression: '#record',
          ExpressionAttributeNames: { '#record': 'record' },
        }),
      ),
    );
    return recordOf<T>(out.Item);
  }

  /** Runs one DynamoDB call; "try again later" failures become DependencyUnavailableError. */
  protected call<T>(run: () => Promise<T>): Promise<T> {
    return awsCall(CHART_DEPENDENCY, run);
  }
}

/** One patient, or one record with its patient (and encounter): GetItem and BatchGetItem only. */
export class ChartRecordReader extends ChartItemReader {
  // ---- reads for the exports: fewest calls ----

  /** The patient and one of the patient's records in one BatchGetItem. */
  async getPatientWith<K extends ChartRecordKind>(patientId: string, kind: K, id: string): Promise<PatientWithRecord<K>> {
    if (!isChartId(patientId)) return {};
    if (!isChartId(id)) return { patient: await this.getPatient(patientId) };
    const items = await this.batchGet(patientId, [PATIENT_SK, recordSk(kind, id)]);
    return { patient: recordOf<Patient>(items.get(PATIENT_SK)), record: recordOf<ChartRecordOf<K>>(items.get(recordSk(kind, id))) };
  }

  // ---- internals ----

  /** BatchGetItem of items of one patient; returns sk -> item. Retries unprocessed keys. */
  private async batchGet(patientId: string, sks: string[]): Promise<Map<string, Record<string, AttributeValue>>> {
    const found = new Map<string, Record<string, AttributeValue>>();
    let keys: Record<string, AttributeValue>[] = sks.map((sk) => keyOf(patientId, sk));
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt >= BATCH_RETRY_ATTEMPTS) throw new DependencyUnavailableError(CHART_DEPENDENCY);
      if (attempt > 0) await sleep(backoffMs(attempt));
      const out = await this.call(() =>
        this.db.send(
          new BatchGetItemCommand({
            RequestItems: { [this.table]: { Keys: keys, ...RECORD_PROJECTION } },
          }),
        ),
      );
      for (const item of out.Responses?.[this.table] ?? []) {
        if (item.sk?.S) found.set(item.sk.S, item);
      }
      keys = out.UnprocessedKeys?.[this.table]?.Keys ?? [];
    }
    return found;
  }
}

/** The record reads and the patient's timeline and record pages (the summary export, FHIR searches and $everything). */
export class ChartReader extends ChartRecordReader {
  /**
   * The patient and up to `limit` of the patient's records, newest first, in one Query on
   * `byTimeline` (more only when a page fills 1 MB).
   */
  async getPatientSummary(patientId: string, limit: number): Promise<PatientSummary> {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
    if (!isChartId(patientId)) return { records: [] };
    const { patient, entries } = await this.timelinePage(patientId, Math.max(limit, 1));
    return { patient, records: entries.slice(0, limit).map((entry) => entry.record) };
  }

  /** Up to `limit` of the patient's encounters, notes and assessments, newest first. */
  async recentRecords(patientId: string, limit: number): Promise<ChartRecord[]> {
    return (await this.getPatientSummary(patientId, limit)).records;
  }

  // ---- pages for the FHIR export: a position to continue from, never an offset ----

  /**
   * Up to `limit` of the patient's records, newest first, strictly older than `before` (a
   * `timeline` value returned earlier) when given; the patient itself only on the first page
   * (no `before`). Each entry carries its timeline value, the position to continue from.
   */
  async timelinePage(patientId: string, limit: number, before?: string): Promise<{ patient?: Patient; entries: TimelineEntry[] }> {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    if (!isChartId(patientId)) return { entries: [] };
    let patient: Patient | undefined;
    const entries: TimelineEntry[] = [];
    await queryPages(
      this.db,
      CHART_DEPENDENCY,
      () => ({
        TableName: this.table,
        IndexName: TIMELINE_INDEX,
        KeyConditionExpression: before === undefined ? '#pk = :pk' : '#pk = :pk AND #timeline < :before',
        ExpressionAttributeNames: { ...RECORD_PROJECTION.ExpressionAttributeNames, '#pk': 'pk', '#timeline': 'timeline' },
        ExpressionAttributeValues: { ':pk': { S: patientPk(patientId) }, ...(before === undefined ? {} : { ':before': { S: before } }) },
        ProjectionExpression: `${RECORD_PROJECTION.ProjectionExpression}, #timeline`,
        ScanIndexForward: false,
        Limit: limit - entries.length + (before === undefined && !patient ? 1 : 0),
      }),
      async (items) => {
        for (const item of items) {
          if (item.kind?.S === 'patient') {
            patient = recordOf<Patient>(item);
            continue;
          }
          const record = chartRecordOf(item);
          if (record && item.timeline?.S && entries.length < limit) entries.push({ record, position: item.timeline.S });
        }
        return entries.length < limit;
      },
    );
    return { patient, entries };
  }

  /**
   * Up to `limit` of the patient's records of one kind in id order, after the record id `after`
   * when given (a search page). No patient read: an unknown patient simply has no records.
   */
  async recordsOfKind<K extends ChartRecordKind>(patientId: string, kind: K, limit: number, after?: string): Promise<Array<ChartRecordOf<K>>> {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    if (!isChartId(patientId) || (after !== undefined && !isChartId(after))) return [];
    const records: Array<ChartRecordOf<K>> = [];
    await queryPages(
      this.db,
      CHART_DEPENDENCY,
      () => ({
        TableName: this.table,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', '#record': 'record' },
        ExpressionAttributeValues: { ':pk': { S: patientPk(patientId) }, ':prefix': { S: SK_PREFIX[kind] } },
        ProjectionExpression: '#record',
        Limit: limit - records.length,
      }),
      async (items) => {
        for (const item of items) {
          const record = recordOf<ChartRecordOf<K>>(item);
          if (record && records.length < limit) records.push(record);
        }
        return records.length < limit;
      },
      after === undefined ? undefined : keyOf(patientId, recordSk(kind, after)),
    );
    return records;
  }
}
