/**
 * Lab result status vocabulary and precedence. Accepted case-insensitively; stored and returned
 * normalised.
 *
 *   accepted (any case)                      stored as     precedence
 *   preliminary, P                           preliminary   1
 *   final, F                                 final         2
 *   corrected, C                             corrected     3
 *   amended                                  amended       3
 *   cancelled, canceled, X                   cancelled     3
 *
 * P, F, C and X are the HL7 v2 table 0123 (result status) codes.
 *
 * Which version of a result (one senderID + accessionNumber) is current: the highest precedence;
 * among versions of equal precedence, the one received last (our receipt time, then the version
 * id for the same millisecond). ResultedDateUTC (the sender's clock) plays no part. So:
 *   - a final replaces a preliminary, whatever either says about its time; a late preliminary
 *     never replaces a final, a correction or a cancellation;
 *   - a correction or amendment replaces a final, and a later correction replaces an earlier one;
 *   - a cancellation (X: "no results available, order cancelled") is explicit: it replaces a
 *     preliminary or final and any earlier correction; a correction or amendment received after
 *     it replaces it again (the lab reinstating the result). Precedence 3 is shared on purpose:
 *     among corrected / amended / cancelled the lab's latest word wins.
 */
import type { LabResultStatus } from './types';

export const LAB_RESULT_STATUSES: readonly LabResultStatus[] = ['preliminary', 'final', 'corrected', 'amended', 'cancelled'];

const ALIASES: Readonly<Record<string, LabResultStatus>> = {
  preliminary: 'preliminary',
  p: 'preliminary',
  final: 'final',
  f: 'final',
  corrected: 'corrected',
  c: 'corrected',
  amended: 'amended',
  cancelled: 'cancelled',
  canceled: 'cancelled',
  x: 'cancelled',
};

/** The values a partner may send, as listed in a 400. */
export const ACCEPTED_STATUS_VALUES: readonly string[] = ['preliminary', 'final', 'corrected', 'amended', 'cancelled', 'canceled', 'P', 'F', 'C', 'X'];

const RANK: Readonly<Record<LabResultStatus, number>> = { preliminary: 1, final: 2, corrected: 3, amended: 3, cancelled: 3 };

/** The normalised status, or undefined when `value` is not in the vocabulary. */
export function normalizeStatus(value: unknown): LabResultStatus | undefined {
  if (typeof value !== 'string') return undefined;
  const key = value.trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(ALIASES, key) ? ALIASES[key] : undefined;
}

/** Precedence of a status (higher wins; equal: received later wins). One digit, so it sorts as text. */
export function statusRank(status: LabResultStatus): number {
  return RANK[status];
}
