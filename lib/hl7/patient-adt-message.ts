import type { Patient } from '../chart/types';
import { ADT_A08, buildMessageHeader, encodeMessage, type MessageHeaderContext, namespacesOf } from './header';
import { Hl7Message, type Segment } from './segment';
import { eventTypeSegment, nextOfKinSegments, noVisitSegment, patientAdditionalDemographicSegment, patientIdentificationSegment } from './segments';

/*
 * ADT^A08^ADT_A01 (update patient information): the patient's demographics.
 *
 *   MSH  MSH-9 ADT^A08^ADT_A01 (table 0354: A08 uses the ADT_A01 structure)
 *   EVN  EVN-1 A08, EVN-2 message time
 *   PID  PID-3 MRN^^^AUTHORITY^MR, PID-5 name, PID-7 birth date, PID-8 sex, PID-10 race, PID-11 address,
 *        PID-13 phone (^PRN^PH) and e-mail (^NET^Internet^ADDRESS) as two repetitions, PID-15 language,
 *        PID-16 marital status, PID-22 ethnic group
 *   PD1  PD1-4 primary care provider (only when the patient has one)
 *   NK1  one per next of kin: name, relationship, phone
 *   PV1  PV1-1 1, PV1-2 N: ADT_A01 requires PV1; no visit applies to a demographics update
 */

export interface PatientAdtMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
}

/** The segments after MSH: EVN PID [PD1] {NK1} PV1. */
export function patientAdtSegments(patient: Patient, header: MessageHeaderContext): Segment[] {
  const segments = [eventTypeSegment('A08', header.timestamp), patientIdentificationSegment(patient, 'full')];
  const primaryCare = patientAdditionalDemographicSegment(patient, namespacesOf(header));
  if (primaryCare) {
    segments.push(primaryCare);
  }
  segments.push(...nextOfKinSegments(patient), noVisitSegment());
  return segments;
}

export function encodePatientAdtMessage(input: PatientAdtMessageInput): string {
  const { header, patient } = input;
  const message = new Hl7Message(buildMessageHeader(header, ADT_A08)).addAll(patientAdtSegments(patient, header));
  return encodeMessage(message, header);
}
