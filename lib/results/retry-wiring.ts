/**
 * Wiring of the scheduled notification retry (functions/retryResultNotifications.ts): the
 * notification bookkeeping of the results table (plain attributes, DynamoDB only) and the
 * notifications queue (SQS), exactly its `needs` (results readwrite, notifications send). It
 * builds no encryptor and no S3 client and imports neither: see notification-ledger.ts.
 */
import { dynamoDbClient } from '../aws/clients';
import { tableName } from '../dynamo/table-names';
import { NotificationLedger, type NotificationBookkeeping } from './notification-ledger';
import { resultNotifier } from './notifier-wiring';
import type { ResultNotifier } from './notifications';

export interface NotificationRetryDependencies {
  /** the plain notification bookkeeping (no KMS, no S3) */
  store: NotificationBookkeeping;
  notifier: ResultNotifier;
}

/** Cheap wrappers around the per-container clients (lib/aws/clients.ts); the ledger keeps no state. */
export function notificationRetryDependencies(): NotificationRetryDependencies {
  const ledger = new NotificationLedger(dynamoDbClient(), tableName('results'));
  return { store: ledger, notifier: resultNotifier() };
}
