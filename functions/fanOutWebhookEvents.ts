/**
 * Webhook fan-out — consumer of the notifications queue (Queues.notifications). Each message is a
 * lab result notification (lib/results/notifications.ts); for each, one delivery per enabled
 * subscription of its event type whose partner may hear of the result now (lib/webhooks/audience.ts:
 * partner policy, current scopes, patient reach) goes onto the webhook deliveries queue (lib/webhooks/fan-out.ts).
 * Idempotent per (event, subscription). A malformed message is reported in `batchItemFailures` and
 * made visible again at once, so it reaches the DLQ (alarmed) after maxReceiveCount receives; a
 * message whose fan-out failed (DynamoDB, SQS) is reported and comes back after the visibility timeout.
 */
import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { Env } from '../lib/config/service';
import { logger } from '../lib/observability/logger';
import { audienceSource } from '../lib/webhooks/audience-wiring';
import { eventFromNotification } from '../lib/webhooks/events';
import { fanOutEvent } from '../lib/webhooks/fan-out';
import { enqueueDelivery, hideMessage } from '../lib/webhooks/delivery-queue';
import { webhookStore } from '../lib/webhooks/store-wiring';

const FUNCTION = 'fanOutWebhookEvents';

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchItemFailure[] = [];
  // the partners' standing is read afresh for every batch (audience-wiring.ts)
  const services = { store: webhookStore(), enqueue: enqueueDelivery, now: () => new Date(), audience: audienceSource() };
  await Promise.all(
    (event.Records ?? []).map(async (record) => {
      const started = Date.now();
      const attempt = Number(record.attributes?.ApproximateReceiveCount ?? '1');
      const parsed = eventFromNotification(record.body, new Date());
      if (!parsed) {
        logger.warn('webhooks.fan_out.bad_message', { function: FUNCTION, attempt });
        failures.push({ itemIdentifier: record.messageId });
        await hideMessage(Env.notificationsQueueUrl, record.receiptHandle, 0).catch(() => undefined);
        return;
      }
      const webhookEvent = parsed.event;
      try {
        const summary = await fanOutEvent(webhookEvent, { partnerId: parsed.resultPartnerId, filed: parsed.exportAudience }, services);
        logger.info('webhooks.fan_out.done', {
          function: FUNCTION,
          resultId: webhookEvent.data.resultId,
          count: summary.queued,
          recordCount: summary.subscriptions,
          attempt,
          durationMs: Date.now() - started,
        });
      } catch (error) {
        logger.error('webhooks.fan_out.failed', {
          function: FUNCTION,
          resultId: webhookEvent.data.resultId,
          attempt,
          errorName: (error as Error | undefined)?.name ?? 'unknown',
          durationMs: Date.now() - started,
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
};
