import { mergeNewestFirst, type TimelineEntry } from '../chart/timeline';
import type { ChartRecord, Encounter, Patient } from '../chart/types';
import { assessmentMessageSegments } from './assessment-message';
import { batchClosing, batchMessageControlId, batchOpening } from './batch';
import { encounterAdtSegments } from './encounter-message';
import { ADT_A08, buildMessageHeader, encodeMessage, type MessageHeaderContext, MDM_T02, namespacesOf, ORU_R01 } from './header';
import type { IdentifierNamespaces } from './identifiers';
import { jsonStringBytes } from './json-string-bytes';
import { encodeLabResultMessage } from './lab-result-message';
import { noteMessageSegments } from './note-message';
import {
  assessmentObservationGroup,
  encounterSummaryGroup,
  encounterOrderGroups,
  labResultObservationGroup,
  type LabResultSummary,
  LOCAL_CODES,
  noRecordsObservationGroup,
  noteObservationGroup,
  ObservationGroup,
  orderObservationSegments,
} from './observations';
import { patientAdtSegments } from './patient-adt-message';
import { Hl7Message, type Segment } from './segment';
import { assertSamePatient, nextOfKinSegments, patientAdditionalDemographicSegment, patientIdentificationSegment, visitSegments } from './segments';

/*
 * The longitudinal patient summary, in one of two styles chosen per partner (`hl7Profile.summaryStyle`).
 *
 * `batch` (the default): an HL7 batch file (batch.ts: FHS BHS ... BTS FTS) of properly typed messages,
 * so that a receiver files each record the way it files that kind of message:
 *   1. ADT^A08^ADT_A01 with the patient's demographics (as the patient ADT export);
 *   then per record, newest first:
 *   - encounter: ADT^A08^ADT_A01 with PV1/PV2/DG1 (as the encounter export's `adt` style), then one
 *     ORU^R01 per order of the encounter (PID, the visit, ORC-1 SC + OBR, OBR-25 no results available);
 *   - note: MDM^T02^MDM_T02 (as the note export; PV1-19 when its encounter is among the records);
 *   - assessment: ORU^R01^ORU_R01 (as the assessment export);
 *   - lab result: ORU^R01^ORU_R01 (lab-result-message.ts).
 *   Each message has its own MSH-10 (batch.ts) and MSH-18. A note has the same document number in its
 *   MDM (TXA-12) whichever style is used, and the same as OBR-3 of the `oru` style.
 *
 * `oru`: one ORU^R01^ORU_R01 (for receivers that take a single results message):
 *   PID (full), PD1, NK1; no PV1 (the summary spans many visits); then per record, newest first, one
 *   ORDER_OBSERVATION group (observations.ts): the encounter (with its visit as OBX rows and its
 *   diagnoses as CE OBX rows) followed by one ORC-1 SC group per order; the note (TX, one repetition per
 *   line); the assessment; the lab result. OBR-1 numbers the groups. A patient with nothing to report
 *   gets the NO_RECORDS group (OBR-7 message time, OBR-25 F, an NTE saying so).
 *
 * Chart records and lab results both come newest first; they are merged into one newest-first sequence
 * by `ChartRecord.at` and `LabResultSummary.resultedAt` (stable: a lab result goes before a record only
 * when it is strictly newer).
 *
 * Size budget: the summary is built newest record first and stops before the record that would take
 * it past `maxBytes`, measured as the bytes the text takes inside a JSON string (the Lambda response
 * carries the body JSON-escaped: CR, `\` and `"` take two bytes there, text outside ASCII its UTF-8
 * bytes). When records are left out, the summary ends with a SUMMARY_CUT group (`oru`) or an ORU^R01
 * message with that group (`batch`): OBR-4 `SUMMARY_CUT^Summary cut at its size budget^L`, OBR-7 the
 * message time, OBR-25 F, and an NTE saying how many of how many records it holds. The caller is told
 * too ({@link PatientSummary}: the endpoint writes it in response headers).
 */

export { jsonStringBytes };

export type SummaryStyle = 'batch' | 'oru';

/** Default size budget: 5,000,000 bytes, safely below Lambda's 6 MB (6,291,456 bytes) response limit. */
export const DEFAULT_SUMMARY_MAX_BYTES = 5_000_000;

/** Room kept for MSH-18 and the cut notice, so they never take the summary past its budget. */
const CUT_NOTICE_RESERVE_BYTES = 4096;

export interface PatientSummaryMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  /** the patient's chart records, already ordered (newest first); their order is kept */
  records: ChartRecord[];
  /** the patient's lab results, newest first; merged with the records by time */
  labResults?: LabResultSummary[];
  /** default `batch` */
  style?: SummaryStyle;
  /** TXA-2 of the notes' MDM messages in the batch (default `PN`) */
  noteDocumentType?: string;
  /** the budget, default {@link DEFAULT_SUMMARY_MAX_BYTES} */
  maxBytes?: number;
}

export interface PatientSummary {
  /** the message (`oru`) or batch file (`batch`) */
  text: string;
  style: SummaryStyle;
  /** records (chart records and lab results) handed in, and how many of them the summary holds */
  recordsAvailable: number;
  recordsIncluded: number;
  /** true when records were left out to stay within the budget */
  cut: boolean;
  /** the size as measured for the budget (bytes inside a JSON string) */
  wireBytes: number;
}

/** The bytes the segments take inside a JSON string, as {@link jsonStringBytes} counts them (measured while they were built). */
function segmentsBytes(segments: readonly Segment[]): number {
  let bytes = 0;
  for (const segment of segments) {
    bytes += segment.jsonStringBytes();
  }
  return bytes;
}

type SummaryEntry = TimelineEntry<ChartRecord, LabResultSummary>;

/** The ORDER_OBSERVATION groups of one entry in the `oru` style. */
function entryGroups(entry: SummaryEntry, namespaces: IdentifierNamespaces): ObservationGroup[] {
  if (entry.kind === 'lab') {
    return [labResultObservationGroup(entry.lab, `labResults[${entry.index}]`)];
  }
  const { record } = entry;
  const inputPath = `records[${entry.index}].record`;
  switch (record.kind) {
    case 'encounter':
      return [encounterSummaryGroup(record.record, { namespaces, inputPath }), ...encounterOrderGroups(record.record, inputPath)];
    case 'note':
      return [noteObservationGroup(record.record, namespaces, inputPath)];
    case 'assessment':
      return [assessmentObservationGroup(record.record, inputPath)];
  }
}

function cutNoticeGroup(messageTime: Date, included: number, available: number, maxBytes: number): ObservationGroup {
  return new ObservationGroup({
    serviceIdentifier: LOCAL_CODES.summaryCut,
    observedAt: messageTime,
    resultStatus: 'F',
    comments: [
      `This summary holds the ${included} newest of ${available} records: it was cut at its size budget of ${maxBytes} bytes. ` +
        'The older records come on the next page: repeat the request with the cursor of the x-summary-next-cursor response header.',
    ],
    inputPath: 'records',
  });
}

function oruSummary(input: PatientSummaryMessageInput, entries: SummaryEntry[], maxBytes: number): PatientSummary {
  const { header, patient } = input;
  const namespaces = namespacesOf(header);
  const message = new Hl7Message(buildMessageHeader(header, ORU_R01)).add(patientIdentificationSegment(patient, 'full'));
  const primaryCare = patientAdditionalDemographicSegment(patient, namespaces);
  if (primaryCare) {
    message.add(primaryCare);
  }
  message.addAll(nextOfKinSegments(patient));
  let used = message.jsonStringBytes() - 2 + CUT_NOTICE_RESERVE_BYTES;
  let setId = 0;
  let included = 0;
  for (const entry of entries) {
    const segments: Segment[] = [];
    for (const group of entryGroups(entry, namespaces)) {
      setId += 1;
      group.appendSegments(segments, setId, namespaces);
    }
    const bytes = segmentsBytes(segments);
    if (used + bytes > maxBytes) {
      break;
    }
    used += bytes;
    included += 1;
    message.addAll(segments);
  }
  const cut = included < entries.length;
  if (cut) {
    const groupCount = message.segments.filter((segment) => segment.name === 'OBR').length;
    message.addAll(cutNoticeGroup(header.timestamp, included, entries.length, maxBytes).toSegments(groupCount + 1, namespaces));
  } else if (entries.length === 0) {
    message.addAll(orderObservationSegments([noRecordsObservationGroup(header.timestamp)], namespaces));
  }
  const text = encodeMessage(message, header);
  return { text, style: 'oru', recordsAvailable: entries.length, recordsIncluded: included, cut, wireBytes: message.jsonStringBytes() };
}

/** The messages of one entry in the `batch` style (MSH-10 from `controlIdAt`). */
function entryMessages(
  input: PatientSummaryMessageInput,
  entry: SummaryEntry,
  encounters: ReadonlyMap<string, Encounter>,
  controlIdAt: (offset: number) => string,
): string[] {
  const { header, patient } = input;
  const namespaces = namespacesOf(header);
  const headerAt = (offset: number): MessageHeaderContext => ({ ...header, controlId: controlIdAt(offset) });
  if (entry.kind === 'lab') {
    return [encodeLabResultMessage({ header: headerAt(0), patient, result: entry.lab, patientScope: 'core', inputPath: `labResults[${entry.index}]` })];
  }
  const { record } = entry;
  const inputPath = `records[${entry.index}].record`;
  switch (record.kind) {
    case 'encounter': {
      const encounter = record.record;
      const adtContext = headerAt(0);
      const adt = new Hl7Message(buildMessageHeader(adtContext, ADT_A08)).addAll(
        encounterAdtSegments(patient, encounter, header.timestamp, namespaces, inputPath),
      );
      const messages = [encodeMessage(adt, adtContext)];
      encounterOrderGroups(encounter, inputPath).forEach((group, index) => {
        const context = headerAt(index + 1);
        const oru = new Hl7Message(buildMessageHeader(context, ORU_R01)).add(
          patientIdentificationSegment(patient, 'core'),
          ...visitSegments(encounter, namespaces),
          ...group.toSegments(1, namespaces),
        );
        messages.push(encodeMessage(oru, context));
      });
      return messages;
    }
    case 'note': {
      const note = record.record;
      const context = headerAt(0);
      const encounter = note.encounterId === undefined ? undefined : encounters.get(note.encounterId);
      const messageHeader = buildMessageHeader(context, MDM_T02);
      const message = new Hl7Message(messageHeader).addAll(
        noteMessageSegments({ header: context, patient, note, encounter, documentType: input.noteDocumentType }, messageHeader),
      );
      return [encodeMessage(message, context)];
    }
    case 'assessment': {
      const assessment = record.record;
      const context = headerAt(0);
      const encounter = assessment.encounterId === undefined ? undefined : encounters.get(assessment.encounterId);
      const message = new Hl7Message(buildMessageHeader(context, ORU_R01)).addAll(
        assessmentMessageSegments({ header: context, patient, assessment, encounter }),
      );
      return [encodeMessage(message, context)];
    }
  }
}

function batchSummary(input: PatientSummaryMessageInput, entries: SummaryEntry[], maxBytes: number): PatientSummary {
  const { header, patient } = input;
  const namespaces = namespacesOf(header);
  const encounters = new Map<string, Encounter>();
  for (const record of input.records) {
    if (record.kind === 'encounter') {
      encounters.set(record.record.encounterId, record.record);
    }
  }
  let nextIndex = 0;
  const messages: string[] = [];
  const demographicsContext = { ...header, controlId: batchMessageControlId(header.controlId, nextIndex++) };
  messages.push(
    encodeMessage(
      new Hl7Message(buildMessageHeader(demographicsContext, ADT_A08)).addAll(patientAdtSegments(patient, demographicsContext)),
      demographicsContext,
    ),
  );
  const opening = batchOpening(header);
  let used = jsonStringBytes(opening + messages[0]! + batchClosing(99999)) + CUT_NOTICE_RESERVE_BYTES;
  let included = 0;
  for (const entry of entries) {
    const start = nextIndex;
    const entryTexts = entryMessages(input, entry, encounters, (offset) => batchMessageControlId(header.controlId, start + offset));
    const bytes = entryTexts.reduce((sum, text) => sum + jsonStringBytes(text) - 2, 0);
    if (used + bytes > maxBytes) {
      break;
    }
    used += bytes;
    included += 1;
    nextIndex += entryTexts.length;
    messages.push(...entryTexts);
  }
  const cut = included < entries.length;
  if (cut) {
    const context = { ...header, controlId: batchMessageControlId(header.controlId, nextIndex) };
    const notice = new Hl7Message(buildMessageHeader(context, ORU_R01)).add(
      patientIdentificationSegment(patient, 'core'),
      ...cutNoticeGroup(header.timestamp, included, entries.length, maxBytes).toSegments(1, namespaces),
    );
    messages.push(encodeMessage(notice, context));
  }
  const text = opening + messages.join('') + batchClosing(messages.length);
  return { text, style: 'batch', recordsAvailable: entries.length, recordsIncluded: included, cut, wireBytes: jsonStringBytes(text) };
}

/** The patient summary in the chosen style, within its size budget. */
export function encodePatientSummary(input: PatientSummaryMessageInput): PatientSummary {
  const { patient, records } = input;
  records.forEach((record, index) => {
    if (record.record.patientId !== patient.patientId) {
      assertSamePatient(patient, record.record.patientId, `records[${index}].record.patientId`); // throws, naming the record
    }
  });
  const entries = mergeNewestFirst(
    records,
    (record) => record.at,
    input.labResults ?? [],
    (lab) => lab.resultedAt,
  );
  const maxBytes = input.maxBytes ?? DEFAULT_SUMMARY_MAX_BYTES;
  return (input.style ?? 'batch') === 'oru' ? oruSummary(input, entries, maxBytes) : batchSummary(input, entries, maxBytes);
}

/** The summary as one ORU^R01 message (the `oru` style), within the default budget. */
export function encodePatientSummaryMessage(input: Omit<PatientSummaryMessageInput, 'style'>): string {
  return encodePatientSummary({ ...input, style: 'oru' }).text;
}
