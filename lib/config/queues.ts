/**
 * The SQS queues (each with its dead-letter queue in infra/).
 * Part of the service facts (lib/config/service.ts re-exports it). Side-effect free at module
 * level (no calls but those marked pure, no spreads), so esbuild leaves out of a Lambda bundle whatever it does not use.
 */

import { Env, type EnvName } from './environment';

export type QueueId = 'matching' | 'notifications' | 'webhookDeliveries';
export interface QueueDefinition {
  id: QueueId;
  baseName: string;
  env: EnvName;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
}
export const Queues: Record<QueueId, QueueDefinition> = {
  matching: { id: 'matching', baseName: 'form-matching', env: Env.matchingQueueUrl, visibilityTimeoutSeconds: 180, maxReceiveCount: 5 },
  notifications: { id: 'notifications', baseName: 'result-notifications', env: Env.notificationsQueueUrl, visibilityTimeoutSeconds: 60, maxReceiveCount: 5 },
  // one message per webhook delivery; each failed attempt hides the message for its backoff delay
  // (ChangeMessageVisibility), so maxReceiveCount = the attempts of the retry schedule (8): the receive
  // after the last failed attempt moves the message to the DLQ (alarmed). lib/webhooks/retry-schedule.ts
  webhookDeliveries: {
    id: 'webhookDeliveries',
    baseName: 'webhook-deliveries',
    env: Env.webhookDeliveriesQueueUrl,
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 8,
  },
};
