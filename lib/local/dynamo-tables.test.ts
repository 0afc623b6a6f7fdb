/**
 * The local stack's tables: created from lib/config/service.ts, and a table kept on disk by an
 * earlier version that lacks an index the definitions now declare is rebuilt with its items
 * (the local DynamoDB accepts UpdateTable but never builds a new index).
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import { Tables, resourceName } from '../config/service';
import { createTableInput, ensureTables } from './dynamo-tables';

let local: LocalDynamoDb;
beforeAll(async () => {
  local = await startLocalDynamoDb();
});
afterAll(async () => local?.stop());

const indexNames = async (table: string) => {
  const t = (await local.db.send(new DescribeTableCommand({ TableName: table }))).Table!;
  return [...(t.GlobalSecondaryIndexes ?? []), ...(t.LocalSecondaryIndexes ?? [])].map((i) => i.IndexName).sort();
};

describe('ensureTables', () => {
  it('creates every table with its indexes, and a second call changes nothing', async () => {
    const rebuilt: string[] = [];
    const names = await ensureTables(local.db, 'tables-fresh', { onRebuild: (t) => rebuilt.push(t) });
    for (const def of Object.values(Tables)) expect(await indexNames(names[def.id])).toEqual(def.indexes.map((i) => i.name).sort());
    await ensureTables(local.db, 'tables-fresh', { onRebuild: (t) => rebuilt.push(t) });
    expect(rebuilt).toEqual([]);
  });

  it('rebuilds a table kept from a version without one of its indexes, keeping every item, and the new index answers', async () => {
    const prefix = 'tables-older';
    const forms = resourceName(prefix, Tables.forms.baseName);
    // the forms table as the version before byStateSummary created it
    const older = { ...Tables.forms, indexes: Tables.forms.indexes.filter((i) => i.name !== 'byStateSummary') };
    await local.db.send(new CreateTableCommand(createTableInput(older, forms)));
    const items = Array.from({ length: 60 }, (_, n) => ({
      pk: { S: `PACKET#p${n}` },
      sk: { S: 'PACKET' },
      statePk: { S: `STATE#pending_review#${String(n % 3).padStart(2, '0')}` },
      stateSk: { S: `2026-11-01T00:00:${String(n).padStart(2, '0')}Z#p${n}` },
      packetId: { S: `p${n}` },
      formId: { S: 'intake' },
      content: { S: 'sealed' },
    }));
    for (const Item of items) await local.db.send(new PutItemCommand({ TableName: forms, Item }));
    expect(await indexNames(forms)).toEqual(['byState']);

    const rebuilt: Array<[string, number]> = [];
    const backupDir = mkdtempSync(path.join(os.tmpdir(), 'tables-older-'));
    await ensureTables(local.db, prefix, { onRebuild: (t, n) => rebuilt.push([t, n]), backupDir });
    expect(rebuilt).toEqual([[forms, 60]]);
    expect(readdirSync(backupDir)).toEqual([]);
    expect(await indexNames(forms)).toEqual(['byState', 'byStateSummary']);
    const scanned = await local.db.send(new ScanCommand({ TableName: forms, ConsistentRead: true }));
    expect(scanned.Items?.map((i) => i.pk!.S).sort()).toEqual(items.map((i) => i.pk.S).sort());
    expect(scanned.Items?.find((i) => i.pk!.S === 'PACKET#p7')).toEqual(items[7]);
    const page = await local.db.send(
      new QueryCommand({
        TableName: forms,
        IndexName: 'byStateSummary',
        KeyConditionExpression: 'statePk = :p',
        ExpressionAttributeValues: { ':p': { S: 'STATE#pending_review#01' } },
      }),
    );
    expect(page.Items).toHaveLength(20);
    // the summary index carries no envelope
    expect(page.Items!.every((i) => i.content === undefined && i.formId?.S === 'intake')).toBe(true);
  });

  it('a rebuild stopped after the table was deleted is finished at the next start from the backup file', async () => {
    const prefix = 'tables-interrupted';
    const forms = resourceName(prefix, Tables.forms.baseName);
    const backupDir = mkdtempSync(path.join(os.tmpdir(), 'tables-interrupted-'));
    // every other table exists; the forms table was deleted, its items are in the backup file
    await ensureTables(local.db, prefix);
    await local.db.send(new DeleteTableCommand({ TableName: forms }));
    const items = [0, 1, 2].map((n) => ({ pk: { S: `PACKET#q${n}` }, sk: { S: 'PACKET' }, packetId: { S: `q${n}` } }));
    writeFileSync(path.join(backupDir, `rebuild-${forms}.json`), JSON.stringify(items));
    const rebuilt: Array<[string, number]> = [];
    await ensureTables(local.db, prefix, { onRebuild: (t, n) => rebuilt.push([t, n]), backupDir });
    expect(rebuilt).toEqual([[forms, 3]]);
    const scanned = await local.db.send(new ScanCommand({ TableName: forms, ConsistentRead: true }));
    expect(scanned.Items?.map((i) => i.packetId!.S).sort()).toEqual(['q0', 'q1', 'q2']);
    expect(await indexNames(forms)).toEqual(Tables.forms.indexes.map((i) => i.name).sort());
    expect(readdirSync(backupDir)).toEqual([]);
  });
});
