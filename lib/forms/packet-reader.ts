/**
 * The reading half of the forms store (packet-store.ts describes the table): what the inbox
 * reads, the chart searches and the listing bundle, without the writers (issue 31 item 5: a class
 * is bundled whole, so the writes live in FormsStore, which extends PacketStateReader, and in the
 * intake's PacketIntakeWriter, packet-intake-writer.ts).
 *
 *   PacketReader       one packet (GetItem), the wrapped match index key (GetItem), the patient
 *                      ids under one match index key (Query): the packet view, its candidates and
 *                      both chart searches
 *   PacketStateReader  adds one page of an inbox state from the byStateSummary index (every shard
 *                      queried and merged): the inbox listing
 *
 * Throttling, timeouts and 5xx become DependencyUnavailableError (callers answer 503 / retry).
 */
import {
  GetItemCommand,
  QueryCommand,
  type AttributeValue,
  type DynamoDBClient,
  type QueryCommandInput,
  type QueryCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { unmarshall } from '../aws/attribute-values';
import { awsCall } from '../aws/dependency-calls';
import { queryPages } from '../aws/query-pages';
import { ascending, mergeSortedPartitions } from '../dynamo/write-shards';
import {
  CONFIG_MATCH_KEY_PK,
  FORMS_DEPENDENCY,
  LEGACY_STATE_INDEX,
  PACKET_SK,
  STATE_INDEX,
  SUMMARY_ATTRIBUTES,
  matchIndexPk,
  packetPk,
  statePartitions,
  stateSkRange,
  toSummary,
  type StatePage,
  type StateRow,
} from './packet-items';
import type { PacketRecord, PacketState } from './types';

/** Packets, the match index and its key, read one item or one index key at a time. */
export class PacketReader {
  constructor(
    protected readonly db: DynamoDBClient,
    protected readonly table: string,
  ) {}

  async getPacket(packetId: string, options: { consistent?: boolean; withContent?: boolean } = {}): Promise<PacketRecord | undefined> {
    const withContent = options.withContent ?? true;
    const out = await this.call(() =>
      this.db.send(
        new GetItemCommand({
          TableName: this.table,
          Key: { pk: { S: packetPk(packetId) }, sk: { S: PACKET_SK } },
          ConsistentRead: options.consistent ?? true,
          ...(withContent
            ? {}
            : {
                ProjectionExpression:
                  'packetId, #state, reason, patientId, requestedPatientId, partnerId, keyId, sourceSystemId, formId, submissionId, receivedAt, stateChangedAt, statePk, stateSk, linkKey, queueAttempts, lastQueuedAt, routingAuditedAt, contentHash',
                ExpressionAttributeNames: { '#state': 'state' },
              }),
        }),
      ),
    );
    return out.Item ? (unmarshall(out.Item) as PacketRecord) : undefined;
  }

  /** Patient ids under one index key (one Query; more pages only past 1 MB). */
  async queryMatchIndex(indexKey: string): Promise<string[]> {
    const ids: string[] = [];
    await queryPages(
      this.db,
      FORMS_DEPENDENCY,
      () => ({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: matchIndexPk(indexKey) } },
        ProjectionExpression: 'patientId',
      }),
      async (items) => {
        for (const item of items) if (item.patientId?.S) ids.push(item.patientId.S);
        return true;
      },
    );
    return ids;
  }

  /** The wrapped match index key (match-keys.ts) of `version`, when one was created. */
  async getMatchKeyEnvelope(version: string): Promise<string | undefined> {
    const out = await this.call(() =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: CONFIG_MATCH_KEY_PK }, sk: { S: version } }, ConsistentRead: true })),
    );
    return out.Item?.envelope?.S;
  }

  protected call<T>(run: () => Promise<T>): Promise<T> {
    return awsCall(FORMS_DEPENDENCY, run);
  }
}

/** Adds the inbox states' pages (the byStateSummary index). */
export class PacketStateReader extends PacketReader {
  /**
   * One page of packets in an inbox state from the GSI, newest first by default: every shard of the
   * state queried and merged by stateSk (unique: `<time>#<packetId>`), so the order is the one a
   * single partition would give. `exclusiveStartKey` is the lastKey of the previous page (only its
   * stateSk is used: the page continues strictly after it); `before` keeps only items whose stateSk
   * sorts before it (the sweeper's "older than"; never itself a stateSk). `concurrency`: at most
   * that many shard Queries in flight (the sweeper; the inbox list, an HTTP endpoint, sends each
   * round's Queries at once).
   */
  async queryByState(
    state: PacketState,
    options: { limit: number; exclusiveStartKey?: Record<string, string>; newestFirst?: boolean; before?: string; concurrency?: number },
  ): Promise<StatePage> {
    const newestFirst = options.newestFirst ?? true;
    const after = options.exclusiveStartKey?.stateSk;
    const range = stateSkRange(newestFirst, after, options.before);
    type Row = StateRow & { key: Record<string, string> };
    const { rows, more } = await mergeSortedPartitions<Row, Record<string, AttributeValue>>(
      statePartitions(state),
      options.limit,
      (a, b) => (newestFirst ? ascending(b.stateSk, a.stateSk) : ascending(a.stateSk, b.stateSk)),
      async (partition, limit, startKey) => {
        const out = await this.call(() =>
          this.queryStateIndex({
            TableName: this.table,
            KeyConditionExpression: `statePk = :spk${range.condition}`,
            ExpressionAttributeValues: { ':spk': { S: partition }, ...range.values },
            ExpressionAttributeNames: Object.fromEntries([...SUMMARY_ATTRIBUTES, 'statePk'].map((a) => [`#${a}`, a])),
            ProjectionExpression: [...SUMMARY_ATTRIBUTES, 'statePk'].map((a) => `#${a}`).join(', '),
            ScanIndexForward: !newestFirst,
            Limit: limit,
            ExclusiveStartKey: startKey,
          }),
        );
        const items = (out.Items ?? []).filter((item) => item.stateSk?.S !== after);
        return {
          rows: items.map((item) => ({
            summary: toSummary(item),
            stateSk: item.stateSk?.S ?? '',
            queueAttempts: Number(item.queueAttempts?.N ?? '0'),
            key: { pk: packetPk(item.packetId!.S!), sk: PACKET_SK, statePk: item.statePk!.S!, stateSk: item.stateSk!.S! },
          })),
          lastKey: out.LastEvaluatedKey,
        };
      },
      { concurrency: options.concurrency },
    );
    const last = rows[rows.length - 1];
    return {
      rows: rows.map(({ key: _key, ...row }) => row),
      ...(more && last ? { lastKey: last.key } : {}),
    };
  }

  /**
   * One shard Query on the state index. Right after the release that added `byStateSummary`, the
   * index can still be backfilling (CloudFormation does not wait for that) and DynamoDB refuses to
   * read it; the same Query then goes to the retiring `byState` (same keys, same rows, more read
   * units), and this container (every reader in it) tries the new index again after BACKFILL_RETRY_MS.
   */
  private async queryStateIndex(input: Omit<QueryCommandInput, 'IndexName'>): Promise<QueryCommandOutput> {
    if (Date.now() >= summaryIndexBackfillingUntil) {
      try {
        return await this.db.send(new QueryCommand({ ...input, IndexName: STATE_INDEX }));
      } catch (error) {
        if (!isIndexBackfilling(error)) throw error;
        summaryIndexBackfillingUntil = Date.now() + BACKFILL_RETRY_MS;
      }
    }
    return this.db.send(new QueryCommand({ ...input, IndexName: LEGACY_STATE_INDEX }));
  }
}

export const BACKFILL_RETRY_MS = 60_000;

/**
 * Until when (epoch ms) this container reads the retiring index because the new one was backfilling:
 * per container, not per reader (the handlers build a reader per request).
 */
let summaryIndexBackfillingUntil = 0;

/** Tests: forget a refusal seen earlier in this process. */
export function resetStateIndexFallback(): void {
  summaryIndexBackfillingUntil = 0;
}

/** DynamoDB's answer to a Query on a global index that is still being built from the table */
function isIndexBackfilling(error: unknown): boolean {
  return error instanceof Error && error.name === 'ValidationException' && /backfilling/i.test(error.message);
}
