import type { Patient } from '../chart/types';
import { ceFromCodedValue, cxFromIdentifier } from './datatypes';
import { Hl7EncodingError } from './errors';
import { type EscapedText, escapeFormattedText, escapeText } from './escape';
import { buildMessageHeader, encodeMessage, type MessageHeaderContext, namespacesOf, ORU_R01 } from './header';
import { labResultObservationGroup, type LabResultSummary, orderObservationSegments } from './observations';
import { Hl7Message, Segment } from './segment';
import { patientIdentificationSegment, requireFirstComponent } from './segments';

/*
 * ORU^R01^ORU_R01 of one lab result (GET /exportHl7LabResult), built from the shared pieces:
 *
 *   MSH  ORU^R01^ORU_R01
 *   PID  the chart patient, all demographics, when the result's patient is matched; otherwise
 *        PID-1 1, PID-3 the lab's patient id `ID^^^SENDER^PI` (assigned by the sending lab),
 *        PID-5 `^^^^^^U` (name unknown: PID-5 is required)
 *   OBR [NTE] {OBX [NTE]} [SPM]  the result as the patient summary writes it (labResultObservationGroup:
 *        OBR-2 the lab's placer number or the result id, OBR-3 accession with the lab's namespace, OBR-4
 *        the universal service, OBR-7 collection time, OBR-22 resulted time, OBR-25 / OBX-11 as sent or
 *        from the status, one OBX per test with its typed value, UCUM units, flags, NTE comments; SPM)
 *   then (before the SPM) one OBX per report, continuing the OBX-1 numbering, OBX-3 `REPORT^<report name>^L`, OBX-4 the
 *   report's 1-based position, OBX-11 as the tests':
 *   - base64 reports as ED: `^<type of data>^<subtype>^Base64^<data>`; type of data (table 0191)
 *     IM for image/*, AU for audio/*, TEXT for text/*, else AP; subtype the MIME subtype in capitals
 *     (application/pdf -> PDF)
 *   - any other source as TX, the text with line breaks written `\.br\`.
 *   Reports are always carried inline (no RP reference): the service has no document URL a receiver
 *   could fetch with its key.
 */

export interface LabReportInput {
  name: string;
  /** MIME type as submitted, e.g. application/pdf */
  type: string;
  /** `base64` (any case) or a text source */
  source: string;
  data: string;
}

export interface LabResultMessageInput {
  header: MessageHeaderContext;
  result: LabResultSummary;
  /** the chart patient, when the result's patient id matched one */
  patient?: Patient;
  /** the lab's own patient id and the sender that assigned it (PID-3 when there is no chart patient) */
  labPatient?: { patientId: string; senderId: string };
  /** PID with core (summary batch) or full (single-result export, default) demographics */
  patientScope?: 'core' | 'full';
  /** where the result came from, for error messages (default `result`) */
  inputPath?: string;
  reports?: readonly LabReportInput[];
}

const REPORT_CODE = 'REPORT';
const OBSERVATION_STATUS: Record<LabResultSummary['status'], string> = { preliminary: 'P', final: 'F', corrected: 'C', amended: 'C', cancelled: 'X' };
const NAME_TYPE_UNSPECIFIED = 'U';
const IDENTIFIER_TYPE_PATIENT_INTERNAL = 'PI';

function typeOfData(mime: string): string {
  const major = mime.split('/')[0]!.trim().toLowerCase();
  return major === 'image' ? 'IM' : major === 'audio' ? 'AU' : major === 'text' ? 'TEXT' : 'AP';
}

function dataSubtype(mime: string): string {
  const minor = (mime.split('/')[1] ?? '').split(';')[0]!.trim();
  return minor
    .replace(/[^A-Za-z0-9.+-]/g, '')
    .slice(0, 32)
    .toUpperCase();
}

function unmatchedPatientSegment(labPatient: NonNullable<LabResultMessageInput['labPatient']>): Segment {
  const unknownName: EscapedText[] = ['', '', '', '', '', '', NAME_TYPE_UNSPECIFIED].map((c) => escapeText(c));
  return new Segment('PID')
    .set(1, escapeText('1'))
    .set(3, requireFirstComponent(cxFromIdentifier(labPatient.patientId, labPatient.senderId, IDENTIFIER_TYPE_PATIENT_INTERNAL), 'labPatient.patientId'))
    .set(5, unknownName);
}

function reportSegment(report: LabReportInput, index: number, setId: number, status: string): Segment {
  const inputPath = `reports[${index}]`;
  const base64 = report.source.toLowerCase() === 'base64';
  if (base64 && !/^[A-Za-z0-9+/]*={0,2}$/.test(report.data)) {
    throw new Hl7EncodingError(`${inputPath}.data`, 'is not base64');
  }
  const value = base64
    ? [escapeText(''), escapeText(typeOfData(report.type)), escapeText(dataSubtype(report.type)), escapeText('Base64'), escapeText(report.data)]
    : escapeFormattedText(report.data);
  return new Segment('OBX')
    .set(1, escapeText(String(setId)))
    .set(2, escapeText(base64 ? 'ED' : 'TX'))
    .set(3, ceFromCodedValue({ code: REPORT_CODE, display: report.name, system: 'L' }))
    .set(4, escapeText(String(index + 1)))
    .set(5, value)
    .set(11, escapeText(status));
}

export function encodeLabResultMessage(input: LabResultMessageInput): string {
  const { header, result, patient } = input;
  const status = OBSERVATION_STATUS[result.status];
  if (!status) throw new Hl7EncodingError('result.status', 'is not a known lab result status');
  if (!patient && !input.labPatient) throw new Hl7EncodingError('labPatient', 'is required when the result has no chart patient');
  const message = new Hl7Message(buildMessageHeader(header, ORU_R01)).add(
    patient ? patientIdentificationSegment(patient, input.patientScope ?? 'full') : unmatchedPatientSegment(input.labPatient!),
  );
  const group = orderObservationSegments([labResultObservationGroup(result, input.inputPath ?? 'result')], namespacesOf(header));
  // reports continue the OBX numbering of the group (comment rows are NTE, not OBX), in its OBSERVATION
  // groups: before the SPECIMEN group (SPM), whose OBX would describe the specimen
  const specimenAt = group.findIndex((segment) => segment.name === 'SPM');
  const observationSegments = specimenAt < 0 ? group : group.slice(0, specimenAt);
  const observations = observationSegments.filter((segment) => segment.name === 'OBX').length;
  message.addAll(observationSegments);
  (input.reports ?? []).forEach((report, index) => {
    message.add(reportSegment(report, index, observations + index + 1, status));
  });
  if (specimenAt >= 0) {
    message.addAll(group.slice(specimenAt));
  }
  return encodeMessage(message, header);
}
