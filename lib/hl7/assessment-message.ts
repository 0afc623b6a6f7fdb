import type { Assessment, Encounter, Patient } from '../chart/types';
import { Hl7EncodingError } from './errors';
import { buildMessageHeader, encodeMessage, type MessageHeaderContext, namespacesOf, ORU_R01 } from './header';
import { assessmentObservationGroup, orderObservationSegments } from './observations';
import { Hl7Message, type Segment } from './segment';
import { assertSamePatient, patientIdentificationSegment, visitSegments } from './segments';

/*
 * ORU^R01^ORU_R01 for one assessment (a scored questionnaire or similar).
 *
 *   MSH  ORU^R01^ORU_R01
 *   PID  core demographics
 *   PV1  [PV2]  only when the assessment's encounter is handed in (the VISIT group is optional)
 *   OBR  OBR-3 assessment id, OBR-4 assessment code, OBR-7 performed at, OBR-25 F (no ORC: optional,
 *        and there is no order)
 *   OBX  one per item: NM (numeric), ST (text; TX when multi-line), CE (coded; v2.5.1 table 0125 has CE,
 *        not CWE); OBX-6 units when known; then the total (NM, TOTAL^Total score^L) and the
 *        interpretation (ST/TX, INTERPRETATION^Interpretation^L). OBX-8 is not used. Every OBX: OBX-11 F,
 *        OBX-14 performed at, OBX-16 the performer.
 */

export interface AssessmentMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  /** the encounter the assessment belongs to, when it has one (must be `assessment.encounterId`) */
  encounter?: Encounter;
  assessment: Assessment;
}

export function encodeAssessmentMessage(input: AssessmentMessageInput): string {
  const message = new Hl7Message(buildMessageHeader(input.header, ORU_R01)).addAll(assessmentMessageSegments(input));
  return encodeMessage(message, input.header);
}

/** The segments after MSH: PID [PV1 [PV2]] OBR {OBX}. */
export function assessmentMessageSegments(input: AssessmentMessageInput): Segment[] {
  const { header, patient, encounter, assessment } = input;
  assertSamePatient(patient, assessment.patientId, 'assessment.patientId');
  const namespaces = namespacesOf(header);
  const message: Segment[] = [patientIdentificationSegment(patient, 'core')];
  if (encounter) {
    assertSamePatient(patient, encounter.patientId, 'encounter.patientId');
    if (assessment.encounterId !== undefined && assessment.encounterId !== encounter.encounterId) {
      throw new Hl7EncodingError('encounter.encounterId', 'is not the encounter of assessment.encounterId');
    }
    message.push(...visitSegments(encounter, namespaces));
  }
  message.push(...orderObservationSegments([assessmentObservationGroup(assessment, 'assessment')], namespaces));
  return message;
}
