import type { Patient } from '../chart/types';
import { buildMessageHeader, encodeMessage, type MessageHeaderContext, namespacesOf, ORU_R01 } from './header';
import { labResultObservationGroup, type LabResultSummary, orderObservationSegments } from './observations';
import { Hl7Message } from './segment';
import { patientIdentificationSegment } from './segments';

/*
 * ORU^R01^ORU_R01 for one lab result (a message of the summary batch, and the building block of any
 * single-result export):
 *
 *   MSH  ORU^R01^ORU_R01
 *   PID  core demographics
 *   OBR  the lab result group (observations.ts, labResultObservationGroup): OBR-2 result id, OBR-3
 *        accession number, OBR-7 and OBR-22 resulted at, OBR-25 status; NTE for comment rows
 *   OBX  one per test: coded OBX-3, NM / SN / ST / TX value, units, range, status, OBX-14
 */

export interface LabResultMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  labResult: LabResultSummary;
  /** where the lab result came from, for error messages (default `labResult`) */
  inputPath?: string;
}

export function encodeLabResultMessage(input: LabResultMessageInput): string {
  const { header, patient, labResult } = input;
  const message = new Hl7Message(buildMessageHeader(header, ORU_R01)).add(
    patientIdentificationSegment(patient, 'core'),
    ...orderObservationSegments([labResultObservationGroup(labResult, input.inputPath ?? 'labResult')], namespacesOf(header)),
  );
  return encodeMessage(message, header);
}
