/**
 * The review queue of HL7 intake (docs/write-authority.md): what a partner sent that could not be filed
 * to a chart patient without a person deciding. Three kinds:
 *
 *   document   an MDM note whose patient was not resolved; the note is kept here, whole
 *   identity   a partner's view of a person (ADT) that did not link to a chart patient
 *   lab-result lab results (ORU) stored under an unresolved patient id; ids only (the results
 *              themselves stay encrypted in the results table)
 *
 *   chart table item   pk HELD#<nn>   sk <heldId>   (heldId = held-<receivedAt compact>-<keyed hash>;
 *                      nn = a stable hash of the heldId mod HELD_SHARDS, lib/dynamo/write-shards.ts)
 *                      attributes: kind, state (held | routed), partnerId, receivedAt, record (map), and
 *                      when routed: routedTo, routedBy, routedAt; when a routed identity was unlinked
 *                      (state held again): unlinkedFrom, unlinkedBy, unlinkedAt
 *
 * Writes are single-item conditional writes: holding is `attribute_not_exists` (a resent message
 * holds nothing twice: its heldId, hence its shard, is the same); routing moves state held -> routed
 * only once. Sharded (issue 31) so a burst of unresolved messages spreads over HELD_SHARDS
 * partitions; the list queries every shard and merges by heldId, which sorts by receipt time, so
 * its order and its `after` paging are those of one partition. Records held before sharding (pk
 * HELD) are still listed, read and routed (the legacy partition is one more query, and a get or
 * route that misses its shard looks there).
 */
import { GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import { ascending, mergeSortedPartitions, partitionsOf, shardedKeyFor } from '../dynamo/write-shards';
import type { Note, PersonName, Provenance } from '../chart/types';

export const HELD_KINDS = ['document', 'identity', 'lab-result'] as const;
export type HeldKind = (typeof HELD_KINDS)[number];
export type HeldState = 'held' | 'routed';
export const HELD_REASONS = [
  'patient-unresolved',
  'demographics-differ',
  'no-relationship',
  'link-disputed',
  'no-document-to-replace',
  'document-number-reused',
] as const;
export type HeldReason = (typeof HELD_REASONS)[number];

/** What the sender said about the person (PID), shown to the reviewer beside the chart's candidates. */
export interface ClaimedPerson {
  name?: PersonName;
  birthDate?: string;
  sex?: string;
  /** the identifiers of PID-3 as sent (value and assigning authority) */
  identifiers: Array<{ value: string; authority: string }>;
}

export type HeldRecordBody =
  { kind: 'document'; note: Omit<Note, 'patientId'> } | { kind: 'identity'; identityKey: string } | { kind: 'lab-result'; resultIds: string[] };

export interface HeldRecord {
  heldId: string;
  state: HeldState;
  provenance: Provenance;
  person: ClaimedPerson;
  body: HeldRecordBody;
  /**
   * why it was held: no patient resolved, the demographics disagreed with the chart, the partner has no
   * relationship with the patient named, a link of the partner's identity the chart now contradicts, a
   * replacement (MDM^T08/T10) named no document of the sender, or a T02 whose number the patient's
   * chart holds with other content (a number used before the register of numbers existed)
   */
  reason: HeldReason;
  routedTo?: string;
  routedBy?: string;
  routedAt?: string;
  /** a routed identity staff unlinked (back in the queue): the patient it was linked to, by whom, when */
  unlinkedFrom?: string;
  unlinkedBy?: string;
  unlinkedAt?: string;
}

const DEPENDENCY = 'chart-table';
const LEGACY_PK = 'HELD';
/** Partitions the held records are spread over. */
export const HELD_SHARDS = 16;
/** The partition of a held record. */
export const heldPkFor = (heldId: string) => shardedKeyFor(LEGACY_PK, heldId, HELD_SHARDS);
const HELD_ID = /^held-\d{14}-[0-9a-f]{24}$/;
/** The most records one Query of the list reads (its Limit doubles per partition up to this). */
const HELD_READ_MAX = 200;

export function isHeldId(value: unknown): value is string {
  return typeof value === 'string' && HELD_ID.test(value);
}

/** A held id that sorts by receipt time: `held-<YYYYMMDDHHmmss>-<24 hex>`. */
export function heldIdFor(receivedAt: string, keyedHash: string): string {
  const compact = receivedAt
    .replace(/[^0-9]/g, '')
    .slice(0, 14)
    .padEnd(14, '0');
  return `held-${compact}-${keyedHash.slice(0, 24)}`;
}

/**
 * Holds records for review (a conditional PutItem): what intake (HL7, FHIR DiagnosticReport) bundles,
 * none of the review's reads and routing (HeldRecordStore; issue 31 item 5: a class is bundled whole).
 */
export class HeldRecordHolder {
  constructor(
    protected readonly db: DynamoDBClient,
    protected readonly table: string,
  ) {}

  /** Holds a record; false when this held id is already held (a resend). */
  async hold(record: Omit<HeldRecord, 'state'>): Promise<boolean> {
    const item = {
      pk: heldPkFor(record.heldId),
      sk: record.heldId,
      kind: record.body.kind,
      state: 'held',
      partnerId: record.provenance.partnerId,
      receivedAt: record.provenance.receivedAt,
      record,
    };
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: marshall({ ...item, record: { ...record, state: 'held' } }, { removeUndefinedValues: true }),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}

/** The held records: holding (HeldRecordHolder), the reads of the review, and marking a record routed. */
export class HeldRecordStore extends HeldRecordHolder {
  async get(heldId: string): Promise<HeldRecord | undefined> {
    if (!isHeldId(heldId)) return undefined;
    for (const pk of [heldPkFor(heldId), LEGACY_PK]) {
      const out = await awsCall(DEPENDENCY, () =>
        this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: pk }, sk: { S: heldId } }, ConsistentRead: true })),
      );
      if (out.Item) return recordOf(out.Item);
    }
    return undefined;
  }

  /** Up to `limit` held records in a state, oldest first (by heldId), after `after` (a held id) when given: every shard merged. */
  async list(state: HeldState, limit: number, after?: string): Promise<HeldRecord[]> {
    if (after !== undefined && !isHeldId(after)) return [];
    if (limit <= 0) return [];
    // reads of each partition so far: the filter on state drops records after Limit is applied, so
    // a partition's first Query asks for the merge's batch and each further one for twice its last
    // (up to HELD_READ_MAX): a page of held records costs about a page of reads, and a partition
    // whose oldest records were routed long ago is passed in a few Queries, not one per batch
    const reads = new Map<string, number>();
    const { rows } = await mergeSortedPartitions<HeldRecord, Record<string, AttributeValue>>(
      partitionsOf(LEGACY_PK, HELD_SHARDS),
      limit,
      (a, b) => ascending(a.heldId, b.heldId),
      async (partition, batch, startKey) => {
        const n = reads.get(partition) ?? 0;
        reads.set(partition, n + 1);
        const out = await awsCall(DEPENDENCY, () =>
          this.db.send(
            new QueryCommand({
              TableName: this.table,
              KeyConditionExpression: after === undefined ? '#pk = :pk' : '#pk = :pk AND #sk > :after',
              FilterExpression: '#state = :state',
              // DynamoDB refuses an unused attribute name: #sk only with `after`
              ExpressionAttributeNames: { '#pk': 'pk', '#state': 'state', ...(after === undefined ? {} : { '#sk': 'sk' }) },
              ExpressionAttributeValues: { ':pk': { S: partition }, ':state': { S: state }, ...(after === undefined ? {} : { ':after': { S: after } }) },
              Limit: Math.min(HELD_READ_MAX, batch * 2 ** n),
              ExclusiveStartKey: startKey,
            }),
          ),
        );
        return { rows: (out.Items ?? []).map(recordOf), lastKey: out.LastEvaluatedKey };
      },
    );
    return rows;
  }

  /** Moves a held record to routed (once). False when it is not held (unknown or routed already). */
  async markRouted(heldId: string, patientId: string, routedBy: string, at: Date): Promise<boolean> {
    if (!isHeldId(heldId)) return false;
    if (await this.markRoutedIn(heldPkFor(heldId), heldId, patientId, routedBy, at)) return true;
    // a record held before sharding
    return this.markRoutedIn(LEGACY_PK, heldId, patientId, routedBy, at);
  }

  /**
   * Puts a routed record back in the queue (an unlinked identity): routed -> held, once, only while it
   * is routed to `patientId`. False otherwise.
   */
  async markUnlinked(heldId: string, patientId: string, unlinkedBy: string, at: Date): Promise<boolean> {
    if (!isHeldId(heldId)) return false;
    for (const pk of [heldPkFor(heldId), LEGACY_PK]) {
      try {
        await awsCall(DEPENDENCY, () =>
          this.db.send(
            new UpdateItemCommand({
              TableName: this.table,
              Key: { pk: { S: pk }, sk: { S: heldId } },
              UpdateExpression:
                'SET #state = :held, #record.#state = :held, #record.unlinkedFrom = :from, #record.unlinkedBy = :by, #record.unlinkedAt = :at REMOVE #record.routedTo, #record.routedBy, #record.routedAt',
              ConditionExpression: '#state = :routed AND #record.routedTo = :from',
              ExpressionAttributeNames: { '#state': 'state', '#record': 'record' },
              ExpressionAttributeValues: {
                ':routed': { S: 'routed' },
                ':held': { S: 'held' },
                ':from': { S: patientId },
                ':by': { S: unlinkedBy },
                ':at': { S: at.toISOString() },
              },
            }),
          ),
        );
        return true;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    }
    return false;
  }

  private async markRoutedIn(pk: string, heldId: string, patientId: string, routedBy: string, at: Date): Promise<boolean> {
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: pk }, sk: { S: heldId } },
            UpdateExpression: 'SET #state = :routed, #record.#state = :routed, #record.routedTo = :to, #record.routedBy = :by, #record.routedAt = :at',
            ConditionExpression: '#state = :held',
            ExpressionAttributeNames: { '#state': 'state', '#record': 'record' },
            ExpressionAttributeValues: {
              ':routed': { S: 'routed' },
              ':held': { S: 'held' },
              ':to': { S: patientId },
              ':by': { S: routedBy },
              ':at': { S: at.toISOString() },
            },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}

function recordOf(item: Record<string, AttributeValue>): HeldRecord {
  return unmarshall(item).record as HeldRecord;
}
