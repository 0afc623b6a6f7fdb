/**
 * Wiring of the scheduled notification retry (functions/retryResultNotifications.ts): the
 * notification bookkeeping of the results table (plain attributes, DynamoDB only) and the
 * notifications queue (SQS), exactly its `needs` (results readwrite, notifications send). It
 * builds no encryptor and no S3 client and imports neither: see notification-ledger.ts.
 */
import { dynamoDbClient } from '../aws/clients';
import { tableName } from '../dynamo/table-names';
import { NotificationLedger } from './notification-ledger';
import { resultNotifier } from './notifier-services';
import type { ResultNotifier } from './notifications';
import type { LabResultStore } from './result-store';

export interface NotificationRetryServices {
  /**
   * The ledger, typed as the LabResultStore that retryPendingNotifications (retry.ts) takes: it
   * calls only pendingNotifications, ensureCurrent, markNotificationSent and
   * recordNotificationFailure, which NotificationLedger implements with the same signatures.
   */
  store: LabResultStore;
  notifier: ResultNotifier;
}

/** Cheap wrappers around the per-container clients (lib/aws/clients.ts); the ledger keeps no state. */
export function notificationRetryServices(): NotificationRetryServices {
  const ledger = new NotificationLedger(dynamoDbClient(), tableName('results'));
  return { store: ledger as unknown as LabResultStore, notifier: resultNotifier() };
}
