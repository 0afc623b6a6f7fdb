/**
 * Shapes of lab result intake: the request body as validated, the stored version as read back,
 * the summaries the patient summary export consumes.
 */
import type { LabOrder, LabResultSummary, LabTestSummary } from '../chart/types';

export type { LabResultSummary };

export type LabResultStatus = LabResultSummary['status'];

/**
 * One test result as submitted (the spec's fields are strings; units may be empty), with the optional
 * fields of the lab model (lib/chart/types.ts LabTestSummary). Unknown extra fields are kept.
 */
export interface LabTestResult extends LabTestSummary {
  [extra: string]: unknown;
}

/** An attached document. `data` is base64 text when `source` is base64 (any case). */
export interface LabReport {
  source: string;
  type: string;
  name: string;
  data: string;
  [extra: string]: unknown;
}

/** Who the lab says the patient is (schemas/lab-result.schema.json `patientDemographics`). */
export interface LabPatientDemographics {
  name?: { family: string; given: string };
  /** YYYY-MM-DD */
  birthDate?: string;
}

/** `data` of the request body, as the schema and the semantic rules accept it. */
export interface LabResultData {
  senderID: string;
  /** names the patient (a chart patient id or the chart's MRN): evidence, never authority to file (receive.ts) */
  patientID: string;
  /** optional demographics, compared with the chart patient patientID names before filing */
  patient?: LabPatientDemographics;
  accessionNumber: string;
  recordNo?: string;
  status: string;
  ResultedDateUTC: string;
  results: LabTestResult | LabTestResult[];
  reports?: LabReport[];
  /** the order the result answers (ORC/OBR/SPM facts; optional, issue 27) */
  order?: LabOrder;
  [extra: string]: unknown;
}

/** The request body: `{ "data": { ... } }`, extra top-level keys kept. */
export interface LabResultSubmission {
  data: LabResultData;
  [extra: string]: unknown;
}

/** A validated submission with the facts derived from it. */
export interface AcceptedSubmission {
  /** the body exactly as parsed (stored encrypted as is) */
  body: LabResultSubmission;
  status: LabResultStatus;
  /** ResultedDateUTC as a fixed-width UTC instant with 9 fractional digits (sorts as text) */
  resultedAtKey: string;
  /** results as an array, whether one object or an array was sent */
  results: LabTestResult[];
}

export type NotificationState = 'pending' | 'sent';

/** A decrypted version of a result. */
export interface LabResultVersion {
  resultId: string;
  versionId: string;
  senderId: string;
  /** the partner whose result version it is (who sent it) */
  partnerId: string;
  status: LabResultStatus;
  /** ResultedDateUTC as submitted */
  resultedAt: string;
  receivedAt: string;
  patientMatched: boolean;
  notificationState: NotificationState;
  /** results as an array (abnormalFlags always an array: a comma-joined string of earlier HL7 intake is split) */
  results: LabTestResult[];
  /** the order the result answers (data.order), when sent */
  order?: LabOrder;
  /** the submission exactly as received (reports' data restored from S3 when they were stored there) */
  submission: LabResultSubmission;
  /** the patient the version is filed under: the chart patient's id, or a held patient id (`hl7-...`) */
  filedPatientId: string;
}

/** Version metadata without decryption (plain attributes only). */
export interface LabResultVersionInfo {
  resultId: string;
  versionId: string;
  senderId: string;
  status: LabResultStatus;
  /** fixed-width UTC instant (see AcceptedSubmission.resultedAtKey) */
  resultedAtKey: string;
  receivedAt: string;
  patientMatched: boolean;
  notificationState: NotificationState;
  notificationAttempts: number;
  /** S3 keys of the parts stored outside the item */
  documentKeys: string[];
}

/** A decrypted summary of the current version of one result, newest first from recentResultsForPatient. */
export interface StoredLabResultSummary extends LabResultSummary {
  versionId: string;
  senderId: string;
  /** the partner that sent the current version (absent on a pointer stored before it was kept) */
  partnerId?: string;
  patientMatched: boolean;
  /** true when long result values or results beyond the summary budget were left out (the full version has them) */
  truncated?: boolean;
}

/** The plain (non-PHI) facts of a version item; enough to move the pointer and notify without KMS. */
export interface VersionRecord {
  resultId: string;
  versionId: string;
  versionSk: string;
  senderId: string;
  partnerId: string;
  status: LabResultStatus;
  resultedAtKey: string;
  rank: string;
  receivedAt: string;
  /** provenance: the source message (MSH-10 of an ORU, the x-request-id of a JSON submission) */
  sourceMessageId?: string;
  patientKey: string;
  patientMatched: boolean;
  /**
   * the summary ciphertext the current pointer takes over: a sealed record (sealed-record.ts) or,
   * for versions stored before issue 31 item 2, the envelope JSON. Absent when the version's
   * notification marker is gone (its pointer step is done: nothing needs it).
   */
  summary?: string | Uint8Array;
  documentKeys: string[];
  /**
   * where the owed notification is kept: `marker`, a notification marker item (issue 31 item 2);
   * `version-item`, the version item itself in the pending index (versions stored before)
   */
  notificationLedger: 'marker' | 'version-item';
  notificationState: NotificationState;
  notificationAttempts: number;
}
