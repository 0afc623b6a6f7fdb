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
 * (for `npm run reindex`); chart-items.ts holds the layout both use and the item of an entry
 * (chartItem); ChartNoteWriter (chart-note-writer.ts) holds intake's conditional note writes, so
 * that the intake functions bundle neither ChartReader's pages nor ChartStore's other writes. Throttling, timeouts and 5xx from DynamoDB surface as DependencyUnavailableError
 * (the caller answers 503); every other error is rethrown unchanged. No error message carries a
 * value from the chart.
 */
import { BatchWriteItemCommand, ScanCommand, PutItemCommand, type AttributeValue, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { DependencyUnavailableError } from '../domain-errors';
import { ChartReader } from './chart-reader';
import { BATCH_RETRY_ATTEMPTS, CHART_DEPENDENCY, PATIENT_SK, backoffMs, recordOf, sleep, chartItem, type ChartEntry } from './chart-items';
import { ChartNoteWriter } from './chart-note-writer';
import type { Assessment, Encounter, Note, Patient } from './types';

export {
  CHART_ID_PATTERN,
  InvalidChartRecordError,
  chartItem,
  isCalendarDate,
  isChartId,
  timelineInstant,
  type ChartEntry,
  type ChartEntryKind,
  type ChartRecordOf,
  type PatientSummary,
  type PatientWithRecord,
  type RecordContext,
  type TimelineEntry,
} from './chart-items';
export { ChartReader } from './chart-reader';

/** BatchWriteItem accepts at most 25 requests. */
export const BATCH_WRITE_SIZE = 25;

/** The whole chart store: the reads of ChartReader, the writes, and the reindex scan. */
export class ChartStore extends ChartReader {
  private readonly notes = new ChartNoteWriter(this.db, this.table);

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

  /** Intake's conditional note write (ChartNoteWriter, the one implementation). */
  putNoteIfAbsent(note: Note): Promise<boolean> {
    return this.notes.putNoteIfAbsent(note);
  }

  /** A new version of a partner's own note (ChartNoteWriter, the one implementation). */
  replacePartnerNote(note: Note, partnerId: string): Promise<boolean> {
    return this.notes.replacePartnerNote(note, partnerId);
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
