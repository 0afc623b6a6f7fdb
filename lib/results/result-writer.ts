/**
 * The writes of the results table (the layout is described in result-store.ts): a new version with
 * its S3 parts, summary parts and notification marker, the current pointer and the notification
 * bookkeeping (VersionNotifications, notification-ledger.ts). What the lab result writers bundle (POST /receiveTestData, HL7
 * ORU, FHIR DiagnosticReport intake): none of the decrypting reads of LabResultVersionReader and
 * LabResultSummaryReader (issue 31 item 5: a class is bundled whole). LabResultStore
 * (result-store.ts) offers these writes beside the reads by delegating here.
 */
import { PutItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '../aws/attribute-values';
import { decodeBase64Strict, serializeEnvelope } from '../crypto/envelope-format';
import type { EnvelopeEncryptor } from '../crypto/envelope';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import { documentKey } from './document-key';
import { statusRank } from './status';
import { VersionNotifications, notificationMarkerKey } from './notification-ledger';
import {
  LAB_RESULT_KEY_CONTEXT,
  RECORD_TYPES,
  VERSION_PREFIX,
  isObject,
  normaliseAbnormalFlags,
  summaryPartSk,
  type LabResultStoreOptions,
  type StoredPart,
  type StoredPayload,
  type SummaryPayload,
} from './result-records';
import type { ResultDocumentWriter } from './documents';
import { sealRecord } from './sealed-record';
import { CURRENT_SK, RESULTS_DEPENDENCY, ResultItems, getVersionRecord, resultPk, versionRank } from './result-items';
import {
  LAB_DOCUMENT_INLINE_MAX_BYTES,
  LAB_TEST_OBJECT_FIELDS,
  LAB_TEST_TEXT_FIELDS,
  type LabDocumentSummary,
  type LabOrder,
  type LabTestSummary,
} from '../chart/types';
import type { AcceptedSubmission, LabReport, LabResultStatus, LabResultSubmission, LabTestResult, VersionRecord } from './types';

export const REPORT_INLINE_MAX_BYTES = 16 * 1024;
export const BODY_INLINE_MAX_BYTES = 240 * 1024;
/** Largest summary kept inline in the version item and the current pointer; a larger one goes to summary parts. */
export const SUMMARY_MAX_BYTES = 32 * 1024;
/** Plaintext bytes of one summary part (its item: base64 of the ciphertext, ~256 KB, below DynamoDB's 400 KB). */
export const SUMMARY_PART_MAX_BYTES = 192 * 1024;
const DEPENDENCY = RESULTS_DEPENDENCY;

/** The sort key of a version item: identifies it (resends find it), orders listVersions by ResultedDateUTC. */
export function versionSortKey(resultedAtKey: string, status: LabResultStatus, versionId: string): string {
  return `${VERSION_PREFIX}${resultedAtKey}#${statusRank(status)}#${versionId}`;
}

export interface SaveVersionInput {
  accepted: AcceptedSubmission;
  resultId: string;
  versionId: string;
  patientKey: string;
  patientMatched: boolean;
  partnerId: string;
  keyId: string;
  receivedAt: Date;
  /** provenance: MSH-10 of an ORU, the x-request-id of a JSON submission */
  sourceMessageId?: string;
  /** the patient the version is filed under, when not the body's patientID (kept sealed beside the body, which stays as sent) */
  filedPatientId?: string;
  /** when the retry job may first pick up a notification the request did not get to send */
  notificationNotBefore: Date;
}

export interface SaveVersionOutcome {
  /** false when this exact version was already stored (a byte-identical resubmission) */
  created: boolean;
  version: VersionRecord;
}

function sizeOf(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function markerKey(resultId: string, versionId: string): Record<string, AttributeValue> {
  const { pk, sk } = notificationMarkerKey(resultId, versionId);
  return { pk: { S: pk }, sk: { S: sk } };
}

function withoutSummary(record: VersionRecord): VersionRecord {
  const { summary: _summary, ...rest } = record;
  return rest;
}

/** One test as the summary keeps it: the model's fields only (extras stay in the submission), whole. */
function summaryTest(r: LabTestResult): LabTestSummary {
  const out: LabTestSummary = { testName: r.testName, result: r.result };
  const fields = out as unknown as Record<string, unknown>;
  for (const key of LAB_TEST_TEXT_FIELDS) if (typeof r[key] === 'string') fields[key] = r[key];
  for (const key of LAB_TEST_OBJECT_FIELDS) if (isObject(r[key])) fields[key] = r[key];
  const textLines = stringsOf(r.textLines);
  if (textLines) out.textLines = textLines;
  const flags = normaliseAbnormalFlags(r.abnormalFlags);
  if (flags) out.abnormalFlags = flags;
  const comments = stringsOf(r.comments);
  if (comments) out.comments = comments;
  if (Array.isArray(r.referenceRangeAppliesTo) && r.referenceRangeAppliesTo.length > 0) out.referenceRangeAppliesTo = r.referenceRangeAppliesTo;
  return out;
}

function stringsOf(lines: unknown): string[] | undefined {
  if (!Array.isArray(lines)) return undefined;
  const out = lines.filter((line): line is string => typeof line === 'string');
  return out.length > 0 ? out : undefined;
}

/** The summary of a submission: every test, every value whole (issue 27 K2: the summary never leaves anything out). */
export function buildSummary(accepted: AcceptedSubmission): SummaryPayload {
  const data = accepted.body.data;
  return {
    accessionNumber: data.accessionNumber,
    status: accepted.status,
    resultedAt: data.ResultedDateUTC,
    results: accepted.results.map(summaryTest),
    ...(isObject(data.order) ? { order: data.order as LabOrder } : {}),
    ...(Array.isArray(data.reports) && data.reports.length > 0 ? { documents: data.reports.map(summaryDocument) } : {}),
  };
}

/** A report as the summary carries it: its data when it is small, else its facts only (the exports refer to it). */
function summaryDocument(report: LabReport): LabDocumentSummary {
  const base64 = report.source.toLowerCase() === 'base64';
  const bytes = base64 ? Buffer.byteLength(report.data, 'base64') : sizeOf(report.data);
  const inline = sizeOf(report.data) <= LAB_DOCUMENT_INLINE_MAX_BYTES;
  return { name: report.name, type: report.type, source: report.source, bytes, ...(inline ? { data: report.data } : {}) };
}

/** The summary's UTF-8 bytes in parts of at most {@link SUMMARY_PART_MAX_BYTES} (cut at byte offsets: joined before decoding). */
export function summaryParts(summaryJson: string): Buffer[] {
  const bytes = Buffer.from(summaryJson, 'utf8');
  const parts: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += SUMMARY_PART_MAX_BYTES) parts.push(bytes.subarray(offset, offset + SUMMARY_PART_MAX_BYTES));
  return parts;
}

/**
 * The writes of lab result versions and their notification bookkeeping; reads nothing but the
 * plain items a conflicting put needs (no decryption, no Query of versions).
 */
export class LabResultWriter {
  private readonly db: DynamoDBClient;
  private readonly table: string;
  private readonly items: ResultItems;
  private readonly encryptor: EnvelopeEncryptor;
  private readonly documentStore?: Pick<ResultDocumentWriter, 'put'>;
  private readonly ledger: VersionNotifications;

  constructor(options: Omit<LabResultStoreOptions, 'lookupKeys' | 'documents'> & { documents?: Pick<ResultDocumentWriter, 'put'> }) {
    this.db = options.db;
    this.table = options.table;
    this.items = new ResultItems(options.db, options.table);
    this.encryptor = options.encryptor;
    this.documentStore = options.documents;
    this.ledger = new VersionNotifications(options.db, options.table);
  }

  // ---------------------------------------------------------------- writes

  /**
   * Stores one version: S3 parts first (when any), then the version item with a conditional put.
   * A byte-identical resubmission finds its version already there and returns it (created false).
   */
  /**
   * The partner whose version is current for a result id: undefined for a result nobody stored yet,
   * null for a pointer stored before pointers kept their partner (one consistent GetItem).
   */
  async currentOwner(resultId: string): Promise<string | null | undefined> {
    const item = await this.items.getItem(resultPk(resultId), CURRENT_SK);
    if (!item) return undefined;
    return item.partnerId?.S ?? null;
  }

  async saveVersion(input: SaveVersionInput): Promise<SaveVersionOutcome> {
    const { accepted, resultId, versionId } = input;
    const senderId = accepted.body.data.senderID;
    const rank = versionRank(accepted.status, input.receivedAt, versionId);
    const versionSk = versionSortKey(accepted.resultedAtKey, accepted.status, versionId);
    const context = (recordType: string, extra: Record<string, string> = {}) => ({ recordType, sender: senderId, resultId, versionId, ...extra });

    // 1. reports too large to keep inline go to S3, each on its own
    const documents: StoredPart[] = [];
    const reports = accepted.body.data.reports;
    let storedReports: LabReport[] | undefined;
    if (Array.isArray(reports)) {
      storedReports = reports.map((report) => report);
      for (let index = 0; index < reports.length; index++) {
        const report = reports[index]!;
        if (sizeOf(report.data) <= REPORT_INLINE_MAX_BYTES) continue;
        const decoded = report.source.toLowerCase() === 'base64' ? decodeBase64Strict(report.data) : undefined;
        const part: StoredPart = {
          index,
          part: `report-${index}`,
          key: documentKey(resultId, versionId, `report-${index}`),
          encoding: decoded ? 'base64' : 'utf8',
          bytes: decoded ? decoded.length : sizeOf(report.data),
        };
        await this.putPart(part, decoded ?? Buffer.from(report.data, 'utf8'), context(RECORD_TYPES.document, { part: part.part }));
        documents.push(part);
        storedReports[index] = { ...report, data: '' };
      }
    }
    const storedBody: LabResultSubmission = storedReports ? { ...accepted.body, data: { ...accepted.body.data, reports: storedReports } } : accepted.body;

    // 2. the body itself goes to S3 when it would not fit the item budget
    const filed = input.filedPatientId !== undefined && input.filedPatientId !== accepted.body.data.patientID ? { filedPatientId: input.filedPatientId } : {};
    let payload: StoredPayload = { f: 1, body: storedBody, documents, ...filed };
    let payloadJson = JSON.stringify(payload);
    if (sizeOf(payloadJson) > BODY_INLINE_MAX_BYTES) {
      const bodyJson = JSON.stringify(storedBody);
      const bodyPart: StoredPart = { index: -1, part: 'body', key: documentKey(resultId, versionId, 'body'), encoding: 'utf8', bytes: sizeOf(bodyJson) };
      await this.putPart(bodyPart, Buffer.from(bodyJson, 'utf8'), context(RECORD_TYPES.document, { part: bodyPart.part }));
      payload = { f: 1, bodyPart, documents, ...filed };
      payloadJson = JSON.stringify(payload);
    }
    const documentKeys = [...(payload.bodyPart ? [payload.bodyPart.key] : []), ...documents.map((d) => d.key)];

    // 3. seal submission and summary (compressed, encrypted, binary); a summary larger than the inline budget goes to summary parts first
    const submission = await sealRecord(this.encryptor, payloadJson, context(RECORD_TYPES.submission), LAB_RESULT_KEY_CONTEXT);
    const full = buildSummary(accepted);
    let summaryJson = JSON.stringify(full);
    if (sizeOf(summaryJson) > SUMMARY_MAX_BYTES) {
      const parts = summaryParts(summaryJson);
      for (const [index, bytes] of parts.entries()) await this.putSummaryPart(resultId, versionId, senderId, index, bytes);
      const stub: SummaryPayload = {
        accessionNumber: full.accessionNumber,
        status: full.status,
        resultedAt: full.resultedAt,
        results: [],
        parts: parts.length,
      };
      summaryJson = JSON.stringify(stub);
    }
    const summary = await sealRecord(this.encryptor, summaryJson, context(RECORD_TYPES.summary), LAB_RESULT_KEY_CONTEXT);

    const record: VersionRecord = {
      resultId,
      versionId,
      versionSk,
      senderId,
      partnerId: input.partnerId,
      status: accepted.status,
      resultedAtKey: accepted.resultedAtKey,
      rank,
      receivedAt: input.receivedAt.toISOString(),
      ...(input.sourceMessageId ? { sourceMessageId: input.sourceMessageId.slice(0, 199) } : {}),
      patientKey: input.patientKey,
      patientMatched: input.patientMatched,
      summary,
      documentKeys,
      notificationLedger: 'marker',
      notificationState: 'pending',
      notificationAttempts: 0,
    };
    // the version item says nothing its keys say (resultId, versionId, resultedAtKey, status rank) nor anything derived (rank)
    const item = marshall(
      {
        pk: resultPk(resultId),
        sk: versionSk,
        senderId,
        partnerId: input.partnerId,
        keyId: input.keyId,
        status: accepted.status,
        receivedAt: record.receivedAt,
        sourceMessageId: record.sourceMessageId,
        patientKey: input.patientKey,
        patientMatched: input.patientMatched,
        submission,
        ...(documentKeys.length ? { documentKeys } : {}),
      },
      { removeUndefinedValues: true },
    );

    // 4. the notification marker (the notification is owed before the version exists), then the version item, exactly once
    const markerCreated = await this.putMarker(record, summary, input.notificationNotBefore);
    try {
      await awsCall(DEPENDENCY, () => this.db.send(new PutItemCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })));
      return { created: true, version: record };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
    const existing = await getVersionRecord(this.items, resultId, versionSk);
    if (!existing) throw new Error('version item vanished after a conditional put conflict');
    if (markerCreated) {
      // the version was stored and notified before (its marker was gone): the marker this attempt wrote owes nothing
      await this.ledger.deleteMarker(resultId, versionId);
      return { created: false, version: existing.notificationLedger === 'marker' ? withoutSummary({ ...existing, notificationState: 'sent' }) : existing };
    }
    return { created: false, version: await this.ledger.withNotificationState(existing) };
  }

  /**
   * Writes the marker of an owed notification, before the version item (so a crash leaves the
   * notification owed, never lost). Conditional: false when the marker is there already (an earlier
   * attempt of the same submission owes it still; the first marker is kept as it is). Here, not in VersionNotifications: only writers of versions
   * write markers (the retry job needs no PutItem).
   */
  private async putMarker(version: Pick<VersionRecord, 'resultId' | 'versionId' | 'versionSk'>, summary: Uint8Array, dueAt: Date): Promise<boolean> {
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: {
              ...markerKey(version.resultId, version.versionId),
              versionSk: { S: version.versionSk },
              dueAt: { S: dueAt.toISOString() },
              summary: { B: summary },
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return false;
    }
  }

  /** See VersionNotifications (the one implementation of the plain notification bookkeeping). */
  async ensureCurrent(version: VersionRecord, now: Date): Promise<boolean> {
    return this.ledger.ensureCurrent(version, now);
  }

  /** See VersionNotifications (the one implementation of the plain notification bookkeeping). */
  async markNotificationSent(...args: Parameters<VersionNotifications['markNotificationSent']>): Promise<void> {
    return this.ledger.markNotificationSent(...args);
  }

  /** See VersionNotifications (the one implementation of the plain notification bookkeeping). */
  async recordNotificationFailure(...args: Parameters<VersionNotifications['recordNotificationFailure']>): Promise<void> {
    return this.ledger.recordNotificationFailure(...args);
  }

  // ---------------------------------------------------------------- internals

  private async putPart(part: StoredPart, plaintext: Buffer, context: Record<string, string>): Promise<void> {
    if (!this.documentStore) throw new Error('LabResultStore needs a document store for parts larger than an item');
    const envelope = await this.encryptor.encrypt(plaintext, context);
    await this.documentStore.put(part.key, serializeEnvelope(envelope));
  }

  /** One summary part (written before the version item that names it; a resend rewrites the same bytes). */
  private async putSummaryPart(resultId: string, versionId: string, senderId: string, part: number, bytes: Buffer): Promise<void> {
    const context = { recordType: RECORD_TYPES.summaryPart, sender: senderId, resultId, versionId, part: String(part) };
    const envelope = serializeEnvelope(await this.encryptor.encrypt(bytes, context));
    const Item = marshall({ pk: resultPk(resultId), sk: summaryPartSk(versionId, part), kind: 'summary-part', resultId, versionId, senderId, part, envelope });
    await awsCall(DEPENDENCY, () => this.db.send(new PutItemCommand({ TableName: this.table, Item })));
  }
}
