/**
 * HL7 acknowledgements for received messages (original and enhanced mode), and the batch acknowledgement.
 * Pure: the time and the control ids come in from the caller. The layout follows the sender's version
 * (MSH-12), so a v2.3 engine reads its ACK with its own definitions (docs/hl7-intake.md "Acknowledgements"):
 *
 *   MSH  sender and receiver swapped from the received MSH-3..6; a new MSH-10; MSH-12 the sender's version
 *        (any well-formed 2.x; 2.5.1 when MSH-12 is not one); MSH-9 `ACK^<trigger>` before 2.3.1,
 *        `ACK^<trigger>^ACK` from 2.3.1 on (MSH-9.3 message structure exists from 2.3.1)
 *   MSA  MSA-1 AA / AE / AR (application ACK) or CA / CE / CR (accept ACK, enhanced mode), MSA-2 the
 *        received MSH-10; before 2.5 MSA-3 the first error's text (80 characters) and MSA-6 its table
 *        0357 code (both deprecated from 2.5 on: empty there)
 *   ERR  before 2.5: one ERR, ERR-1 (ELD) repeated per error, `segment^sequence^field^code&text&HL70357`
 *        (the ACK structure of 2.3/2.4 holds one optional ERR; ERR-2.. do not exist);
 *        from 2.5 on: one ERR per error, ERR-2 location (segment^sequence^field^repetition^component^
 *        subcomponent), ERR-3 the table 0357 code (`code^text^HL70357`), ERR-4 severity (table 0516:
 *        E, W, I), ERR-8 a user message
 *   Every text names the rule, never a submitted value.
 */
import { tsFromDateTime } from './datatypes';
import { escapeText, type EscapedText } from './escape';
import { ErrorCodes, type ErrorCode, type ErrorLocation } from './parse-error';
import { type ParsedSegment, valueAt } from './parser';
import { Hl7Message, Segment } from './segment';

/** Application acknowledgement codes (original mode, and the application ACK of enhanced mode). */
export type AckCode = 'AA' | 'AE' | 'AR';
/** Accept acknowledgement codes (enhanced mode, table 0008). */
export type AcceptAckCode = 'CA' | 'CE' | 'CR';

export const SUPPORTED_VERSIONS = ['2.3', '2.3.1', '2.4', '2.5', '2.5.1'] as const;

/** The version an ACK is written in when the sender's MSH-12 is not a well-formed 2.x version. */
export const DEFAULT_ACK_VERSION = '2.5.1';

const ERROR_TEXT: Record<ErrorCode, string> = {
  '100': 'Segment sequence error',
  '101': 'Required field missing',
  '102': 'Data type error',
  '103': 'Table value not found',
  '104': 'Value too long',
  '200': 'Unsupported message type',
  '201': 'Unsupported event code',
  '202': 'Unsupported processing id',
  '203': 'Unsupported version id',
  '204': 'Unknown key identifier',
  '205': 'Duplicate key identifier',
  '206': 'Application record locked',
  '207': 'Application internal error',
};

export interface AckError {
  code: ErrorCode;
  severity?: 'E' | 'W' | 'I';
  location?: ErrorLocation;
  /** names the rule; must not contain a submitted value */
  message: string;
}

export interface AckInput {
  /** the received MSH (possibly from a message that failed to parse); undefined when there was none */
  received?: ParsedSegment;
  code: AckCode | AcceptAckCode;
  errors?: readonly AckError[];
  /** MSH-10 of the ACK: 1-20 printable ASCII characters without delimiters */
  controlId: string;
  timestamp: Date;
  /** used for MSH-3/MSH-4 when the received MSH-5/MSH-6 are empty */
  ownApplication: string;
  ownFacility: string;
}

/** How an ACK to this sender is laid out: its version and which fields that version has. */
export interface AckLayout {
  /** MSH-12 of the ACK */
  version: string;
  /** MSH-9.3 (message structure) exists: 2.3.1 and later */
  messageStructure: boolean;
  /** ERR-2..ERR-8 exist and MSA-3/MSA-6 are deprecated: 2.5 and later; before, ERR-1 and MSA-3/MSA-6 */
  errorLocationSegment: boolean;
}

const VERSION = /^2\.(\d)(?:\.(\d))?$/;

/** The ACK layout for the sender's MSH-12 (any well-formed 2.x version is answered in that version). */
export function ackLayout(received: ParsedSegment | undefined): AckLayout {
  const match = VERSION.exec(valueAt(received, 12).trim());
  if (!match) return { version: DEFAULT_ACK_VERSION, messageStructure: true, errorLocationSegment: true };
  const minor = Number(match[1]);
  const patch = Number(match[2] ?? 0);
  return { version: match[0], messageStructure: minor > 3 || (minor === 3 && patch >= 1), errorLocationSegment: minor >= 5 };
}

function text(value: string, max = 199): EscapedText {
  // cut, and never a dangling half of a surrogate pair
  return escapeText(Array.from(value).slice(0, max).join(''));
}

function hd(received: ParsedSegment | undefined, field: number): EscapedText[] {
  const components = received?.fields[field]?.[0] ?? [];
  return [0, 1, 2].map((index) => text(components[index]?.[0] ?? '', 180));
}

const numberText = (value: number | undefined) => text(value !== undefined ? String(value) : '');

function errLocation(location: ErrorLocation): EscapedText[] {
  return [
    text(location.segmentId, 3),
    numberText(location.segmentSequence),
    numberText(location.field),
    numberText(location.fieldRepetition),
    numberText(location.component),
    numberText(location.subcomponent),
  ];
}

/** ERR-1 (ELD, v2.3/2.4): segment ID ^ sequence ^ field position ^ code identifying error (CE: code&text&table). */
function errorLocationAndDescription(error: AckError): Array<EscapedText | EscapedText[]> {
  const location = error.location;
  return [
    text(location?.segmentId ?? '', 3),
    numberText(location?.segmentSequence),
    numberText(location?.field),
    [text(error.code), text(ERROR_TEXT[error.code]), text('HL70357')],
  ];
}

/** The ACK segments (MSH, MSA, ERR...) as a message, laid out for the sender's version. */
export function buildAck(input: AckInput): Hl7Message {
  const received = input.received;
  const layout = ackLayout(received);
  const ownApplication = hd(received, 5);
  const ownFacility = hd(received, 6);
  const trigger = text(valueAt(received, 9, 2), 3);
  const messageType = layout.messageStructure ? [text('ACK'), trigger, text('ACK')] : trigger ? [text('ACK'), trigger] : [text('ACK')];
  const msh = new Segment('MSH')
    .set(3, ownApplication[0] ? ownApplication : [text(input.ownApplication)])
    .set(4, ownFacility[0] ? ownFacility : [text(input.ownFacility)])
    .set(5, hd(received, 3))
    .set(6, hd(received, 4))
    .set(7, tsFromDateTime(input.timestamp, 'ack.timestamp'))
    .set(9, messageType)
    .set(10, text(input.controlId, 20))
    .set(11, text(valueAt(received, 11) || 'P', 1))
    .set(12, text(layout.version));
  const message = new Hl7Message(msh);
  const errors = input.errors ?? [];
  const msa = new Segment('MSA').set(1, text(input.code)).set(2, text(valueAt(received, 10)));
  // MSA-3 / MSA-6 name an error condition: a warning alone (an AA that left a field out) sets neither
  const first = errors.find((error) => (error.severity ?? 'E') !== 'W');
  if (!layout.errorLocationSegment && first) {
    // MSA-3 text message (ST, 80) and MSA-6 error condition (CE, table 0357): what a v2.3/2.4 engine shows
    msa.set(3, text(first.message, 80));
    msa.set(6, [text(first.code), text(ERROR_TEXT[first.code]), text('HL70357')]);
  }
  message.add(msa);
  if (!layout.errorLocationSegment) {
    if (errors.length > 0) message.add(new Segment('ERR').setRepetitions(1, errors.map(errorLocationAndDescription)));
    return message;
  }
  for (const error of errors) {
    const err = new Segment('ERR');
    if (error.location) err.set(2, errLocation(error.location));
    err.set(3, [text(error.code), text(ERROR_TEXT[error.code]), text('HL70357')]);
    err.set(4, text(error.severity ?? 'E'));
    err.set(8, text(error.message, 250));
    message.add(err);
  }
  return message;
}

/** The ACK as text (segments ended by CR). Declares UNICODE UTF-8 in MSH-18 when it holds non-ASCII text. */
export function encodeAck(input: AckInput): string {
  const message = buildAck(input);
  if (message.hasNonAsciiText()) message.header.set(18, text('UNICODE UTF-8'));
  return message.toString();
}

/** Table 0155 (accept / application acknowledgment conditions): always, never, error/reject only, success only. */
export type AckCondition = 'AL' | 'NE' | 'ER' | 'SU';
const CONDITIONS: readonly string[] = ['AL', 'NE', 'ER', 'SU'];

export interface AckMode {
  /** enhanced mode: MSH-15 or MSH-16 valued; original mode: both empty */
  enhanced: boolean;
  /** MSH-15 (empty or not a table 0155 value in enhanced mode: AL) */
  accept: AckCondition;
  /** MSH-16 (empty or not a table 0155 value in enhanced mode: AL) */
  application: AckCondition;
}

/** The acknowledgement mode the sender asked for in MSH-15 / MSH-16. */
export function ackMode(received: ParsedSegment | undefined): AckMode {
  const accept = valueAt(received, 15).trim().toUpperCase();
  const application = valueAt(received, 16).trim().toUpperCase();
  if (accept === '' && application === '') return { enhanced: false, accept: 'NE', application: 'AL' };
  const condition = (value: string): AckCondition => (CONDITIONS.includes(value) ? (value as AckCondition) : 'AL');
  return { enhanced: true, accept: condition(accept), application: condition(application) };
}

/**
 * The accept ACK code for an application outcome. This receiver commits a message by processing it
 * (synchronously, nothing kept on an error), so: AA -> CA; AR for MSH-9/10/11/12/4 -> CR (commit reject);
 * AE, and an AR for a transient condition (206 record locked, 207 internal error) -> CE (commit error).
 */
export function acceptAckCode(code: AckCode, errors: readonly AckError[] = []): AcceptAckCode {
  if (code === 'AA') return 'CA';
  const transient = errors.some((error) => error.code === ErrorCodes.applicationRecordLocked || error.code === ErrorCodes.applicationInternalError);
  return code === 'AR' && !transient ? 'CR' : 'CE';
}

function conditionHolds(condition: AckCondition, success: boolean): boolean {
  return condition === 'AL' || (condition === 'ER' && !success) || (condition === 'SU' && success);
}

export interface Acknowledgement {
  /** MSA-1 of the message sent */
  code: AckCode | AcceptAckCode;
  kind: 'original' | 'application' | 'accept';
  text: string;
}

/**
 * The one acknowledgement the synchronous answer carries for an application outcome `input.code`:
 * original mode (MSH-15 and MSH-16 empty): the application ACK. Enhanced mode: the application ACK
 * (AA/AE/AR) when MSH-16 asks for it for this outcome (it can only be written after the commit, so it
 * answers for the accept too); else the accept ACK (CA/CE/CR, with the ERR of the outcome), also when
 * MSH-15 says NE: an HTTP request is always answered, and the accept ACK is the smallest answer.
 */
export function acknowledge(input: AckInput & { code: AckCode }): Acknowledgement {
  const mode = ackMode(input.received);
  const success = input.code === 'AA';
  if (!mode.enhanced) return { code: input.code, kind: 'original', text: encodeAck(input) };
  if (conditionHolds(mode.application, success)) return { code: input.code, kind: 'application', text: encodeAck(input) };
  const code = acceptAckCode(input.code, input.errors);
  return { code, kind: 'accept', text: encodeAck({ ...input, code }) };
}

export interface BatchAckInput {
  /** the received BHS (its BHS-11 becomes BHS-12, reference batch control id) */
  receivedBatchHeader?: ParsedSegment;
  /** the received FHS (its FHS-11 becomes FHS-12, reference file control id) */
  receivedFileHeader?: ParsedSegment;
  /** BHS-11 of the batch ACK */
  controlId: string;
  /** FHS-11 of the batch ACK (written when the request had an FHS); must differ from `controlId` */
  fileControlId: string;
  timestamp: Date;
  ownApplication: string;
  ownFacility: string;
  /** the encoded ACK of each message, in order */
  acks: readonly string[];
  /** BTS-1 of the received batch (as sent), when there was one */
  receivedMessageCount?: string;
}

function headerLike(name: 'FHS' | 'BHS', received: ParsedSegment | undefined, input: BatchAckInput, controlId: string): string {
  // FHS/BHS fields 3..12 in the MSH layout: own app/facility, their app/facility, time, -, name, comment, control id, reference
  const fields: string[] = [
    text(valueAt(received, 5) || input.ownApplication),
    text(valueAt(received, 6) || input.ownFacility),
    text(valueAt(received, 3)),
    text(valueAt(received, 4)),
    tsFromDateTime(input.timestamp, 'ack.timestamp'),
    '',
    '',
    '',
    text(controlId, 20),
    text(valueAt(received, 11), 20),
  ];
  const body = fields.join('|').replace(/\|+$/, '');
  return `${name}|^~\\&|${body}\r`;
}

/**
 * When the received BTS-1 (batch message count) does not match the messages the batch held, the note
 * the batch ACK's BTS-2 (batch comment) carries; undefined when it matches or there was no BTS-1.
 */
export function batchCountNote(receivedMessageCount: string | undefined, held: number): string | undefined {
  const declared = receivedMessageCount?.trim() ?? '';
  if (declared === '') return undefined;
  if (/^\d{1,6}$/.test(declared) && Number(declared) === held) return undefined;
  const said = /^\d{1,6}$/.test(declared) ? `BTS-1 says ${Number(declared)} messages` : 'BTS-1 is not a message count';
  return `${said}, the batch held ${held}: each message held is acknowledged above; resend any message missing`;
}

/**
 * A batch of ACKs: [FHS] BHS {ACK} BTS [FTS]. BTS-1 the number of ACKs; BTS-2 a note when the received
 * BTS-1 does not match the messages held ({@link batchCountNote}). FHS-11 and BHS-11 are distinct ids.
 */
export function encodeBatchAck(input: BatchAckInput): string {
  let out = '';
  if (input.receivedFileHeader) out += headerLike('FHS', input.receivedFileHeader, input, input.fileControlId);
  out += headerLike('BHS', input.receivedBatchHeader, input, input.controlId);
  for (const ack of input.acks) out += ack;
  const note = batchCountNote(input.receivedMessageCount, input.acks.length);
  out += note ? `BTS|${input.acks.length}|${text(note)}\r` : `BTS|${input.acks.length}\r`;
  if (input.receivedFileHeader) out += 'FTS|1\r';
  return out;
}
