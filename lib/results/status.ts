/**
 * Lab result status vocabulary. Accepted case-insensitively; stored and returned normalised.
 *
 *   accepted (any case)                      stored as     rank
 *   preliminary, P                           preliminary   1
 *   cancelled, canceled, X                   cancelled     2
 *   final, F                                 final         3
 *   corrected, C                             corrected     4
 *   amended                                  amended       4
 *
 * P, F, C and X are the HL7 v2 table 0123 (result status) codes. The rank breaks ties between
 * versions resulted at the same instant: a final or corrected result wins over a preliminary one.
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

const RANK: Readonly<Record<LabResultStatus, number>> = { preliminary: 1, cancelled: 2, final: 3, corrected: 4, amended: 4 };

/** The normalised status, or undefined when `value` is not in the vocabulary. */
export function normalizeStatus(value: unknown): LabResultStatus | undefined {
  if (typeof value !== 'string') return undefined;
  const key = value.trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(ALIASES, key) ? ALIASES[key] : undefined;
}

/** Tie-break rank of a status (higher wins at equal ResultedDateUTC). One digit, so it sorts as text. */
export function statusRank(status: LabResultStatus): number {
  return RANK[status];
}
