import type { ChartRecord, Patient } from '../chart/types';
import { buildMessageHeader, encodeMessage, type MessageHeaderContext, ORU_R01 } from './header';
import {
  assessmentObservationGroup,
  encounterObservationGroup,
  labResultObservationGroup,
  type LabResultSummary,
  noRecordsObservationGroup,
  noteObservationGroup,
  type ObservationGroup,
  orderObservationSegments,
} from './observations';
import { Hl7Message } from './segment';
import {
  assertSamePatient,
  nextOfKinSegments,
  patientAdditionalDemographicSegment,
  patientIdentificationSegment,
} from './segments';

/*
 * ORU^R01^ORU_R01, the longitudinal patient summary: one PATIENT_RESULT group.
 *
 *   MSH  ORU^R01^ORU_R01
 *   PID  full demographics (as in the ADT message)
 *   PD1  primary care provider, when there is one
 *   NK1  one per next of kin
 *        (no PV1: the summary spans many visits; each encounter is a group of its own)
 *   then one ORDER_OBSERVATION group (OBR + OBX...) per chart record, in the order handed in (newest
 *   first), OBR-1 numbering them:
 *   - encounter: OBR-4 ENCOUNTER^Encounter^L; OBX for class, location, attending, admit reason, one CE
 *     OBX per diagnosis and, per order n, ORDER/ORDER_ID/ORDER_STATUS/ORDERING_PROVIDER OBX with OBX-4 n
 *   - note: OBR-4 NOTE^ChartNote^L; one TX OBX with the text
 *   - assessment: as in the assessment message
 *   - lab result: OBR-25 and OBX-11 from the status, one OBX per test (NM when numeric, else ST),
 *     OBX-7 reference range.
 *   Chart records and lab results both come newest first; they are merged into one newest-first
 *   sequence by `ChartRecord.at` and `LabResultSummary.resultedAt`. The merge is stable: each list keeps
 *   the order it was handed in, and a lab result goes before a record only when it is strictly newer.
 *
 * ORU_R01 requires at least one ORDER_OBSERVATION group (with its OBR). A patient with no records and no
 * lab results gets a single OBR, OBR-4 NO_RECORDS^No chart records^L, with no OBX: the message stays
 * valid and says explicitly that there is nothing to report.
 */

export interface PatientSummaryMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  /** the patient's chart records, already ordered (newest first); their order is kept */
  records: ChartRecord[];
  /** the patient's lab results, newest first; merged with the records by time */
  labResults?: LabResultSummary[];
}

function recordGroup(record: ChartRecord, index: number): ObservationGroup {
  const inputPath = `records[${index}].record`;
  switch (record.kind) {
    case 'encounter':
      return encounterObservationGroup(record.record, { visitAsObservations: true, inputPath });
    case 'note':
      return noteObservationGroup(record.record, inputPath);
    case 'assessment':
      return assessmentObservationGroup(record.record, inputPath);
  }
}

/**
 * Stable merge of the two newest-first lists: a lab result goes first only when strictly newer (a time
 * that does not parse, NaN, never counts as newer). Each group is built in the merged order.
 */
function mergeNewestFirst(records: readonly ChartRecord[], labResults: readonly LabResultSummary[]): ObservationGroup[] {
  const recordTimes = records.map((record) => Date.parse(record.at));
  const labTimes = labResults.map((lab) => Date.parse(lab.resultedAt));
  const merged: ObservationGroup[] = [];
  let r = 0;
  let l = 0;
  while (r < records.length || l < labResults.length) {
    if (l < labResults.length && (r >= records.length || labTimes[l]! > recordTimes[r]!)) {
      merged.push(labResultObservationGroup(labResults[l]!, `labResults[${l}]`));
      l += 1;
    } else {
      merged.push(recordGroup(records[r]!, r));
      r += 1;
    }
  }
  return merged;
}

export function encodePatientSummaryMessage(input: PatientSummaryMessageInput): string {
  const { header, patient, records } = input;
  const labResults = input.labResults ?? [];
  records.forEach((record, index) => assertSamePatient(patient, record.record.patientId, `records[${index}].record.patientId`));

  const groups = mergeNewestFirst(records, labResults);
  const message = new Hl7Message(buildMessageHeader(header, ORU_R01)).add(patientIdentificationSegment(patient, 'full'));
  const primaryCare = patientAdditionalDemographicSegment(patient);
  if (primaryCare) {
    message.add(primaryCare);
  }
  message.addAll(nextOfKinSegments(patient));
  message.addAll(orderObservationSegments(groups.length > 0 ? groups : [noRecordsObservationGroup()]));
  return encodeMessage(message, header);
}
