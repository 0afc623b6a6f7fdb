import type { Clinician, CodedValue, Encounter, Patient, PersonName } from '../chart/types';
import {
  ceFromCodedValue,
  ceFromText,
  cxFromIdentifier,
  cxTextFromIdentifier,
  dtFromDate,
  eiFromIdentifier,
  plFromLocation,
  siFromNumber,
  tsFromDateTime,
  isCommonIsoDateTime,
  tsFromCommonIsoDateTime,
  tsFromPartialDateTime,
  xadFromAddress,
  xcnFromClinician,
  xcnTextFromClinician,
  xpnFromPersonName,
  xpnTextFromPersonName,
  xtnFromEmail,
  xtnFromPhone,
} from './datatypes';
import { Hl7EncodingError } from './errors';
import { type EscapedText, escapeText, isEmptyOnceEscaped } from './escape';
import type { IdentifierNamespaces } from './identifiers';
import { type Component, type Components, Segment, type TextComponents } from './segment';
import {
  ADMINISTRATIVE_SEX,
  IDENTIFIER_TYPE_MEDICAL_RECORD,
  IDENTIFIER_TYPE_VISIT_NUMBER,
  type OrderControl,
  PATIENT_CLASS_NOT_APPLICABLE,
  PATIENT_CLASS_TEXT,
  type PatientClass,
} from './tables';

/*
 * Builders of the segments several messages share. Each takes chart values, escapes them through the
 * data type builders and places them at their standard v2.5.1 positions.
 */

function isEmptyComponent(component: Component): boolean {
  if (typeof component === 'string') {
    return component === '';
  }
  for (const subcomponent of component as readonly EscapedText[]) {
    if (subcomponent !== '') {
      return false;
    }
  }
  return true;
}

function isEmpty(components: Components): boolean {
  for (const component of components) {
    if (!isEmptyComponent(component)) {
      return false;
    }
  }
  return true;
}

/**
 * Throws when a value the standard requires would be empty once encoded. The error names
 * `inputPath + inputPathSuffix`, joined only when it is thrown (callers pass `${path}` and `'.code'`
 * rather than building the path for every value that is fine).
 */
export function requireComponents(components: Components, inputPath: string, inputPathSuffix = ''): Components {
  if (isEmpty(components)) {
    throw new Hl7EncodingError(inputPath + inputPathSuffix, 'is required and must not be empty');
  }
  return components;
}

/** XPN of a name that must not be empty (the name type `L` alone does not count as a name). */
export function requireName(name: PersonName, inputPath: string): Components {
  const xpn = xpnFromPersonName(name);
  requireComponents(xpn.slice(0, 5), inputPath);
  return xpn;
}

/** Throws when the first component (the identifier of a CX, EI...) would be empty once encoded. */
export function requireFirstComponent(components: Components, inputPath: string, inputPathSuffix = ''): Components {
  const first = components[0];
  if (first === undefined || isEmptyComponent(first)) {
    throw new Hl7EncodingError(inputPath + inputPathSuffix, 'is required and must not be empty');
  }
  return components;
}

/** {@link requireFirstComponent} for RAW components: the first one must not be empty once escaped. */
export function requireFirstText(components: TextComponents, inputPath: string, inputPathSuffix = ''): TextComponents {
  if (isEmptyOnceEscaped(components[0])) {
    throw new Hl7EncodingError(inputPath + inputPathSuffix, 'is required and must not be empty');
  }
  return components;
}

/** {@link requireName} as RAW components: XPN-1..5 must not all be empty once escaped. */
export function requireNameText(name: PersonName, inputPath: string): TextComponents {
  const xpn = xpnTextFromPersonName(name);
  for (let index = 0; index < 5; index += 1) {
    if (!isEmptyOnceEscaped(xpn[index])) {
      return xpn;
    }
  }
  throw new Hl7EncodingError(inputPath, 'is required and must not be empty');
}

/** Refuses to put a record of one patient into a message about another. */
export function assertSamePatient(patient: Patient, patientId: string, inputPath: string): void {
  if (patientId !== patient.patientId) {
    throw new Hl7EncodingError(inputPath, 'belongs to a different patient than patient.patientId');
  }
}

function setId(value: number): EscapedText {
  return siFromNumber(value);
}

/**
 * A chart record's time as the chart stores it (`admitAt`, `dischargeAt`, `orderedAt`, `createdAt`,
 * `performedAt`, a partner note's `authenticatedAt`): ISO 8601 with minutes or seconds (optional fraction)
 * and an explicit zone, `Z` or `±HH:MM` (`±HHMM`). The chart import and the record rules accept only
 * such times (with seconds), and the chart keeps them as written.
 */
const CHART_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/i;

/** A chart time handed to the observation builders as written (lib/hl7/observations.ts `TimeAsSent`). */
export interface ChartTimeAsWritten {
  asSent: string;
}

/**
 * A chart time as written ({@link CHART_TIME}), for an OBR/OBX time of the chart's observation groups:
 * they write it by `tsFromPartialDateTime`, offset and precision kept. Throws {@link Hl7EncodingError}
 * (naming `inputPath`) for a time without an explicit offset, so that every chart TS/DTM carries one
 * (without it v2.5.1 reads the receiver's local time).
 */
export function chartTimeAsWritten(value: string, inputPath: string): ChartTimeAsWritten;
export function chartTimeAsWritten(value: string | undefined, inputPath: string): ChartTimeAsWritten | undefined;
export function chartTimeAsWritten(value: string | undefined, inputPath: string): ChartTimeAsWritten | undefined {
  if (value === undefined) return undefined;
  // the common form (seconds, Z or ±HH:MM) is checked at fixed places; CHART_TIME takes the rest
  if (typeof value !== 'string' || !(isCommonIsoDateTime(value) || CHART_TIME.test(value))) {
    throw new Hl7EncodingError(inputPath, 'is not an ISO 8601 date-time with an offset or Z');
  }
  return { asSent: value };
}

/**
 * TS of a chart time (PV1-44/45, DG1-5, ORC-9, TXA-4/6, TXA-22 PPN-15) as the chart stores it: its
 * offset and precision kept (`2025-12-31T01:05:00-08:00` -> `20251231010500-0800`, `Z` -> `+0000`), the
 * same as the lab path writes a lab's times. Message times (MSH-7, EVN-2) stay UTC (`tsFromDateTime`).
 * Throws {@link Hl7EncodingError} for a time without an explicit offset ({@link chartTimeAsWritten}).
 */
export function tsFromChartTime(value: string, inputPath: string): EscapedText {
  // the common form (seconds, Z or ±HH:MM) read once at fixed places; anything else checked and read in full
  if (typeof value === 'string' && isCommonIsoDateTime(value)) return tsFromCommonIsoDateTime(value, inputPath);
  return tsFromPartialDateTime(chartTimeAsWritten(value, inputPath).asSent, inputPath);
}

/** Set id 1 (PID-1, PV1-1), escaped and checked once. */
const SET_ID_1 = Segment.checkedField(setId(1));

function patientClassCode(patientClass: string, inputPath: string): PatientClass {
  if (!Object.prototype.hasOwnProperty.call(PATIENT_CLASS_TEXT, patientClass)) {
    throw new Hl7EncodingError(inputPath, 'is not an HL7 table 0004 patient class');
  }
  return patientClass as PatientClass;
}

/** CE for a patient class: `I^Inpatient^HL70004`. */
export function patientClassCodedValue(encounter: Encounter, inputPath: string): CodedValue {
  const code = patientClassCode(encounter.patientClass, inputPath);
  return { code, display: PATIENT_CLASS_TEXT[code], system: 'HL70004' };
}

/**
 * EVN: event type code (EVN-1) and recorded date/time (EVN-2, the message time). With `messageHeader`, the
 * MSH built from the same time, EVN-2 is a copy of its MSH-7 (the same value, formatted once per message).
 */
export function eventTypeSegment(eventTypeCode: string, recordedAt: Date, messageHeader?: Segment): Segment {
  const evn = new Segment('EVN').setText(1, eventTypeCode);
  return messageHeader ? evn.copyFieldFrom(messageHeader, 2, 7) : evn.set(2, tsFromDateTime(recordedAt, 'header.timestamp'));
}

/** Which PID fields to write: `core` is the spec's note shape (PID-1, 3, 5, 7, 8), `full` all demographics. */
export type PatientDetail = 'core' | 'full';

/**
 * PID. Core: PID-1 `1`, PID-3 `MRN^^^AUTHORITY^MR`, PID-5 `FAMILY^GIVEN...`, PID-7 `yyyyMMdd`, PID-8 sex.
 * Full adds PID-10 race, PID-11 address, PID-13 home phone and e-mail (two repetitions), PID-15 language,
 * PID-16 marital status, PID-22 ethnic group.
 */
export function patientIdentificationSegment(patient: Patient, detail: PatientDetail): Segment {
  const pid = new Segment('PID')
    .setChecked(1, SET_ID_1)
    .setTextComponents(3, requireFirstText(cxTextFromIdentifier(patient.mrn, patient.assigningAuthority, IDENTIFIER_TYPE_MEDICAL_RECORD), 'patient.mrn'))
    .setTextComponents(5, requireNameText(patient.name, 'patient.name'));
  if (patient.birthDate !== undefined) {
    pid.set(7, dtFromDate(patient.birthDate, 'patient.birthDate'));
  }
  if (patient.sex !== undefined) {
    if (!(ADMINISTRATIVE_SEX as readonly string[]).includes(patient.sex)) {
      throw new Hl7EncodingError('patient.sex', 'is not an HL7 table 0001 code');
    }
    pid.setText(8, patient.sex);
  }
  if (detail === 'core') {
    return pid;
  }
  if (patient.race) {
    pid.set(10, ceFromCodedValue(patient.race));
  }
  if (patient.address) {
    pid.set(11, xadFromAddress(patient.address));
  }
  const telecoms: Components[] = [];
  if (patient.phone) {
    telecoms.push(xtnFromPhone(patient.phone, 'PRN'));
  }
  if (patient.email) {
    telecoms.push(xtnFromEmail(patient.email));
  }
  pid.setRepetitions(13, telecoms);
  if (patient.language) {
    pid.set(15, ceFromCodedValue(patient.language));
  }
  if (patient.maritalStatus) {
    pid.set(16, ceFromCodedValue(patient.maritalStatus));
  }
  if (patient.ethnicity) {
    pid.set(22, ceFromCodedValue(patient.ethnicity));
  }
  return pid;
}

/** PD1 with PD1-4 primary care provider, or `undefined` when the patient has none. */
export function patientAdditionalDemographicSegment(patient: Patient, namespaces: IdentifierNamespaces): Segment | undefined {
  if (!patient.primaryCareProvider) {
    return undefined;
  }
  return new Segment('PD1').set(4, xcnFromClinician(patient.primaryCareProvider, namespaces.clinician));
}

/** One NK1 per next of kin: NK1-1 set id, NK1-2 name, NK1-3 relationship, NK1-5 phone. */
export function nextOfKinSegments(patient: Patient): Segment[] {
  return (patient.nextOfKin ?? []).map((kin, index) => {
    const nk1 = new Segment('NK1').set(1, setId(index + 1)).set(2, xpnFromPersonName(kin.name));
    if (kin.relationship) {
      nk1.set(3, ceFromCodedValue(kin.relationship));
    }
    if (kin.phone) {
      nk1.set(5, xtnFromPhone(kin.phone));
    }
    return nk1;
  });
}

/** PV1-19 visit number: `ENCOUNTER ID^^^NAMESPACE^VN` (CX-1 short form, CX-4 the visit namespace). */
export function visitNumber(encounter: Encounter, namespaces: IdentifierNamespaces): Components {
  return requireFirstComponent(cxFromIdentifier(encounter.encounterId, namespaces.visit, IDENTIFIER_TYPE_VISIT_NUMBER), 'encounter.encounterId');
}

/** {@link visitNumber} as RAW components, for `Segment.setTextComponents`. */
export function visitNumberText(encounter: Encounter, namespaces: IdentifierNamespaces): TextComponents {
  return requireFirstText(cxTextFromIdentifier(encounter.encounterId, namespaces.visit, IDENTIFIER_TYPE_VISIT_NUMBER), 'encounter.encounterId');
}

/**
 * PV1 for an encounter: PV1-1 `1`, PV1-2 patient class, PV1-3 location, PV1-7 attending doctor,
 * PV1-19 visit number ({@link visitNumber}), PV1-44 admit and PV1-45 discharge date/time.
 */
export function patientVisitSegment(encounter: Encounter, namespaces: IdentifierNamespaces): Segment {
  const pv1 = new Segment('PV1')
    .set(1, setId(1))
    .set(2, escapeText(patientClassCode(encounter.patientClass, 'encounter.patientClass')))
    .set(19, visitNumber(encounter, namespaces))
    .set(44, tsFromChartTime(encounter.admitAt, 'encounter.admitAt'));
  if (encounter.location) {
    pv1.set(3, plFromLocation(encounter.location));
  }
  if (encounter.attending) {
    pv1.set(7, xcnFromClinician(encounter.attending, namespaces.clinician));
  }
  if (encounter.dischargeAt) {
    pv1.set(45, tsFromChartTime(encounter.dischargeAt, 'encounter.dischargeAt'));
  }
  return pv1;
}

/**
 * PV1 as the note message's spec shape lists it: PV1-1, PV1-2 class, PV1-3 location, PV1-7 attending,
 * and PV1-19 the visit number when the note belongs to an encounter (the same value as in the
 * encounter's own export, so the receiver attaches the note to that visit).
 * Without an encounter PV1-2 is `N` (not applicable) and there is no location and no visit number.
 */
export function noteVisitSegment(
  encounter: Encounter | undefined,
  attending: Clinician,
  namespaces: IdentifierNamespaces,
  attendingWritten?: { segment: Segment; fieldNumber: number },
): Segment {
  const pv1 = new Segment('PV1').setChecked(1, SET_ID_1);
  if (!encounter) {
    pv1.setText(2, PATIENT_CLASS_NOT_APPLICABLE);
  } else {
    pv1.setText(2, patientClassCode(encounter.patientClass, 'encounter.patientClass'));
    if (encounter.location) {
      pv1.setText(3, encounter.location); // PL-1 alone
    }
  }
  // the same XCN already written in another segment (the note's author in TXA-5) is copied, not built again
  if (attendingWritten) {
    pv1.copyFieldFrom(attendingWritten.segment, 7, attendingWritten.fieldNumber);
  } else {
    pv1.setTextComponents(7, xcnTextFromClinician(attending, namespaces.clinician));
  }
  return encounter ? pv1.setTextComponents(19, visitNumberText(encounter, namespaces)) : pv1;
}

/** PV1 when no visit applies: `PV1|1|N`. */
export function noVisitSegment(): Segment {
  return new Segment('PV1').set(1, setId(1)).set(2, escapeText(PATIENT_CLASS_NOT_APPLICABLE));
}

/** PV2 with PV2-3 admit reason (text only), or `undefined` when the encounter has no reason. */
export function patientVisitAdditionalSegment(encounter: Encounter): Segment | undefined {
  if (!encounter.reason) {
    return undefined;
  }
  return new Segment('PV2').set(3, ceFromText(encounter.reason));
}

/** The segments of the ORU_R01 VISIT group (and of PV1 [PV2] wherever else it appears). */
export function visitSegments(encounter: Encounter, namespaces: IdentifierNamespaces): Segment[] {
  const pv2 = patientVisitAdditionalSegment(encounter);
  return pv2 ? [patientVisitSegment(encounter, namespaces), pv2] : [patientVisitSegment(encounter, namespaces)];
}

/** Values of an ORC of an ORU_R01 order group. */
export interface CommonOrder {
  /** ORC-1 (table 0119): `RE` when observations follow, `SC` for an order sent without results */
  orderControl: OrderControl;
  placerOrderNumber: string;
  /** table 0038 */
  orderStatus?: string;
  /** ORC-9, a chart time (the order's `orderedAt`): written as stored, offset kept ({@link tsFromChartTime}) */
  transactionAt?: string;
  orderingProvider?: Clinician;
  inputPath: string;
}

/** ORC: ORC-1 order control, ORC-2 placer order number, ORC-5 status, ORC-9 transaction time, ORC-12 ordering provider. */
export function commonOrderSegment(order: CommonOrder, namespaces: IdentifierNamespaces): Segment {
  const orc = new Segment('ORC')
    .set(1, escapeText(order.orderControl))
    .set(2, requireComponents(eiFromIdentifier(order.placerOrderNumber, namespaces.entity), order.inputPath, '.orderId'));
  if (order.orderStatus) {
    orc.set(5, escapeText(order.orderStatus));
  }
  if (order.transactionAt) {
    orc.set(9, tsFromChartTime(order.transactionAt, `${order.inputPath}.orderedAt`));
  }
  if (order.orderingProvider) {
    orc.set(12, xcnFromClinician(order.orderingProvider, namespaces.clinician));
  }
  return orc;
}
