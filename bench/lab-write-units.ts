/**
 * Write units of one single-result lab submission (issue 31, item 2: at most 8), per item written.
 * The local stack serves `POST /receiveTestData` submissions one at a time; a middleware on the
 * shared DynamoDB client looks at every write and prices it as DynamoDB does:
 *   - the table: ceil(KB) of the larger of the item before and after the write (a separate client
 *     reads both with a consistent GetItem; a new item counts its own size);
 *   - each global secondary index (projection ALL, so the index item is the whole item): a write
 *     that puts an item into the index costs ceil(KB) of the new item, one that takes it out
 *     ceil(KB) of the old one, one that moves its index key both, one that changes it in place the
 *     larger of the two.
 * Item sizes are those DynamoDB would price in AWS: the local KMS's data key blob is 98 bytes, AWS
 * KMS's 184, so each sealed record (lib/results/sealed-record.ts) in an item counts 86 bytes more
 * than it holds here (awsItemBytes).
 * Nothing the service sends is changed (the extra GetItems go through their own client).
 * Reported: the mean write units per submission split by the item written (idempotency record,
 * result version, notification marker, current pointer with its byPatient entry, audit record),
 * with the largest item of each kind, the authorizer's rate counter shown apart from the intake's
 * own writes. Issue 31 item 2: 19 before, 8 since the marker layout.
 *
 * Run alone: `npx tsx bench/lab-write-units.ts` (writes bench/lab-write-units.json).
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient, GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../lib/aws/clients';
import { Tables, type TableId } from '../lib/config/service';
import { awsDataKeyPaddingBytes } from '../lib/results/sealed-record';
import { call, startTestStack } from '../test/support/local-stack';

type Item = Record<string, AttributeValue>;
// dynalite's item size (DynamoDB's rules: attribute names + values)
const { itemSize } = require('dynalite/db') as { itemSize: (item: Item) => number }; // eslint-disable-line @typescript-eslint/no-require-imports

/**
 * An item's size as DynamoDB would price it in AWS: dynalite's size (attribute names and values),
 * plus, for each sealed record (lib/results/sealed-record.ts) the item holds, the bytes by which an
 * AWS KMS data key blob (184 bytes) is larger than the local KMS's (98 bytes).
 */
export function awsItemBytes(item: Item): number {
  let padding = 0;
  for (const value of Object.values(item)) if (value.B) padding += awsDataKeyPaddingBytes(value.B);
  return itemSize(item) + padding;
}

/** Write units of an item of that size (1 KB each, at least 1). */
export function writeUnitsOf(item: Item): number {
  return Math.max(1, Math.ceil(awsItemBytes(item) / 1024));
}
const capacityUnits = (item: Item | undefined, _isRead: false) => (item ? writeUnitsOf(item) : 1);

export const TARGET_WRITE_UNITS = 8;

export interface WriteUnitsResult {
  submissions: number;
  /** mean write units per submission by item written */
  perItem: Array<{ item: string; writes: number; tableUnits: number; indexUnits: number; units: number; largestItemBytes: number }>;
  intakeUnits: number;
  authorizerUnits: number;
}

/** What an item is, from its table and keys. */
function itemKind(table: TableId, key: Item): string {
  const pk = key.pk?.S ?? '';
  const sk = key.sk?.S ?? '';
  if (table === 'results') {
    if (sk.startsWith('VERSION#')) return 'result version';
    if (sk === 'CURRENT') return 'current pointer';
    if (pk.startsWith('NOTIFY#PENDING')) return 'notification marker';
    if (sk.startsWith('SUMMARYPART#')) return 'summary part';
    return `results ${pk.split('#')[0]}`;
  }
  if (table === 'idempotency') return 'idempotency record';
  if (table === 'audit') return 'audit record';
  if (table === 'rateLimit') return 'rate limit counter (authorizer)';
  return `${table} ${pk.split('#')[0]}`;
}

export async function measureLabWriteUnits(submissions: number): Promise<WriteUnitsResult> {
  const stack = await startTestStack({ prefix: 'interop-write-units', env: { LOG_LEVEL: 'warn' } });
  const reader = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const tableOf = new Map(Object.entries(stack.tables).map(([id, name]) => [name, id as TableId]));
  const totals = new Map<string, { writes: number; tableUnits: number; indexUnits: number; largestItemBytes: number }>();
  let counting = false;
  const read = async (tableName: string, key: Item) => (await reader.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
  const keyOf = (table: TableId, item: Item): Item => {
    const def = Tables[table];
    return { [def.partitionKey]: item[def.partitionKey]!, ...(def.sortKey ? { [def.sortKey]: item[def.sortKey]! } : {}) };
  };
  const db = dynamoDbClient();
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      const input = args.input as {
        TableName?: string;
        Key?: Item;
        Item?: Item;
        RequestItems?: Record<string, Array<{ PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }>>;
      };
      if (!counting || !['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand'].includes(command)) return next(args);
      const writes: Array<{ tableName: string; key: Item }> = [];
      if (command === 'BatchWriteItemCommand') {
        for (const [tableName, list] of Object.entries(input.RequestItems ?? {}))
          for (const r of list) {
            const table = tableOf.get(tableName);
            if (table) writes.push({ tableName, key: r.PutRequest ? keyOf(table, r.PutRequest.Item) : r.DeleteRequest!.Key });
          }
      } else {
        const table = tableOf.get(input.TableName ?? '');
        if (table) writes.push({ tableName: input.TableName!, key: input.Key ?? keyOf(table, input.Item!) });
      }
      const before = await Promise.all(writes.map((w) => read(w.tableName, w.key)));
      const out = await next(args);
      const after = await Promise.all(writes.map((w) => read(w.tableName, w.key)));
      writes.forEach((w, i) => {
        const table = tableOf.get(w.tableName)!;
        const old = before[i];
        const now = after[i];
        if (old === undefined && now === undefined) return; // a write that did not happen (condition failed)
        if (old !== undefined && now !== undefined && JSON.stringify(old) === JSON.stringify(now) && command !== 'PutItemCommand') return;
        const tableUnits = Math.max(old ? capacityUnits(old, false) : 0, now ? capacityUnits(now, false) : 0);
        let indexUnits = 0;
        for (const index of Tables[table].indexes) {
          if (index.kind !== 'global' || !index.partitionKey) continue;
          const keyIn = (item: Item | undefined) =>
            item?.[index.partitionKey!] ? `${item[index.partitionKey!]!.S}|${index.sortKey ? item[index.sortKey]?.S : ''}` : undefined;
          const k0 = keyIn(old);
          const k1 = keyIn(now);
          if (k0 !== undefined && k1 !== undefined && k0 === k1) indexUnits += Math.max(capacityUnits(old, false), capacityUnits(now, false));
          else {
            if (k0 !== undefined) indexUnits += capacityUnits(old, false);
            if (k1 !== undefined) indexUnits += capacityUnits(now, false);
          }
        }
        const kind = itemKind(table, w.key);
        const entry = totals.get(kind) ?? { writes: 0, tableUnits: 0, indexUnits: 0, largestItemBytes: 0 };
        entry.largestItemBytes = Math.max(entry.largestItemBytes, old ? awsItemBytes(old) : 0, now ? awsItemBytes(now) : 0);
        entry.writes++;
        entry.tableUnits += tableUnits;
        entry.indexUnits += indexUnits;
        totals.set(kind, entry);
      });
      return out;
    },
    { step: 'initialize', name: 'benchWriteUnits' },
  );
  const post = (n: number) =>
    call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json', 'x-request-id': randomUUID() },
      body: JSON.stringify({
        data: {
          senderID: 'demo-lab',
          patientID: 'demo-patient-1',
          accessionNumber: `WU-${n}-${Date.now()}`,
          recordNo: 'R-1001',
          status: 'final',
          ResultedDateUTC: '2024-03-01T09:30:00Z',
          results: [{ testName: 'Hemoglobin A1c', result: '7.2', units: '%', referenceRange: '4.0-5.6' }],
        },
      }),
    });
  try {
    for (let i = 0; i < 5; i++) await post(-i - 1); // warm-up: lookup keys, data key, authorizer caches
    counting = true;
    for (let i = 0; i < submissions; i++) {
      const res = await post(i);
      if (res.status !== 200) throw new Error(`submission answered ${res.status}: ${res.text.slice(0, 200)}`);
    }
    counting = false;
  } finally {
    db.middlewareStack.remove('benchWriteUnits');
    reader.destroy();
    await stack.close();
  }
  const perItem = [...totals.entries()]
    .map(([item, t]) => ({
      item,
      writes: t.writes / submissions,
      tableUnits: t.tableUnits / submissions,
      indexUnits: t.indexUnits / submissions,
      units: (t.tableUnits + t.indexUnits) / submissions,
      largestItemBytes: t.largestItemBytes,
    }))
    .sort((a, b) => b.units - a.units);
  const authorizer = perItem.filter((p) => p.item.includes('(authorizer)'));
  return {
    submissions,
    perItem,
    intakeUnits: perItem.filter((p) => !authorizer.includes(p)).reduce((s, p) => s + p.units, 0),
    authorizerUnits: authorizer.reduce((s, p) => s + p.units, 0),
  };
}

export function renderWriteUnits(r: WriteUnitsResult): string[] {
  const f = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));
  const out = ['| Item written | writes | table WU | index WU | WU | largest item (bytes, AWS-sized) |', '| --- | --- | --- | --- | --- | --- |'];
  for (const p of r.perItem) out.push(`| ${p.item} | ${f(p.writes)} | ${f(p.tableUnits)} | ${f(p.indexUnits)} | ${f(p.units)} | ${p.largestItemBytes} |`);
  out.push('');
  out.push(
    `Per single-result submission (mean of ${r.submissions}): intake ${f(r.intakeUnits)} write units (target at most ${TARGET_WRITE_UNITS}: ${r.intakeUnits <= TARGET_WRITE_UNITS ? 'met' : 'missed'}); the authorizer's rate counter adds ${f(r.authorizerUnits)}.`,
  );
  return out;
}

if (require.main === module) {
  void (async () => {
    const result = await measureLabWriteUnits(50);
    writeFileSync(path.join(__dirname, 'lab-write-units.json'), JSON.stringify(result, null, 2) + '\n');
    console.log(renderWriteUnits(result).join('\n'));
  })().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
