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
 * P, F, C and X are the HL7 v2 table 0123 (result status) codes. HL7 intake reads every table 0123
 * value of OBR-25 through {@link resultStatusFromTable0123} (JSON intake keeps the vocabulary above):
 *
 *   OBR-25   meaning (table 0123)                           stored as
 *   P        preliminary                                    preliminary
 *   F        final                                          final
 *   C        correction to results                          corrected
 *   X        no results available; order cancelled          cancelled
 *   A        some, not all, results available               preliminary
 *   R        results stored; not yet verified               preliminary
 *   O I S    order received / in progress / scheduled       preliminary (only reached with OBX present:
 *                                                           observations sent before the order is resulted)
 *   Y Z      no order / no patient on record (query answers) refused: not a result
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

/** Table 0123 values that name a result state this service stores, with the stored status. */
const TABLE_0123: Readonly<Record<string, LabResultStatus>> = {
  P: 'preliminary',
  F: 'final',
  C: 'corrected',
  X: 'cancelled',
  A: 'preliminary',
  R: 'preliminary',
  O: 'preliminary',
  I: 'preliminary',
  S: 'preliminary',
};

/** Every table 0123 (result status) value, as listed in an error text. */
export const TABLE_0123_VALUES: readonly string[] = ['O', 'I', 'S', 'A', 'P', 'C', 'R', 'F', 'X', 'Y', 'Z'];

export type Table0123Status =
  | {
      ok: true;
      status: LabResultStatus;
      /** what the lab result body carries: the code itself when the vocabulary takes it, else the stored status */ submitted: string;
    }
  | { ok: false; reason: 'not-a-result' | 'unknown' };

/**
 * OBR-25 (table 0123) of a received order group that holds observations, as a stored status (see the
 * table above). Y and Z answer a query ("no order / no patient on record") and are no result; anything
 * else (a word, two letters) is not a table 0123 value. A lower-case letter is read as its upper case.
 */
export function resultStatusFromTable0123(code: string): Table0123Status {
  const key = code.trim().toUpperCase();
  if (key === 'Y' || key === 'Z') return { ok: false, reason: 'not-a-result' };
  if (!Object.prototype.hasOwnProperty.call(TABLE_0123, key)) return { ok: false, reason: 'unknown' };
  const status = TABLE_0123[key]!;
  return { ok: true, status, submitted: normalizeStatus(code) ? code : status };
}

/** Precedence of a status (higher wins; equal: received later wins). One digit, so it sorts as text. */
export function statusRank(status: LabResultStatus): number {
  return RANK[status];
}
