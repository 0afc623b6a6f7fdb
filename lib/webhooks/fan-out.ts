/**
 * From one event to its deliveries: one per enabled subscription of the event's type whose partner
 * may hear of the result now (audience.ts: partner policy, current scopes, patient reach), each its own
 * message on the webhook deliveries queue, so a slow or failing subscriber never holds up another
 * or a later event. Idempotent: the delivery id is derived from (event id, subscription id) and
 * written with a conditional put; a repeated event finds its deliveries and only re-queues one
 * whose message was never confirmed sent (queuedAt unset).
 */
import type { WebhookStore } from './subscription-store';
import { deliveryIdFor } from './delivery-id';
import { eventAudience, type AudienceSource, type ResultAudienceFacts } from './audience';
import type { Delivery, Subscription, WebhookEvent } from './types';

export interface FanOutDependencies {
  store: Pick<WebhookStore, 'listSubscriptions' | 'createDelivery' | 'getDelivery' | 'markQueued'>;
  /** puts one delivery message on the deliveries queue */
  enqueue(deliveryId: string): Promise<void>;
  now(): Date;
}

export interface FanOutSummary {
  /** subscriptions of the event's type whose partner may hear of it */
  subscriptions: number;
  queued: number;
  /** subscriptions of the event's type whose partner may not (audience.ts) */
  refused: number;
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
 * Queues the event to every enabled subscription of its type whose partner may hear of the result
 * now (audience.ts mayHearOfResult: partner policy, current scopes, patient reach). The result's
 * audience facts go onto each delivery, so the worker asks the same rule again before every attempt.
 */
export async function fanOutEvent(
  event: WebhookEvent,
  result: ResultAudienceFacts,
  services: FanOutDependencies & { audience: AudienceSource },
): Promise<FanOutSummary> {
  const candidates = (await services.store.listSubscriptions()).filter((s) => s.enabled && (s.events as string[]).includes(event.type));
  const audience = eventAudience(event, result, services.audience);
  let queued = 0;
  let refused = 0;
  let subscriptions = 0;
  for (const subscription of candidates) {
    const verdict = await audience.verdictFor(subscription.partnerId);
    if (!verdict.allowed) {
      refused += 1;
      continue;
    }
    subscriptions += 1;
    const delivery = {
      ...newDelivery(event, subscription, services.now()),
      result: { ...(result.partnerId ? { partnerId: result.partnerId } : {}), filed: result.filed },
    };
    if (await queueDelivery(delivery, services)) queued += 1;
  }
  return { subscriptions, queued, refused };
}
