/**
 * HL7 v2.5.1 encoding of chart exports. Pure: no I/O, no clock, no randomness; the message time and
 * control id come in through {@link MessageHeaderContext}.
 */
export { encodeNoteMessage, type NoteMessageInput } from './note-message';
export { encodePatientAdtMessage, type PatientAdtMessageInput } from './patient-adt-message';
export { encodeEncounterMessage, type EncounterMessageInput } from './encounter-message';
export { encodeAssessmentMessage, type AssessmentMessageInput } from './assessment-message';
export { encodePatientSummaryMessage, type PatientSummaryMessageInput } from './patient-summary-message';
export { encodeLabResultMessage, type LabResultMessageInput, type LabReportInput } from './lab-result-message';
export { type LabResultSummary } from './observations';
export { type MessageHeaderContext, UNICODE_UTF8_CHARACTER_SET, HL7_VERSION } from './header';
export { Hl7EncodingError } from './errors';
export { escapeText, escapeFormattedText, type EscapedText } from './escape';
export { Segment, Hl7Message, type Component, type Components, type FieldValue } from './segment';
export {
  xpnFromPersonName,
  xcnFromClinician,
  xadFromAddress,
  xtnFromPhone,
  xtnFromEmail,
  cxFromIdentifier,
  ceFromCodedValue,
  cweFromCodedValue,
  ceFromText,
  eiFromIdentifier,
  plFromLocation,
  hdFromNamespace,
  tsFromDateTime,
  dtFromDate,
  nmFromNumber,
  isNumericText,
  type TelecomUseCode,
} from './datatypes';
