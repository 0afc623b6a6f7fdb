/**
 * The scheduled retry of owed notifications (functions/retryResultNotifications.ts). Each page is
 * the due versions: first those of the older layout (the pending shards of the byPatient index and
 * the legacy unsharded partition), then the notification markers (the same shards in the base
 * table) (NotificationLedger.pendingNotifications: Queries merged in sort-key order, no Scan);
 * for each due version: move the current pointer if the request that wrote it did not get that
 * far, publish, mark sent (delete the marker); on a failed publish count the attempt and back off exponentially
 * (1 min, 2, 4, ... capped at 1 h).
 * Needs results:readwrite and notifications:send only (no KMS: it works on plain attributes).
 */
import { logger } from '../observability/logger';
import { notificationFor, type ResultNotifier } from './notifications';
import type { NotificationBookkeeping } from './notification-ledger';

export const RETRY_PAGE_SIZE = 25;
export const RETRY_BASE_DELAY_MS = 60 * 1000;
export const RETRY_MAX_DELAY_MS = 60 * 60 * 1000;

export interface RetrySummary {
  due: number;
  sent: number;
  failed: number;
  currentVersions: number;
}

export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** Math.max(0, attempts - 1));
}

export async function retryPendingNotifications(
  deps: { store: NotificationBookkeeping; notifier: ResultNotifier },
  options: { now: () => Date; remainingMs: () => number; maxItems?: number },
): Promise<RetrySummary> {
  const summary: RetrySummary = { due: 0, sent: 0, failed: 0, currentVersions: 0 };
  const maxItems = options.maxItems ?? 500;
  const failedIds = new Set<string>();
  while (summary.due < maxItems && options.remainingMs() > 5000) {
    const now = options.now();
    const page = (await deps.store.pendingNotifications(now, RETRY_PAGE_SIZE)).filter((v) => !failedIds.has(v.versionId));
    if (page.length === 0) break;
    summary.due += page.length;
    for (const version of page) {
      if (await deps.store.ensureCurrent(version, now).catch(() => false)) summary.currentVersions++;
    }
    const failed = await deps.notifier.publishBatch(page.map((v) => notificationFor(v)));
    for (const version of page) {
      const errorName = failed.get(version.versionId);
      if (errorName === undefined) {
        await deps.store.markNotificationSent(version, now);
        summary.sent++;
      } else {
        const attempts = version.notificationAttempts + 1;
        await deps.store.recordNotificationFailure(version, attempts, new Date(now.getTime() + retryDelayMs(attempts)), errorName);
        failedIds.add(version.versionId);
        summary.failed++;
        logger.warn('lab_result.notification_retry_failed', { resultId: version.resultId, attempt: attempts, errorName });
      }
    }
    if (page.length < RETRY_PAGE_SIZE) break;
  }
  logger.info('lab_result.notification_retry', {
    count: summary.due,
    recordCount: summary.sent,
    reason: `failed=${summary.failed};currentVersions=${summary.currentVersions}`,
  });
  return summary;
}
