/*
 * The HL7 v2.5.1 table values this library writes (hl7-notes.md, "Table values that partners validate").
 */

/** Table 0001, administrative sex. */
export const ADMINISTRATIVE_SEX = ['A', 'F', 'M', 'N', 'O', 'U'] as const;

/** Table 0004, patient class, with the table's descriptions. */
export const PATIENT_CLASS_TEXT = {
  B: 'Obstetrics',
  C: 'Commercial Account',
  E: 'Emergency',
  I: 'Inpatient',
  N: 'Not Applicable',
  O: 'Outpatient',
  P: 'Preadmit',
  R: 'Recurring patient',
  U: 'Unknown',
} as const;
export type PatientClass = keyof typeof PATIENT_CLASS_TEXT;

/** PV1-2 when no visit applies (PV1 is required in ADT_A01 and MDM_T02). */
export const PATIENT_CLASS_NOT_APPLICABLE: PatientClass = 'N';

/** Table 0085, observation result status (OBX-11). */
export type ObservationResultStatus = 'C' | 'D' | 'F' | 'I' | 'N' | 'O' | 'P' | 'R' | 'S' | 'U' | 'W' | 'X';

/** Table 0123, result status (OBR-25). */
export type ResultStatus = 'A' | 'C' | 'F' | 'I' | 'O' | 'P' | 'R' | 'S' | 'X' | 'Y' | 'Z';

/** The values of table 0085 (OBX-11). */
export const OBSERVATION_RESULT_STATUSES: readonly ObservationResultStatus[] = ['C', 'D', 'F', 'I', 'N', 'O', 'P', 'R', 'S', 'U', 'W', 'X'];

/** The values of table 0123 (OBR-25). */
export const RESULT_STATUSES: readonly ResultStatus[] = ['A', 'C', 'F', 'I', 'O', 'P', 'R', 'S', 'X', 'Y', 'Z'];

/** Later versions' table 0085 values in their v2.5.1 meaning: A amended, B appended -> C; V verified -> F. */
const LATER_OBSERVATION_RESULT_STATUSES: Readonly<Record<string, ObservationResultStatus>> = { A: 'C', B: 'C', V: 'F' };

/**
 * A table 0085 value as sent (trimmed, upper case; the later values A, B, V in their v2.5.1 meaning), or
 * `undefined` when it is none.
 */
export function observationResultStatus(value: string | undefined): ObservationResultStatus | undefined {
  const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
  if (Object.prototype.hasOwnProperty.call(LATER_OBSERVATION_RESULT_STATUSES, code)) {
    return LATER_OBSERVATION_RESULT_STATUSES[code];
  }
  return (OBSERVATION_RESULT_STATUSES as readonly string[]).includes(code) ? (code as ObservationResultStatus) : undefined;
}

/** A table 0123 value as sent (trimmed, upper case), or `undefined` when it is none. */
export function resultStatus(value: string | undefined): ResultStatus | undefined {
  const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
  return (RESULT_STATUSES as readonly string[]).includes(code) ? (code as ResultStatus) : undefined;
}

/** Table 0125, value type (OBX-2): the v2.5.1 values this library writes. v2.5.1 has CE, not CWE. */
export type ObservationValueType = 'NM' | 'SN' | 'ST' | 'TX' | 'FT' | 'CE' | 'XCN' | 'ED' | 'RP';

/** Table 0271 document completion status: authenticated. */
export const DOCUMENT_COMPLETION_AUTHENTICATED = 'AU';
/** table 0271: legally authenticated */
export const DOCUMENT_COMPLETION_LEGALLY_AUTHENTICATED = 'LA';
/** table 0271: documented (the status of a partner's document that gave none) */
export const DOCUMENT_COMPLETION_DOCUMENTED = 'DO';
/** Table 0273 document availability status: available for patient care. */
export const DOCUMENT_AVAILABLE = 'AV';
/**
 * Table 0270 document type: `PN`, which the service description fixes for the note message (table 0270
 * reads it as "procedure note"); a partner profile may choose `PR` (progress note) or another code.
 */
export const DOCUMENT_TYPE_PROGRESS_NOTE = 'PN';
/** Table 0052 diagnosis type: final / working. */
export const DIAGNOSIS_TYPE_FINAL = 'F';
export const DIAGNOSIS_TYPE_WORKING = 'W';
/** Table 0191 type of referenced data (TXA-3 document content presentation): text. */
export const CONTENT_PRESENTATION_TEXT = 'TEXT';
/** Table 0119 order control: observations / performed service to follow (the ORC-1 of ORU_R01). */
export const ORDER_CONTROL_RESULTS = 'RE';
/** Table 0119 order control: status changed (an order sent without observations). */
export const ORDER_CONTROL_STATUS_CHANGED = 'SC';
export type OrderControl = typeof ORDER_CONTROL_RESULTS | typeof ORDER_CONTROL_STATUS_CHANGED;
/** Table 0203 identifier types. */
export const IDENTIFIER_TYPE_MEDICAL_RECORD = 'MR';
export const IDENTIFIER_TYPE_VISIT_NUMBER = 'VN';

/** Table 0038 codes by the chart's free-text order status (normalized: trimmed, lower case, runs of spaces and `_` as `-`). */
const ORDER_STATUS_BY_NAME = new Map<string, string>([
  ['completed', 'CM'],
  ['complete', 'CM'],
  ['cancelled', 'CA'],
  ['canceled', 'CA'],
  ['discontinued', 'DC'],
  ['on-hold', 'HD'],
  ['held', 'HD'],
  ['in-progress', 'IP'],
  ['active', 'IP'],
  ['scheduled', 'SC'],
  ['replaced', 'RP'],
  ['partial', 'A'],
]);
const TABLE_0038: readonly string[] = ['A', 'CA', 'CM', 'DC', 'ER', 'HD', 'IP', 'RP', 'SC'];

/** Table 0038 order status, from the free-text order status the chart stores; `undefined` when unknown. */
export function orderStatusCode(status: string | undefined): string | undefined {
  if (status === undefined) {
    return undefined;
  }
  const normalized = status
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
  return ORDER_STATUS_BY_NAME.get(normalized) ?? (TABLE_0038.includes(status.trim()) ? status.trim() : undefined);
}
