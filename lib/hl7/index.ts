/**
 * HL7 v2.5.1 encoding of chart exports. Pure: no I/O, no clock, no randomness; the message time and
 * control id come in through {@link MessageHeaderContext}.
 */
export { encodeNoteMessage, type NoteMessageInput } from './note-message';
export { encodePatientAdtMessage, type PatientAdtMessageInput } from './patient-adt-message';
export { encodeEncounterMessage, type EncounterMessageInput, type EncounterStyle } from './encounter-message';
export { encodeBatch, batchMessageControlId } from './batch';
export { shortIdentifier, IDENTIFIER_LENGTH, type IdentifierNamespaces } from './identifiers';
export {
  ObservationGroup,
  labResultObservationGroup,
  labTestIdentifier,
  numericObservationValue,
  textObservationValue,
  orderObservationSegments,
  pendingOrderGroup,
  noteSegments,
  type LabTestSummary,
} from './observations';
export { encodeAssessmentMessage, type AssessmentMessageInput } from './assessment-message';
export {
  encodePatientSummary,
  encodePatientSummaryMessage,
  jsonStringBytes,
  DEFAULT_SUMMARY_MAX_BYTES,
  type PatientSummary,
  type PatientSummaryMessageInput,
  type SummaryStyle,
} from './patient-summary-message';
export {
  DEFAULT_LAB_RESULT_MAX_BYTES,
  encodeLabResultExport,
  encodeLabResultMessage,
  LabResultTooLargeToExportError,
  type LabResultExportMessage,
  type LabResultMessageInput,
  type LabReportInput,
} from './lab-result-message';
export { type LabResultSummary } from './observations';
export { type MessageHeaderContext, UNICODE_UTF8_CHARACTER_SET, HL7_VERSION, namespacesOf } from './header';
export { Hl7EncodingError } from './errors';
export { escapeText, escapeFormattedText, escapeTextLines, type EscapedText } from './escape';
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
  codingSystemName,
  UTC_OFFSET,
  isNumericText,
  type TelecomUseCode,
} from './datatypes';
