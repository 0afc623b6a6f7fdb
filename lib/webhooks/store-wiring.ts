/** The webhooks table store, wired from the environment (DynamoDB only). */
import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { tableName } from '../dynamo/table-names';
import { WebhookStore } from './subscription-store';

const cache = new ContainerCache<WebhookStore>();

export function webhookStore(): WebhookStore {
  return cache.get([dynamoDbClient(), tableName('webhooks')], ([db, table]) => new WebhookStore(db, table));
}
