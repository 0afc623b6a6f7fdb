/**
 * The decrypting reads of whole lab result versions (the lab result export, the store's own
 * reads): the version items, their notification facts, the submission decrypted (KMS Decrypt only)
 * and its parts restored from S3. The writes and the notification bookkeeping are LabResultWriter's
 * (result-writer.ts), the summary reads LabResultSummaryReader's (both siblings: LabResultStore,
 * which extends this class, delegates to them), so a reader's bundle carries no sealing, no
 * GenerateDataKey, none of the ledger's writes and no summary reads.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { queryPages } from '../aws/query-pages';
import type { ResultDocumentReader } from './documents';
import { withNotificationState } from './notification-ledger';
import { LabResultReader } from './result-reader';
import {
  LAB_RESULT_KEY_CONTEXT,
  RECORD_TYPES,
  VERSION_PREFIX,
  isObject,
  normaliseTestResult,
  type LabResultReaderOptions,
  type StoredPart,
  type StoredPayload,
} from './result-records';
import { RESULTS_DEPENDENCY, parseVersionSk, resultPk, versionRecordOf } from './result-items';
import { openRecord } from './sealed-record';
import { normalizeStatus } from './status';
import type { LabResultSubmission, LabResultVersion, LabResultVersionInfo, VersionRecord } from './types';

export { VERSION_PREFIX, isObject, type StoredPart, type StoredPayload } from './result-records';

const DEPENDENCY = RESULTS_DEPENDENCY;

const PLAIN_VERSION_ATTRIBUTES =
  'pk, sk, resultId, versionId, senderId, partnerId, #status, resultedAtKey, receivedAt, patientKey, patientMatched, notificationState, notificationAttempts, documentKeys';

export interface LabResultVersionReaderOptions extends LabResultReaderOptions {
  /** needed to read versions with parts in S3 */
  documents?: ResultDocumentReader;
}

export class LabResultVersionReader extends LabResultReader {
  protected readonly documents?: ResultDocumentReader;

  constructor(options: LabResultVersionReaderOptions) {
    super(options);
    this.documents = options.documents;
  }

  /** Every version of a result (plain facts), oldest ResultedDateUTC first; a version's notification facts from its marker when it has that layout. */
  async listVersions(resultId: string): Promise<LabResultVersionInfo[]> {
    const items = await this.queryVersions(resultId, { plainOnly: true });
    const out: LabResultVersionInfo[] = [];
    for (const item of items) {
      const v = await withNotificationState(this.items, versionRecordOf(item));
      out.push({
        resultId: v.resultId,
        versionId: v.versionId,
        senderId: v.senderId,
        status: v.status,
        resultedAtKey: v.resultedAtKey,
        receivedAt: v.receivedAt,
        patientMatched: v.patientMatched,
        notificationState: v.notificationState,
        notificationAttempts: v.notificationAttempts,
        documentKeys: v.documentKeys,
      });
    }
    return out;
  }

  /** The version id the current pointer names, if the result exists. */
  async currentVersionId(resultId: string): Promise<string | undefined> {
    return (await this.items.getPointer(resultId))?.versionId;
  }

  // ---------------------------------------------------------------- decrypting reads

  /** The current version of a result, decrypted, documents restored from S3. */
  /**
   * The current version, decrypted. `admits` (optional) sees the version's plain attributes first: a
   * version it refuses is answered undefined, as an unknown id, before any KMS or S3 call (a caller's
   * read rule costs nothing and takes no longer for a result it may not read).
   */
  async readCurrent(
    resultId: string,
    admits?: (version: Pick<VersionRecord, 'partnerId' | 'patientMatched'>) => boolean,
  ): Promise<LabResultVersion | undefined> {
    const pointer = await this.items.getPointer(resultId);
    if (!pointer) return undefined;
    const item = await this.items.getItem(resultPk(resultId), pointer.versionSk);
    if (!item || (admits && !admits(versionRecordOf(item)))) return undefined;
    return this.decryptVersion(item);
  }

  /** The current version for a (senderID, accessionNumber[, universal service code]), via the keyed result id. */
  async readCurrentByAccession(senderId: string, accessionNumber: string, universalServiceCode?: string): Promise<LabResultVersion | undefined> {
    const keys = await this.keys();
    return keys ? this.readCurrent(keys.resultId(senderId, accessionNumber, universalServiceCode)) : undefined;
  }

  /** One version of a result, decrypted, documents restored from S3. */
  async readVersion(resultId: string, versionId: string): Promise<LabResultVersion | undefined> {
    const item = (await this.queryVersions(resultId, { versionId }))[0];
    return item ? this.decryptVersion(item) : undefined;
  }

  // ---------------------------------------------------------------- internals

  protected async getPart(part: StoredPart, context: Record<string, string>): Promise<Buffer> {
    if (!this.documents) throw new Error('LabResultVersionReader needs a document store to read parts stored in S3');
    const envelope = await this.documents.get(part.key);
    return this.decryptor.decrypt(envelope, context);
  }

  private async decryptVersion(item: Record<string, AttributeValue>): Promise<LabResultVersion> {
    const record = await withNotificationState(this.items, versionRecordOf(item));
    const context = (recordType: string, extra: Record<string, string> = {}) => ({
      recordType,
      sender: record.senderId,
      resultId: record.resultId,
      versionId: record.versionId,
      ...extra,
    });
    const sealed = item.submission?.B;
    const payload = JSON.parse(
      (sealed
        ? await openRecord(this.decryptor, sealed, context(RECORD_TYPES.submission), LAB_RESULT_KEY_CONTEXT)
        : await this.decryptor.decrypt(item.envelope!.S!, context(RECORD_TYPES.submission))
      ).toString('utf8'),
    ) as StoredPayload;
    let body: LabResultSubmission;
    if (payload.bodyPart) {
      body = JSON.parse(
        (await this.getPart(payload.bodyPart, context(RECORD_TYPES.document, { part: payload.bodyPart.part }))).toString('utf8'),
      ) as LabResultSubmission;
    } else {
      body = payload.body!;
    }
    for (const part of payload.documents) {
      const bytes = await this.getPart(part, context(RECORD_TYPES.document, { part: part.part }));
      const report = body.data.reports![part.index]!;
      report.data = part.encoding === 'base64' ? bytes.toString('base64') : bytes.toString('utf8');
    }
    const results = (Array.isArray(body.data.results) ? body.data.results : [body.data.results]).map(normaliseTestResult);
    return {
      resultId: record.resultId,
      versionId: record.versionId,
      senderId: record.senderId,
      partnerId: record.partnerId,
      status: normalizeStatus(body.data.status) ?? record.status,
      resultedAt: body.data.ResultedDateUTC,
      receivedAt: record.receivedAt,
      patientMatched: record.patientMatched,
      notificationState: record.notificationState,
      results,
      ...(isObject(body.data.order) ? { order: body.data.order } : {}),
      submission: body,
      filedPatientId: payload.filedPatientId ?? body.data.patientID,
    };
  }

  /** Version items of a result (one partition), optionally one version (picked by its sort key) or the plain attributes only. */
  protected async queryVersions(resultId: string, options: { versionId?: string; plainOnly?: boolean } = {}): Promise<Record<string, AttributeValue>[]> {
    const found: Record<string, AttributeValue>[] = [];
    await queryPages(
      this.db,
      DEPENDENCY,
      () => ({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ...(options.plainOnly ? { ProjectionExpression: PLAIN_VERSION_ATTRIBUTES, ExpressionAttributeNames: { '#status': 'status' } } : {}),
        ExpressionAttributeValues: { ':pk': { S: resultPk(resultId) }, ':prefix': { S: VERSION_PREFIX } },
        ConsistentRead: true,
      }),
      (page) => {
        // the version id is the last part of the sort key (items since issue 31 item 2 do not repeat it)
        found.push(...(options.versionId ? page.filter((item) => parseVersionSk(item.sk?.S ?? '')?.versionId === options.versionId) : page));
        return true;
      },
    );
    return found;
  }
}
