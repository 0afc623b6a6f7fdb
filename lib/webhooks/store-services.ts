/** The webhooks table store, wired from the environment (DynamoDB only). */
import { dynamoDbClient } from '../aws/clients';
import { tableName } from '../dynamo/table-names';
import { WebhookStore } from './subscription-store';

let cached: { db: unknown; table: string; store: WebhookStore } | undefined;

export function webhookStore(): WebhookStore {
  const db = dynamoDbClient();
  const table = tableName('webhooks');
  if (!cached || cached.db !== db || cached.table !== table) cached = { db, table, store: new WebhookStore(db, table) };
  return cached.store;
}
