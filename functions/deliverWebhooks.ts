/**
 * Webhook delivery worker — consumer of the webhook deliveries queue (Queues.webhookDeliveries).
 * Each message is {"v":1,"deliveryId":"dl_..."}: one delivery to one subscriber. Records are sent
 * concurrently, so a slow subscriber (5 s timeout) never holds up the others. Per record
 * (lib/webhooks/delivery.ts):
 *   delivered / 410 / settled        -> deleted
 *   failed, retries left             -> hidden for the backoff delay (ChangeMessageVisibility) and
 *                                       reported in batchItemFailures: it comes back on its own schedule
 *   failed, last attempt             -> made visible at once and reported: the next receive exceeds
 *                                       maxReceiveCount and SQS moves it to the DLQ (alarmed)
 *   malformed body                   -> made visible at once and reported (DLQ after maxReceiveCount)
 *   internal failure (DynamoDB, KMS) -> reported; back after the visibility timeout
 */
import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { Env } from '../lib/config/service';
import { logger } from '../lib/observability/logger';
import { attemptDelivery } from '../lib/webhooks/delivery';
import { deliveryDependencies } from '../lib/webhooks/delivery-wiring';
import { parseDeliveryMessage } from '../lib/webhooks/events';
import { hideMessage } from '../lib/webhooks/delivery-queue';

const FUNCTION = 'deliverWebhooks';
const QUEUE = Env.webhookDeliveriesQueueUrl;

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchItemFailure[] = [];
  const services = deliveryDependencies();
  await Promise.all(
    (event.Records ?? []).map(async (record) => {
      const started = Date.now();
      const receiveCount = Number(record.attributes?.ApproximateReceiveCount ?? '1');
      const deliveryId = parseDeliveryMessage(record.body);
      if (!deliveryId) {
        logger.warn('webhooks.delivery.bad_message', { function: FUNCTION, attempt: receiveCount });
        failures.push({ itemIdentifier: record.messageId });
        await hideMessage(QUEUE, record.receiptHandle, 0).catch(() => undefined);
        return;
      }
      try {
        const report = await attemptDelivery(deliveryId, receiveCount, services);
        const { decision, attempt } = report;
        logger.info('webhooks.delivery.attempt', {
          function: FUNCTION,
          deliveryId,
          subscriptionId: attempt?.subscriptionId,
          attempt: attempt?.attempt ?? receiveCount,
          status: attempt?.httpStatus,
          decision: attempt?.outcome ?? decision.kind,
          reason: report.reason,
          errorName: attempt?.errorName,
          durationMs: Date.now() - started,
        });
        if (decision.kind === 'delete') return;
        failures.push({ itemIdentifier: record.messageId });
        await hideMessage(QUEUE, record.receiptHandle, decision.kind === 'retry' ? decision.delaySeconds : 0);
      } catch (error) {
        logger.error('webhooks.delivery.failed', {
          function: FUNCTION,
          deliveryId,
          attempt: receiveCount,
          errorName: (error as Error | undefined)?.name ?? 'unknown',
          durationMs: Date.now() - started,
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
};
