import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  ScanCommand,
  type AttributeValue,
  type AttributeDefinition,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type KeySchemaElement,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { Tables, resourceName, type TableDefinition, type TableId } from '../config/service';

/** CreateTable input for a table definition (the local twin of what infra/ declares). */
export function createTableInput(def: TableDefinition, physicalName: string): CreateTableCommandInput {
  const attributes = new Set<string>([def.partitionKey]);
  const keySchema: KeySchemaElement[] = [{ AttributeName: def.partitionKey, KeyType: 'HASH' }];
  if (def.sortKey) {
    attributes.add(def.sortKey);
    keySchema.push({ AttributeName: def.sortKey, KeyType: 'RANGE' });
  }
  const local = def.indexes.filter((i) => i.kind === 'local');
  const global = def.indexes.filter((i) => i.kind === 'global');
  for (const index of def.indexes) {
    attributes.add(index.sortKey);
    if (index.partitionKey) attributes.add(index.partitionKey);
  }
  const attributeDefinitions: AttributeDefinition[] = [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' }));
  return {
    TableName: physicalName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: attributeDefinitions,
    KeySchema: keySchema,
    ...(local.length
      ? {
          LocalSecondaryIndexes: local.map((i) => ({
            IndexName: i.name,
            KeySchema: [
              { AttributeName: def.partitionKey, KeyType: 'HASH' },
              { AttributeName: i.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          })),
        }
      : {}),
    ...(global.length
      ? {
          GlobalSecondaryIndexes: global.map((i) => ({
            IndexName: i.name,
            KeySchema: [
              { AttributeName: i.partitionKey!, KeyType: 'HASH' },
              { AttributeName: i.sortKey, KeyType: 'RANGE' },
            ],
            Projection: i.include ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...i.include] } : { ProjectionType: 'ALL' },
          })),
        }
      : {}),
  };
}

/** What ensureTables does beyond creating missing tables. */
export interface EnsureTablesOptions {
  /** told when a table kept on disk was rebuilt because it lacked an index the definitions declare */
  onRebuild?: (table: string, items: number) => void;
  /**
   * where a rebuild keeps the table's items while the table is deleted and created again (the local
   * stack's data directory); a rebuild interrupted there is finished from that file at the next start
   */
  backupDir?: string;
}

/**
 * Creates every table that does not exist yet and waits until each is ACTIVE. A table kept on disk
 * by an earlier version of the local stack that lacks an index the definitions now declare is
 * rebuilt with its items (the local DynamoDB accepts UpdateTable but never builds the index): the
 * items are written to `backupDir` first (atomically), and the file is removed only once every item
 * is back, so an interrupted rebuild loses nothing. Returns id -> name.
 */
export async function ensureTables(db: DynamoDBClient, prefix: string, options: EnsureTablesOptions = {}): Promise<Record<TableId, string>> {
  const names = {} as Record<TableId, string>;
  for (const def of Object.values(Tables)) {
    const name = resourceName(prefix, def.baseName);
    names[def.id] = name;
    const backup = options.backupDir ? path.join(options.backupDir, `rebuild-${name}.json`) : undefined;
    if (backup && existsSync(backup)) {
      // a rebuild stopped half-way: the file holds every item the table had
      await rebuild(db, def, name, JSON.parse(readFileSync(backup, 'utf8')) as Array<Record<string, AttributeValue>>, backup, options);
      continue;
    }
    const existing = await describe(db, name);
    if (existing) {
      const has = new Set([...(existing.GlobalSecondaryIndexes ?? []), ...(existing.LocalSecondaryIndexes ?? [])].map((i) => i.IndexName));
      if (def.indexes.every((i) => has.has(i.name))) continue;
      const items = await scanAll(db, name);
      if (backup) {
        writeFileSync(`${backup}.tmp`, JSON.stringify(items));
        renameSync(`${backup}.tmp`, backup);
      }
      await rebuild(db, def, name, items, backup, options);
      continue;
    }
    await db.send(new CreateTableCommand(createTableInput(def, name)));
    await waitFor(db, name, (table) => table?.TableStatus === 'ACTIVE');
  }
  return names;
}

/** The table deleted (when it exists), created from its definition, and given `items`; then the backup file removed. */
async function rebuild(
  db: DynamoDBClient,
  def: TableDefinition,
  name: string,
  items: ReadonlyArray<Record<string, AttributeValue>>,
  backup: string | undefined,
  options: EnsureTablesOptions,
): Promise<void> {
  if (await describe(db, name)) {
    await db.send(new DeleteTableCommand({ TableName: name }));
    await waitFor(db, name, (table) => table === undefined);
  }
  await db.send(new CreateTableCommand(createTableInput(def, name)));
  await waitFor(db, name, (table) => table?.TableStatus === 'ACTIVE');
  await writeAll(db, name, items);
  if (backup) unlinkSync(backup);
  options.onRebuild?.(name, items.length);
}

async function describe(db: DynamoDBClient, name: string): Promise<TableDescription | undefined> {
  try {
    return (await db.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException || (error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

async function waitFor(db: DynamoDBClient, name: string, done: (table: TableDescription | undefined) => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (done(await describe(db, name))) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`local table ${name} did not settle`);
}

async function scanAll(db: DynamoDBClient, name: string): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await db.send(new ScanCommand({ TableName: name, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

async function writeAll(db: DynamoDBClient, name: string, items: ReadonlyArray<Record<string, AttributeValue>>): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 20) throw new Error(`local table ${name}: items left unwritten while rebuilding`);
      const out = await db.send(new BatchWriteItemCommand({ RequestItems: { [name]: pending } }));
      pending = (out.UnprocessedItems?.[name] ?? []) as typeof pending;
    }
  }
}
