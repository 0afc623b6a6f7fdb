/**
 * Scheduled (rate(5 minutes), lib/config/service.ts): sends the lab result notifications that a
 * request could not publish (queue unavailable, or the request crashed after saving). Queries the
 * notification markers' shards NOTIFY#PENDING#<nn> of the results table (and, for versions stored
 * before the notification markers existed, the same shards and the legacy unsharded partition of its byPatient
 * index); never scans. See lib/results/retry.ts.
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import { notificationRetryDependencies } from '../lib/results/retry-wiring';
import { retryPendingNotifications, type RetrySummary } from '../lib/results/retry';

export async function handler(_event: ScheduledEvent | Record<string, unknown>, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<RetrySummary> {
  return retryPendingNotifications(notificationRetryDependencies(), {
    now: () => new Date(),
    remainingMs: () => context?.getRemainingTimeInMillis?.() ?? 60_000,
  });
}
