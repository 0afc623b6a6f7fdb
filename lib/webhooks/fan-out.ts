/**
 * From one event to its deliveries: one per enabled subscription of the event's type that may
 * read the result (mayHearOf: the partner's own results, or any with an export scope), each its own
 * message on the webhook deliveries queue, so a slow or failing subscriber never holds up another
 * or a later event. Idempotent: the delivery id is derived from (event id, subscription id) and
 * written with a conditional put; a repeated event finds its deliveries and only re-queues one
 * whose message was never confirmed sent (queuedAt unset).
 */
import type { WebhookStore } from './subscription-store';
import { deliveryIdFor } from './delivery-id';
import type { Delivery, Subscription, WebhookEvent } from './types';

export interface FanOutDependencies {
  store: Pick<WebhookStore, 'listSubscriptions' | 'createDelivery' | 'getDelivery' | 'markQueued'>;
  /** puts one delivery message on the deliveries queue */
  enqueue(deliveryId: string): Promise<void>;
  now(): Date;
}

export interface FanOutSummary {
  subscriptions: number;
  queued: number;
}

export function newDelivery(event: WebhookEvent, subscription: Pick<Subscription, 'subscriptionId'>, now: Date): Delivery {
  return {
    deliveryId: deliveryIdFor(event.data.eventId, subscription.subscriptionId),
    subscriptionId: subscription.subscriptionId,
    eventId: event.data.eventId,
    eventType: event.type,
    event,
    state: 'pending',
    attempts: 0,
    createdAt: now.toISOString(),
  };
}

/** Creates the delivery when new and queues it unless its message is known to be queued. */
export async function queueDelivery(delivery: Delivery, services: FanOutDependencies): Promise<boolean> {
  const created = await services.store.createDelivery(delivery);
  if (!created) {
    const existing = await services.store.getDelivery(delivery.deliveryId);
    if (!existing || existing.queuedAt) return false;
  }
  await services.enqueue(delivery.deliveryId);
  await services.store.markQueued(delivery.deliveryId, services.now());
  return true;
}

/**
 * Webhook events follow read access (issue 26): a subscription hears of a result its partner may
 * read. Its own results (the result version's partnerId is the subscription's partner) always;
 * other partners' results only when the partner held an export scope at subscription time
 * (`exportScope`, set by addSubscription) and the result is a chart result (`exportAudience`: filed
 * to a chart patient; a held result or one for a patient id the chart does not know is read by its
 * own partner only, lib/exports/lab-result-export.ts). A subscription without the flag (made before
 * it existed) counts as without an export scope. A result whose partner is unknown is nobody's own.
 */
export function mayHearOf(
  subscription: Pick<Subscription, 'partnerId' | 'exportScope'>,
  result: { partnerId: string | undefined; exportAudience: boolean },
): boolean {
  if (subscription.exportScope === true && result.exportAudience) return true;
  return result.partnerId !== undefined && subscription.partnerId === result.partnerId;
}

/** Queues the event to every enabled subscription of its type that may hear of the result. */
export async function fanOutEvent(
  event: WebhookEvent,
  result: { partnerId: string | undefined; exportAudience: boolean },
  services: FanOutDependencies,
): Promise<FanOutSummary> {
  const subscriptions = (await services.store.listSubscriptions()).filter(
    (s) => s.enabled && (s.events as string[]).includes(event.type) && mayHearOf(s, result),
  );
  let queued = 0;
  for (const subscription of subscriptions) {
    if (await queueDelivery(newDelivery(event, subscription, services.now()), services)) queued += 1;
  }
  return { subscriptions: subscriptions.length, queued };
}
