import type { Clinician, Encounter, Note, Patient } from '../chart/types';
import { ceFromCodedValue, eiTextFromIdentifier, xcnTextFromClinician } from './datatypes';
import { Hl7EncodingError } from './errors';
import { escapeText, type EscapedText } from './escape';
import { buildMessageHeader, encodeMessage, MDM_T02, type MessageHeaderContext, namespacesOf } from './header';
import { documentNumberLength, LOCAL_CODES } from './observations';
import { Hl7Message, Segment, type TextComponents, type WrittenComponents } from './segment';
import { assertSamePatient, eventTypeSegment, noteVisitSegment, patientIdentificationSegment, requireFirstText, tsFromChartTime } from './segments';
import {
  CONTENT_PRESENTATION_TEXT,
  DOCUMENT_AVAILABLE,
  DOCUMENT_COMPLETION_AUTHENTICATED,
  DOCUMENT_COMPLETION_DOCUMENTED,
  DOCUMENT_COMPLETION_LEGALLY_AUTHENTICATED,
  DOCUMENT_TYPE_PROGRESS_NOTE,
} from './tables';

/*
 * MDM^T02^MDM_T02 (original document notification and content), exactly as hl7-notes.md maps the service
 * spec's note shape onto standard positions:
 *
 *   MSH  MSH-9 MDM^T02^MDM_T02
 *   EVN  EVN-1 T02, EVN-2 message time
 *   PID  PID-1 1, PID-3 MRN^^^AUTHORITY^MR, PID-5 FAMILY^GIVEN, PID-7 yyyyMMdd, PID-8 sex
 *   PV1  PV1-1 1, PV1-2 class (the encounter's, else N "not applicable": PV1-2 is required), PV1-3
 *        location, PV1-7 attending (the encounter's attending, else the note's author), PV1-19 the
 *        visit number when the note belongs to an encounter (as in the encounter's export)
 *   TXA  TXA-1 1, TXA-2 PN (or the partner profile's document type), TXA-3 TEXT, TXA-4 and TXA-6 the
 *        note's creation time, TXA-5 and TXA-9 the author, TXA-12 the document number (note id short
 *        form ^ entity namespace, at most 30 characters), TXA-17 AU, TXA-19 AV, TXA-22 the author and
 *        the creation time (PPN: who authenticated, when; required with AU)
 *        A partner's document (note.provenance, docs/write-authority.md): TXA-12 the sender's document
 *        number ^ its MSH-4; XCN-9 of the author the sender's MSH-4; TXA-17 as the sender gave it (DO
 *        when it gave none, never upgraded); TXA-22 only with AU/LA, as the sender gave it; OBX-23 the
 *        sender (performing organization)
 *   OBX  OBX-1 1, OBX-2 TX, OBX-3 NOTE^ChartNote^L, OBX-5 the note text, OBX-11 F
 *
 * The note text goes into ONE OBX as TX, one repetition of OBX-5 per line (v2.5.1 chapter 2: in TX the
 * repetition separator is the line break; formatting commands such as `\.br\` belong to FT). Empty
 * lines are kept as empty repetitions, so a receiver shows the lines as written.
 *
 * TXA-4/TXA-6 (and PPN-15 of TXA-22) carry the note's `createdAt` (when the document was originated), not
 * the message time, as the chart stores it: its offset and precision kept (`tsFromChartTime`, segments.ts).
 */

export interface NoteMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  /** the encounter the note belongs to, when it has one (must be `note.encounterId`) */
  encounter?: Encounter;
  note: Note;
  /** TXA-2 (table 0270); default `PN`, as the service description fixes it */
  documentType?: string;
}

/** PPN-15 (date/time action performed) is the 15th component; XCN fills the first 14. */
const PPN_TIME_COMPONENT = 15;

/**
 * TXA-22 (PPN) as RAW components: the authenticating clinician's XCN (`xcn`), and when they authenticated
 * (`at`, a TS value: digits and `+`/`-`, which escaping leaves as they are).
 */
function authenticationPerson(xcn: TextComponents, at: EscapedText): TextComponents {
  const components: (string | undefined)[] = xcn.slice();
  while (components.length < PPN_TIME_COMPONENT - 1) {
    components.push('');
  }
  components.push(at);
  return components;
}

/** Whether two clinicians give the same XCN (id and name; the namespace aside). */
function sameClinician(a: Clinician, b: Clinician): boolean {
  if (a === b) return true;
  const x = a.name;
  const y = b.name;
  return a.id === b.id && x.family === y.family && x.given === y.given && x.middle === y.middle && x.suffix === y.suffix && x.prefix === y.prefix;
}

// values every note message writes, escaped and checked once
const SET_ID_1 = Segment.checkedField(escapeText('1'));
const CONTENT_PRESENTATION = Segment.checkedField(escapeText(CONTENT_PRESENTATION_TEXT));
const AVAILABLE = Segment.checkedField(escapeText(DOCUMENT_AVAILABLE));
const VALUE_TYPE_TX = Segment.checkedField(escapeText('TX'));
const NOTE_CODE = Segment.checkedField(ceFromCodedValue(LOCAL_CODES.note));
const FINAL = Segment.checkedField(escapeText('F'));

export function encodeNoteMessage(input: NoteMessageInput): string {
  const messageHeader = buildMessageHeader(input.header, MDM_T02);
  const message = new Hl7Message(messageHeader).addAll(noteMessageSegments(input, messageHeader));
  return encodeMessage(message, input.header);
}

/** The segments after MSH: EVN PID PV1 TXA OBX; `messageHeader` the MSH built from `input.header`, when there is one (EVN-2 copies its MSH-7). */
export function noteMessageSegments(input: NoteMessageInput, messageHeader?: Segment): Segment[] {
  const { header, patient, encounter, note } = input;
  assertSamePatient(patient, note.patientId, 'note.patientId');
  if (encounter) {
    assertSamePatient(patient, encounter.patientId, 'encounter.patientId');
    if (note.encounterId !== undefined && note.encounterId !== encounter.encounterId) {
      throw new Hl7EncodingError('encounter.encounterId', 'is not the encounter of note.encounterId');
    }
  }
  const namespaces = namespacesOf(header);
  const createdAt = tsFromChartTime(note.createdAt, 'note.createdAt');
  // a partner's document: the ids are the sender's (its MSH-4 as the namespace), not the chart's, so the
  // author is never exported as one of the chart's clinicians and TXA-12 is the sender's own number
  const source = note.provenance;
  const author = xcnTextFromClinician(note.author, source ? source.sender : namespaces.clinician);
  const completion = note.completionStatus ?? (source ? DOCUMENT_COMPLETION_DOCUMENTED : DOCUMENT_COMPLETION_AUTHENTICATED);
  const authenticated = completion === DOCUMENT_COMPLETION_AUTHENTICATED || completion === DOCUMENT_COMPLETION_LEGALLY_AUTHENTICATED;
  const documentNumber =
    source && note.documentNumber
      ? eiTextFromIdentifier(note.documentNumber, source.sender, documentNumberLength({ ...namespaces, entity: source.sender }))
      : eiTextFromIdentifier(note.noteId, namespaces.entity, documentNumberLength(namespaces));
  // a partner's document: its authenticator as the sender gave it; ours: the author (TXA-5) and the creation time
  const partnerAuthentication =
    authenticated && source && note.authenticatedBy
      ? authenticationPerson(
          xcnTextFromClinician(note.authenticatedBy, source.sender),
          note.authenticatedAt ? tsFromChartTime(note.authenticatedAt, 'note.authenticatedAt') : escapeText(''),
        )
      : undefined;

  const authorWritten: WrittenComponents = { text: '', components: 0 };
  const transcriptionHeader = new Segment('TXA')
    .setChecked(1, SET_ID_1)
    .setText(2, input.documentType || DOCUMENT_TYPE_PROGRESS_NOTE)
    .setChecked(3, CONTENT_PRESENTATION)
    .set(4, createdAt)
    .setTextComponents(5, author, authorWritten)
    .copyField(6, 4) // the creation time again
    .copyField(9, 5) // the originator is the author too
    .setTextComponents(12, requireFirstText(documentNumber, 'note.noteId'))
    .setText(17, completion)
    .setChecked(19, AVAILABLE);
  if (partnerAuthentication) transcriptionHeader.setTextComponents(22, partnerAuthentication);
  else if (authenticated && !source) transcriptionHeader.setExtendedCopy(22, 5, PPN_TIME_COMPONENT, createdAt, authorWritten); // TXA-5's XCN, PPN-15 the time

  const noteText = new Segment('OBX')
    .setChecked(1, SET_ID_1)
    .setChecked(2, VALUE_TYPE_TX)
    .setChecked(3, NOTE_CODE)
    .setTextLines(5, note.text)
    .setChecked(11, FINAL);
  // OBX-23 performing organization (XON-1 name): who the document came from, for a partner's document
  if (source) noteText.setText(23, source.sender); // XON-1 alone

  // PV1-7: the encounter's attending, else the author; when that is the author as TXA-5 wrote it (same
  // clinician, same namespace), TXA-5 is copied
  const attending = encounter?.attending ?? note.author;
  const attendingIsAuthor = !source && sameClinician(attending, note.author);
  return [
    eventTypeSegment('T02', header.timestamp, messageHeader),
    patientIdentificationSegment(patient, 'core'),
    noteVisitSegment(encounter, attending, namespaces, attendingIsAuthor ? { segment: transcriptionHeader, fieldNumber: 5 } : undefined),
    transcriptionHeader,
    noteText,
  ];
}
