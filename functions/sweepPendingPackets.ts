/**
 * Sweeper — scheduled (rate(5 minutes)). Re-queues packets left in pending_match longer than the
 * threshold (default 120 s; a scheduled rule may pass {"thresholdSeconds": n} as constant input)
 * and hands packets queued 20 times without a decision to staff (pending_review, matching_failed).
 * Query on the GSI byStateSummary, never a Scan. See lib/forms/sweeper.ts.
 */
import { matchingQueue } from '../lib/forms/queue-wiring';
import { formsStore } from '../lib/forms/table-wiring';
import { DEFAULT_SWEEP_THRESHOLD_MS, sweepPendingPackets, type SweepResult } from '../lib/forms/sweeper';

export interface SweepEvent {
  thresholdSeconds?: number;
}

export const handler = async (event?: SweepEvent | null): Promise<SweepResult> => {
  const seconds = event?.thresholdSeconds;
  const thresholdMs = typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : DEFAULT_SWEEP_THRESHOLD_MS;
  return sweepPendingPackets({ store: formsStore, queue: matchingQueue }, { now: new Date(), thresholdMs });
};
