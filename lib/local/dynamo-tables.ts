import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  type AttributeDefinition,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type KeySchemaElement,
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

/** Creates every table that does not exist yet and waits until each is ACTIVE. Returns id -> name. */
export async function ensureTables(db: DynamoDBClient, prefix: string): Promise<Record<TableId, string>> {
  const names = {} as Record<TableId, string>;
  for (const def of Object.values(Tables)) {
    const name = resourceName(prefix, def.baseName);
    names[def.id] = name;
    try {
      await db.send(new DescribeTableCommand({ TableName: name }));
      continue;
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException) && (error as Error).name !== 'ResourceNotFoundException') throw error;
    }
    await db.send(new CreateTableCommand(createTableInput(def, name)));
    for (let i = 0; i < 200; i++) {
      const out = await db.send(new DescribeTableCommand({ TableName: name }));
      if (out.Table?.TableStatus === 'ACTIVE') break;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return names;
}
