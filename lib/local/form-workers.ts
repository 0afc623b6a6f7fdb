/**
 * LOCAL STACK ONLY (never deployed): what Lambda's SQS event source mapping and the EventBridge
 * schedule do in the cloud, for the forms background functions.
 *
 * - matching: polls MATCHING_QUEUE_URL with the real SQS ReceiveMessage (up to 10 messages),
 *   hands them to the real `matchFormPackets` handler as an SQS event, and deletes (real
 *   DeleteMessageBatch) only the messages the handler did not report in `batchItemFailures`.
 *   A handler that throws deletes nothing. Undeleted messages come back after the queue's
 *   visibility timeout and go to the DLQ after maxReceiveCount, as in the cloud.
 * - sweeping: calls the real `sweepPendingPackets` handler every `sweepIntervalMs`.
 *
 *   const workers = startLocalFormWorkers({ intervalMs: 200 });
 *   ...
 *   await workers.stop(); // before the SQS / DynamoDB servers close
 */
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { sqsClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { BackgroundFunctions, Env, type EnvName } from '../config/service';
import { loadHandler } from './function-registry';
import { lambdaContext } from './lambda-context';
import { logger } from '../observability/logger';

export interface LocalFormWorkersOptions {
  /** pause between polls when the queue was empty (ms) */
  intervalMs: number;
  /** how often the sweeper runs (ms); default 30 000; 0 disables it */
  sweepIntervalMs?: number;
  /** the sweeper's threshold (s); default 60 */
  sweepThresholdSeconds?: number;
}

export interface LocalFormWorkers {
  stop(): Promise<void>;
}

const MATCHER = 'matchFormPackets';
const SWEEPER = 'sweepPendingPackets';

function timeoutOf(name: string): number {
  return BackgroundFunctions.find((f) => f.name === name)?.timeoutSeconds ?? 30;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** An SQS message as the Lambda event source mapping hands it to a function. */
export function sqsRecordOf(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

async function pollOnce(functionName: string, queueUrl: string, queueArn: string, signal: AbortSignal): Promise<number> {
  const sqs = sqsClient();
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['All'] }),
    { abortSignal: signal },
  );
  const messages = out.Messages ?? [];
  if (messages.length === 0) return 0;
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const event: SQSEvent = { Records: messages.map((m) => sqsRecordOf(m, queueArn, region)) };
  let failed: Set<string>;
  try {
    const handler = await loadHandler(functionName);
    const response = (await handler(event, lambdaContext(functionName, timeoutOf(functionName)), () => undefined)) as SQSBatchResponse | undefined;
    failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  } catch (error) {
    // the whole invocation failed: every message stays and comes back after the visibility timeout
    logger.error('local.form_workers.handler_failed', {
      function: functionName,
      count: messages.length,
      errorName: (error as Error | undefined)?.name ?? 'unknown',
    });
    return messages.length;
  }
  const done = messages.filter((m) => m.MessageId && !failed.has(m.MessageId) && m.ReceiptHandle);
  if (done.length > 0) {
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: done.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })) }));
  }
  return messages.length;
}

/**
 * Polls the queue named by `queueEnv` and hands batches to the queue function `functionName` (as
 * Lambda's event source mapping does) until `signal` aborts.
 */
export async function pollQueue(functionName: string, queueEnv: EnvName, intervalMs: number, signal: AbortSignal): Promise<void> {
  const queueUrl = requireEnv(queueEnv);
  let queueArn = `arn:aws:sqs:${process.env.AWS_REGION ?? 'us-east-1'}:000000000000:${queueUrl.split('/').pop()}`;
  try {
    const attrs = await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }), { abortSignal: signal });
    queueArn = attrs.Attributes?.QueueArn ?? queueArn;
  } catch {
    // keep the constructed ARN; only informational in the event
  }
  while (!signal.aborted) {
    let received = 0;
    try {
      received = await pollOnce(functionName, queueUrl, queueArn, signal);
    } catch (error) {
      if (signal.aborted) break;
      logger.warn('local.form_workers.poll_failed', { function: functionName, errorName: (error as Error | undefined)?.name ?? 'unknown' });
    }
    if (received === 0) await sleep(intervalMs, signal);
  }
}

export function startLocalFormWorkers(options: LocalFormWorkersOptions): LocalFormWorkers {
  const intervalMs = Math.max(10, options.intervalMs);
  const sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
  const thresholdSeconds = options.sweepThresholdSeconds ?? 60;
  const abort = new AbortController();
  const signal = abort.signal;

  const matching = pollQueue(MATCHER, Env.matchingQueueUrl, intervalMs, signal);

  const sweeping = (async () => {
    if (sweepIntervalMs <= 0) return;
    while (!signal.aborted) {
      await sleep(sweepIntervalMs, signal);
      if (signal.aborted) break;
      try {
        const handler = await loadHandler(SWEEPER);
        await handler({ thresholdSeconds }, lambdaContext(SWEEPER, timeoutOf(SWEEPER)), () => undefined);
      } catch (error) {
        logger.warn('local.form_workers.sweep_failed', { function: SWEEPER, errorName: (error as Error | undefined)?.name ?? 'unknown' });
      }
    }
  })();

  let stopped: Promise<void> | undefined;
  return {
    stop: () => {
      stopped ??= (async () => {
        abort.abort();
        await Promise.allSettled([matching, sweeping]);
      })();
      return stopped;
    },
  };
}
