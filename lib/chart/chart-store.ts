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
 * ChartReader (chart-reader.ts) holds the reads, so that a function that only reads bundles no
 * writer (issue 31 item 5); ChartStore extends it with the writes and `scanPatients`, the one Scan
 * (for `npm run reindex`); chart-items.ts holds the layout both use. Throttling, timeouts and 5xx from DynamoDB surface as DependencyUnavailableError
 * (the caller answers 503); every other error is rethrown unchanged. No error message carries a
 * value from the chart.
 */
import { BatchWriteItemCommand, ScanCommand, PutItemCommand, type AttributeValue, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { isConditionalCheckFailed } from '../aws/dependency-calls';
import { DependencyUnavailableError } from '../domain-errors';
import { ChartReader } from './chart-reader';
import {
  BATCH_RETRY_ATTEMPTS,
  CHART_DEPENDENCY,
  PATIENT_SK,
  PATIENT_TIMELINE,
  backoffMs,
  isChartId,
  patientPk,
  recordOf,
  recordSk,
  sleep,
  type ChartEntry,
  type ChartEntryKind,
} from './chart-items';
import type { Assessment, Encounter, Note, Patient } from './types';

export {
  CHART_ID_PATTERN,
  isChartId,
  type ChartEntry,
  type ChartEntryKind,
  type ChartRecordOf,
  type PatientSummary,
  type PatientWithRecord,
  type RecordContext,
  type TimelineEntry,
} from './chart-items';
export { ChartReader } from './chart-reader';

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

/** BatchWriteItem accepts at most 25 requests. */
export const BATCH_WRITE_SIZE = 25;

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

/** The whole chart store: the reads of ChartReader, the writes, and the reindex scan. */
export class ChartStore extends ChartReader {
  // ---- one record by kind (the writers and HL7 intake read notes; the readers' bundles use getRecord) ----

  getEncounter(patientId: string, encounterId: string): Promise<Encounter | undefined> {
    return this.getRecord(patientId, 'encounter', encounterId);
  }

  getNote(patientId: string, noteId: string): Promise<Note | undefined> {
    return this.getRecord(patientId, 'note', noteId);
  }

  getAssessment(patientId: string, assessmentId: string): Promise<Assessment | undefined> {
    return this.getRecord(patientId, 'assessment', assessmentId);
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

  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    let pending = requests;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= BATCH_RETRY_ATTEMPTS) throw new DependencyUnavailableError(CHART_DEPENDENCY);
      if (attempt > 0) await sleep(backoffMs(attempt));
      const out = await this.call(() => this.db.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: pending } })));
      pending = out.UnprocessedItems?.[this.table] ?? [];
    }
  }
}
