/**
 * The matching queue (Queues.matching). A message carries the packet id and nothing else: no PHI
 * ever travels through SQS. Body: {"v":1,"packetId":"fp_..."}.
 */
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { isPacketId } from './packet-id';

export interface MatchingMessage {
  v: 1;
  packetId: string;
}

export function matchingMessageBody(packetId: string): string {
  const message: MatchingMessage = { v: 1, packetId };
  return JSON.stringify(message);
}

/** The packet id of a message body; undefined when the body is not a matching message. */
export function parseMatchingMessage(body: string | undefined | null): string | undefined {
  if (typeof body !== 'string' || body.length > 1024) return undefined;
  try {
    const parsed = JSON.parse(body) as Partial<MatchingMessage>;
    return parsed && parsed.v === 1 && isPacketId(parsed.packetId) ? parsed.packetId : undefined;
  } catch {
    return undefined;
  }
}

/** SendMessageBatch takes at most 10 entries. */
export const SEND_BATCH_SIZE = 10;

export class MatchingQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(packetId: string): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: matchingMessageBody(packetId) }));
  }

  /** Sends in batches of 10; returns which packet ids were accepted by SQS. Never throws for one entry. */
  async sendMany(packetIds: readonly string[]): Promise<{ sent: string[]; failed: string[] }> {
    const sent: string[] = [];
    const failed: string[] = [];
    for (let i = 0; i < packetIds.length; i += SEND_BATCH_SIZE) {
      const chunk = packetIds.slice(i, i + SEND_BATCH_SIZE);
      try {
        const out = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: chunk.map((packetId, n) => ({ Id: `m${n}`, MessageBody: matchingMessageBody(packetId) })),
          }),
        );
        const failedIds = new Set((out.Failed ?? []).map((f) => f.Id));
        chunk.forEach((packetId, n) => (failedIds.has(`m${n}`) ? failed : sent).push(packetId));
      } catch {
        failed.push(...chunk);
      }
    }
    return { sent, failed };
  }
}
