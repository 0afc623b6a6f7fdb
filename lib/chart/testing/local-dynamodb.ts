/**
 * Test support: an in-process DynamoDB (dynalite) on a free 127.0.0.1 port and a client for it.
 * Real DynamoDB API calls over HTTP; nothing is mocked. Never imported by deployed code.
 */
import type { AddressInfo, Server } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTables } from '../../local/dynamo-tables';
import type { TableId } from '../../config/service';

type CreateDynalite = (options: { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number }) => Server;
// dynalite ships no type declarations
const createDynalite = require('dynalite') as CreateDynalite; // eslint-disable-line @typescript-eslint/no-require-imports

export interface LocalDynamoDb {
  db: DynamoDBClient;
  endpoint: string;
  /** creates every table of lib/config/service.ts under `prefix`; returns id -> physical name */
  createTables(prefix: string): Promise<Record<TableId, string>>;
  stop(): Promise<void>;
}

export async function startLocalDynamoDb(): Promise<LocalDynamoDb> {
  const server = createDynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const db = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  return {
    db,
    endpoint,
    createTables: (prefix) => ensureTables(db, prefix),
    stop: async () => {
      db.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
