/**
 * The chart table: patients, encounters, notes and assessments, one partition per patient.
 *
 * Item layout (all key attributes are strings):
 *
 *   pk        PATIENT#<patientId>
 *   sk        PATIENT | ENCOUNTER#<encounterId> | NOTE#<noteId> | ASSESSMENT#<assessmentId>
 *   kind      patient | encounter | note | assessment
 *   timeline  records: <instant as UTC, YYYY-MM-DDTHH:mm:ss.sssZ>#<kind>#<id>
 *             (encounter: admitAt, note: createdAt, assessment: performedAt)
 *             patient:  PATIENT, which sorts after every instant (they start with a digit), so a
 *             newest-first Query on the LSI `byTimeline` returns the patient item first, then the
 *             records newest first: a patient summary is one Query.
 *   record    the domain object (lib/chart/types.ts) as a DynamoDB map, exactly as given
 *
 * Every key includes the patient, so a record asked for under another patient is simply not found.
 * No method scans. Throttling, timeouts and 5xx from DynamoDB surface as DependencyUnavailableError
 * (the caller answers 503); every other error is rethrown unchanged. No error message carries a
 * value from the chart.
 */
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  GetItemCommand,
  ScanCommand,
  PutItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { queryPages } from '../aws/query-pages';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import { DependencyUnavailableError } from '../domain-errors';
import { Tables } from '../config/service';
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

const DEPENDENCY = 'chart-table';
const PATIENT_SK = 'PATIENT';
/** Sorts after every `YYYY-...` instant, so a newest-first timeline query meets the patient first. */
const PATIENT_TIMELINE = 'PATIENT';
const TIMELINE_INDEX = Tables.chart.indexes.find((i) => i.name === 'byTimeline')!.name;
/** BatchWriteItem accepts at most 25 requests. */
export const BATCH_WRITE_SIZE = 25;
const BATCH_RETRY_ATTEMPTS = 8;
const BATCH_RETRY_BASE_MS = 25;
const BATCH_RETRY_MAX_MS = 1000;

const SK_PREFIX: Record<ChartRecordKind, string> = { encounter: 'ENCOUNTER#', note: 'NOTE#', assessment: 'ASSESSMENT#' };

const patientPk = (patientId: string) => `PATIENT#${patientId}`;
const recordSk = (kind: ChartRecordKind, id: string) => `${SK_PREFIX[kind]}${id}`;

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

function keyOf(patientId: string, sk: string): Record<string, AttributeValue> {
  return { pk: { S: patientPk(patientId) }, sk: { S: sk } };
}

const RECORD_PROJECTION = { ProjectionExpression: '#sk, #kind, #record', ExpressionAttributeNames: { '#sk': 'sk', '#kind': 'kind', '#record': 'record' } };

function recordOf<T>(item: Record<string, AttributeValue> | undefined): T | undefined {
  if (!item?.record) return undefined;
  return unmarshall({ record: item.record }).record as T;
}

function chartRecordOf(item: Record<string, AttributeValue>): ChartRecord | undefined {
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Full-jitter exponential backoff for retrying unprocessed batch items. */
function backoffMs(attempt: number): number {
  const ceiling = Math.min(BATCH_RETRY_MAX_MS, BATCH_RETRY_BASE_MS * 2 ** attempt);
  return Math.floor(ceiling / 2 + Math.random() * (ceiling / 2));
}

export class ChartStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  // ---- single reads: one GetItem each ----

  getPatient(patientId: string): Promise<Patient | undefined> {
    return this.getOne<Patient>(patientId, PATIENT_SK);
  }

  getEncounter(patientId: string, encounterId: string): Promise<Encounter | undefined> {
    return this.getRecord(patientId, 'encounter', encounterId);
  }

  getNote(patientId: string, noteId: string): Promise<Note | undefined> {
    return this.getRecord(patientId, 'note', noteId);
  }

  getAssessment(patientId: string, assessmentId: string): Promise<Assessment | undefined> {
    return this.getRecord(patientId, 'assessment', assessmentId);
  }

  getRecord<K extends ChartRecordKind>(patientId: string, kind: K, id: string): Promise<ChartRecordOf<K> | undefined> {
    if (!isChartId(id)) return Promise.resolve(undefined);
    return this.getOne<ChartRecordOf<K>>(patientId, recordSk(kind, id));
  }

  // ---- reads for the exports: fewest calls ----

  /** The patient and one of the patient's records in one BatchGetItem. */
  async getPatientWith<K extends ChartRecordKind>(patientId: string, kind: K, id: string): Promise<PatientWithRecord<K>> {
    if (!isChartId(patientId)) return {};
    if (!isChartId(id)) return { patient: await this.getPatient(patientId) };
    const items = await this.batchGet(patientId, [PATIENT_SK, recordSk(kind, id)]);
    return { patient: recordOf<Patient>(items.get(PATIENT_SK)), record: recordOf<ChartRecordOf<K>>(items.get(recordSk(kind, id))) };
  }

  /**
   * Patient, note and the note's encounter: one BatchGetItem, then one GetItem only when the note
   * names an encounter (and the patient exists).
   */
  getNoteContext(patientId: string, noteId: string): Promise<RecordContext<'note'>> {
    return this.getRecordContext(patientId, 'note', noteId);
  }

  /** Patient, assessment and the assessment's encounter; same call pattern as getNoteContext. */
  getAssessmentContext(patientId: string, assessmentId: string): Promise<RecordContext<'assessment'>> {
    return this.getRecordContext(patientId, 'assessment', assessmentId);
  }

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
      DEPENDENCY,
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
      DEPENDENCY,
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

  /**
   * One page of the chart's patient items (a Scan filtered to sk PATIENT: record items are read and
   * dropped by DynamoDB, never returned). For `npm run reindex`; `exclusiveStartKey` resumes.
   */
  async scanPatients(options: {
    limit: number;
    exclusiveStartKey?: Record<string, string>;
  }): Promise<{ patients: Patient[]; lastKey?: Record<string, string> }> {
    const out = await this.call(() =>
      this.db.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: '#sk = :patient',
          ProjectionExpression: '#record',
          ExpressionAttributeNames: { '#sk': 'sk', '#record': 'record' },
          ExpressionAttributeValues: { ':patient': { S: PATIENT_SK } },
          Limit: options.limit,
          ConsistentRead: true,
          ExclusiveStartKey: options.exclusiveStartKey ? marshall(options.exclusiveStartKey) : undefined,
        }),
      ),
    );
    const patients = (out.Items ?? []).map((item) => recordOf<Patient>(item)).filter((p): p is Patient => !!p);
    return { patients, lastKey: out.LastEvaluatedKey ? (unmarshall(out.LastEvaluatedKey) as Record<string, string>) : undefined };
  }

  // ---- writers: upserts ----

  putPatient(patient: Patient): Promise<void> {
    return this.putEntry({ kind: 'patient', record: patient });
  }

  putEncounter(encounter: Encounter): Promise<void> {
    return this.putEntry({ kind: 'encounter', record: encounter });
  }

  putNote(note: Note): Promise<void> {
    return this.putEntry({ kind: 'note', record: note });
  }

  /**
   * Intake's note write (docs/write-authority.md): the note is written only when no note has its id
   * under the patient. False when one has (nothing written). Never an unconditional put.
   */
  async putNoteIfAbsent(note: Note): Promise<boolean> {
    const Item = chartItem({ kind: 'note', record: note });
    try {
      await this.call(() => this.db.send(new PutItemCommand({ TableName: this.table, Item, ConditionExpression: 'attribute_not_exists(pk)' })));
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * A new version of a partner's own note: the stored version is first copied to
   * `NOTEVERSION#<noteId>#<version>` (kept, outside the timeline), then the note is replaced on
   * condition that it still is that version and belongs to `partnerId`. False when there is no note of
   * that partner with this id, or another write came first (nothing replaced).
   */
  async replacePartnerNote(note: Note, partnerId: string): Promise<boolean> {
    const stored = await this.getNote(note.patientId, note.noteId);
    if (!stored || stored.provenance?.partnerId !== partnerId) return false;
    const previous = stored.version ?? 1;
    const copy = marshall(
      { pk: patientPk(note.patientId), sk: `NOTEVERSION#${note.noteId}#${String(previous).padStart(6, '0')}`, kind: 'note-version', record: stored },
      { removeUndefinedValues: true },
    );
    await this.call(() => this.db.send(new PutItemCommand({ TableName: this.table, Item: copy })));
    const Item = chartItem({ kind: 'note', record: { ...note, version: previous + 1 } });
    try {
      await this.call(() =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item,
            ConditionExpression:
              'attribute_exists(pk) AND #record.#provenance.#partnerId = :partnerId AND (#record.#version = :version OR attribute_not_exists(#record.#version))',
            ExpressionAttributeNames: { '#record': 'record', '#provenance': 'provenance', '#partnerId': 'partnerId', '#version': 'version' },
            ExpressionAttributeValues: { ':partnerId': { S: partnerId }, ':version': { N: String(previous) } },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  putAssessment(assessment: Assessment): Promise<void> {
    return this.putEntry({ kind: 'assessment', record: assessment });
  }

  /**
   * Upserts many entries with BatchWriteItem, 25 per call, retrying unprocessed items with jittered
   * exponential backoff. Every item is built (and checked) before the first write. Entries with the
   * same key are written once, the last one winning. Not atomic: after a failure some chunks may be
   * written; running it again converges (puts are idempotent). Returns the number of items written.
   */
  async putAll(entries: readonly ChartEntry[]): Promise<number> {
    const byKey = new Map<string, Record<string, AttributeValue>>();
    for (const entry of entries) {
      const item = chartItem(entry);
      byKey.set(`${item.pk.S}\u0000${item.sk.S}`, item);
    }
    const requests: WriteRequest[] = [...byKey.values()].map((Item) => ({ PutRequest: { Item } }));
    for (let i = 0; i < requests.length; i += BATCH_WRITE_SIZE) {
      await this.batchWrite(requests.slice(i, i + BATCH_WRITE_SIZE));
    }
    return requests.length;
  }

  // ---- internals ----

  private async putEntry(entry: ChartEntry): Promise<void> {
    const Item = chartItem(entry);
    await this.call(() => this.db.send(new PutItemCommand({ TableName: this.table, Item })));
  }

  private async getOne<T>(patientId: string, sk: string): Promise<T | undefined> {
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

  private async getRecordContext<K extends 'note' | 'assessment'>(patientId: string, kind: K, id: string): Promise<RecordContext<K>> {
    const found = await this.getPatientWith(patientId, kind, id);
    const encounterId = (found.record as Note | Assessment | undefined)?.encounterId;
    if (!found.patient || !found.record || !encounterId) return found;
    return { ...found, encounter: await this.getEncounter(patientId, encounterId) };
  }

  /** BatchGetItem of items of one patient; returns sk -> item. Retries unprocessed keys. */
  private async batchGet(patientId: string, sks: string[]): Promise<Map<string, Record<string, AttributeValue>>> {
    const found = new Map<string, Record<string, AttributeValue>>();
    let keys: Record<string, AttributeValue>[] = sks.map((sk) => keyOf(patientId, sk));
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt >= BATCH_RETRY_ATTEMPTS) throw new DependencyUnavailableError(DEPENDENCY);
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

  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    let pending = requests;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= BATCH_RETRY_ATTEMPTS) throw new DependencyUnavailableError(DEPENDENCY);
      if (attempt > 0) await sleep(backoffMs(attempt));
      const out = await this.call(() => this.db.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: pending } })));
      pending = out.UnprocessedItems?.[this.table] ?? [];
    }
  }

  /** Runs one DynamoDB call; "try again later" failures become DependencyUnavailableError. */
  private call<T>(run: () => Promise<T>): Promise<T> {
    return awsCall(DEPENDENCY, run);
  }
}
