/**
 * The forms table (Tables.forms: pk, sk; GSI byState on statePk/stateSk). Every write is one
 * conditional single-item write (no transactions), so every step is safe to repeat.
 *
 *   item                pk                               sk              GSI byState (sparse)
 *   packet              PACKET#<packetId>                PACKET          statePk STATE#pending_match | STATE#pending_review
 *                                                                        | PATIENT#<patientId> (routed, matched, routed_manually)
 *                                                                        stateSk <time>#<packetId>
 *   known link          LINK#<hmac(sourceSystemId, externalPatientId)>  LINK            -
 *   patient match index MATCHIDX#v1#<hmac(last name, dob)>  PATIENT#<patientId>  -
 *   match index key     CONFIG#match-index-key            v1              -
 *
 * Packet stateSk time: the time the packet was last queued while pending_match (the sweeper looks
 * for old ones), the time it was received otherwise (the inbox lists newest first).
 * Plain attributes are ids, states, reason codes, times, counts, scores and HMACs; everything the
 * form tool said about the patient and the answers is in `content` (an envelope, see packet-crypto.ts).
 *
 * Throttling, timeouts and 5xx become DependencyUnavailableError (callers answer 503 / retry).
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { Tables } from '../config/service';
import { queryPages } from '../aws/query-pages';
import { awsCall, isConditionalCheckFailed as conditionFailed } from '../aws/dependency-calls';
import { ascending, mergeSortedPartitions, partitionsOf, shardedKeyFor } from '../dynamo/write-shards';
import type { CandidateRecord, HistoryEntry, PacketReason, PacketRecord, PacketState, PacketSummary } from './types';
import { INBOX_STATES } from './types';

const DEPENDENCY = 'forms-table';
export const STATE_INDEX = Tables.forms.indexes.find((i) => i.name === 'byState')!.name;

export const packetPk = (packetId: string) => `PACKET#${packetId}`;
export const PACKET_SK = 'PACKET';
export const linkPk = (linkKey: string) => `LINK#${linkKey}`;
export const LINK_SK = 'LINK';
export const matchIndexPk = (indexKey: string) => `MATCHIDX#v1#${indexKey}`;
export const matchIndexSk = (patientId: string) => `PATIENT#${patientId}`;
export const CONFIG_MATCH_KEY_PK = 'CONFIG#match-index-key';
/** Per patient: the index keys it currently holds, so a rename or a new birth date removes the old entries. */
export const matchIndexManifestPk = (patientId: string) => `MATCHIDX-PATIENT#${patientId}`;
export const MATCH_INDEX_MANIFEST_SK = 'v1';
export const CONFIG_REINDEX_PK = 'CONFIG#reindex';
export const REINDEX_PROGRESS_SK = 'progress';

/** Where `npm run reindex` stopped: the chart Scan's LastEvaluatedKey and the counts so far. */
export interface ReindexProgress {
  /** JSON of the Scan's LastEvaluatedKey (plain ids: pk/sk of a chart item) */
  lastKey: string;
  patients: number;
  indexed: number;
  pages: number;
  updatedAt: string;
}

/**
 * Shards of each inbox state's GSI partition: a packet waiting in `pending_match` or
 * `pending_review` is under `STATE#<state>#<nn>`, nn = a stable hash of its packet id mod
 * STATE_SHARDS (lib/dynamo/write-shards.ts), so 500 packets/s spread over 32 partitions instead of
 * one (each packet writes its state's index about twice: in, then out). Readers (the inbox list, the sweeper) query every shard and the legacy `STATE#<state>`
 * (packets written before sharding) and merge by stateSk: the same order one partition had.
 */
export const STATE_SHARDS = 32;

/** GSI partition of a packet in `state`: a shard of the state (inbox states), under `patientId` once routed. */
export function statePkFor(state: PacketState, packetId: string, patientId?: string): string {
  if (INBOX_STATES.includes(state)) return shardedKeyFor(`STATE#${state}`, packetId, STATE_SHARDS);
  if (!patientId) throw new TypeError(`a packet in state ${state} needs a patient id`);
  return `PATIENT#${patientId}`;
}

/** Every GSI partition a reader of an inbox state queries (legacy unsharded first). */
export function statePartitions(state: PacketState): string[] {
  return partitionsOf(`STATE#${state}`, STATE_SHARDS);
}

export function stateSkFor(at: string, packetId: string): string {
  return `${at}#${packetId}`;
}

export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException || conditionFailed(error);
}

export interface Transition {
  packetId: string;
  /** the update applies only while the packet is in one of these states */
  from: readonly PacketState[];
  to: PacketState;
  at: string;
  /** the time in the new stateSk: the packet's receivedAt (inbox newest first, patient listing) */
  sortTime: string;
  entry: HistoryEntry;
  reason?: PacketReason;
  patientId?: string;
  candidates?: CandidateRecord[];
  linkKey?: string;
}

export interface LinkRecord {
  patientId: string;
  /** the partner whose form tool the link belongs to (the key is scoped by it too) */
  partnerId?: string;
  sourceSystemId: string;
  createdAt: string;
  createdBy: string;
  packetId: string;
}

export interface StateRow {
  summary: PacketSummary;
  stateSk: string;
  queueAttempts: number;
}

export interface StatePage {
  rows: StateRow[];
  /** the raw LastEvaluatedKey (callers turn it into an opaque cursor) */
  lastKey?: Record<string, string>;
}

/** What the inbox listing (and the sweeper) reads of a packet in the state index: the summary, stateSk, queueAttempts. */
export const SUMMARY_ATTRIBUTES = [
  'packetId',
  'state',
  'reason',
  'sourceSystemId',
  'formId',
  'receivedAt',
  'stateChangedAt',
  'requestedPatientId',
  'candidates',
  'stateSk',
  'queueAttempts',
];

function toSummary(item: Record<string, AttributeValue>): PacketSummary {
  const r = unmarshall(item) as Partial<PacketRecord>;
  const candidates = r.candidates ?? [];
  return {
    packetId: r.packetId!,
    state: r.state!,
    ...(r.reason ? { reason: r.reason } : {}),
    sourceSystemId: r.sourceSystemId!,
    formId: r.formId!,
    receivedAt: r.receivedAt!,
    stateChangedAt: r.stateChangedAt!,
    ...(r.requestedPatientId ? { requestedPatientId: r.requestedPatientId } : {}),
    candidateCount: candidates.length,
    ...(candidates.length ? { topCandidateScore: candidates[0]!.score } : {}),
  };
}

export class FormsStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  // ---- packets ----

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

  /** Stores a new packet unless one with the same id exists. */
  async createPacket(record: PacketRecord): Promise<'created' | 'exists'> {
    try {
      await this.call(() =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: marshall({ pk: packetPk(record.packetId), sk: PACKET_SK, ...record }, { removeUndefinedValues: true }),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return 'created';
    } catch (error) {
      if (isConditionalCheckFailed(error)) return 'exists';
      throw error;
    }
  }

  /**
   * Moves a packet to another state while it is in one of `from`, appending the history entry.
   * False when the packet is not (any longer) in one of those states, or does not exist.
   */
  async transition(t: Transition): Promise<boolean> {
    const names: Record<string, string> = { '#state': 'state', '#history': 'history' };
    const values: Record<string, unknown> = {
      ':to': t.to,
      ':at': t.at,
      ':spk': statePkFor(t.to, t.packetId, t.patientId),
      ':ssk': stateSkFor(t.sortTime, t.packetId),
      ':entry': [t.entry],
    };
    const set = ['#state = :to', 'stateChangedAt = :at', 'statePk = :spk', 'stateSk = :ssk', '#history = list_append(#history, :entry)'];
    const remove: string[] = [];
    if (t.reason) {
      set.push('reason = :reason');
      values[':reason'] = t.reason;
    } else remove.push('reason');
    if (t.patientId) {
      set.push('patientId = :pid');
      values[':pid'] = t.patientId;
    }
    if (t.candidates) {
      set.push('candidates = :cand');
      values[':cand'] = t.candidates;
    }
    if (t.linkKey) {
      set.push('linkKey = :link');
      values[':link'] = t.linkKey;
    }
    const fromKeys = t.from.map((_, i) => `:from${i}`);
    t.from.forEach((s, i) => (values[`:from${i}`] = s));
    return this.conditionalUpdate(
      t.packetId,
      `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
      `#state IN (${fromKeys.join(', ')})`,
      names,
      values,
    );
  }

  /**
   * The matcher's notes on a packet already waiting for review (the partner named an unknown
   * patient): candidates and the link key, once. The state does not change.
   */
  async annotateForReview(packetId: string, at: string, candidates: CandidateRecord[], linkKey: string | undefined, entry: HistoryEntry): Promise<boolean> {
    const values: Record<string, unknown> = { ':review': 'pending_review', ':cand': candidates, ':at': at, ':entry': [entry] };
    const set = ['candidates = :cand', 'assessedAt = :at', '#history = list_append(#history, :entry)'];
    if (linkKey) {
      set.push('linkKey = :link');
      values[':link'] = linkKey;
    }
    return this.conditionalUpdate(
      packetId,
      `SET ${set.join(', ')}`,
      '#state = :review AND attribute_not_exists(assessedAt)',
      { '#state': 'state', '#history': 'history' },
      values,
    );
  }

  /**
   * Records that a pending_match packet was queued again (by the sweeper): moves its stateSk to
   * `at` so the next sweep skips it until it is old again. False when it changed meanwhile.
   */
  async markRequeued(packetId: string, expectedStateSk: string, at: string, entry: HistoryEntry): Promise<boolean> {
    return this.conditionalUpdate(
      packetId,
      'SET stateSk = :ssk, lastQueuedAt = :at, queueAttempts = if_not_exists(queueAttempts, :zero) + :one, #history = list_append(#history, :entry)',
      '#state = :pending AND stateSk = :expected',
      { '#state': 'state', '#history': 'history' },
      { ':ssk': stateSkFor(at, packetId), ':at': at, ':zero': 0, ':one': 1, ':entry': [entry], ':pending': 'pending_match', ':expected': expectedStateSk },
    );
  }

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
          this.db.send(
            new QueryCommand({
              TableName: this.table,
              IndexName: STATE_INDEX,
              KeyConditionExpression: `statePk = :spk${range.condition}`,
              ExpressionAttributeValues: { ':spk': { S: partition }, ...range.values },
              ExpressionAttributeNames: Object.fromEntries([...SUMMARY_ATTRIBUTES, 'statePk'].map((a) => [`#${a}`, a])),
              ProjectionExpression: [...SUMMARY_ATTRIBUTES, 'statePk'].map((a) => `#${a}`).join(', '),
              ScanIndexForward: !newestFirst,
              Limit: limit,
              ExclusiveStartKey: startKey,
            }),
          ),
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

  // ---- known links (sourceSystemId, externalPatientId) -> patient ----

  async getLink(linkKey: string): Promise<LinkRecord | undefined> {
    const out = await this.call(() =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: linkPk(linkKey) }, sk: { S: LINK_SK } }, ConsistentRead: true })),
    );
    return out.Item ? (unmarshall(out.Item) as LinkRecord) : undefined;
  }

  /** Remembers a link; with onlyIfAbsent an existing link is kept (returns false). */
  async putLink(linkKey: string, link: LinkRecord, options: { onlyIfAbsent: boolean }): Promise<boolean> {
    try {
      await this.call(() =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: marshall({ pk: linkPk(linkKey), sk: LINK_SK, ...link }),
            ...(options.onlyIfAbsent ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  // ---- patient match index ----

  async putMatchIndexEntry(indexKey: string, patientId: string, at: string): Promise<void> {
    await this.call(() =>
      this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall({ pk: matchIndexPk(indexKey), sk: matchIndexSk(patientId), patientId, indexedAt: at }),
        }),
      ),
    );
  }

  async deleteMatchIndexEntry(indexKey: string, patientId: string): Promise<void> {
    await this.call(() =>
      this.db.send(new DeleteItemCommand({ TableName: this.table, Key: { pk: { S: matchIndexPk(indexKey) }, sk: { S: matchIndexSk(patientId) } } })),
    );
  }

  /** The index keys a patient holds (empty when never indexed, or indexed before manifests existed). */
  async getMatchIndexManifest(patientId: string): Promise<string[]> {
    const out = await this.call(() =>
      this.db.send(
        new GetItemCommand({
          TableName: this.table,
          Key: { pk: { S: matchIndexManifestPk(patientId) }, sk: { S: MATCH_INDEX_MANIFEST_SK } },
          ConsistentRead: true,
        }),
      ),
    );
    return out.Item?.indexKeys?.L?.map((v) => v.S ?? '').filter((k) => k.length > 0) ?? [];
  }

  async putMatchIndexManifest(patientId: string, indexKeys: readonly string[], at: string): Promise<void> {
    await this.call(() =>
      this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall({ pk: matchIndexManifestPk(patientId), sk: MATCH_INDEX_MANIFEST_SK, patientId, indexKeys: [...indexKeys], indexedAt: at }),
        }),
      ),
    );
  }

  async getReindexProgress(): Promise<ReindexProgress | undefined> {
    const out = await this.call(() =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: CONFIG_REINDEX_PK }, sk: { S: REINDEX_PROGRESS_SK } }, ConsistentRead: true })),
    );
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, ...progress } = unmarshall(out.Item);
    return progress as ReindexProgress;
  }

  async putReindexProgress(progress: ReindexProgress): Promise<void> {
    await this.call(() =>
      this.db.send(new PutItemCommand({ TableName: this.table, Item: marshall({ pk: CONFIG_REINDEX_PK, sk: REINDEX_PROGRESS_SK, ...progress }) })),
    );
  }

  async clearReindexProgress(): Promise<void> {
    await this.call(() =>
      this.db.send(new DeleteItemCommand({ TableName: this.table, Key: { pk: { S: CONFIG_REINDEX_PK }, sk: { S: REINDEX_PROGRESS_SK } } })),
    );
  }

  /** Marks that the audit record of the matcher's routing was written (a re-delivery writes it otherwise). */
  async markRoutingAudited(packetId: string, at: string): Promise<void> {
    await this.call(() =>
      this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { pk: { S: packetPk(packetId) }, sk: { S: PACKET_SK } },
          UpdateExpression: 'SET routingAuditedAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': { S: at } },
        }),
      ),
    );
  }

  /** Patient ids under one index key (one Query; more pages only past 1 MB). */
  async queryMatchIndex(indexKey: string): Promise<string[]> {
    const ids: string[] = [];
    await queryPages(
      this.db,
      DEPENDENCY,
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

  // ---- the wrapped match index key ----

  async getMatchKeyEnvelope(version: string): Promise<string | undefined> {
    const out = await this.call(() =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: CONFIG_MATCH_KEY_PK }, sk: { S: version } }, ConsistentRead: true })),
    );
    return out.Item?.envelope?.S;
  }

  /** Stores the wrapped key unless one exists; false when another writer was first. */
  async putMatchKeyEnvelope(version: string, envelope: string, at: string): Promise<boolean> {
    try {
      await this.call(() =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: marshall({ pk: CONFIG_MATCH_KEY_PK, sk: version, envelope, createdAt: at }),
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

  // ---- internals ----

  private async conditionalUpdate(
    packetId: string,
    update: string,
    condition: string,
    names: Record<string, string>,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await this.call(() =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: packetPk(packetId) }, sk: { S: PACKET_SK } },
            UpdateExpression: update,
            ConditionExpression: condition,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: marshall(values, { removeUndefinedValues: true }),
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  private call<T>(run: () => Promise<T>): Promise<T> {
    return awsCall(DEPENDENCY, run);
  }
}

/**
 * The sort-key condition of one shard's query: strictly after `after` in reading order and
 * strictly before `before`. Oldest first with both bounds is a BETWEEN (inclusive), and the row
 * equal to `after` is dropped by the caller (`before` is a bare time, never a stateSk).
 */
function stateSkRange(
  newestFirst: boolean,
  after: string | undefined,
  before: string | undefined,
): { condition: string; values: Record<string, AttributeValue> } {
  if (newestFirst) {
    const upper = after !== undefined && before !== undefined ? (after < before ? after : before) : (after ?? before);
    return upper === undefined ? { condition: '', values: {} } : { condition: ' AND stateSk < :hi', values: { ':hi': { S: upper } } };
  }
  if (after !== undefined && before !== undefined)
    return { condition: ' AND stateSk BETWEEN :lo AND :hi', values: { ':lo': { S: after }, ':hi': { S: before } } };
  if (after !== undefined) return { condition: ' AND stateSk > :lo', values: { ':lo': { S: after } } };
  if (before !== undefined) return { condition: ' AND stateSk < :hi', values: { ':hi': { S: before } } };
  return { condition: '', values: {} };
}
