/**
 * The held-record queue, sharded over HELD_SHARDS partitions, against dynalite (real calls): the
 * list is one queue in receipt order, paged by `after`, routed records drop out, and records
 * held before sharding (pk HELD) are still listed, read and routed.
 */
import { marshall } from '../aws/attribute-values';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import { HELD_SHARDS, HeldRecordStore, heldIdFor, heldPkFor, type HeldRecord } from './held-records';

let local: LocalDynamoDb;
let table: string;
let store: HeldRecordStore;

beforeAll(async () => {
  local = await startLocalDynamoDb();
  table = (await local.createTables('held-records-test')).chart;
  store = new HeldRecordStore(local.db, table);
});
afterAll(async () => local?.stop());

function record(i: number): Omit<HeldRecord, 'state'> {
  const receivedAt = new Date(Date.UTC(2026, 10, 1, 0, 0, 0) + Math.floor(i / 2) * 1000).toISOString();
  const heldId = heldIdFor(receivedAt, i.toString(16).padStart(24, '0'));
  return {
    heldId,
    provenance: { partnerId: 'lab-a', sender: 'LAB', sourceMessageId: `m${i}`, receivedAt },
    person: { identifiers: [{ value: `mrn-${i}`, authority: 'LAB' }] },
    body: { kind: 'identity', identityKey: `identity-${i}` },
    reason: 'patient-unresolved',
  };
}

describe('HeldRecordStore (sharded)', () => {
  const records = Array.from({ length: 90 }, (_v, i) => record(i));
  beforeAll(async () => {
    for (const r of records.slice(0, 88)) expect(await store.hold(r)).toBe(true);
    // two records held before sharding: pk HELD
    for (const r of records.slice(88))
      await local.db.send(
        new PutItemCommand({
          TableName: table,
          Item: marshall(
            {
              pk: 'HELD',
              sk: r.heldId,
              kind: r.body.kind,
              state: 'held',
              partnerId: 'lab-a',
              receivedAt: r.provenance.receivedAt,
              record: { ...r, state: 'held' },
            },
            { removeUndefinedValues: true },
          ),
        }),
      );
  });

  it('spreads the records over the shards; a resend is held once', async () => {
    expect(new Set(records.slice(0, 88).map((r) => heldPkFor(r.heldId))).size).toBeGreaterThanOrEqual(HELD_SHARDS - 2);
    expect(await store.hold(records[3]!)).toBe(false);
  });

  it('lists one queue oldest first, paged by after, routed records left out, legacy ones included', async () => {
    expect(await store.markRouted(records[10]!.heldId, 'patient-1', 'staff', new Date())).toBe(true);
    expect(await store.markRouted(records[10]!.heldId, 'patient-1', 'staff', new Date())).toBe(false);
    expect(await store.markRouted(records[89]!.heldId, 'patient-2', 'staff', new Date())).toBe(true);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.list('held', 9, after);
      if (!page.length) break;
      expect(page.length).toBeLessThanOrEqual(9);
      seen.push(...page.map((r) => r.heldId));
      after = page[page.length - 1]!.heldId;
    }
    const expected = records
      .map((r) => r.heldId)
      .filter((id) => id !== records[10]!.heldId && id !== records[89]!.heldId)
      .sort();
    expect(seen).toEqual(expected);
    expect((await store.list('routed', 10)).map((r) => r.heldId)).toEqual([records[10]!.heldId, records[89]!.heldId].sort());
  });

  it('gets a record by id from its shard or the legacy partition', async () => {
    expect((await store.get(records[5]!.heldId))?.provenance.sourceMessageId).toBe('m5');
    expect((await store.get(records[88]!.heldId))?.provenance.sourceMessageId).toBe('m88');
    expect(await store.get(heldIdFor(new Date().toISOString(), 'f'.repeat(24)))).toBeUndefined();
  });
});

describe('HeldRecordStore list: what a page reads', () => {
  // 400 records with a note-sized body (each ~1.2 KB), over the 16 shards and the legacy partition
  const records = Array.from({ length: 400 }, (_v, i) => ({ ...record(1000 + i), person: { identifiers: [{ value: `mrn-${i}`, authority: 'LAB' }] } }));
  let counted: HeldRecordStore;
  const reads = { queries: 0, items: 0, readUnits: 0 };
  beforeAll(async () => {
    const tables = await local.createTables('held-records-reads');
    const plain = new HeldRecordStore(local.db, tables.chart);
    for (const r of records) expect(await plain.hold({ ...r, body: { kind: 'identity', identityKey: 'x'.repeat(1200) } })).toBe(true);
    local.db.middlewareStack.add(
      (next, context) => async (args) => {
        if (
          context.commandName !== 'QueryCommand' ||
          !('TableName' in (args.input as object)) ||
          (args.input as { TableName: string }).TableName !== tables.chart
        )
          return next(args);
        (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
        const out = await next(args);
        const body = out.output as { ScannedCount?: number; ConsumedCapacity?: { CapacityUnits?: number } };
        reads.queries++;
        reads.items += body.ScannedCount ?? 0;
        reads.readUnits += body.ConsumedCapacity?.CapacityUnits ?? 0;
        return out;
      },
      { step: 'initialize', name: 'countHeldReads' },
    );
    counted = plain;
  });
  afterAll(() => local.db.middlewareStack.remove('countHeldReads'));
  const page = async (after?: string) => {
    Object.assign(reads, { queries: 0, items: 0, readUnits: 0 });
    // listHeld asks for limit + 1 (the page of 25 and whether a next one exists)
    const rows = await counted.list('held', 26, after);
    return { rows, ...reads };
  };

  it('a page of 25 (26 asked) reads about a page of records per shard, not 50 per shard', async () => {
    const first = await page();
    expect(first.rows.map((r) => r.heldId)).toEqual(
      records
        .map((r) => r.heldId)
        .sort()
        .slice(0, 26),
    );
    // 17 partitions, 6 records first (ceil(26 / 17) + 4), a shard that runs dry read again
    expect(first.items).toBeLessThanOrEqual(17 * 6 * 2);
    expect(first.queries).toBeLessThanOrEqual(17 * 2);
    process.stdout.write(`held list, page of 26 of 400 held: ${first.queries} Queries, ${first.items} records read, ${first.readUnits} RU\n`);
  });

  it('routed records before the page: each shard passes them in a few Queries (its Limit doubles), the page is the same', async () => {
    const sorted = records.map((r) => r.heldId).sort();
    for (const heldId of sorted.slice(0, 300)) expect(await counted.markRouted(heldId, 'patient-1', 'staff', new Date())).toBe(true);
    const first = await page();
    expect(first.rows.map((r) => r.heldId)).toEqual(sorted.slice(300, 326));
    // about 18 routed records ahead in each shard: 6 + 12 + 24 covers them in at most 3 reads
    expect(first.queries).toBeLessThanOrEqual(17 * 4);
    process.stdout.write(`held list, page of 26 behind 300 routed: ${first.queries} Queries, ${first.items} records read, ${first.readUnits} RU\n`);
    const next = await page(first.rows[25]!.heldId);
    expect(next.rows.map((r) => r.heldId)).toEqual(sorted.slice(326, 352));
  });
});
