/**
 * The chart as the exports see it. These are the shapes stored (as JSON attributes) in the chart
 * table and handed to the HL7 message builders; every date-time is ISO 8601 with an offset or `Z`,
 * every date of birth is `YYYY-MM-DD`.
 */

/**
 * Where a record came from (docs/write-authority.md): the partner whose API key sent it, the sender
 * it named (MSH-4, senderID, sourceSystemId), the source message (MSH-10 or x-request-id) and when it
 * was received. Records of the chart itself (import, demo load) have none.
 */
export interface Provenance {
  partnerId: string;
  sender: string;
  sourceMessageId: string;
  /** ISO 8601 UTC */
  receivedAt: string;
}

export interface CodedValue {
  /** code, e.g. "E11.9" */
  code: string;
  /** display text */
  display?: string;
  /** coding system name as HL7 table 0396 spells it: "I10" (ICD-10-CM), "SCT", "LN", "C4", "L" (local)... */
  system?: string;
}

export interface PersonName {
  family: string;
  given?: string;
  middle?: string;
  prefix?: string;
  suffix?: string;
}

export interface Clinician {
  id?: string;
  name: PersonName;
}

export interface Address {
  line1?: string;
  line2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  country?: string;
}

export interface NextOfKin {
  name: PersonName;
  relationship?: CodedValue;
  phone?: string;
}

export interface Patient {
  patientId: string;
  mrn: string;
  /** assigning authority of the MRN (HD namespace id) */
  assigningAuthority: string;
  name: PersonName;
  /** YYYY-MM-DD */
  birthDate?: string;
  /** HL7 table 0001: A F M N O U */
  sex?: 'A' | 'F' | 'M' | 'N' | 'O' | 'U';
  address?: Address;
  phone?: string;
  email?: string;
  maritalStatus?: CodedValue;
  language?: CodedValue;
  race?: CodedValue;
  ethnicity?: CodedValue;
  primaryCareProvider?: Clinician;
  nextOfKin?: NextOfKin[];
}

export interface EncounterOrder {
  orderId: string;
  code: CodedValue;
  orderedAt?: string;
  status?: string;
  orderingProvider?: Clinician;
}

export interface Encounter {
  patientId: string;
  encounterId: string;
  /** HL7 table 0004: B C E I N O P R U */
  patientClass: 'B' | 'C' | 'E' | 'I' | 'N' | 'O' | 'P' | 'R' | 'U';
  location?: string;
  attending?: Clinician;
  admitAt: string;
  dischargeAt?: string;
  reason?: string;
  diagnoses?: CodedValue[];
  orders?: EncounterOrder[];
}

export interface Note {
  patientId: string;
  noteId: string;
  encounterId?: string;
  author: Clinician;
  createdAt: string;
  text: string;
  /** a partner's document: who sent it (absent for the chart's own notes) */
  provenance?: Provenance;
  /** the sender's document number (TXA-12) as sent; `noteId` is `<partnerId>:<documentNumber>` */
  documentNumber?: string;
  /** TXA-17 (table 0271) as the sender gave it; absent: the chart's own note (AU) or, for a partner's, DO */
  completionStatus?: string;
  /** TXA-22 as the sender gave it (who authenticated, when) */
  authenticatedBy?: Clinician;
  authenticatedAt?: string;
  /** 1 for the first version; a replacement (MDM^T08/T10 of the owner) counts up */
  version?: number;
}

export interface AssessmentItem {
  code: CodedValue;
  /** "numeric" -> NM, "text" -> ST/TX, "coded" -> CWE */
  kind: 'numeric' | 'text' | 'coded';
  value: string | number | CodedValue;
  units?: string;
}

export interface Assessment {
  patientId: string;
  assessmentId: string;
  encounterId?: string;
  code: CodedValue;
  performedAt: string;
  performer?: Clinician;
  items: AssessmentItem[];
  total?: number;
  interpretation?: string;
}

export type ChartRecordKind = 'encounter' | 'note' | 'assessment';

export type ChartRecord =
  { kind: 'encounter'; at: string; record: Encounter } | { kind: 'note'; at: string; record: Note } | { kind: 'assessment'; at: string; record: Assessment };

/** One test of a lab result (as submitted, and as the exports see it); `code`/`codeSystem` become OBX-3 (table 0396, default L). */
export interface LabTestSummary {
  testName: string;
  result: string;
  units?: string;
  referenceRange?: string;
  /** the test's code as the lab sent it (e.g. a LOINC code), with its coding system (`LN`) */
  code?: string;
  codeSystem?: string;
}

/** A lab result as the chart exports see it (HL7 summary and ORU, FHIR DiagnosticReport), decrypted. */
export interface LabResultSummary {
  resultId: string;
  accessionNumber: string;
  status: 'preliminary' | 'final' | 'corrected' | 'amended' | 'cancelled';
  /** ISO 8601 date-time */
  resultedAt: string;
  results: LabTestSummary[];
  /** provenance: the sender (senderID / MSH-4) whose result it is; OBX-23 and the FHIR performer */
  senderId?: string;
}
