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
