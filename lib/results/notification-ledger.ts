/**
 * The plain (non-PHI) notification bookkeeping of the results table, for the scheduled retry of
 * owed notifications (functions/retryResultNotifications.ts, lib/results/retry.ts): find the
 * versions whose notification is due, move the current pointer, mark a notification sent or
 * record a failed attempt. Plain attributes only: no encryptor, no lookup key, no S3, so the
 * retry function bundles only the DynamoDB client (and SQS for the notifier), as its `needs`
 * (results readwrite, notifications send) say.
 *
 * Item layout: result-store.ts documents the table. An owed notification is a marker item
 * (pk NOTIFY#PENDING#<nn>, sk <resultId>#<versionId>; versions stored before issue 31 item 2 keep
 * theirs in the version item and the byPatient index, handled here too). LabResultWriter (and
 * LabResultStore through it) delegates the per-version bookkeeping to VersionNotifications (one
 * implementation); the retry job holds NotificationLedger, which adds the reads of what is owed. This
 * module never imports the store or the writer at run time, because they pull in KMS (lookup keys,
 * envelopes) and S3 (documents).
 */
import { DeleteItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '../aws/attribute-values';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import { ascending, mergeSortedPartitions, partitionsOf, shardedKeyFor } from '../dynamo/write-shards';
import { CURRENT_SK, RESULTS_BY_PATIENT_INDEX, RESULTS_DEPENDENCY as DEPENDENCY, ResultItems, getVersionRecord, resultPk } from './result-items';
import { statusRank } from './status';
import type { VersionRecord } from './types';

/**
 * The partition of owed notifications, the base of its shards `NOTIFY#PENDING#<nn>`: in the base
 * table the notification markers (issue 31 item 2); in the byPatient index versions of the older
 * layout (the legacy partition itself holds versions written before sharding) until they are sent.
 */
export const PENDING_PARTITION = 'NOTIFY#PENDING';

/**
 * Shards of the pending partition (lib/dynamo/write-shards.ts): every lab result writes its
 * marker and deletes it once notified, so 1,000 results a second are 2,000 writes a second; over
 * 32 partitions that is about 63 a second each instead of all on one key. The shard is a stable
 * hash of the version id, so a version keeps its shard for good.
 */
export const PENDING_SHARDS = 32;

/**
 * Shard Queries in flight at once when the retry job reads what is owed (a background job: no burst
 * of 33 requests against the table; what it reads is the same).
 */
export const PENDING_READ_CONCURRENCY = 4;

/** The pending partition (shard) of a version's index entry. */
export function pendingPartitionFor(versionId: string): string {
  return shardedKeyFor(PENDING_PARTITION, versionId, PENDING_SHARDS);
}

export function pendingSortKey(at: Date, resultId: string, versionId: string): string {
  return `${at.toISOString()}#${resultId}#${versionId}`;
}

/** The key of a version's notification marker (stable: a resend of the same submission names the same marker). */
export function notificationMarkerKey(resultId: string, versionId: string): { pk: string; sk: string } {
  return { pk: pendingPartitionFor(versionId), sk: `${resultId}#${versionId}` };
}

const keyOf = (resultId: string, versionId: string): Record<string, AttributeValue> => {
  const { pk, sk } = notificationMarkerKey(resultId, versionId);
  return { pk: { S: pk }, sk: { S: sk } };
};

/** What a marker holds besides its key. */
export interface NotificationMarker {
  versionSk: string;
  /** when the retry job may take it (ISO) */
  dueAt: string;
  attempts: number;
  /** the summary ciphertext the current pointer takes over (so the retry job moves the pointer without KMS) */
  summary?: string | Uint8Array;
}

function markerOf(item: Record<string, AttributeValue>): NotificationMarker {
  return {
    versionSk: item.versionSk?.S ?? '',
    dueAt: item.dueAt?.S ?? '',
    attempts: Number(item.attempts?.N ?? 0),
    ...(item.summary?.B ? { summary: item.summary.B } : item.summary?.S ? { summary: item.summary.S } : {}),
  };
}

/** The marker of a version, if its notification is still owed (consistent read). */
async function markerFor(items: ResultItems, resultId: string, versionId: string): Promise<NotificationMarker | undefined> {
  const { pk, sk } = notificationMarkerKey(resultId, versionId);
  const item = await items.getItem(pk, sk);
  return item ? markerOf(item) : undefined;
}

/**
 * A version record with its notification facts from its marker (a version of the marker ledger
 * whose marker is gone was notified). Reads only: the version readers use it without the ledger.
 */
export async function withNotificationState(items: ResultItems, record: VersionRecord): Promise<VersionRecord> {
  if (record.notificationLedger !== 'marker') return record;
  const marker = await markerFor(items, record.resultId, record.versionId);
  if (!marker) return { ...record, notificationState: 'sent', notificationAttempts: 0 };
  return { ...record, notificationState: 'pending', notificationAttempts: marker.attempts, ...(marker.summary ? { summary: marker.summary } : {}) };
}

/**
 * The bookkeeping of one version's notification at a time: its marker, the current pointer, sent or
 * failed. What the writers of versions bundle (LabResultWriter): none of the retry job's reads of
 * what is owed (NotificationLedger below; issue 31 item 5: a class is bundled whole).
 */
export class VersionNotifications {
  protected readonly items: ResultItems;

  constructor(
    protected readonly db: DynamoDBClient,
    protected readonly table: string,
  ) {
    this.items = new ResultItems(db, table);
  }

  // ------------------------------------------------------------ the marker (versions since issue 31 item 2)

  /** The marker of a version, if its notification is still owed (consistent read). */
  async getMarker(resultId: string, versionId: string): Promise<NotificationMarker | undefined> {
    return markerFor(this.items, resultId, versionId);
  }

  /** Takes a marker away (its notification went out, or it names no version). */
  async deleteMarker(resultId: string, versionId: string): Promise<void> {
    await awsCall(DEPENDENCY, () => this.db.send(new DeleteItemCommand({ TableName: this.table, Key: keyOf(resultId, versionId) })));
  }

  /** A version record with its notification facts from its marker (a version of the marker ledger whose marker is gone was notified). */
  async withNotificationState(record: VersionRecord): Promise<VersionRecord> {
    return withNotificationState(this.items, record);
  }

  // ------------------------------------------------------------ both ledgers

  /**
   * Moves the current pointer to `version` when it outranks the current one (conditional
   * UpdateItem; plain attributes only, no KMS). Returns whether `version` is current afterwards.
   * A version without a summary (its marker is gone: its pointer step was done) only reads the
   * pointer.
   */
  async ensureCurrent(version: VersionRecord, _now: Date): Promise<boolean> {
    if (version.summary === undefined) return (await this.items.getPointer(version.resultId))?.versionId === version.versionId;
    const values = marshall({
      ':versionId': version.versionId,
      ':versionSk': version.versionSk,
      ':senderId': version.senderId,
      ':partnerId': version.partnerId,
      ':rank': version.rank,
      ':patientPk': version.patientKey,
      ':patientSk': `${version.resultedAtKey}#${statusRank(version.status)}#${version.resultId}`,
      ':patientMatched': version.patientMatched,
      ':summary': version.summary,
    });
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: resultPk(version.resultId) }, sk: { S: CURRENT_SK } },
            // what the keys and the version sort key say (result id, resultedAtKey, status) is not repeated; a pointer
            // written before issue 31 item 2 loses those copies here, so none is left stale
            UpdateExpression:
              'SET versionId = :versionId, versionSk = :versionSk, senderId = :senderId, partnerId = :partnerId, #rank = :rank, patientPk = :patientPk, patientSk = :patientSk, patientMatched = :patientMatched, summary = :summary REMOVE #kind, resultId, #status, resultedAtKey, updatedAt',
            ConditionExpression: 'attribute_not_exists(#rank) OR #rank < :rank',
            ExpressionAttributeNames: { '#kind': 'kind', '#status': 'status', '#rank': 'rank' },
            ExpressionAttributeValues: values,
          }),
        ),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
    const pointer = await this.items.getPointer(version.resultId);
    return pointer?.versionId === version.versionId;
  }

  /** The notification of a version went out: its marker goes (or, for a version of the older layout, it leaves the pending index). */
  async markNotificationSent(version: Pick<VersionRecord, 'resultId' | 'versionId' | 'versionSk' | 'notificationLedger'>, now: Date): Promise<void> {
    if (version.notificationLedger === 'marker') return this.deleteMarker(version.resultId, version.versionId);
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: resultPk(version.resultId) }, sk: { S: version.versionSk } },
            UpdateExpression: 'SET notificationState = :sent, notifiedAt = :now REMOVE patientPk, patientSk',
            ConditionExpression: 'notificationState = :pending',
            ExpressionAttributeValues: { ':sent': { S: 'sent' }, ':pending': { S: 'pending' }, ':now': { S: now.toISOString() } },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error; // already sent
    }
  }

  /** A publish failed: count it and schedule the next attempt (stays owed). */
  async recordNotificationFailure(
    version: Pick<VersionRecord, 'resultId' | 'versionId' | 'versionSk' | 'notificationLedger'>,
    attempts: number,
    nextAttemptAt: Date,
    errorName: string,
  ): Promise<void> {
    const marker = version.notificationLedger === 'marker';
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand(
            marker
              ? {
                  TableName: this.table,
                  Key: keyOf(version.resultId, version.versionId),
                  UpdateExpression: 'SET attempts = :attempts, lastNotificationError = :error, dueAt = :next',
                  ConditionExpression: 'attribute_exists(pk)',
                  ExpressionAttributeValues: {
                    ':attempts': { N: String(attempts) },
                    ':error': { S: errorName.slice(0, 64) },
                    ':next': { S: nextAttemptAt.toISOString() },
                  },
                }
              : {
                  TableName: this.table,
                  Key: { pk: { S: resultPk(version.resultId) }, sk: { S: version.versionSk } },
                  UpdateExpression: 'SET notificationAttempts = :attempts, lastNotificationError = :error, patientSk = :next',
                  ConditionExpression: 'notificationState = :pending',
                  ExpressionAttributeValues: {
                    ':attempts': { N: String(attempts) },
                    ':error': { S: errorName.slice(0, 64) },
                    ':next': { S: pendingSortKey(nextAttemptAt, version.resultId, version.versionId) },
                    ':pending': { S: 'pending' },
                  },
                },
          ),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}

/** The whole ledger: the bookkeeping of VersionNotifications and the retry job's reads of the owed notifications. */
export class NotificationLedger extends VersionNotifications {
  /**
   * Versions whose notification is due (next attempt at or before `now`), at most `limit`: first
   * those of the older layout (the pending shards of the byPatient index and the legacy unsharded
   * partition, oldest first), then the markers (the same shards in the base table, Queries with a
   * filter on the due time, merged in key order). Each is read back with a consistent GetItem of its
   * version item. A marker whose version item does not exist (the request that wrote it stopped
   * before the version: nothing was stored) is taken away.
   */
  async pendingNotifications(now: Date, limit: number): Promise<VersionRecord[]> {
    const records = await this.pendingInVersionIndex(now, limit);
    if (records.length < limit) records.push(...(await this.pendingMarkers(now, limit - records.length)));
    return records;
  }

  private async pendingMarkers(now: Date, limit: number): Promise<VersionRecord[]> {
    const records: VersionRecord[] = [];
    // a page of due markers may name versions that were never stored: read on until `limit` or none are left
    let after = '';
    for (;;) {
      const { rows, more } = await mergeSortedPartitions<Record<string, AttributeValue>, Record<string, AttributeValue>>(
        partitionsOf(PENDING_PARTITION, PENDING_SHARDS),
        limit - records.length,
        (a, b) => ascending(a.sk?.S ?? '', b.sk?.S ?? ''),
        async (partition, batch, start) => {
          const out = await awsCall(DEPENDENCY, () =>
            this.db.send(
              new QueryCommand({
                TableName: this.table,
                KeyConditionExpression: after ? 'pk = :pk AND sk > :after' : 'pk = :pk',
                FilterExpression: 'dueAt <= :now',
                ExpressionAttributeValues: { ':pk': { S: partition }, ':now': { S: now.toISOString() }, ...(after ? { ':after': { S: after } } : {}) },
                Limit: batch,
                ExclusiveStartKey: start,
                ConsistentRead: true,
              }),
            ),
          );
          return { rows: out.Items ?? [], lastKey: out.LastEvaluatedKey };
        },
        { concurrency: PENDING_READ_CONCURRENCY },
      );
      for (const item of rows) {
        after = item.sk!.S!;
        const [resultId, versionId] = after.split('#') as [string, string];
        const marker = markerOf(item);
        const record = await getVersionRecord(this.items, resultId, marker.versionSk);
        if (!record) {
          await this.deleteMarker(resultId, versionId);
          continue;
        }
        records.push({
          ...record,
          notificationLedger: 'marker',
          notificationState: 'pending',
          notificationAttempts: marker.attempts,
          ...(marker.summary ? { summary: marker.summary } : {}),
        });
      }
      if (records.length >= limit || !more || rows.length === 0) return records;
    }
  }

  private async pendingInVersionIndex(now: Date, limit: number): Promise<VersionRecord[]> {
    const upper = `${now.toISOString()}$`;
    const { rows } = await mergeSortedPartitions<Record<string, AttributeValue>, Record<string, AttributeValue>>(
      partitionsOf(PENDING_PARTITION, PENDING_SHARDS),
      limit,
      (a, b) => ascending(a.patientSk?.S ?? '', b.patientSk?.S ?? ''),
      async (partition, batch, start) => {
        const out = await awsCall(DEPENDENCY, () =>
          this.db.send(
            new QueryCommand({
              TableName: this.table,
              IndexName: RESULTS_BY_PATIENT_INDEX,
              KeyConditionExpression: 'patientPk = :pk AND patientSk <= :upper',
              ExpressionAttributeValues: { ':pk': { S: partition }, ':upper': { S: upper } },
              Limit: batch,
              ExclusiveStartKey: start,
            }),
          ),
        );
        return { rows: out.Items ?? [], lastKey: out.LastEvaluatedKey };
      },
      { concurrency: PENDING_READ_CONCURRENCY },
    );
    const records: VersionRecord[] = [];
    for (const item of rows) {
      const pk = item.pk?.S;
      const sk = item.sk?.S;
      if (!pk || !sk) continue;
      const record = await getVersionRecord(this.items, pk.slice('RESULT#'.length), sk);
      if (record && record.notificationLedger === 'version-item' && record.notificationState === 'pending') records.push(record);
    }
    return records;
  }
}

/** What the notification retry needs (LabResultStore offers the same methods by delegation). */
export type NotificationBookkeeping = Pick<NotificationLedger, 'pendingNotifications' | 'ensureCurrent' | 'markNotificationSent' | 'recordNotificationFailure'>;
