/**
 * The forms table (Tables.forms: pk, sk; GSI byStateSummary on statePk/stateSk, summary attributes only; byState, whole packets, retiring). Every write is one
 * conditional single-item write (no transactions), so every step is safe to repeat.
 *
 *   item                pk                               sk              GSI byStateSummary (sparse)
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
 * The store is split so a function bundles only what it calls (issue 31 item 5; a class is bundled
 * whole): packet-items.ts holds the keys and helpers, packet-reader.ts the reads (PacketReader:
 * a packet, the match index and its key; PacketStateReader: the inbox states' pages),
 * packet-intake-writer.ts intake's two puts (PacketIntakeWriter), and FormsStore here extends
 * PacketStateReader with every write (the matcher, the sweeper, the reviewer's routing, the match
 * index, reindexing).
 *
 * Throttling, timeouts and 5xx become DependencyUnavailableError (callers answer 503 / retry).
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import {
  CONFIG_REINDEX_PK,
  LINK_SK,
  MATCH_INDEX_MANIFEST_SK,
  PACKET_SK,
  REINDEX_PROGRESS_SK,
  isConditionalCheckFailed,
  linkPk,
  matchIndexManifestPk,
  matchIndexPk,
  matchIndexSk,
  packetPk,
  statePkFor,
  stateSkFor,
  type LinkRecord,
  type ReindexProgress,
  type Transition,
} from './packet-items';
import { putNewMatchKeyEnvelope, putNewPacket } from './packet-intake-writer';
import { PacketStateReader } from './packet-reader';
import type { CandidateRecord, HistoryEntry, PacketRecord } from './types';

export * from './packet-items';
export { PacketReader, PacketStateReader } from './packet-reader';
export { PacketIntakeWriter } from './packet-intake-writer';

export class FormsStore extends PacketStateReader {
  // ---- packets ----

  /** Stores a new packet unless one with the same id exists. */
  createPacket(record: PacketRecord): Promise<'created' | 'exists'> {
    return putNewPacket(this.db, this.table, record);
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

  // ---- the wrapped match index key ----

  /** Stores the wrapped key unless one exists; false when another writer was first. */
  putMatchKeyEnvelope(version: string, envelope: string, at: string): Promise<boolean> {
    return putNewMatchKeyEnvelope(this.db, this.table, version, envelope, at);
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
}
