/**
 * Notification events for saved lab results, on the notifications SQS queue. A message carries
 * ids and the status only (no patient id, no accession number, no values, no dates, and since
 * issue 26 no `patientMatched`: whether a patient id is a chart patient is for the service to know,
 * not for subscribers; it stays in the result store): a consumer that needs more reads the result
 * through the service. `partnerId` (the partner whose result version it is) decides which webhook
 * subscriptions hear of it (lib/webhooks/fan-out.ts mayHearOf); it is not in the webhook event.
 * `audience` says who besides that partner may: `export` for a result filed to a chart patient (any
 * subscription of a partner with an export scope, as the export reads it), `partner` for one that
 * is not (held, or a patient id the chart does not know: the lab result export answers 404 to
 * everyone else, so nobody else hears of it). Not in the webhook event either.
 *
 *   { "type": "lab-result.saved", "schemaVersion": 1, "notificationId": "<versionId>",
 *     "resultId": "lr_...", "versionId": "lv_...", "status": "final",
 *     "senderId": "demo-lab", "partnerId": "demo-lab", "audience": "export" }
 *
 * Delivery is at least once: the same notificationId can arrive twice (a retry after a publish
 * whose bookkeeping failed); consumers deduplicate on it.
 */
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { LabResultStatus } from './types';
import type { VersionRecord } from './types';

export interface ResultNotification {
  type: 'lab-result.saved';
  schemaVersion: 1;
  notificationId: string;
  resultId: string;
  versionId: string;
  status: LabResultStatus;
  senderId: string;
  partnerId: string;
  /** who besides `partnerId` may hear of it (see above) */
  audience: NotificationAudience;
}

/** `export`: every subscription with an export scope may hear of the result; `partner`: its own partner's only. */
export type NotificationAudience = 'export' | 'partner';

export function notificationFor(
  version: Pick<VersionRecord, 'resultId' | 'versionId' | 'status' | 'senderId' | 'partnerId' | 'patientMatched'>,
): ResultNotification {
  return {
    type: 'lab-result.saved',
    schemaVersion: 1,
    notificationId: version.versionId,
    resultId: version.resultId,
    versionId: version.versionId,
    status: version.status,
    senderId: version.senderId,
    partnerId: version.partnerId,
    audience: version.patientMatched ? 'export' : 'partner',
  };
}

const attributes = (n: ResultNotification) => ({ type: { DataType: 'String', StringValue: n.type } });

/** Publishes notifications. Errors propagate as the SDK raised them (the caller decides). */
export class ResultNotifier {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async publish(notification: ResultNotification): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(notification), MessageAttributes: attributes(notification) }),
    );
  }

  /** Up to 10 per call; returns the notificationIds that failed, with the error code. */
  async publishBatch(notifications: ResultNotification[]): Promise<Map<string, string>> {
    const failed = new Map<string, string>();
    for (let i = 0; i < notifications.length; i += 10) {
      const chunk = notifications.slice(i, i + 10);
      try {
        const out = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: chunk.map((n, j) => ({ Id: String(j), MessageBody: JSON.stringify(n), MessageAttributes: attributes(n) })),
          }),
        );
        for (const f of out.Failed ?? []) {
          const n = chunk[Number(f.Id)];
          if (n) failed.set(n.notificationId, f.Code ?? 'BatchEntryFailed');
        }
      } catch (error) {
        for (const n of chunk) failed.set(n.notificationId, (error as Error)?.name ?? 'Error');
      }
    }
    return failed;
  }
}
