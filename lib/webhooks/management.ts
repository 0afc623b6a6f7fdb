/**
 * What `npm run webhooks` does, as functions (scripts/webhooks.ts only parses and prints). Bad
 * input is refused with a SubscriptionInputError whose message is one line for the operator.
 */
import type { EnvelopeEncryptor } from '../crypto/envelope';
import { newPingEventId, newSubscriptionId } from './delivery-id';
import { pingEvent } from './events';
import { newDelivery, queueDelivery } from './fan-out';
import { generateSigningSecret, sealSigningSecret } from './signing-secret';
import type { WebhookStore } from './subscription-store';
import { checkTargetUrl } from './target-url';
import { SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType, type Subscription } from './types';

export class SubscriptionInputError extends Error {
  override readonly name = 'SubscriptionInputError';
}

export interface ManagementDependencies {
  store: WebhookStore;
  partnerExists(partnerId: string): Promise<boolean>;
  /**
   * Whether the partner holds an export scope (interop:export:hl7 or interop:export:fhir) on an
   * active key now; recorded on a new subscription as `exportScope`.
   */
  partnerHoldsExportScope(partnerId: string): Promise<boolean>;
  encryptor: EnvelopeEncryptor;
  enqueue(deliveryId: string): Promise<void>;
  stage: string;
  now(): Date;
}

export interface AddSubscriptionInput {
  partnerId?: string;
  url?: string;
  /** comma-separated event types */
  events?: string;
}

/**
 * Creates an enabled subscription; returns it with its secret (shown once, never stored in clear).
 * It records whether the partner holds an export scope now (`exportScope`): with it the
 * subscription hears of every partner's results, without it only of the partner's own (fan-out.ts
 * mayHearOf). The flag is fixed at creation: after a partner gains or loses an export scope, remove
 * the subscription and add it again.
 */
export async function addSubscription(input: AddSubscriptionInput, services: ManagementDependencies): Promise<{ subscription: Subscription; secret: string }> {
  const partnerId = input.partnerId?.trim();
  if (!partnerId) throw new SubscriptionInputError('--partner is required');
  if (!input.url) throw new SubscriptionInputError('--url is required');
  const target = checkTargetUrl(input.url, services.stage);
  if (!target.ok) throw new SubscriptionInputError(`--url ${target.reason} (stage ${services.stage})`);
  const events = (input.events ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (events.length === 0) throw new SubscriptionInputError(`--events is required (known: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')})`);
  const unknown = events.filter((e) => !(SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) throw new SubscriptionInputError(`unknown event type ${unknown.join(', ')} (known: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')})`);
  if (!(await services.partnerExists(partnerId))) throw new SubscriptionInputError(`unknown partner ${partnerId}`);

  const exportScope = (await services.partnerHoldsExportScope(partnerId)) === true;
  const now = services.now().toISOString();
  const subscription: Subscription = {
    subscriptionId: newSubscriptionId(),
    partnerId,
    url: target.url.href,
    events: [...new Set(events)] as SubscribableEventType[],
    enabled: true,
    exportScope,
    createdAt: now,
    updatedAt: now,
  };
  const secret = generateSigningSecret();
  await services.store.putSubscription(subscription, await sealSigningSecret(services.encryptor, subscription.subscriptionId, secret));
  return { subscription, secret };
}

async function requireSubscription(subscriptionId: string | undefined, services: ManagementDependencies): Promise<Subscription> {
  if (!subscriptionId) throw new SubscriptionInputError('a subscription id is required');
  const stored = await services.store.getSubscription(subscriptionId);
  if (!stored) throw new SubscriptionInputError(`no subscription ${subscriptionId}`);
  return stored.subscription;
}

/** Queues a `ping` event to one subscription (enabled or not is checked by the worker); returns the delivery id. */
export async function sendPing(subscriptionId: string | undefined, services: ManagementDependencies): Promise<string> {
  const subscription = await requireSubscription(subscriptionId, services);
  if (!subscription.enabled) throw new SubscriptionInputError(`subscription ${subscription.subscriptionId} is disabled; enable it first`);
  const now = services.now();
  const delivery = newDelivery(pingEvent(newPingEventId(), now), subscription, now);
  await queueDelivery(delivery, { store: services.store, enqueue: services.enqueue, now: services.now });
  return delivery.deliveryId;
}

/** Sends a delivery again (same event, same webhook-id, a fresh retry schedule). */
export async function redeliver(deliveryId: string | undefined, services: ManagementDependencies): Promise<void> {
  if (!deliveryId) throw new SubscriptionInputError('a delivery id is required');
  const delivery = await services.store.getDelivery(deliveryId);
  if (!delivery) throw new SubscriptionInputError(`no delivery ${deliveryId} (the log keeps 30 days)`);
  const subscription = await requireSubscription(delivery.subscriptionId, services);
  if (!subscription.enabled) throw new SubscriptionInputError(`subscription ${subscription.subscriptionId} is disabled; enable it first`);
  await services.store.reopenDelivery(deliveryId, services.now());
  await services.enqueue(deliveryId);
}

export async function setSubscriptionEnabled(subscriptionId: string | undefined, enabled: boolean, services: ManagementDependencies): Promise<void> {
  if (!subscriptionId) throw new SubscriptionInputError('a subscription id is required');
  if (!(await services.store.setEnabled(subscriptionId, enabled, enabled ? undefined : 'operator', services.now())))
    throw new SubscriptionInputError(`no subscription ${subscriptionId}`);
}

export async function removeSubscription(subscriptionId: string | undefined, services: ManagementDependencies): Promise<void> {
  if (!subscriptionId) throw new SubscriptionInputError('a subscription id is required');
  if (!(await services.store.removeSubscription(subscriptionId))) throw new SubscriptionInputError(`no subscription ${subscriptionId}`);
}
