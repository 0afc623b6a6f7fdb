/**
 * The sweeper (scheduled): nothing stored is lost between the packet write and the queue send.
 * It queries the GSI byStateSummary for pending_match packets whose last queueing is older than the
 * threshold (Query on STATE#pending_match with stateSk < cutoff, oldest first; never a Scan),
 * sends them to the matching queue again and moves their stateSk to now (conditional on the state
 * and the old stateSk, so a packet matched meanwhile is left alone; a duplicate message is
 * harmless to the matcher).
 *
 * A packet queued `maxRequeues` times without being matched (matcher failing, messages in the
 * DLQ) is handed to staff instead: pending_review, reason matching_failed.
 */
import { logger } from '../observability/logger';
import type { FormsDependencies } from './forms-dependencies';
import type { HistoryEntry } from './types';

export const DEFAULT_SWEEP_THRESHOLD_MS = 2 * 60 * 1000;
export const DEFAULT_MAX_REQUEUES = 20;
export const DEFAULT_MAX_PACKETS_PER_SWEEP = 1000;
const PAGE_SIZE = 100;
/**
 * Shard Queries of the state index in flight at once: a background job needs no burst of 33
 * requests against the table (the sweep's pace is set by its sends and updates, not by this read);
 * the pages are the same.
 */
export const SWEEP_READ_CONCURRENCY = 4;

export interface SweepOptions {
  now: Date;
  /** packets last queued longer ago than this are queued again */
  thresholdMs?: number;
  maxRequeues?: number;
  maxPackets?: number;
}

export interface SweepResult {
  found: number;
  requeued: number;
  sendFailed: number;
  escalated: number;
}

export async function sweepPendingPackets(deps: Pick<FormsDependencies, 'store' | 'queue'>, options: SweepOptions): Promise<SweepResult> {
  const store = deps.store();
  const queue = deps.queue();
  const threshold = options.thresholdMs ?? DEFAULT_SWEEP_THRESHOLD_MS;
  const maxRequeues = options.maxRequeues ?? DEFAULT_MAX_REQUEUES;
  const maxPackets = options.maxPackets ?? DEFAULT_MAX_PACKETS_PER_SWEEP;
  const at = options.now.toISOString();
  // stateSk is "<time>#<packetId>": everything strictly before "<cutoff>" was queued before the cutoff
  const cutoff = new Date(options.now.getTime() - threshold).toISOString();
  const result: SweepResult = { found: 0, requeued: 0, sendFailed: 0, escalated: 0 };

  let start: Record<string, string> | undefined;
  do {
    const page = await store.queryByState('pending_match', {
      limit: Math.min(PAGE_SIZE, maxPackets - result.found),
      newestFirst: false,
      before: cutoff,
      exclusiveStartKey: start,
      concurrency: SWEEP_READ_CONCURRENCY,
    });
    start = page.lastKey;
    result.found += page.rows.length;

    const toSend: typeof page.rows = [];
    for (const row of page.rows) {
      if (row.queueAttempts >= maxRequeues) {
        const entry: HistoryEntry = {
          at,
          action: 'held_for_review',
          from: 'pending_match',
          state: 'pending_review',
          actor: 'sweeper',
          reason: 'matching_failed',
        };
        const moved = await store.transition({
          packetId: row.summary.packetId,
          from: ['pending_match'],
          to: 'pending_review',
          at,
          sortTime: row.summary.receivedAt,
          reason: 'matching_failed',
          entry,
        });
        if (moved) {
          result.escalated++;
          logger.warn('forms.sweep.escalated', { packetId: row.summary.packetId, attempt: row.queueAttempts, reason: 'matching_failed' });
        }
      } else toSend.push(row);
    }

    const { sent, failed } = await queue.sendMany(toSend.map((r) => r.summary.packetId));
    result.sendFailed += failed.length;
    const sentIds = new Set(sent);
    for (const row of toSend) {
      if (!sentIds.has(row.summary.packetId)) continue;
      const entry: HistoryEntry = { at, action: 'requeued', from: 'pending_match', state: 'pending_match', actor: 'sweeper' };
      if (await store.markRequeued(row.summary.packetId, row.stateSk, at, entry)) result.requeued++;
    }
  } while (start && result.found < maxPackets);

  logger.info('forms.sweep.done', { count: result.requeued, recordCount: result.found, reason: result.sendFailed > 0 ? 'send_failed' : undefined });
  return result;
}
