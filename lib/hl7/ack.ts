/**
 * HL7 acknowledgements (original mode) for received messages, and the batch acknowledgement.
 * Pure: the time and the control id come in from the caller.
 *
 *   MSH  sender and receiver swapped from the received MSH-3..6; MSH-9 `ACK^<trigger>^ACK`; a new MSH-10;
 *        MSH-12 the received version when it is one we accept, else 2.5.1
 *   MSA  MSA-1 AA / AE / AR, MSA-2 the received MSH-10
 *   ERR  one per error: ERR-2 location (segment^sequence^field^repetition^component^subcomponent),
 *        ERR-3 the table 0357 code (`code^text^HL70357`), ERR-4 severity (table 0516: E, W, I),
 *        ERR-8 a user message that names the rule, never a submitted value
 */
import { tsFromDateTime } from './datatypes';
import { escapeText, type EscapedText } from './escape';
import { type ErrorCode, type ErrorLocation } from './parse-error';
import { type ParsedSegment, valueAt } from './parser';
import { Hl7Message, Segment } from './segment';

export type AckCode = 'AA' | 'AE' | 'AR';

export const SUPPORTED_VERSIONS = ['2.3', '2.3.1', '2.4', '2.5', '2.5.1'] as const;

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
  code: AckCode;
  errors?: readonly AckError[];
  /** MSH-10 of the ACK: 1-20 printable ASCII characters without delimiters */
  controlId: string;
  timestamp: Date;
  /** used for MSH-3/MSH-4 when the received MSH-5/MSH-6 are empty */
  ownApplication: string;
  ownFacility: string;
}

function text(value: string, max = 199): EscapedText {
  // cut, and never a dangling half of a surrogate pair
  return escapeText(Array.from(value).slice(0, max).join(''));
}

function hd(received: ParsedSegment | undefined, field: number): EscapedText[] {
  const components = received?.fields[field]?.[0] ?? [];
  return [0, 1, 2].map((index) => text(components[index]?.[0] ?? '', 180));
}

function errLocation(location: ErrorLocation): EscapedText[] {
  return [
    text(location.segmentId, 3),
    text(location.segmentSequence !== undefined ? String(location.segmentSequence) : ''),
    text(location.field !== undefined ? String(location.field) : ''),
    text(location.fieldRepetition !== undefined ? String(location.fieldRepetition) : ''),
    text(location.component !== undefined ? String(location.component) : ''),
    text(location.subcomponent !== undefined ? String(location.subcomponent) : ''),
  ];
}

/** The ACK segments (MSH, MSA, ERR...) as a message. */
export function buildAck(input: AckInput): Hl7Message {
  const received = input.received;
  const receivedVersion = valueAt(received, 12);
  const version = (SUPPORTED_VERSIONS as readonly string[]).includes(receivedVersion) ? receivedVersion : '2.5.1';
  const ownApplication = hd(received, 5);
  const ownFacility = hd(received, 6);
  const msh = new Segment('MSH')
    .set(3, ownApplication[0] ? ownApplication : [text(input.ownApplication)])
    .set(4, ownFacility[0] ? ownFacility : [text(input.ownFacility)])
    .set(5, hd(received, 3))
    .set(6, hd(received, 4))
    .set(7, tsFromDateTime(input.timestamp, 'ack.timestamp'))
    .set(9, [text('ACK'), text(valueAt(received, 9, 2), 3), text('ACK')])
    .set(10, text(input.controlId, 20))
    .set(11, text(valueAt(received, 11) || 'P', 1))
    .set(12, text(version));
  const message = new Hl7Message(msh);
  message.add(new Segment('MSA').set(1, text(input.code)).set(2, text(valueAt(received, 10))));
  for (const error of input.errors ?? []) {
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

export interface BatchAckInput {
  /** the received BHS (its BHS-11 becomes BHS-12, reference batch control id) */
  receivedBatchHeader?: ParsedSegment;
  receivedFileHeader?: ParsedSegment;
  controlId: string;
  timestamp: Date;
  ownApplication: string;
  ownFacility: string;
  /** the encoded ACK of each message, in order */
  acks: readonly string[];
}

function headerLike(name: 'FHS' | 'BHS', received: ParsedSegment | undefined, input: BatchAckInput, suffix: string): string {
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
    text(input.controlId + suffix, 20),
    text(valueAt(received, 11), 20),
  ];
  const body = fields.join('|').replace(/\|+$/, '');
  return `${name}|^~\\&|${body}\r`;
}

/** A batch of ACKs: [FHS] BHS {ACK} BTS [FTS], BTS-1 the number of ACKs. */
export function encodeBatchAck(input: BatchAckInput): string {
  let out = '';
  if (input.receivedFileHeader) out += headerLike('FHS', input.receivedFileHeader, input, 'F');
  out += headerLike('BHS', input.receivedBatchHeader, input, '');
  for (const ack of input.acks) out += ack;
  out += `BTS|${input.acks.length}\r`;
  if (input.receivedFileHeader) out += 'FTS|1\r';
  return out;
}
