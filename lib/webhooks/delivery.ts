/**
 * One delivery attempt, as the deliveries worker makes it: read the delivery and its subscription,
 * sign the thin event with the subscription's secret (Standard Webhooks, `standardwebhooks`
 * package: webhook-id = delivery id, webhook-timestamp = now, webhook-signature = v1 HMAC-SHA256),
 * POST it, log the attempt, and say what happens to the queue message:
 *
 *   2xx                        delivered           -> delete the message
 *   410 Gone                   subscription disabled (reason gone) -> delete
 *   anything else / no answer  retry after the backoff delay (message hidden that long)
 *                              or, after the last attempt, dead-lettered (message back at once;
 *                              its next receive exceeds maxReceiveCount and SQS moves it to the DLQ)
 *   delivery already settled, subscription removed or disabled -> delete, no request
 *   the partner may not hear of the result now (blocked, scope removed, relationship ended:
 *   audience.ts)               skipped with the refusal as its reason -> delete, no request
 */
import { Webhook } from 'standardwebhooks';
import type { PostOutcome, PostRequest } from './http-delivery';
import { retryDelaySeconds } from './retry-schedule';
import type { WebhookStore } from './subscription-store';
import { eventAudience, type AudienceSource } from './audience';
import { checkTargetUrl } from './target-url';
import type { AttemptOutcome, DeliveryAttempt, DeliveryState } from './types';

export interface DeliveryDependencies {
  store: Pick<WebhookStore, 'getDelivery' | 'getSubscription' | 'claimAttempt' | 'recordAttempt' | 'setDeliveryState' | 'setEnabled'>;
  /** who may hear of the event now (audience.ts), asked before every attempt */
  audience: AudienceSource;
  /** the plaintext `whsec_` secret of a subscription */
  openSecret(subscriptionId: string, envelope: string): Promise<string>;
  post(request: PostRequest): Promise<PostOutcome>;
  stage: string;
  timeoutMs: number;
  retryScale: number;
  random(): number;
  now(): Date;
}

export type QueueDecision = { kind: 'delete' } | { kind: 'retry'; delaySeconds: number } | { kind: 'dead-letter' };

export interface AttemptReport {
  decision: QueueDecision;
  /** absent when no request was made */
  attempt?: DeliveryAttempt;
  reason?: string;
}

export const USER_AGENT = 'interop-webhooks/1';

/** How long a send lease outlasts the POST's timeout. */
export const LEASE_MARGIN_MS = 5_000;

/**
 * @param receiveCount the message's ApproximateReceiveCount: its position in the retry schedule
 */
export async function attemptDelivery(deliveryId: string, receiveCount: number, services: DeliveryDependencies): Promise<AttemptReport> {
  const { store } = services;
  const delivery = await store.getDelivery(deliveryId);
  if (!delivery) return { decision: { kind: 'delete' }, reason: 'unknown-delivery' };
  if (delivery.state === 'delivered' || delivery.state === 'gone' || delivery.state === 'skipped')
    return { decision: { kind: 'delete' }, reason: `already-${delivery.state}` };
  if (delivery.state === 'dead-lettered') return { decision: { kind: 'dead-letter' }, reason: 'already-dead-lettered' };
  const stored = await store.getSubscription(delivery.subscriptionId);
  if (!stored || !stored.subscription.enabled) {
    const reason = stored ? 'subscription-disabled' : 'subscription-removed';
    await store.setDeliveryState(deliveryId, 'skipped', reason);
    return { decision: { kind: 'delete' }, reason };
  }
  const { subscription } = stored;
  // read access is decided now, not when the event was fanned out: a retry hours later asks again
  const verdict = await eventAudience(delivery.event, delivery.result, services.audience).verdictFor(subscription.partnerId);
  if (!verdict.allowed) {
    await store.setDeliveryState(deliveryId, 'skipped', verdict.reason);
    return { decision: { kind: 'delete' }, reason: `refused-${verdict.reason}` };
  }
  const now = services.now();
  // the lease outlasts the POST's timeout: a worker that dies mid-attempt frees it after that
  const attemptNumber = await store.claimAttempt(deliveryId, now, new Date(now.getTime() + services.timeoutMs + LEASE_MARGIN_MS));
  if (attemptNumber === undefined) {
    // another receive of the same delivery is sending it now (or has delivered it): look again later
    return { decision: { kind: 'retry', delaySeconds: Math.ceil((services.timeoutMs + LEASE_MARGIN_MS) / 1000) }, reason: 'attempt-in-progress' };
  }
  const body = JSON.stringify(delivery.event);

  let outcome: PostOutcome;
  const target = checkTargetUrl(subscription.url, services.stage);
  if (!target.ok) {
    outcome = { latencyMs: 0, errorName: 'blocked-url', bodyBytesRead: 0 };
  } else {
    const secret = await services.openSecret(subscription.subscriptionId, stored.secretEnvelope);
    const signature = new Webhook(secret).sign(deliveryId, now, body);
    outcome = await services.post({
      url: target.url,
      body,
      timeoutMs: services.timeoutMs,
      stage: services.stage,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': deliveryId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
      },
    });
  }

  const status = outcome.httpStatus;
  let result: AttemptOutcome;
  let state: DeliveryState;
  let decision: QueueDecision;
  let nextAttemptAt: string | undefined;
  if (status !== undefined && status >= 200 && status < 300) {
    [result, state, decision] = ['delivered', 'delivered', { kind: 'delete' }];
  } else if (status === 410) {
    [result, state, decision] = ['gone', 'gone', { kind: 'delete' }];
    await store.setEnabled(subscription.subscriptionId, false, 'gone', now);
  } else {
    const delaySeconds = retryDelaySeconds(receiveCount, services.retryScale, services.random());
    if (delaySeconds === undefined) {
      [result, state, decision] = ['dead-lettered', 'dead-lettered', { kind: 'dead-letter' }];
    } else {
      [result, state, decision] = ['retry', 'retrying', { kind: 'retry', delaySeconds }];
      nextAttemptAt = new Date(now.getTime() + delaySeconds * 1000).toISOString();
    }
  }
  const attempt: DeliveryAttempt = {
    deliveryId,
    subscriptionId: subscription.subscriptionId,
    eventId: delivery.eventId,
    attempt: attemptNumber,
    at: now.toISOString(),
    ...(status !== undefined ? { httpStatus: status } : {}),
    latencyMs: outcome.latencyMs,
    outcome: result,
    ...(outcome.errorName ? { errorName: outcome.errorName } : {}),
    ...(nextAttemptAt ? { nextAttemptAt } : {}),
  };
  await store.recordAttempt(attempt, state);
  return { decision, attempt };
}
