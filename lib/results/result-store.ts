/**
 * The results table: versions of lab results, the current-version pointer, owed notifications.
 * Since issue 31 item 2 a single-result submission writes 5 units here (marker 1 + version 1 +
 * pointer 2 with its index entry + marker delete 1; bench/lab-write-units.ts), each item < 1 KB.
 *
 * Item layout (key attributes are strings; ids are HMAC-derived, see lookup-keys.ts):
 *
 *   version   pk RESULT#<resultId>   sk VERSION#<resultedAtKey>#<statusRank>#<versionId>
 *             (the sk identifies the version: a byte-identical resend finds it; it does not rank it)
 *             written once (PutItem, attribute_not_exists) and never changed afterwards.
 *             plain: senderId, partnerId, keyId, status, receivedAt, sourceMessageId,
 *                    patientMatched, patientKey (PATIENT#<hmac>), documentKeys
 *                    (resultId, versionId, resultedAtKey come from the keys; the rank is
 *                    versionRank(status, receivedAt, versionId): result-items.ts versionRecordOf)
 *             ciphertext: submission (B, a sealed record: sealed-record.ts)
 *   marker    pk NOTIFY#PENDING#<nn>   sk <resultId>#<versionId>
 *             (nn = a stable hash of the versionId mod PENDING_SHARDS, notification-ledger.ts)
 *             the version's notification is owed: written (conditional PutItem) before the version
 *             item, deleted once the notification went out. versionSk, dueAt (ISO: when the retry
 *             job may take it), attempts, lastNotificationError, summary (B, the sealed summary the
 *             pointer takes over, so the retry job moves the pointer without KMS)
 *   current   pk RESULT#<resultId>   sk CURRENT
 *             rank (r2#<statusRank>#<receivedAt ISO>#<versionId>), versionId, versionSk, senderId,
 *             partnerId (the current version's sender partner: who reads it back with read-own-results;
 *             a pointer written before it has none and is no partner's own),
 *             patientMatched, summary (B, sealed record),
 *             patientPk PATIENT#<hmac>, patientSk <resultedAtKey>#<statusRank>#<resultId>
 *             moved only forward by a conditional UpdateItem (rank < new rank): the highest
 *             status precedence wins, then the later receipt, then the version id (status.ts).
 *             The sender's ResultedDateUTC plays no part. `r2#` marks this rank format: it
 *             sorts above the earlier format (which began with the ResultedDateUTC year), so a
 *             pointer written before the change is replaced by the next version received.
 *   config    pk CONFIG#results-lookup-key   sk v1   (lookup-keys.ts)
 *
 * Older layout (items written before issue 31 item 2; every reader and the retry job still handle
 * them, test/integration/lab-result-storage.test.ts): a version item also holds kind, resultId,
 * versionId, statusRank, resultedAtKey, rank, envelope (the submission as a JSON envelope, S),
 * summary (JSON envelope, S), notificationState, notificationAttempts, and while its notification
 * is owed the index keys patientPk NOTIFY#PENDING#<nn> (or the unsharded NOTIFY#PENDING, before
 * sharding) / patientSk <next attempt ISO>#<resultId>#<versionId>; a pointer also holds kind,
 * resultId, status, resultedAtKey, updatedAt and a JSON envelope summary (S). The next pointer
 * update removes those copies.
 *
 * GSI byPatient (patientPk, patientSk; projection ALL): a patient's current results newest first
 * (pointer items only), and, under NOTIFY#PENDING#<nn> and NOTIFY#PENDING, versions of the older
 * layout whose notification is still owed (the retry job Queries them until none are left).
 * Nothing here scans.
 *
 * Envelope contexts (bound as AES-GCM AAD; checked on decrypt):
 *   submission  { recordType: lab-result,          sender, resultId, versionId }
 *   summary     { recordType: lab-result-summary,  sender, resultId, versionId }
 *   S3 part     { recordType: lab-result-document, sender, resultId, versionId, part }
 * A sealed record (submission, summary) is the deflateRaw-compressed plaintext under the same
 * envelope encryption, stored as binary without the fields the reader knows (sealed-record.ts).
 *
 * Size budget of a version item (DynamoDB: 400 KB): a report whose data exceeds
 * REPORT_INLINE_MAX_BYTES goes to S3 on its own; if the rest still exceeds BODY_INLINE_MAX_BYTES
 * the whole body goes to S3 too (both limits on the plaintext, before compression). The summary carries the spec's fields and the optional lab model
 * fields (data.order, per result codes, typed values, flags, status, times, comments:
 * lib/chart/types.ts), always whole (issue 27 K2: nothing a sender sent is left out of the summary):
 * up to SUMMARY_MAX_BYTES it is inline (on the marker and the pointer); a larger one is split into summary parts of at most
 * SUMMARY_PART_MAX_BYTES each,
 *   summary part   pk RESULT#<resultId>   sk SUMMARYPART#<versionId>#<nnnn>
 *                  kind, resultId, versionId, senderId, part, envelope (ciphertext of the part's bytes)
 * written before the version item (like S3 parts), and the inline summary is then a stub naming the
 * number of parts (`parts`). Readers (decryptSummary) Query the parts, decrypt, join. Worst case of the
 * version item ~330 KB of ciphertext + attributes < 400 KB; of a part ~256 KB of base64 < 400 KB.
 *
 * Write order (a crash leaves nothing visible or a complete version): S3 parts and summary parts,
 * then the notification marker, then the version item (complete), then the current pointer, then
 * the notification, then the marker's delete. A version whose later steps did not happen keeps its
 * marker; a retry of the request or the scheduled retry job finishes the pointer and the
 * notification. A marker whose version item was never written (a crash between the two) names
 * nothing visible; the retry job deletes it once due (after the grace period).
 */
import { NotificationLedger } from './notification-ledger';
import type { LabResultStoreOptions } from './result-records';
import { LabResultSummaryReader } from './result-summary-reader';
import { LabResultVersionReader } from './result-version-reader';
import { LabResultWriter } from './result-writer';
import type { VersionRecord } from './types';

export type { VersionRecord };
export { LAB_RESULT_KEY_PURPOSE, RECORD_TYPES, normaliseAbnormalFlags, normaliseTestResult, type LabResultStoreOptions } from './result-records';
export { MAX_SUMMARY_LIMIT, LabResultSummaryReader } from './result-summary-reader';
export { RANK_FORMAT, versionRank } from './result-items';
export {
  BODY_INLINE_MAX_BYTES,
  REPORT_INLINE_MAX_BYTES,
  SUMMARY_MAX_BYTES,
  SUMMARY_PART_MAX_BYTES,
  LabResultWriter,
  buildSummary,
  summaryParts,
  versionSortKey,
  type SaveVersionInput,
  type SaveVersionOutcome,
} from './result-writer';

/**
 * The whole result store: the decrypting reads of whole versions (result-version-reader.ts), and by
 * delegation the summary reads of LabResultSummaryReader (result-summary-reader.ts) and the writes
 * and the notification bookkeeping of LabResultWriter (result-writer.ts). What a function
 * that both reads whole versions and writes them bundles (routing held lab results); a function
 * that only writes holds a LabResultWriter.
 */
export class LabResultStore extends LabResultVersionReader {
  private readonly summaries: LabResultSummaryReader;
  private readonly writer: LabResultWriter;
  private readonly ledger: NotificationLedger;

  constructor(options: LabResultStoreOptions) {
    super({ ...options, decryptor: options.encryptor });
    this.summaries = new LabResultSummaryReader({ ...options, decryptor: options.encryptor });
    this.writer = new LabResultWriter(options);
    this.ledger = new NotificationLedger(options.db, options.table);
  }

  /** See LabResultSummaryReader (the one implementation of the summary reads). */
  recentResultsForPatient(
    ...args: Parameters<LabResultSummaryReader['recentResultsForPatient']>
  ): ReturnType<LabResultSummaryReader['recentResultsForPatient']> {
    return this.summaries.recentResultsForPatient(...args);
  }

  /** See LabResultSummaryReader (the one implementation of the summary reads). */
  resultsForPatientPage(...args: Parameters<LabResultSummaryReader['resultsForPatientPage']>): ReturnType<LabResultSummaryReader['resultsForPatientPage']> {
    return this.summaries.resultsForPatientPage(...args);
  }

  /** See LabResultSummaryReader (the one implementation of the summary reads). */
  currentSummaryForPatient(
    ...args: Parameters<LabResultSummaryReader['currentSummaryForPatient']>
  ): ReturnType<LabResultSummaryReader['currentSummaryForPatient']> {
    return this.summaries.currentSummaryForPatient(...args);
  }

  /** See LabResultWriter (the one implementation of the writes). */
  saveVersion(...args: Parameters<LabResultWriter['saveVersion']>): ReturnType<LabResultWriter['saveVersion']> {
    return this.writer.saveVersion(...args);
  }

  /** See LabResultWriter (NotificationLedger: the one implementation of the plain notification bookkeeping). */
  ensureCurrent(...args: Parameters<LabResultWriter['ensureCurrent']>): ReturnType<LabResultWriter['ensureCurrent']> {
    return this.writer.ensureCurrent(...args);
  }

  /** See LabResultWriter (NotificationLedger: the one implementation of the plain notification bookkeeping). */
  markNotificationSent(...args: Parameters<LabResultWriter['markNotificationSent']>): ReturnType<LabResultWriter['markNotificationSent']> {
    return this.writer.markNotificationSent(...args);
  }

  /** See LabResultWriter (NotificationLedger: the one implementation of the plain notification bookkeeping). */
  recordNotificationFailure(...args: Parameters<LabResultWriter['recordNotificationFailure']>): ReturnType<LabResultWriter['recordNotificationFailure']> {
    return this.writer.recordNotificationFailure(...args);
  }

  /** The owed notifications, for the retry job (see NotificationLedger). */
  async pendingNotifications(now: Date, limit: number): Promise<VersionRecord[]> {
    return this.ledger.pendingNotifications(now, limit);
  }
}
