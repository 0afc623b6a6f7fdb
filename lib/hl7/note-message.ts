import type { Encounter, Note, Patient } from '../chart/types';
import { ceFromCodedValue, eiFromIdentifier, tsFromDateTime, xcnFromClinician } from './datatypes';
import { Hl7EncodingError } from './errors';
import { escapeFormattedText, escapeText } from './escape';
import { buildMessageHeader, encodeMessage, MDM_T02, type MessageHeaderContext } from './header';
import { Hl7Message, Segment } from './segment';
import { assertSamePatient, eventTypeSegment, noteVisitSegment, patientIdentificationSegment, requireFirstComponent } from './segments';
import {
  CONTENT_PRESENTATION_TEXT,
  DOCUMENT_AVAILABLE,
  DOCUMENT_COMPLETION_AUTHENTICATED,
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
 *        location, PV1-7 attending (the encounter's attending, else the note's author)
 *   TXA  TXA-1 1, TXA-2 PN, TXA-3 TEXT, TXA-4 and TXA-6 the note's creation time, TXA-5 and TXA-9 the
 *        author, TXA-12 note id, TXA-17 AU, TXA-19 AV
 *   OBX  OBX-1 1, OBX-2 TX, OBX-3 NOTE^ChartNote, OBX-5 the note text, OBX-11 F
 *
 * The note text goes into ONE OBX as TX; each line break (CRLF, CR or LF) is written as the formatting
 * escape `\.br\`, so a multi-line note never splits the segment and a receiver shows the lines again.
 *
 * TXA-4/TXA-6 carry the note's `createdAt` (when the document was originated), not the message time.
 */

export interface NoteMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  /** the encounter the note belongs to, when it has one (must be `note.encounterId`) */
  encounter?: Encounter;
  note: Note;
}

/** OBX-3 of the note, as the spec writes it (no coding system). */
const NOTE_OBSERVATION_IDENTIFIER = { code: 'NOTE', display: 'ChartNote' };

export function encodeNoteMessage(input: NoteMessageInput): string {
  const { header, patient, encounter, note } = input;
  assertSamePatient(patient, note.patientId, 'note.patientId');
  if (encounter) {
    assertSamePatient(patient, encounter.patientId, 'encounter.patientId');
    if (note.encounterId !== undefined && note.encounterId !== encounter.encounterId) {
      throw new Hl7EncodingError('encounter.encounterId', 'is not the encounter of note.encounterId');
    }
  }
  const createdAt = tsFromDateTime(note.createdAt, 'note.createdAt');
  const author = xcnFromClinician(note.author);

  const transcriptionHeader = new Segment('TXA')
    .set(1, escapeText('1'))
    .set(2, escapeText(DOCUMENT_TYPE_PROGRESS_NOTE))
    .set(3, escapeText(CONTENT_PRESENTATION_TEXT))
    .set(4, createdAt)
    .set(5, author)
    .set(6, createdAt)
    .set(9, author)
    .set(12, requireFirstComponent(eiFromIdentifier(note.noteId), 'note.noteId'))
    .set(17, escapeText(DOCUMENT_COMPLETION_AUTHENTICATED))
    .set(19, escapeText(DOCUMENT_AVAILABLE));

  const noteText = new Segment('OBX')
    .set(1, escapeText('1'))
    .set(2, escapeText('TX'))
    .set(3, ceFromCodedValue(NOTE_OBSERVATION_IDENTIFIER))
    .set(5, escapeFormattedText(note.text))
    .set(11, escapeText('F'));

  const message = new Hl7Message(buildMessageHeader(header, MDM_T02)).add(
    eventTypeSegment('T02', header.timestamp),
    patientIdentificationSegment(patient, 'core'),
    noteVisitSegment(encounter, encounter?.attending ?? note.author),
    transcriptionHeader,
    noteText,
  );
  return encodeMessage(message, header);
}
