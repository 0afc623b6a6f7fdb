/**
 * The SQS calls of the webhook pipeline (SQS only): put a delivery on the deliveries queue, and
 * hide a received message for its backoff delay.
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { Env, type EnvName } from '../config/service';
import { deliveryMessageBody } from './events';

export async function enqueueDelivery(deliveryId: string): Promise<void> {
  await sqsClient().send(new SendMessageCommand({ QueueUrl: requireEnv(Env.webhookDeliveriesQueueUrl), MessageBody: deliveryMessageBody(deliveryId) }));
}

/** The message comes back (visible again) after `seconds`; 0 = at once. */
export async function hideMessage(queueEnv: EnvName, receiptHandle: string, seconds: number): Promise<void> {
  await sqsClient().send(new ChangeMessageVisibilityCommand({ QueueUrl: requireEnv(queueEnv), ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
}
