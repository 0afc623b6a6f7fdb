/**
 * LOCAL STACK ONLY (never deployed): the event source mappings of the webhook pipeline, as
 * form-workers.ts does for matching: the real `fanOutWebhookEvents` handler on the notifications
 * queue and the real `deliverWebhooks` handler on the webhook deliveries queue, with real SQS
 * receive / delete (messages a handler reports in batchItemFailures stay, hidden for the time the
 * handler set with ChangeMessageVisibility, and reach the DLQ after maxReceiveCount).
 */
import { Env } from '../config/service';
import { pollQueue } from './form-workers';

export interface LocalWebhookWorkers {
  stop(): Promise<void>;
}

export function startLocalWebhookWorkers(options: { intervalMs: number }): LocalWebhookWorkers {
  const abort = new AbortController();
  const intervalMs = Math.max(10, options.intervalMs);
  const running = [
    pollQueue('fanOutWebhookEvents', Env.notificationsQueueUrl, intervalMs, abort.signal),
    pollQueue('deliverWebhooks', Env.webhookDeliveriesQueueUrl, intervalMs, abort.signal),
  ];
  let stopped: Promise<void> | undefined;
  return {
    stop: () => {
      stopped ??= (async () => {
        abort.abort();
        await Promise.allSettled(running);
      })();
      return stopped;
    },
  };
}
