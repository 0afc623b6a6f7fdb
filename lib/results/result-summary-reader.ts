/**
 * The summary reads of the results table (lib/results/result-store.ts describes the layout): a
 * patient's results as decrypted summaries, a page at a time, and one result's summary. What the
 * summary export and the FHIR lab reads bundle. LabResultStore offers these reads by delegation
 * beside the reads of whole versions and the writes (issue 31 item 5: a class is bundled whole, so
 * none of those is in a summary reader's bundle, nor these reads in theirs).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { queryPages } from '../aws/query-pages';
import { LabResultReader } from './result-reader';
import { openRecord } from './sealed-record';
import { CURRENT_SK, RESULTS_BY_PATIENT_INDEX, RESULTS_DEPENDENCY, parseVersionSk, resultPk } from './result-items';
import { LAB_RESULT_KEY_CONTEXT, RECORD_TYPES, SUMMARY_PART_PREFIX, normaliseTestResult, summaryPartSk, type SummaryPayload } from './result-records';
import type { StoredLabResultSummary } from './types';

export {
  LAB_RESULT_KEY_CONTEXT,
  LAB_RESULT_KEY_PURPOSE,
  RECORD_TYPES,
  SUMMARY_PART_PREFIX,
  normaliseAbnormalFlags,
  normaliseTestResult,
  summaryPartSk,
  type LabResultReaderOptions,
  type LabResultStoreOptions,
  type SummaryPayload,
} from './result-records';

const DEPENDENCY = RESULTS_DEPENDENCY;
export const MAX_SUMMARY_LIMIT = 1000;

/** A pointer (or, before issue 31 item 2, an index entry of one) with its summary ciphertext in either form. */
const hasSummary = (item: Record<string, AttributeValue>) => Boolean(item.summary?.S || item.summary?.B);

export class LabResultSummaryReader extends LabResultReader {
  /**
   * Up to `limit` of a patient's results (the current version of each), newest ResultedDateUTC
   * first, as decrypted summaries: one Query on byPatient plus one KMS Decrypt per data key
   * (cached). Reads no S3. An unknown patient, or a deployment with no results yet, gives [].
   */
  async recentResultsForPatient(patientId: string, limit: number): Promise<StoredLabResultSummary[]> {
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_SUMMARY_LIMIT) throw new RangeError(`limit must be an integer from 0 to ${MAX_SUMMARY_LIMIT}`);
    if (limit === 0) return [];
    return (await this.resultsForPatientPage(patientId, limit)).map((entry) => entry.summary);
  }

  /**
   * One page of a patient's results (current version of each), newest ResultedDateUTC first,
   * strictly after the position `before` (a `patientSk` returned earlier) when given. Each entry
   * carries its position. Same reads as recentResultsForPatient.
   */
  async resultsForPatientPage(patientId: string, limit: number, before?: string): Promise<Array<{ summary: StoredLabResultSummary; position: string }>> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SUMMARY_LIMIT) throw new RangeError(`limit must be an integer from 1 to ${MAX_SUMMARY_LIMIT}`);
    if (typeof patientId !== 'string' || patientId.length === 0) return [];
    const keys = await this.keys();
    if (!keys) return [];
    const page: Array<{ summary: StoredLabResultSummary; position: string }> = [];
    await queryPages(
      this.db,
      DEPENDENCY,
      () => ({
        TableName: this.table,
        IndexName: RESULTS_BY_PATIENT_INDEX,
        KeyConditionExpression: before === undefined ? 'patientPk = :pk' : 'patientPk = :pk AND patientSk < :before',
        ExpressionAttributeValues: { ':pk': { S: keys.patientKey(patientId) }, ...(before === undefined ? {} : { ':before': { S: before } }) },
        ScanIndexForward: false,
        Limit: limit - page.length,
      }),
      async (items) => {
        for (const indexed of items) {
          const item = hasSummary(indexed) ? indexed : await this.items.getItem(indexed.pk!.S!, CURRENT_SK);
          const position = indexed.patientSk?.S;
          if (item && hasSummary(item) && filedToChart(item) && position && page.length < limit)
            page.push({ summary: await this.decryptSummary(item), position });
        }
        return page.length < limit;
      },
    );
    return page;
  }

  /**
   * The current version's summary of one result, only when the result is filed under this patient
   * (its pointer's patient key is the patient's keyed id); otherwise undefined, exactly as for an
   * unknown result id. One GetItem plus one Decrypt.
   */
  async currentSummaryForPatient(patientId: string, resultId: string): Promise<StoredLabResultSummary | undefined> {
    if (typeof patientId !== 'string' || patientId.length === 0 || !/^lr_[0-9a-f]{32}$/.test(resultId)) return undefined;
    const keys = await this.keys();
    if (!keys) return undefined;
    const item = await this.items.getItem(resultPk(resultId), CURRENT_SK);
    if (!item || !hasSummary(item) || !filedToChart(item) || item.patientPk?.S !== keys.patientKey(patientId)) return undefined;
    return this.decryptSummary(item);
  }

  // ---------------------------------------------------------------- internals

  /** The whole summary from its parts: one Query (the version's parts, in order) plus a Decrypt each. */
  private async readSummaryParts(resultId: string, versionId: string, senderId: string, count: number): Promise<SummaryPayload> {
    const items: Record<string, AttributeValue>[] = [];
    await queryPages(
      this.db,
      DEPENDENCY,
      () => ({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: resultPk(resultId) }, ':prefix': { S: `${SUMMARY_PART_PREFIX}${versionId}#` } },
        ConsistentRead: true,
      }),
      (page) => {
        items.push(...page);
        return true;
      },
    );
    if (items.length !== count) throw new Error(`summary parts of a version: expected ${count}, found ${items.length}`);
    const buffers: Buffer[] = [];
    for (const [index, item] of items.entries()) {
      if (item.sk?.S !== summaryPartSk(versionId, index)) throw new Error('summary parts of a version are not numbered 0..n-1');
      buffers.push(
        await this.decryptor.decrypt(item.envelope!.S!, { recordType: RECORD_TYPES.summaryPart, sender: senderId, resultId, versionId, part: String(index) }),
      );
    }
    return JSON.parse(Buffer.concat(buffers).toString('utf8')) as SummaryPayload;
  }

  private async decryptSummary(item: Record<string, AttributeValue>): Promise<StoredLabResultSummary> {
    const resultId = item.resultId?.S ?? item.pk!.S!.slice(resultPk('').length);
    const versionId = item.versionId?.S ?? parseVersionSk(item.versionSk!.S!)!.versionId;
    const senderId = item.senderId!.S!;
    const context = { recordType: RECORD_TYPES.summary, sender: senderId, resultId, versionId };
    const plain = item.summary!.B
      ? await openRecord(this.decryptor, item.summary!.B, context, LAB_RESULT_KEY_CONTEXT)
      : await this.decryptor.decrypt(item.summary!.S!, context);
    const inline = JSON.parse(plain.toString('utf8')) as SummaryPayload;
    const s = typeof inline.parts === 'number' && inline.parts > 0 ? await this.readSummaryParts(resultId, versionId, senderId, inline.parts) : inline;
    return {
      resultId,
      versionId,
      senderId,
      ...(item.partnerId?.S ? { partnerId: item.partnerId.S } : {}),
      patientMatched: item.patientMatched?.BOOL === true,
      accessionNumber: s.accessionNumber,
      status: s.status,
      resultedAt: s.resultedAt,
      results: s.results.map(normaliseTestResult),
      ...(s.order ? { order: s.order } : {}),
      ...(s.documents ? { documents: s.documents } : {}),
      ...(s.truncated ? { truncated: true } : {}),
    };
  }
}

/**
 * Whether a current pointer is a chart result: filed to a chart patient when it was stored. A result
 * stored for a patient id the chart did not know (patientMatched false) is its own partner's only, even
 * once the chart has a patient of that id (lib/exports/lab-result-export.ts): the patient-scoped reads
 * (summary export, FHIR lab searches and reads, $everything) leave it out. A pointer written before
 * patientMatched existed has none and reads as before.
 */
function filedToChart(item: Record<string, AttributeValue>): boolean {
  return item.patientMatched?.BOOL !== false;
}
