/**
 * The audit trail's unresolved records against dynalite (real calls): a day's records of requests
 * that named no verified record spread over UNRESOLVED_SHARDS partitions, and forUnresolvedDay reads
 * them back as one list, oldest first, legacy (unsharded) records included.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '../aws/attribute-values';
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import { AuditTrail, subjectKey, UNRESOLVED_SHARDS, type AuditRecord } from './audit-trail';
import { AuditTrailReader } from './audit-trail-reader';

let local: LocalDynamoDb;
let table: string;
let trail: AuditTrail;

beforeAll(async () => {
  local = await startLocalDynamoDb();
  table = (await local.createTables('audit-trail-test')).audit;
  trail = new AuditTrail(local.db, table);
});
afterAll(async () => local?.stop());

const failure = (i: number, day = '2026-11-01'): AuditRecord => ({
  action: 'results.store',
  at: `${day}T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`,
  requestId: `req-${day}-${i}`,
  partnerId: 'lab-a',
  keyId: 'key_a',
  outcome: 'invalid',
  status: 400,
});

describe('AuditTrail: unresolved records', () => {
  it('a day is spread over the shards by request id; patients and resources keep their own key', () => {
    const keys = new Set(Array.from({ length: 2000 }, (_v, i) => subjectKey(failure(i))));
    expect(keys.size).toBe(UNRESOLVED_SHARDS);
    for (const k of keys) expect(k).toMatch(/^UNRESOLVED#2026-11-01#\d{2,3}$/);
    expect(subjectKey(failure(1))).toBe(subjectKey(failure(1)));
    expect(subjectKey({ ...failure(1), patientId: 'p-1' })).toBe('PATIENT#p-1');
    expect(subjectKey({ ...failure(1), resourceIds: { packetId: 'fp_1' } })).toBe('RESOURCE#packetId#fp_1');
  });

  it('forUnresolvedDay: every record of the day once, oldest first, legacy ones included, other days left out', async () => {
    const records = Array.from({ length: 300 }, (_v, i) => failure(i));
    for (const r of records) await trail.append(r);
    await trail.append(failure(5, '2026-11-02'));
    // written before sharding: pk UNRESOLVED#<day>
    const legacy = { ...failure(999), at: '2026-11-01T00:00:30.500Z' };
    await local.db.send(
      new PutItemCommand({ TableName: table, Item: marshall({ pk: 'UNRESOLVED#2026-11-01', sk: `${legacy.at}#${legacy.requestId}#00000000`, ...legacy }) }),
    );
    const read = await new AuditTrailReader(local.db, table).forUnresolvedDay('2026-11-01');
    expect(read).toHaveLength(301);
    expect(new Set(read.map((r) => r.requestId)).size).toBe(301);
    const times = read.map((r) => r.at);
    expect(times).toEqual([...times].sort());
  });
});
