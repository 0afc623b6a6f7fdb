/**
 * The sharded inbox-state index against dynalite (real Query calls): packets of one state spread
 * over STATE_SHARDS partitions (plus the legacy unsharded one), and every reader still sees one
 * list in the order a single partition gave, page after page, without gaps or repeats.
 */
import { KMSClient } from '@aws-sdk/client-kms';
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import { Tables } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { startKmsServer, type KmsServer } from '../local/kms-server';
import { decodeCursor, encodeCursor, listInbox } from './inbox';
import { packetIdFor } from './packet-id';
import { MATCH_KEY_PURPOSE, MatchKeys, clearMatchKeyCache } from './match-keys';
import { PacketIntakeWriter } from './packet-intake-writer';
import { BACKFILL_RETRY_MS, PacketReader, PacketStateReader, resetStateIndexFallback } from './packet-reader';
import { FormsStore, STATE_INDEX, STATE_SHARDS, SUMMARY_ATTRIBUTES, statePartitions, statePkFor, stateSkFor } from './packet-store';
import { SWEEP_READ_CONCURRENCY } from './sweeper';
import type { PacketRecord, PacketState } from './types';

let local: LocalDynamoDb;
let store: FormsStore;
let formsTable: string;

beforeAll(async () => {
  local = await startLocalDynamoDb();
  const tables = await local.createTables('packet-store-test');
  formsTable = tables.forms;
  store = new FormsStore(local.db, formsTable);
});
afterAll(async () => local?.stop());

function packet(n: number, state: PacketState, at: string, options: { legacy?: boolean } = {}): PacketRecord {
  const packetId = packetIdFor('partner-a', 'tool', `sub-${state}-${n}`);
  return {
    packetId,
    sourceSystemId: 'tool',
    formId: 'intake',
    submissionId: `sub-${n}`,
    partnerId: 'partner-a',
    keyId: 'key_test',
    state,
    receivedAt: at,
    stateChangedAt: at,
    statePk: options.legacy ? `STATE#${state}` : statePkFor(state, packetId),
    stateSk: stateSkFor(at, packetId),
    queueAttempts: 0,
    history: [],
    content: '{}',
    contentBytes: 2,
  };
}

const time = (second: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, 0) + second * 1000).toISOString();

describe('FormsStore inbox states: sharded writes, one ordered list for readers', () => {
  const review: PacketRecord[] = [];
  beforeAll(async () => {
    // 120 packets, several sharing a receivedAt second, 3 written under the legacy unsharded key
    for (let i = 0; i < 120; i++) review.push(packet(i, 'pending_review', time(Math.floor(i / 3)), { legacy: i % 40 === 7 }));
    for (const p of review) expect(await store.createPacket(p)).toBe('created');
  });

  it('spreads one state over its shards', () => {
    const used = new Set(review.map((p) => p.statePk));
    expect(used.size).toBeGreaterThanOrEqual(STATE_SHARDS - 2);
    for (const pk of used) expect(statePartitions('pending_review')).toContain(pk);
  });

  it('the inbox list, 7 a page by cursor: every packet once, newest first by stateSk, as one partition', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listInbox({ store: () => store }, { state: 'pending_review', limit: 7, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(7);
      seen.push(...page.items.map((i) => i.packetId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    const expected = [...review].sort((a, b) => (a.stateSk < b.stateSk ? 1 : -1)).map((p) => p.packetId);
    expect(seen).toEqual(expected);
    expect(pages).toBeLessThanOrEqual(Math.ceil(120 / 7) + 1);
  });

  it('oldest first before a cutoff, continued by lastKey (the sweeper): exactly the older packets, in order', async () => {
    const cutoff = time(25); // packets of seconds 0..24: 75
    const seen: string[] = [];
    let start: Record<string, string> | undefined;
    do {
      const page = await store.queryByState('pending_review', {
        limit: 10,
        newestFirst: false,
        before: cutoff,
        ...(start ? { exclusiveStartKey: start } : {}),
      });
      seen.push(...page.rows.map((r) => r.summary.packetId));
      start = page.lastKey;
    } while (start);
    const expected = review
      .filter((p) => p.receivedAt < cutoff)
      .sort((a, b) => (a.stateSk < b.stateSk ? -1 : 1))
      .map((p) => p.packetId);
    expect(expected).toHaveLength(75);
    expect(seen).toEqual(expected);
  });

  it('while byStateSummary backfills (DynamoDB refuses to read it), the same pages come from the retiring byState; retried after BACKFILL_RETRY_MS', async () => {
    const walk = async (reader: PacketStateReader) => {
      const pages: string[][] = [];
      let start: Record<string, string> | undefined;
      do {
        const page = await reader.queryByState('pending_review', { limit: 25, ...(start ? { exclusiveStartKey: start } : {}) });
        pages.push(page.rows.map((r) => `${r.summary.packetId}|${r.stateSk}|${r.queueAttempts}|${r.summary.formId}`));
        start = page.lastKey;
      } while (start);
      return pages;
    };
    const expected = await walk(new PacketStateReader(local.db, formsTable));
    const indexes: string[] = [];
    let backfilling = true;
    const name = 'summary-index-backfilling';
    local.db.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { IndexName?: string };
        if (context.commandName === 'QueryCommand' && input.IndexName) {
          indexes.push(input.IndexName);
          if (backfilling && input.IndexName === STATE_INDEX) {
            throw Object.assign(new Error('Cannot read from backfilling global secondary index: byStateSummary'), { name: 'ValidationException' });
          }
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    const now = jest.spyOn(Date, 'now');
    resetStateIndexFallback();
    try {
      // a new reader per page, as the handlers build one per request: the fallback holds for the container
      const reader = {
        queryByState: (...args: Parameters<PacketStateReader['queryByState']>) => new PacketStateReader(local.db, formsTable).queryByState(...args),
      } as PacketStateReader;
      now.mockReturnValue(1_000_000);
      expect(await walk(reader)).toEqual(expected);
      // the first round's shard Queries (sent at once) are refused, then this container reads byState until the retry time
      const refused = indexes.filter((i) => i === STATE_INDEX).length;
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThanOrEqual(statePartitions('pending_review').length);
      expect(indexes.slice(indexes.lastIndexOf(STATE_INDEX) + 1).length).toBeGreaterThan(5);
      expect(indexes.filter((i) => i === 'byState').length).toBeGreaterThan(5);
      indexes.length = 0;
      backfilling = false;
      now.mockReturnValue(1_000_000 + BACKFILL_RETRY_MS - 1);
      expect(await walk(reader)).toEqual(expected);
      expect(new Set(indexes)).toEqual(new Set(['byState']));
      indexes.length = 0;
      now.mockReturnValue(1_000_000 + BACKFILL_RETRY_MS);
      expect(await walk(reader)).toEqual(expected);
      expect(new Set(indexes)).toEqual(new Set([STATE_INDEX]));
      // any other refusal is not a backfill: it surfaces
      local.db.middlewareStack.remove(name);
      local.db.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'QueryCommand')
            throw Object.assign(new Error('One or more parameter values were invalid'), { name: 'ValidationException' });
          return next(args);
        },
        { step: 'initialize', name },
      );
      await expect(reader.queryByState('pending_review', { limit: 5 })).rejects.toThrow('One or more parameter values were invalid');
    } finally {
      now.mockRestore();
      resetStateIndexFallback();
      local.db.middlewareStack.remove(name);
    }
  });

  it('bounded shard reads (the sweeper: 4 in flight): the same pages as all at once, never more than 4 Queries open', async () => {
    let open = 0;
    let maxOpen = 0;
    const name = 'count-open-queries';
    local.db.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'QueryCommand') return next(args);
        open++;
        maxOpen = Math.max(maxOpen, open);
        try {
          return await next(args);
        } finally {
          open--;
        }
      },
      { step: 'initialize', name },
    );
    try {
      const walk = async (concurrency?: number) => {
        const pages: string[][] = [];
        let start: Record<string, string> | undefined;
        do {
          const page = await store.queryByState('pending_review', {
            limit: 10,
            newestFirst: false,
            before: time(25),
            ...(start ? { exclusiveStartKey: start } : {}),
            ...(concurrency ? { concurrency } : {}),
          });
          pages.push(page.rows.map((r) => r.summary.packetId));
          start = page.lastKey;
        } while (start);
        return pages;
      };
      const all = await walk();
      expect(maxOpen).toBe(STATE_SHARDS + 1);
      maxOpen = 0;
      const bounded = await walk(SWEEP_READ_CONCURRENCY);
      expect(maxOpen).toBe(SWEEP_READ_CONCURRENCY);
      expect(bounded).toEqual(all);
      expect(bounded.flat()).toHaveLength(75);
    } finally {
      local.db.middlewareStack.remove(name);
    }
  });

  it('a cursor names the packet shard (or the legacy partition); another shard is refused', () => {
    const p = review[0]!;
    const key = { pk: `PACKET#${p.packetId}`, sk: 'PACKET', statePk: p.statePk, stateSk: p.stateSk };
    expect(decodeCursor('pending_review', encodeCursor('pending_review', key))).toEqual(key);
    expect(decodeCursor('pending_review', encodeCursor('pending_review', { ...key, statePk: 'STATE#pending_review' }))).toBeTruthy();
    const other = statePartitions('pending_review').find((pk) => pk !== p.statePk && pk !== 'STATE#pending_review')!;
    expect(() => decodeCursor('pending_review', encodeCursor('pending_review', { ...key, statePk: other }))).toThrow();
  });

  it('a transition moves the packet out of its shard; an empty state lists nothing, with no cursor', async () => {
    const p = review[5]!;
    const moved = await store.transition({
      packetId: p.packetId,
      from: ['pending_review'],
      to: 'routed_manually',
      at: time(500),
      sortTime: p.receivedAt,
      patientId: 'patient-1',
      entry: { at: time(500), action: 'routed_manually', from: 'pending_review', state: 'routed_manually', actor: 'staff' },
    });
    expect(moved).toBe(true);
    const all = await store.queryByState('pending_review', { limit: 500 });
    expect(all.rows.map((r) => r.summary.packetId)).not.toContain(p.packetId);
    expect(all.rows).toHaveLength(119);
    expect(all.lastKey).toBeUndefined();
    const empty = await store.queryByState('pending_match', { limit: 10 });
    expect(empty).toEqual({ rows: [] });
  });
});

describe('the split store (issue 31 item 5): the readers and the intake writer a function bundles instead of FormsStore', () => {
  it('STATE_INDEX is the byStateSummary index of Tables.forms (statePk, stateSk), named without reading Tables', () => {
    expect(Tables.forms.indexes.find((i) => i.name === STATE_INDEX)).toMatchObject({ partitionKey: 'statePk', sortKey: 'stateSk' });
  });

  it('the state index carries exactly what the listing reads (SUMMARY_ATTRIBUTES), and is not the retiring whole-packet index', () => {
    const index = Tables.forms.indexes.find((i) => i.name === STATE_INDEX)!;
    expect(index.retiring).toBeUndefined();
    const keys = new Set([Tables.forms.partitionKey, Tables.forms.sortKey, index.partitionKey, index.sortKey]);
    expect([...index.include!].sort()).toEqual(SUMMARY_ATTRIBUTES.filter((a) => !keys.has(a)).sort());
    expect(index.include).not.toContain('content');
    expect(index.include).not.toContain('history');
  });

  it('PacketIntakeWriter stores a packet once; PacketReader reads it; PacketStateReader lists what FormsStore lists', async () => {
    const writer = new PacketIntakeWriter(local.db, formsTable);
    const matching = Array.from({ length: 9 }, (_, i) => packet(1000 + i, 'pending_match', time(600 + i)));
    for (const p of matching) expect(await writer.createPacket(p)).toBe('created');
    expect(await writer.createPacket({ ...matching[0]!, formId: 'other' })).toBe('exists');

    const reader = new PacketReader(local.db, formsTable);
    expect(await reader.getPacket(matching[0]!.packetId)).toMatchObject({ packetId: matching[0]!.packetId, formId: 'intake', content: '{}' });
    const projected = await reader.getPacket(matching[0]!.packetId, { withContent: false });
    expect(projected).toMatchObject({ packetId: matching[0]!.packetId, state: 'pending_match' });
    expect(projected).not.toHaveProperty('content');
    expect(await reader.getPacket(packetIdFor('partner-a', 'tool', 'never-sent'))).toBeUndefined();

    const listing = new PacketStateReader(local.db, formsTable);
    const pageOf = (s: PacketStateReader) => s.queryByState('pending_match', { limit: 4, newestFirst: true });
    const first = await pageOf(listing);
    expect(first).toEqual(await pageOf(store));
    expect(first.rows.map((r) => r.summary.packetId)).toEqual(
      [...matching]
        .reverse()
        .slice(0, 4)
        .map((p) => p.packetId),
    );
    const inbox = await listInbox({ store: () => listing }, { state: 'pending_match', limit: 100 });
    expect(inbox.items.map((i) => i.packetId)).toEqual([...matching].reverse().map((p) => p.packetId));
  });

  describe('MatchKeys over the split store', () => {
    let kms: KmsServer;
    let encryptor: EnvelopeEncryptor;
    beforeAll(async () => {
      kms = await startKmsServer({ host: '127.0.0.1', port: 0, keys: ['alias/packet-store-test'] });
      const client = new KMSClient({ endpoint: kms.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      encryptor = new EnvelopeEncryptor({ kms: client, keyId: 'alias/packet-store-test', purpose: MATCH_KEY_PURPOSE });
    });
    afterAll(async () => {
      clearMatchKeyCache();
      await kms?.close();
    });

    it('a PacketReader (the chart searches) never creates the key; the intake writer does, and the reader then finds that key', async () => {
      clearMatchKeyCache();
      const reader = new MatchKeys(new PacketReader(local.db, formsTable), encryptor, 'reader');
      expect(await reader.key({ create: false })).toBeUndefined();
      await expect(reader.key({ create: true })).rejects.toThrow('reads the key only');
      expect(await new PacketReader(local.db, formsTable).getMatchKeyEnvelope('v1')).toBeUndefined();

      // a copy: clearing the cache zeroes the cached key
      const created = Buffer.from((await new MatchKeys(new PacketIntakeWriter(local.db, formsTable), encryptor, 'writer').key({ create: true }))!);
      expect(created).toHaveLength(32);
      clearMatchKeyCache();
      expect((await reader.key({ create: false }))?.equals(created)).toBe(true);
      // FormsStore (the matcher's wiring) reads the same stored key
      clearMatchKeyCache();
      expect((await new MatchKeys(store, encryptor, 'store').key({ create: false }))?.equals(created)).toBe(true);
    });
  });
});
