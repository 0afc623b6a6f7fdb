/**
 * The review queue of HL7 intake (docs/write-authority.md): what a partner sent that could not be filed
 * to a chart patient without a person deciding. Three kinds:
 *
 *   document   an MDM note whose patient was not resolved; the note is kept here, whole
 *   identity   a partner's view of a person (ADT) that did not link to a chart patient
 *   lab-result lab results (ORU) stored under an unresolved patient id; ids only (the results
 *              themselves stay encrypted in the results table)
 *
 *   chart table item   pk HELD   sk <heldId>        (heldId = held-<receivedAt compact>-<keyed hash>)
 *                      attributes: kind, state (held | routed), partnerId, receivedAt, record (map), and
 *                      when routed: routedTo, routedBy, routedAt
 *
 * Writes are single-item conditional writes: holding is `attribute_not_exists` (a resent message
 * holds nothing twice); routing moves state held -> routed only once. One partition: at the scale of
 * a review queue (people read it) this is enough; issue 31 measures it.
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import { queryPages } from '../aws/query-pages';
import type { Note, PersonName, Provenance } from '../chart/types';

export const HELD_KINDS = ['document', 'identity', 'lab-result'] as const;
export type HeldKind = (typeof HELD_KINDS)[number];
export type HeldState = 'held' | 'routed';

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
  /** why it was held: no patient resolved, the demographics disagreed with the chart, or a replacement (MDM^T08/T10) named no document of the sender */
  reason: 'patient-unresolved' | 'demographics-differ' | 'no-document-to-replace';
  routedTo?: string;
  routedBy?: string;
  routedAt?: string;
}

const DEPENDENCY = 'chart-table';
const PK = 'HELD';
const HELD_ID = /^held-\d{14}-[0-9a-f]{24}$/;

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

export class HeldRecordStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  /** Holds a record; false when this held id is already held (a resend). */
  async hold(record: Omit<HeldRecord, 'state'>): Promise<boolean> {
    const item = {
      pk: PK,
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

  async get(heldId: string): Promise<HeldRecord | undefined> {
    if (!isHeldId(heldId)) return undefined;
    const out = await awsCall(DEPENDENCY, () =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: PK }, sk: { S: heldId } }, ConsistentRead: true })),
    );
    return out.Item ? recordOf(out.Item) : undefined;
  }

  /** Up to `limit` held records in a state, oldest first, after `after` (a held id) when given. */
  async list(state: HeldState, limit: number, after?: string): Promise<HeldRecord[]> {
    const found: HeldRecord[] = [];
    if (after !== undefined && !isHeldId(after)) return found;
    await queryPages(
      this.db,
      DEPENDENCY,
      () => ({
        TableName: this.table,
        KeyConditionExpression: after === undefined ? '#pk = :pk' : '#pk = :pk AND #sk > :after',
        FilterExpression: '#state = :state',
        // DynamoDB refuses an unused attribute name: #sk only with `after`
        ExpressionAttributeNames: { '#pk': 'pk', '#state': 'state', ...(after === undefined ? {} : { '#sk': 'sk' }) },
        ExpressionAttributeValues: { ':pk': { S: PK }, ':state': { S: state }, ...(after === undefined ? {} : { ':after': { S: after } }) },
      }),
      async (items) => {
        for (const item of items) if (found.length < limit) found.push(recordOf(item));
        return found.length < limit;
      },
    );
    return found;
  }

  /** Moves a held record to routed (once). False when it is not held (unknown or routed already). */
  async markRouted(heldId: string, patientId: string, routedBy: string, at: Date): Promise<boolean> {
    if (!isHeldId(heldId)) return false;
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: PK }, sk: { S: heldId } },
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

function recordOf(item: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue>): HeldRecord {
  return unmarshall(item).record as HeldRecord;
}
