/**
 * Shapes of webhook subscriptions, deliveries and the delivery log. Nothing here carries PHI: the
 * events are ids, a status, a type and a time; the log is ids, times, HTTP statuses and latencies.
 */

/** Event types a subscription can ask for (open list: add a type here and where it is published). */
export const SUBSCRIBABLE_EVENT_TYPES = ['lab-result.saved'] as const;
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
/** `ping` is sent by `webhooks test <id>` only; nobody subscribes to it. */
export type WebhookEventType = SubscribableEventType | 'ping';

export interface Subscription {
  subscriptionId: string;
  partnerId: string;
  url: string;
  events: SubscribableEventType[];
  enabled: boolean;
  /** why it was disabled: `operator` (CLI) or `gone` (the target answered 410) */
  disabledReason?: 'operator' | 'gone';
  /**
   * The partner held an export scope (interop:export:hl7 or interop:export:fhir) on an active key
   * when the subscription was created. Shown by `webhooks list` only: who hears of what is decided
   * on the partner's standing at fan-out and at every delivery attempt (audience.ts), never on this.
   */
  exportScope?: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The body a subscriber receives (Standard Webhooks' suggested `type` / `timestamp` / `data` shape). */
export interface WebhookEvent {
  type: WebhookEventType;
  /** when the event happened (ISO 8601, UTC) */
  timestamp: string;
  data: {
    /** one id per event; the same in every delivery and retry of it (subscribers deduplicate on it) */
    eventId: string;
    resultId?: string;
    versionId?: string;
    status?: string;
  };
}

export type DeliveryState = 'pending' | 'retrying' | 'delivered' | 'gone' | 'dead-lettered' | 'skipped';

export interface Delivery {
  deliveryId: string;
  subscriptionId: string;
  eventId: string;
  eventType: WebhookEventType;
  event: WebhookEvent;
  state: DeliveryState;
  /** attempts made so far (all sends, manual redeliveries included) */
  attempts: number;
  createdAt: string;
  lastAttemptAt?: string;
  lastHttpStatus?: number;
  nextAttemptAt?: string;
  /**
   * The facts of the result the event names that decide who may hear of it (audience.ts), from the
   * notification: the partner that sent the version, whether it is filed to a chart patient. Never
   * sent to the subscriber. Absent on pings and on deliveries made before it was recorded (the
   * worker then reads them from the result store).
   */
  result?: { partnerId?: string; filed: boolean };
  /** why the delivery was settled without a request (audience.ts AudienceRefusal, subscription-disabled, ...) */
  skippedReason?: string;
}

/** What one attempt ended as. */
export type AttemptOutcome = 'delivered' | 'retry' | 'gone' | 'dead-lettered';

/** One entry of the delivery log (one per attempt). */
export interface DeliveryAttempt {
  deliveryId: string;
  subscriptionId: string;
  eventId: string;
  attempt: number;
  at: string;
  /** absent when no HTTP answer came (timeout, refused, blocked address) */
  httpStatus?: number;
  latencyMs: number;
  outcome: AttemptOutcome;
  /** error class when there was no HTTP answer (e.g. `timeout`, `ECONNREFUSED`, `blocked-address`) */
  errorName?: string;
  /** when the next attempt is due (outcome retry) */
  nextAttemptAt?: string;
}
