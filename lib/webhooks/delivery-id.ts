import { createHash, randomBytes } from 'node:crypto';

/** One delivery per (event, subscription): the same notification received twice makes the same id. */
export function deliveryIdFor(eventId: string, subscriptionId: string): string {
  return 'dl_' + createHash('sha256').update(`${eventId}\n${subscriptionId}`).digest('hex').slice(0, 32);
}

export function newSubscriptionId(): string {
  return 'wh_' + randomBytes(10).toString('hex');
}

export function newPingEventId(): string {
  return 'ev_ping_' + randomBytes(10).toString('hex');
}
