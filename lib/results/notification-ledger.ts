/**
 * The plain (non-PHI) notification bookkeeping of the results table, for the scheduled retry of
 * owed notifications (functions/retryResultNotifications.ts, lib/results/retry.ts): find the
 * versions whose notification is due, move the current pointer, mark a notification sent or
 * record a failed attempt. Plain attributes only: no encryptor, no lookup key, no S3, so the
 * retry function bundles only the DynamoDB client (and SQS for the notifier), as its `needs`
 * (results readwrite, notifications send) say.
 *
 * Item layout: result-store.ts documents the table. LabResultStore delegates these four methods
 * here (one implementation); this module never imports LabResultStore at run time, because that
 * pulls in KMS (lookup keys, envelopes) and S3 (documents).
 */
import { QueryCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { Tables } from '../config/service';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import { ascending, mergeSortedPartitions, partitionsOf, shardedKeyFor } from '../dynamo/write-shards';
import { CURRENT_SK, RESULTS_DEPENDENCY as DEPENDENCY, ResultItems, resultPk } from './result-items';
import { statusRank } from './status';
import type { VersionRecord } from './types';

/**
 * The byPatient index partition of versions whose notification is owed: the base of its shards
 * `NOTIFY#PENDING#<nn>` (and the legacy partition itself, where versions written before sharding
 * stay until they are sent).
 */
export const PENDING_PARTITION = 'NOTIFY#PENDING';

/**
 * Shards of the pending partition (lib/dynamo/write-shards.ts): every lab result writes its
 * version into the pending index and takes it out once notified, so 1,000 results a second are
 * 2,000 index writes a second; over 32 partitions that is about 63 a second each instead of all on
 * one key. The shard is a stable hash of the version id, so a version keeps its shard for good
 * (recordNotificationFailure moves only its sort key).
 */
export const PENDING_SHARDS = 32;

/** The pending partition (shard) of a version's index entry. */
export function pendingPartitionFor(versionId: string): string {
  return shardedKeyFor(PENDING_PARTITION, versionId, PENDING_SHARDS);
}
const BY_PATIENT = Tables.results.indexes.find((i) => i.name === 'byPatient')!.name;

export function pendingSortKey(at: Date, resultId: string, versionId: string): string {
  return `${at.toISOString()}#${resultId}#${versionId}`;
}

export class NotificationLedger {
  private readonly items: ResultItems;

  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {
    this.items = new ResultItems(db, table);
  }

  /**
   * Moves the current pointer to `version` when it outranks the current one (conditional
   * UpdateItem; plain attributes only, no KMS). Returns whether `version` is current afterwards.
   */
  async ensureCurrent(version: VersionRecord, now: Date): Promise<boolean> {
    const values = marshall({
      ':kind': 'current',
      ':resultId': version.resultId,
      ':versionId': version.versionId,
      ':versionSk': version.versionSk,
      ':senderId': version.senderId,
      ':status': version.status,
      ':resultedAtKey': version.resultedAtKey,
      ':rank': version.rank,
      ':patientPk': version.patientKey,
      ':patientSk': `${version.resultedAtKey}#${statusRank(version.status)}#${version.resultId}`,
      ':patientMatched': version.patientMatched,
      ':summary': version.summary,
      ':updatedAt': now.toISOString(),
    });
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: resultPk(version.resultId) }, sk: { S: CURRENT_SK } },
            UpdateExpression:
              'SET #kind = :kind, resultId = :resultId, versionId = :versionId, versionSk = :versionSk, senderId = :senderId, #status = :status, resultedAtKey = :resultedAtKey, #rank = :rank, patientPk = :patientPk, patientSk = :patientSk, patientMatched = :patientMatched, summary = :summary, updatedAt = :updatedAt',
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

  /** The notification of a version went out: leave the pending index. */
  async markNotificationSent(resultId: string, versionSk: string, now: Date): Promise<void> {
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: resultPk(resultId) }, sk: { S: versionSk } },
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

  /** A publish failed: count it and schedule the next attempt (stays pending). */
  async recordNotificationFailure(
    version: Pick<VersionRecord, 'resultId' | 'versionId' | 'versionSk'>,
    attempts: number,
    nextAttemptAt: Date,
    errorName: string,
  ): Promise<void> {
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
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
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /**
   * Versions whose notification is due (next attempt at or before `now`), oldest first over all
   * pending shards and the legacy unsharded partition (mergeSortedPartitions: the order one
   * partition would have had, sort keys `<next attempt>#<resultId>#<versionId>` being unique), read
   * back with a consistent GetItem (the index is eventually consistent and may be projected
   * narrowly). At most `limit`.
   */
  async pendingNotifications(now: Date, limit: number): Promise<VersionRecord[]> {
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
              IndexName: BY_PATIENT,
              KeyConditionExpression: 'patientPk = :pk AND patientSk <= :upper',
              ExpressionAttributeValues: { ':pk': { S: partition }, ':upper': { S: upper } },
              Limit: batch,
              ExclusiveStartKey: start,
            }),
          ),
        );
        return { rows: out.Items ?? [], lastKey: out.LastEvaluatedKey };
      },
    );
    const records: VersionRecord[] = [];
    for (const item of rows) {
      const pk = item.pk?.S;
      const sk = item.sk?.S;
      if (!pk || !sk) continue;
      const record = await this.items.getVersionRecord(pk.slice('RESULT#'.length), sk);
      if (record && record.notificationState === 'pending') records.push(record);
    }
    return records;
  }
}

/** What the notification retry needs (LabResultStore offers the same methods by delegation). */
export type NotificationBookkeeping = Pick<NotificationLedger, 'pendingNotifications' | 'ensureCurrent' | 'markNotificationSent' | 'recordNotificationFailure'>;
