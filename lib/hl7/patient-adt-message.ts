import type { Patient } from '../chart/types';
import { ADT_A08, buildMessageHeader, encodeMessage, type MessageHeaderContext } from './header';
import { Hl7Message } from './segment';
import {
  eventTypeSegment,
  nextOfKinSegments,
  noVisitSegment,
  patientAdditionalDemographicSegment,
  patientIdentificationSegment,
} from './segments';

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

export function encodePatientAdtMessage(input: PatientAdtMessageInput): string {
  const { header, patient } = input;
  const message = new Hl7Message(buildMessageHeader(header, ADT_A08)).add(
    eventTypeSegment('A08', header.timestamp),
    patientIdentificationSegment(patient, 'full'),
  );
  const primaryCare = patientAdditionalDemographicSegment(patient);
  if (primaryCare) {
    message.add(primaryCare);
  }
  message.add(...nextOfKinSegments(patient), noVisitSegment());
  return encodeMessage(message, header);
}
