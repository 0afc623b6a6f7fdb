import type { Patient } from '../chart/types';
import { ceFromCodedValue, cxFromIdentifier } from './datatypes';
import { Hl7EncodingError } from './errors';
import { type EscapedText, escapeFormattedText, escapeText } from './escape';
import { buildMessageHeader, encodeMessage, type MessageHeaderContext, namespacesOf, ORU_R01 } from './header';
import { LAB_REPORT_CODE, labReportObservationValue, labResultObservationGroup, type LabResultSummary, orderObservationSegments } from './observations';
import { jsonStringBytes } from './json-string-bytes';
import { type FieldValue, Hl7Message, SEGMENT_TERMINATOR, Segment } from './segment';
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
 *   Here reports are always carried inline (no RP reference). The patient summary carries them too
 *   (issue 27 K6, labResultObservationGroup): whole up to 16 KiB, a larger one as an RP whose pointer is
 *   this export (`/exportHl7LabResult?resultId=…`), which a summary receiver fetches with its export key.
 *
 * Size budget ({@link encodeLabResultExport}, GET /exportHl7LabResult): like the patient summary, the
 * message never exceeds `maxBytes` (default {@link DEFAULT_LAB_RESULT_MAX_BYTES}) measured as the text
 * takes inside the Lambda response (JSON-escaped UTF-8). Reports are added in order until the next one
 * would pass the budget; the rest are left out and an NTE right after the OBR (before its first OBX)
 * says how many of how many reports the message holds. The tests themselves are never left out: a
 * result whose tests alone pass the budget is refused (LabResultTooLargeToExportError).
 */

/** Default size budget of the single-result export: the summary's 5,000,000 bytes, below Lambda's 6 MB response limit. */
export const DEFAULT_LAB_RESULT_MAX_BYTES = 5_000_000;

/** Room kept for the NTE saying reports were left out, so it never takes the message past its budget. */
const CUT_NOTICE_RESERVE_BYTES = 1024;

/** The result's tests alone pass the export's size budget (no report left to leave out). */
export class LabResultTooLargeToExportError extends Error {
  override readonly name = 'LabResultTooLargeToExportError';
  constructor(readonly maxBytes: number) {
    super(`the lab result exceeds the export's size budget of ${maxBytes} bytes without its reports`);
  }
}

export interface LabResultExportMessage {
  text: string;
  reportsAvailable: number;
  reportsIncluded: number;
  /** true when reports were left out to stay within the budget */
  cut: boolean;
  /** the size as measured for the budget (bytes inside a JSON string) */
  wireBytes: number;
}

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

const OBSERVATION_STATUS: Record<LabResultSummary['status'], string> = { preliminary: 'P', final: 'F', corrected: 'C', amended: 'C', cancelled: 'X' };
const NAME_TYPE_UNSPECIFIED = 'U';
const IDENTIFIER_TYPE_PATIENT_INTERNAL = 'PI';

function unmatchedPatientSegment(labPatient: NonNullable<LabResultMessageInput['labPatient']>): Segment {
  const unknownName: EscapedText[] = ['', '', '', '', '', '', NAME_TYPE_UNSPECIFIED].map((c) => escapeText(c));
  return new Segment('PID')
    .set(1, escapeText('1'))
    .set(3, requireFirstComponent(cxFromIdentifier(labPatient.patientId, labPatient.senderId, IDENTIFIER_TYPE_PATIENT_INTERNAL), 'labPatient.patientId'))
    .set(5, unknownName);
}

function reportSegment(report: LabReportInput, index: number, setId: number, status: string): Segment {
  const { valueType, value } = labReportObservationValue(report, '', `reports[${index}]`);
  return new Segment('OBX')
    .set(1, escapeText(String(setId)))
    .set(2, escapeText(valueType))
    .set(3, ceFromCodedValue({ code: LAB_REPORT_CODE, display: report.name, system: 'L' }))
    .set(4, escapeText(String(index + 1)))
    .set(5, value as FieldValue)
    .set(11, escapeText(status));
}

export function encodeLabResultMessage(input: LabResultMessageInput): string {
  return buildLabResultMessage(input, Number.POSITIVE_INFINITY).text;
}

/** The single-result export: {@link encodeLabResultMessage} within a size budget (see the header comment). */
export function encodeLabResultExport(input: LabResultMessageInput & { maxBytes?: number }): LabResultExportMessage {
  return buildLabResultMessage(input, input.maxBytes ?? DEFAULT_LAB_RESULT_MAX_BYTES);
}

function segmentBytes(segment: Segment): number {
  return jsonStringBytes(segment.toString() + SEGMENT_TERMINATOR) - 2;
}

function buildLabResultMessage(input: LabResultMessageInput, maxBytes: number): LabResultExportMessage {
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
  const specimenSegments = specimenAt < 0 ? [] : group.slice(specimenAt);
  const observations = observationSegments.filter((segment) => segment.name === 'OBX').length;
  const reports = input.reports ?? [];
  const reportSegments: Segment[] = [];
  if (Number.isFinite(maxBytes)) {
    let used = [...message.segments, ...observationSegments, ...specimenSegments].reduce((sum, segment) => sum + segmentBytes(segment), 0);
    used += CUT_NOTICE_RESERVE_BYTES + 2;
    if (used > maxBytes) throw new LabResultTooLargeToExportError(maxBytes);
    for (const [index, report] of reports.entries()) {
      const segment = reportSegment(report, index, observations + index + 1, status);
      const bytes = segmentBytes(segment);
      if (used + bytes > maxBytes) break;
      used += bytes;
      reportSegments.push(segment);
    }
  } else {
    reports.forEach((report, index) => reportSegments.push(reportSegment(report, index, observations + index + 1, status)));
  }
  const cut = reportSegments.length < reports.length;
  if (cut) {
    // an order-level NTE (after the OBR and its own NTEs, before the first OBX), numbered after them
    const firstObx = observationSegments.findIndex((segment) => segment.name === 'OBX');
    const at = firstObx < 0 ? observationSegments.length : firstObx;
    const orderNotes = observationSegments.slice(0, at).filter((segment) => segment.name === 'NTE').length;
    const notice = new Segment('NTE')
      .set(1, escapeText(String(orderNotes + 1)))
      .set(2, escapeText('L'))
      .set(
        3,
        escapeFormattedText(
          `This message holds ${reportSegments.length} of the result's ${reports.length} reports: it was cut at its size budget of ${maxBytes} bytes. ` +
            'The tests are complete; the reports left out are stored with the result.',
        ),
      );
    message.addAll([...observationSegments.slice(0, at), notice, ...observationSegments.slice(at)]);
  } else {
    message.addAll(observationSegments);
  }
  message.addAll(reportSegments);
  message.addAll(specimenSegments);
  const text = encodeMessage(message, header);
  return { text, reportsAvailable: reports.length, reportsIncluded: reportSegments.length, cut, wireBytes: jsonStringBytes(text) };
}
