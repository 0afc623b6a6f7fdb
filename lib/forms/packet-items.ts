/**
 * The forms table's items (packet-store.ts describes the table): keys, the state index and its
 * shards, the attributes the inbox listing reads. Shared by the readers (packet-reader.ts), the
 * intake writer (packet-intake-writer.ts) and the full store (packet-store.ts), and free of any
 * class so a function bundles only the helpers it calls (issue 31 item 5).
 */
import { ConditionalCheckFailedException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '../aws/attribute-values';
import { isConditionalCheckFailed as conditionFailed } from '../aws/dependency-calls';
import { FORMS_STATE_SUMMARY_ATTRIBUTES } from '../config/forms-state-summary';
import { partitionsOf, shardedKeyFor } from '../dynamo/write-shards';
import type { CandidateRecord, HistoryEntry, PacketReason, PacketRecord, PacketState, PacketSummary } from './types';
import { INBOX_STATES } from './types';

export const FORMS_DEPENDENCY = 'forms-table';
/**
 * The forms table's GSI on statePk/stateSk that carries only SUMMARY_ATTRIBUTES (Tables.forms.indexes:
 * checked by packet-store.test.ts, not read here, so no bundle carries the table list). It replaced
 * `byState` (whole packets in every entry: 4x the read units per page), which is retiring.
 */
export const STATE_INDEX = 'byStateSummary';
/** The whole-packet index on the same keys, read only while STATE_INDEX is backfilling (packet-reader.ts); removed next release. */
export const LEGACY_STATE_INDEX = 'byState';

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
export const SUMMARY_ATTRIBUTES: readonly string[] = [...FORMS_STATE_SUMMARY_ATTRIBUTES, 'stateSk'];

export function toSummary(item: Record<string, AttributeValue>): PacketSummary {
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

/**
 * The sort-key condition of one shard's query: strictly after `after` in reading order and
 * strictly before `before`. Oldest first with both bounds is a BETWEEN (inclusive), and the row
 * equal to `after` is dropped by the caller (`before` is a bare time, never a stateSk).
 */
export function stateSkRange(
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
