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

/**
 * What a partner's ADT said about a visit (PV1), kept in the partner's own view of the person
 * (lib/intake/partner-identities.ts), never in the chart (docs/write-authority.md).
 */
export interface PartnerVisit {
  /** PV1-19 visit number (CX-1) */
  visitNumber?: string;
  /** PV1-2 patient class (table 0004) */
  patientClass?: string;
  /** PV1-3 assigned location, point of care (PL-1) */
  location?: string;
  /** PV1-7 attending doctor */
  attending?: Clinician;
  /** PV1-44 admit time, precision kept (PartialDateTime) */
  admitAt?: string;
  /** PV1-45 discharge time, precision kept (PartialDateTime) */
  dischargeAt?: string;
}

/** A partner's DG1: the diagnosis code, its type (table 0052) and time, precision kept. */
export interface PartnerDiagnosis {
  /** DG1-3 */
  code: CodedValue;
  /** DG1-6 diagnosis type (A admitting, W working, F final...) */
  type?: string;
  /** DG1-5 diagnosis time (PartialDateTime) */
  at?: string;
}

/** A partner's AL1: allergen, allergen type, severity, reactions. */
export interface PartnerAllergy {
  /** AL1-3 */
  allergen: CodedValue;
  /** AL1-2 allergen type (table 0127) */
  type?: CodedValue;
  /** AL1-4 severity (table 0128) */
  severity?: CodedValue;
  /** AL1-5 reactions, one per repetition */
  reactions?: string[];
}

export type ChartRecordKind = 'encounter' | 'note' | 'assessment';

export type ChartRecord =
  { kind: 'encounter'; at: string; record: Encounter } | { kind: 'note'; at: string; record: Note } | { kind: 'assessment'; at: string; record: Assessment };

/**
 * A time as the sender wrote it, with its precision (issue 27): `YYYY`, `YYYY-MM`, `YYYY-MM-DD`,
 * `YYYY-MM-DDTHH:mm`, `YYYY-MM-DDTHH:mm:ss[.f]`, the time parts with an offset (`Z` or `±HH:MM`).
 * A date stays a date and minutes stay minutes through every export.
 */
export type PartialDateTime = string;

/** A code with its system as HL7 table 0396 names it (`LN`, `SCT`, `UCUM`, `L`...) and its display text. */
export interface Coding {
  code: string;
  display?: string;
  system?: string;
}

/** An entity identifier (HL7 EI): the id and the namespace that assigned it. */
export interface EntityIdentifier {
  id: string;
  namespace?: string;
}

/**
 * An identifier with the authority that assigned it, as HL7 v2 writes one (XON-10 / XCN-1, the HD of XON-6 /
 * XCN-9, the type of XON-7 / XCN-13). `{ id, namespace }` reads as an {@link EntityIdentifier}.
 */
export interface AssignedIdentifier {
  id: string;
  /** HD-1 namespace id of the assigning authority (from FHIR: the Identifier.system as sent) */
  namespace?: string;
  /** HD-2 universal id (an OID, a URI) of the assigning authority */
  universalId?: string;
  /** HD-3 universal id type (table 0301: ISO, URI, DNS...) */
  universalIdType?: string;
  /** identifier type code (table 0203: XX organization identifier, NPI, NI, LN...) */
  type?: string;
}

/** An address (XAD) as a lab sent it: {@link Address} with XAD-7 address type (table 0190) and XAD-9 county code. */
export interface LabAddress extends Address {
  type?: string;
  county?: string;
}

/** A person a lab names (XCN): an identifier, a name, or both. */
export interface LabPerson {
  identifier?: AssignedIdentifier;
  name?: PersonName;
}

/**
 * A FHIR CodeableConcept as a lab sent it (FHIR-only fields: its systems are URIs as sent, not table 0396
 * names): up to 10 codings and a text.
 */
export interface SentConcept {
  coding?: Array<{ system?: string; code: string; display?: string }>;
  text?: string;
}

/** A bound of a FHIR age range (Quantity): the value as written, its unit and UCUM code. */
export interface SentAge {
  value: string;
  unit?: string;
  code?: string;
}

/** Structured numeric (HL7 SN): `<^2.5`, `^10^-^20` (a range), `^1^:^128` (a ratio), `>=^5`. */
export interface StructuredNumeric {
  /** `<` `>` `<=` `>=` `=` `<>` */
  comparator?: string;
  value1?: string;
  /** `-` (range), `:` or `/` (ratio), `+` (categorical) */
  separator?: string;
  value2?: string;
}

/**
 * One test (observation) of a lab result, as submitted and as the exports see it. The spec's fields
 * (`testName`, `result`, `units`, `referenceRange`) mean what they always meant; the optional fields
 * after them keep what a lab sent (OBX) so that every export can write it back.
 */
export interface LabTestSummary {
  testName: string;
  /** the value as text (what a reader shows); the typed value, when known, is in the fields below */
  result: string;
  /** units as the lab displays them (OBX-6.2, or OBX-6.1 without a UCUM code) */
  units?: string;
  referenceRange?: string;
  /** the test's code as the lab sent it (e.g. a LOINC code), with its coding system (`LN`): OBX-3.1/3.3 */
  code?: string;
  codeSystem?: string;
  /** OBX-3.4-6: the lab's alternate (often local) code for the test */
  alternateCode?: Coding;
  /** OBX-2 value type (table 0125): NM, SN, CWE, CE, ST, TX, FT, DT, TM, TS, ED, RP... */
  valueType?: string;
  /** NM as the lab wrote it (a decimal string: precision kept) */
  numericValue?: string;
  /** SN value */
  structuredNumeric?: StructuredNumeric;
  /** CWE/CE value */
  codedValue?: Coding;
  /** CWE-4..6 / CE-4..6 of the value: the lab's alternate coding of it (FHIR: the concept's second coding) */
  codedValueAlternate?: Coding;
  /** TX/FT value: one entry per line (repetition) */
  textLines?: string[];
  /** UCUM code of the units (OBX-6.1 when OBX-6.3 is UCUM); `units` keeps the display */
  unitsCode?: string;
  /** the units (display) and UCUM code of the reference range's bounds when they are not the value's (FHIR referenceRange.low/high; FHIR only) */
  referenceRangeUnits?: string;
  referenceRangeUnitsCode?: string;
  /** FHIR referenceRange.type (normal, therapeutic...) as sent (FHIR only: v2.5.1 OBX-7 is a text) */
  referenceRangeType?: SentConcept;
  /** FHIR referenceRange.appliesTo (the population: sex, race...) as sent (FHIR only) */
  referenceRangeAppliesTo?: SentConcept[];
  /** FHIR referenceRange.age (the ages it applies to) as sent (FHIR only) */
  referenceRangeAge?: { low?: SentAge; high?: SentAge };
  /** OBX-8 abnormal flags (table 0078): `H`, `HH`, `L`, `LL`, `A`, `AA`, `N`, `<`, `>`... */
  abnormalFlags?: string[];
  /** OBX-11 observation result status (table 0085): F, P, C, W (wrong: entered in error), X (cannot be obtained), D, R, I, S, U */
  observationStatus?: string;
  /** OBX-14 when this observation was made */
  observedAt?: PartialDateTime;
  /** OBX-19 when the analysis was done, as written (HL7 only: FHIR R4 has no element for it) */
  analyzedAt?: PartialDateTime;
  /** OBX-4 observation sub-id as sent (v2.5.1 ST; groups the OBX of one OBR that belong together; HL7 only) */
  subId?: string;
  /** the end of this test's period (FHIR Observation.effectivePeriod.end; observedAt its start): FHIR only, OBX-14 has no end */
  observedEndAt?: PartialDateTime;
  /** FHIR Observation.issued of this test when it is not the report's, as written (FHIR only: v2.5.1 has no per-OBX release time) */
  reportedAt?: PartialDateTime;
  /** OBX-23 performing organization name (the lab that did the test) */
  performingOrganization?: string;
  /**
   * OBX-23 XON-10 organization identifier (XON-3 from v2.3/2.4 senders), XON-6 its assigning authority and
   * XON-7 its identifier type (table 0203), as sent; FHIR Observation.performer.identifier. Absent in records
   * stored before it (then OBX-23 held the name only).
   */
  performingOrganizationIdentifier?: AssignedIdentifier;
  /** OBX-24 performing organization address (XAD), as sent (HL7 only: a contained Observation cannot carry an Organization) */
  performingOrganizationAddress?: LabAddress;
  /** OBX-25 performing organization medical director (XCN: XCN-1 with XCN-9 / XCN-13, name XCN-2..6), as sent (HL7 only) */
  performingOrganizationDirector?: LabPerson;
  /** NTE segments after the OBX (one entry per NTE, lines joined with \n) */
  comments?: string[];
  /**
   * Only when `testName` is not the display of `code`: `code`, nothing named the test (OBX-3.2 empty,
   * a FHIR coding without display and no code.text), so `testName` repeats the code for readers and the
   * exports write no display (OBX-3 `code^^LN`, a FHIR coding without display or text); `text`, FHIR
   * code.text, whose coding had no display or another one (`codeDisplay`): HL7 writes the text in
   * OBX-3.2, FHIR as code.text, beside the coding's own display when there was one.
   * Absent: `testName` is the test's display.
   */
  testNameFrom?: 'code' | 'text';
  /** the FHIR coding's display when the lab sent a code.text that differs from it (`testNameFrom: 'text'`) */
  codeDisplay?: string;
}

/**
 * The optional fields of a lab test (LabTestSummary beyond testName and result), by kind: one list the
 * result writer keeps in the summary (lib/results/result-writer.ts) and the exports copy from a stored
 * version (lib/exports/lab-result-export.ts), so a field added to the model is added once.
 */
export const LAB_TEST_TEXT_FIELDS = [
  'units',
  'referenceRange',
  'code',
  'codeSystem',
  'valueType',
  'numericValue',
  'unitsCode',
  'referenceRangeUnits',
  'referenceRangeUnitsCode',
  'observationStatus',
  'observedAt',
  'analyzedAt',
  'subId',
  'observedEndAt',
  'reportedAt',
  'performingOrganization',
  'testNameFrom',
  'codeDisplay',
] as const satisfies ReadonlyArray<keyof LabTestSummary>;
export const LAB_TEST_OBJECT_FIELDS = [
  'alternateCode',
  'structuredNumeric',
  'codedValue',
  'codedValueAlternate',
  'performingOrganizationIdentifier',
  'performingOrganizationAddress',
  'performingOrganizationDirector',
  'referenceRangeType',
  'referenceRangeAge',
] as const satisfies ReadonlyArray<keyof LabTestSummary>;
export const LAB_TEST_LIST_FIELDS = ['textLines', 'abnormalFlags', 'comments', 'referenceRangeAppliesTo'] as const satisfies ReadonlyArray<
  keyof LabTestSummary
>;

/**
 * True for a test the lab identified by its alternate code only (OBX-3 `^^^99717-5^Accession Number^L`:
 * CWE-1..3 empty): intake names it by the alternate's text (else code) and sends no `code`. The exports
 * keep it as sent (issue 27 K5): OBX-3.1-3 empty with the alternate in OBX-3.4-6, FHIR `code.coding`
 * from the alternate and no `code.text` of its own; no primary code is invented. (A pure function of
 * the model, beside its type, so that the HL7 and FHIR exports read the model the same way.)
 */
export function hasAlternateCodeOnly(test: Pick<LabTestSummary, 'testName' | 'code' | 'alternateCode'>): boolean {
  const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
  const alternate = test.alternateCode;
  if (text(test.code) !== '' || !alternate || text(alternate.code) === '') return false;
  return text(test.testName) === (text(alternate.display) || text(alternate.code));
}

/** The specimen of an order (SPM, or OBR-15 in older versions). */
export interface LabSpecimen {
  type?: Coding;
  collectedAt?: PartialDateTime;
  id?: EntityIdentifier;
}

/** The order a lab result answers (ORC/OBR); every field optional beside the spec's accession number and status. */
export interface LabOrder {
  /** OBR-2 / ORC-2 */
  placerOrderNumber?: EntityIdentifier;
  /** OBR-3 namespace (EI-2) of the accession number (`accessionNumber` is EI-1) */
  accessionNamespace?: string;
  /** OBR-4 universal service identifier */
  universalService?: Coding;
  /** OBR-7 observation (collection) date-time */
  collectedAt?: PartialDateTime;
  /** OBR-8 observation (collection) end, e.g. of a 24-hour urine; FHIR effectivePeriod.end */
  collectedEndAt?: PartialDateTime;
  /**
   * OBR-22 results reported (FHIR DiagnosticReport.issued) as the lab wrote it, offset and precision
   * kept; `ResultedDateUTC` / `resultedAt` is the same instant in UTC (keys and order)
   */
  reportedAt?: PartialDateTime;
  /** OBR-16 ordering provider */
  orderingProvider?: Clinician;
  /** OBR-25 result status as sent (table 0123: O I S A P C R F X Y Z) */
  orderStatus?: string;
  /**
   * The report's performer (FHIR DiagnosticReport.performer: the lab that issued it), as sent: name and
   * identifier (the identifier's namespace is the FHIR system). v2.5.1 has no report-level field: the HL7
   * exports write the first name in OBX-23 of each test without a performing organization of its own.
   */
  performer?: LabPerformer[];
  specimen?: LabSpecimen;
  /** NTE segments after the OBR */
  comments?: string[];
}

/** A performer of a lab report (an organization, or a person), as the lab named it: at least a name or an identifier. */
export interface LabPerformer {
  name?: string;
  identifier?: EntityIdentifier;
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
  /** the order (OBR/ORC/SPM facts), when the lab sent them */
  order?: LabOrder;
  /** the result's reports (documents: an ED OBX, the JSON `reports`), in order (issue 27 K6) */
  documents?: LabDocumentSummary[];
}

/**
 * A report of a lab result as the summary carries it (issue 27 K6: the summary exports and FHIR carry
 * every document, whole or by an explicit reference). `data` is the document as submitted when it is at
 * most {@link LAB_DOCUMENT_INLINE_MAX_BYTES}; a larger one has no `data` here and is referred to: it is
 * whole in GET /exportHl7LabResult (HL7 RP, FHIR `presentedForm.url`).
 */
export interface LabDocumentSummary {
  name: string;
  /** MIME type as submitted, e.g. application/pdf */
  type: string;
  /** `base64` (any case) or a text source (`text`, `reference`...) */
  source: string;
  /** its size: decoded bytes for base64, else the UTF-8 bytes of the text */
  bytes: number;
  data?: string;
}

/** The largest document the summary carries whole (as submitted: the size at which intake keeps a report inside the item). */
export const LAB_DOCUMENT_INLINE_MAX_BYTES = 16 * 1024;
