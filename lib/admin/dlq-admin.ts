/**
 * Dead-letter queues of the service's queues (lib/config/service.ts `Queues`, each with its DLQ):
 * how many messages each holds and how old the oldest is, and a redrive that moves a DLQ's
 * messages back to its source queue. Message bodies are read only to be sent on; nothing here
 * returns or prints them.
 *
 * Names: a queue is `interop-<stage>-<baseName>` and its DLQ `<that>-dlq`, in the cloud
 * (infra/data-stores.ts) and on the local stack (lib/local/stack.ts) alike. On the local stack the
 * source queues' URLs come from the environment (.local/endpoints.json); on a stage both are found
 * by name (GetQueueUrl).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { Queues, resourceName, type QueueId } from '../config/service';
import { stagePrefix } from '../config/stage-parameters';
import { sqsClient } from '../aws/clients';
import { AdminError } from './key-admin';
import { StageNotFoundError } from './gateway-keys';
import { LOCAL_STACK_NOT_RUNNING } from './target';

/** Where `npm run dlq` acts. */
export interface DlqTarget {
  /** e.g. "local stack" or "stage prod (eu-west-1)" */
  description: string;
  stage?: string;
  sqs: SQSClient;
  /** the source queue's name and URL, when known without a lookup (the local stack's environment) */
  sourceUrl(id: QueueId): string | undefined;
  /** the source queue's name (`interop-<stage>-<baseName>`), when the URL is not given */
  sourceName(id: QueueId): string;
}

const STAGE_PATTERN = /^[a-z][a-z0-9-]{1,15}$/;
/** the one line every CLI prints when the local stack is not running (lib/admin/target.ts) */
export { LOCAL_STACK_NOT_RUNNING };

/** A deployed stage: queues by name in AWS_REGION with the usual credentials (tests pass a client). */
export function dlqStageTarget(stage: string, client?: SQSClient, env: NodeJS.ProcessEnv = process.env): DlqTarget {
  if (!STAGE_PATTERN.test(stage)) throw new StageNotFoundError(`--stage must be a stage name like dev or prod (lower-case, 2-16 characters), got "${stage}"`);
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (!client && !region) throw new StageNotFoundError('no AWS region: set AWS_REGION (the region the stage is deployed in)');
  const sqs = client ?? new SQSClient({ region, maxAttempts: 3 });
  const prefix = stagePrefix(stage);
  return {
    description: `stage ${stage}${region ? ` (${region})` : ''}`,
    stage,
    sqs,
    sourceUrl: () => undefined,
    sourceName: (id) => resourceName(prefix, Queues[id].baseName),
  };
}

/** The running local stack: its queue URLs from the environment `useLocalEnvironment` loads. */
export function dlqLocalTarget(useLocalEnvironment: () => void = () => undefined, env: NodeJS.ProcessEnv = process.env): DlqTarget {
  try {
    useLocalEnvironment();
  } catch {
    throw new AdminError(LOCAL_STACK_NOT_RUNNING);
  }
  const url = (id: QueueId) => env[Queues[id].env] || undefined;
  if (!url('matching')) throw new AdminError(LOCAL_STACK_NOT_RUNNING);
  return {
    description: 'local stack',
    sqs: sqsClient(),
    sourceUrl: url,
    sourceName: (id) => url(id)?.split('/').pop() ?? resourceName('interop-local', Queues[id].baseName),
  };
}

/** `--stage` wins, then INTEROP_STAGE, else the local stack. */
export function resolveDlqTarget(stageOption: string | undefined, useLocalEnvironment: () => void, env: NodeJS.ProcessEnv = process.env): DlqTarget {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const stage = stageOption ?? (env.INTEROP_STAGE || undefined);
  return stage ? dlqStageTarget(stage, undefined, env) : dlqLocalTarget(useLocalEnvironment, env);
}

/** `matching`, `form-matching` or a full queue name ending in one of those -> the queue id. */
export function queueIdOf(raw: string): QueueId | undefined {
  const normalized = raw.replace(/-dlq$/, '');
  for (const def of Object.values(Queues)) {
    if (normalized === def.id || normalized === def.baseName || normalized.endsWith(`-${def.baseName}`)) return def.id;
  }
  return undefined;
}

export interface DlqStatus {
  queue: QueueId;
  dlqName: string;
  /** ApproximateNumberOfMessages (visible) */
  messages: number;
  /** ApproximateNumberOfMessagesNotVisible (received by someone, e.g. a redrive under way) */
  inFlight: number;
  /** age of the oldest message seen by a peek (SentTimestamp, kept when a message is dead-lettered); undefined when empty */
  oldestAgeSeconds?: number;
}

export interface RedriveResult {
  queue: QueueId;
  from: string;
  to: string;
  moved: number;
  /** sent to the source but not deleted from the DLQ (it will be redriven again: a duplicate) */
  notDeleted: number;
  /** not sent (still in the DLQ, visible again after the receive's visibility timeout) */
  sendFailed: number;
}

interface ResolvedQueue {
  id: QueueId;
  name: string;
  url: string;
  dlqName: string;
  dlqUrl: string;
}

const BATCH = 10;
/** seconds a received DLQ message stays hidden while it is being sent on */
const REDRIVE_VISIBILITY_SECONDS = 60;
/** peek receives per queue for the oldest message's age (messages stay visible: VisibilityTimeout 0) */
const PEEK_ROUNDS = 3;

export class DlqAdmin {
  constructor(
    private readonly target: DlqTarget,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private async urlOf(name: string): Promise<string> {
    try {
      const out = await this.target.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
      return out.QueueUrl!;
    } catch (error) {
      const e = error as Error;
      if (e.name === 'QueueDoesNotExist' || /NonExistentQueue|does not exist/i.test(`${e.name} ${e.message}`)) {
        throw new AdminError(
          this.target.stage
            ? `${this.target.description}: queue ${name} does not exist (deploy the stack first, or check --stage and AWS_REGION)`
            : `the local stack has no queue ${name}: restart it with \`npm start\``,
        );
      }
      throw error;
    }
  }

  async resolve(id: QueueId): Promise<ResolvedQueue> {
    const name = this.target.sourceName(id);
    const url = this.target.sourceUrl(id) ?? (await this.urlOf(name));
    const dlqName = `${name}-dlq`;
    return { id, name, url, dlqName, dlqUrl: await this.urlOf(dlqName) };
  }

  async list(): Promise<DlqStatus[]> {
    const result: DlqStatus[] = [];
    for (const id of Object.keys(Queues) as QueueId[]) {
      const q = await this.resolve(id);
      const attrs = await this.target.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: q.dlqUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
      );
      const messages = Number(attrs.Attributes?.ApproximateNumberOfMessages ?? 0);
      const inFlight = Number(attrs.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
      const oldest = messages > 0 ? await this.oldestSentAt(q.dlqUrl) : undefined;
      result.push({
        queue: id,
        dlqName: q.dlqName,
        messages,
        inFlight,
        ...(oldest !== undefined ? { oldestAgeSeconds: Math.max(0, Math.round((this.now().getTime() - oldest) / 1000)) } : {}),
      });
    }
    return result;
  }

  /** The earliest SentTimestamp among a few receives that leave the messages visible (bodies are dropped). */
  private async oldestSentAt(dlqUrl: string): Promise<number | undefined> {
    let oldest: number | undefined;
    for (let round = 0; round < PEEK_ROUNDS; round++) {
      const out = await this.target.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: dlqUrl,
          MaxNumberOfMessages: BATCH,
          WaitTimeSeconds: 0,
          VisibilityTimeout: 0,
          MessageSystemAttributeNames: ['SentTimestamp'],
        }),
      );
      const peeked = out.Messages ?? [];
      if (!peeked.length) break;
      // visible again at once (VisibilityTimeout 0 on the receive is not honoured by every SQS emulator)
      await this.target.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: dlqUrl,
          Entries: peeked.map((m, i) => ({ Id: `p${i}`, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 })),
        }),
      );
      const stamps = peeked.map((m) => Number(m.Attributes?.SentTimestamp)).filter((n) => Number.isFinite(n));
      if (!stamps.length) break;
      oldest = Math.min(oldest ?? Infinity, ...stamps);
    }
    return oldest;
  }

  /**
   * Moves the DLQ's messages to the source queue, 10 at a time: receive, send (body and message
   * attributes), and delete from the DLQ only the ones whose send succeeded. Stops when a receive
   * comes back empty or after `max` messages. Re-running moves what is left.
   */
  async redrive(id: QueueId, options: { max?: number; report?: (line: string) => void } = {}): Promise<RedriveResult> {
    const q = await this.resolve(id);
    const result: RedriveResult = { queue: id, from: q.dlqName, to: q.name, moved: 0, notDeleted: 0, sendFailed: 0 };
    const max = options.max ?? Number.POSITIVE_INFINITY;
    const seen = new Set<string>();
    while (result.moved + result.notDeleted < max) {
      const want = Math.min(BATCH, max - result.moved - result.notDeleted);
      const out = await this.target.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: q.dlqUrl,
          MaxNumberOfMessages: want,
          WaitTimeSeconds: 1,
          VisibilityTimeout: REDRIVE_VISIBILITY_SECONDS,
          MessageAttributeNames: ['All'],
        }),
      );
      const messages = (out.Messages ?? []).filter((m) => !seen.has(m.MessageId!));
      if (!messages.length) break;
      for (const m of messages) seen.add(m.MessageId!);
      const byEntry = new Map<string, Message>(messages.map((m, i) => [`m${i}`, m]));
      const sent = await this.target.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: q.url,
          Entries: [...byEntry].map(([entryId, m]) => ({
            Id: entryId,
            MessageBody: m.Body!,
            ...(m.MessageAttributes && Object.keys(m.MessageAttributes).length ? { MessageAttributes: m.MessageAttributes } : {}),
          })),
        }),
      );
      const ok = (sent.Successful ?? []).map((s) => s.Id!);
      result.sendFailed += messages.length - ok.length;
      if (!ok.length) continue;
      const deleted = await this.target.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: q.dlqUrl,
          Entries: ok.map((entryId) => ({ Id: entryId, ReceiptHandle: byEntry.get(entryId)!.ReceiptHandle! })),
        }),
      );
      const deletedCount = (deleted.Successful ?? []).length;
      result.moved += deletedCount;
      result.notDeleted += ok.length - deletedCount;
      options.report?.(`moved ${result.moved} so far`);
    }
    return result;
  }
}
