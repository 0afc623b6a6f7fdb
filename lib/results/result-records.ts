/**
 * What the reads and the writes of the results table share (the layout: result-store.ts): the
 * record types bound into envelope contexts, the data key context, the sort key prefixes, the
 * plaintext shapes of the summary and the submission payload, and the normalisation of stored
 * abnormal flags. Its own module so that a writer bundles none of the reader classes and a reader
 * none of the writer's (issue 31 item 5: a class is bundled whole).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EnvelopeDecryptor } from '../crypto/envelope-decryptor';
import type { EnvelopeEncryptor } from '../crypto/envelope';
import { DEFAULT_DATA_KEY_SERVICE } from '../crypto/envelope-format';
import type { LabDocumentSummary, LabOrder, LabTestSummary } from '../chart/types';
import type { ResultDocumentStore } from './documents';
import type { LookupKeySource } from './lookup-keys';
import type { LabResultStatus, LabResultSubmission } from './types';

export const RECORD_TYPES = {
  submission: 'lab-result',
  summary: 'lab-result-summary',
  summaryPart: 'lab-result-summary-part',
  document: 'lab-result-document',
} as const;
/** data key context purpose (goes to KMS / CloudTrail; no PHI) */
export const LAB_RESULT_KEY_PURPOSE = 'lab-result';
/** The data key context of lab results' encryptor (result-wiring.ts): sealed records leave it out (sealed-record.ts). */
export const LAB_RESULT_KEY_CONTEXT = { purpose: LAB_RESULT_KEY_PURPOSE, service: DEFAULT_DATA_KEY_SERVICE };
export const SUMMARY_PART_PREFIX = 'SUMMARYPART#';

export const VERSION_PREFIX = 'VERSION#';

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One externalised part, as recorded inside the encrypted submission payload. */
export interface StoredPart {
  /** index into data.reports, or -1 for the body */
  index: number;
  part: string;
  key: string;
  /** base64: the object holds the decoded bytes; utf8: the object holds the string's UTF-8 */
  encoding: 'base64' | 'utf8';
  bytes: number;
}

/** The plaintext of the submission envelope. */
export interface StoredPayload {
  f: 1;
  /** the body, with externalised reports' data replaced by "" (absent when the body itself is in S3) */
  body?: LabResultSubmission;
  bodyPart?: StoredPart;
  documents: StoredPart[];
  /**
   * The patient the version is filed under when it is not the body's `patientID` (a JSON result
   * filed by MRN, held under a held patient id, or routed by a reviewer): the body stays as sent.
   */
  filedPatientId?: string;
}

export interface SummaryPayload {
  accessionNumber: string;
  status: LabResultStatus;
  resultedAt: string;
  results: LabTestSummary[];
  order?: LabOrder;
  documents?: LabDocumentSummary[];
  /** set only on summaries stored before issue 27 K2 (long values cut, results left out) */
  truncated?: boolean;
  /** the summary is in this many summary parts (the inline payload is a stub) */
  parts?: number;
}

/** What a reader of results needs: it only decrypts (no GenerateDataKey, no encrypt path in its bundle). */
export interface LabResultReaderOptions {
  db: DynamoDBClient;
  table: string;
  decryptor: EnvelopeDecryptor;
  /** where the lookup key lives (readers need it for recentResultsForPatient); read, never created */
  lookupKeys?: LookupKeySource;
}

export interface LabResultStoreOptions extends Omit<LabResultReaderOptions, 'decryptor'> {
  /** seals what the store writes and decrypts what it reads */
  encryptor: EnvelopeEncryptor;
  /** needed to write or read versions with parts in S3 */
  documents?: ResultDocumentStore;
}

/**
 * OBX-8 flags as an array. Results stored before issue 27 by HL7 intake hold `abnormalFlags` as a
 * comma-joined string (`"H,A"`); both shapes read as the array.
 */
export function normaliseAbnormalFlags(value: unknown): string[] | undefined {
  const flags = Array.isArray(value)
    ? value.filter((f): f is string => typeof f === 'string').map((f) => f.trim())
    : typeof value === 'string'
      ? value.split(',').map((f) => f.trim())
      : [];
  const kept = flags.filter((f) => f !== '');
  return kept.length > 0 ? kept : undefined;
}

/** A stored test result with `abnormalFlags` in the array shape (other fields as stored). */
export function normaliseTestResult<T extends { abnormalFlags?: unknown }>(result: T): T {
  if (!('abnormalFlags' in result) || Array.isArray(result.abnormalFlags)) return result;
  const { abnormalFlags, ...rest } = result;
  const flags = normaliseAbnormalFlags(abnormalFlags);
  return (flags ? { ...rest, abnormalFlags: flags } : rest) as T;
}

export const summaryPartSk = (versionId: string, part: number) => `${SUMMARY_PART_PREFIX}${versionId}#${String(part).padStart(4, '0')}`;
