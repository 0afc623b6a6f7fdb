/**
 * The webhook events and the queue messages of the delivery pipeline, with their parsers. A parser
 * returns undefined for anything that is not exactly its shape (the worker reports it as a batch
 * failure; after maxReceiveCount it lands in the DLQ).
 *
 *   notifications queue (lib/results/notifications.ts):  { "type": "lab-result.saved", "notificationId": ..., ... }
 *   webhook deliveries queue:                            { "v": 1, "deliveryId": "dl_..." }
 */
import type { WebhookEvent } from './types';

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const STATUSES = new Set(['preliminary', 'final', 'corrected', 'amended', 'cancelled']);

const isId = (value: unknown): value is string => typeof value === 'string' && ID.test(value);

/** A result event and whose result it is (never sent: it only decides who hears of the event). */
export interface ResultEvent {
  event: WebhookEvent;
  /** the partner whose result version it is (the version's partnerId); undefined on a message without one */
  resultPartnerId: string | undefined;
  /**
   * whether partners with an export scope may hear of it too (a chart result): false for a result
   * not filed to the chart, and for a message published before the audience was sent (nobody but
   * its own partner hears of a result that might be held)
   */
  exportAudience: boolean;
}

/**
 * The thin `lab-result.saved` event of a notification message and the partner whose result it is,
 * or undefined when the message is malformed. The event carries ids and the status only: no
 * `patientMatched` (issue 26: it told a subscriber whether a patient id was a chart patient). A
 * message still carrying `patientMatched` (published before issue 26) is accepted; it is ignored.
 */
export function eventFromNotification(body: string, now: Date): ResultEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const n = parsed as Record<string, unknown>;
  if (n.type !== 'lab-result.saved' || n.schemaVersion !== 1) return undefined;
  if (!isId(n.notificationId) || !isId(n.resultId) || !isId(n.versionId)) return undefined;
  if (typeof n.status !== 'string' || !STATUSES.has(n.status)) return undefined;
  if (n.partnerId !== undefined && !isId(n.partnerId)) return undefined;
  if (n.audience !== undefined && n.audience !== 'export' && n.audience !== 'partner') return undefined;
  return {
    event: {
      type: 'lab-result.saved',
      timestamp: now.toISOString(),
      data: { eventId: n.notificationId, resultId: n.resultId, versionId: n.versionId, status: n.status },
    },
    resultPartnerId: n.partnerId,
    exportAudience: n.audience === 'export',
  };
}

export function pingEvent(eventId: string, now: Date): WebhookEvent {
  return { type: 'ping', timestamp: now.toISOString(), data: { eventId } };
}

export interface DeliveryMessage {
  v: 1;
  deliveryId: string;
}

export function deliveryMessageBody(deliveryId: string): string {
  return JSON.stringify({ v: 1, deliveryId } satisfies DeliveryMessage);
}

export function parseDeliveryMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as Partial<DeliveryMessage> | null;
    return parsed && parsed.v === 1 && isId(parsed.deliveryId) && parsed.deliveryId.startsWith('dl_') ? parsed.deliveryId : undefined;
  } catch {
    return undefined;
  }
}
