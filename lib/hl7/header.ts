import { tsFromDateTime } from './datatypes';
import { Hl7EncodingError } from './errors';
import { escapeText } from './escape';
import type { IdentifierNamespaces } from './identifiers';
import { type CheckedField, type Hl7Message, Segment } from './segment';

/** MSH-18 value declared when the message holds text outside ASCII (HL7 table 0211). */
export const UNICODE_UTF8_CHARACTER_SET = 'UNICODE UTF-8';

/** HL7 version written in MSH-12. */
export const HL7_VERSION = '2.5.1';

/** MSH-11 processing id (table 0103): production. */
export const PROCESSING_ID_PRODUCTION = 'P';

/**
 * What the caller supplies for the message header. lib/hl7 has no clock and no randomness: the time and
 * the control id come from here.
 */
export interface MessageHeaderContext {
  /** MSH-3 (HD namespace id) */
  sendingApplication: string;
  /** MSH-4 (HD namespace id) */
  sendingFacility: string;
  /** MSH-5 (HD namespace id) */
  receivingApplication: string;
  /** MSH-6 (HD namespace id) */
  receivingFacility: string;
  /** MSH-7 and the event time (EVN-2): when the message is created; written in UTC */
  timestamp: Date;
  /**
   * MSH-10: unique per message (never reused across requests), 1 to 20 printable ASCII characters
   * without the HL7 delimiters `| ^ ~ \ &`. The caller generates it.
   */
  controlId: string;
  /**
   * MSH-18 policy. `'auto'` (the default): `UNICODE UTF-8` is declared when, and only when, the finished
   * message holds a character outside ASCII (HL7's default character set). `'UNICODE UTF-8'`: always declared.
   */
  characterSet?: 'auto' | typeof UNICODE_UTF8_CHARACTER_SET;
  /**
   * EI-2 / XCN-9 / CX-4 namespaces of the identifiers the message writes (identifiers.ts); each one
   * left out defaults to the sending facility.
   */
  identifierNamespaces?: Partial<IdentifierNamespaces>;
}

/** The namespaces of a message, defaults applied. */
export function namespacesOf(context: MessageHeaderContext): IdentifierNamespaces {
  const given = context.identifierNamespaces ?? {};
  return {
    entity: given.entity || context.sendingFacility,
    clinician: given.clinician || context.sendingFacility,
    visit: given.visit || context.sendingFacility,
  };
}

/** MSH-15 / MSH-16 (table 0155): never. The exports are answers to a request, no ACK is expected. */
export const ACKNOWLEDGMENT_NEVER = 'NE';

/** MSH-9 (MSG): message code, trigger event and message structure (tables 0076, 0003, 0354). */
export interface MessageType {
  messageCode: 'ADT' | 'MDM' | 'ORU';
  triggerEvent: 'A08' | 'T02' | 'R01';
  messageStructure: 'ADT_A01' | 'MDM_T02' | 'ORU_R01';
}

export const MDM_T02: MessageType = { messageCode: 'MDM', triggerEvent: 'T02', messageStructure: 'MDM_T02' };
export const ADT_A08: MessageType = { messageCode: 'ADT', triggerEvent: 'A08', messageStructure: 'ADT_A01' };
export const ORU_R01: MessageType = { messageCode: 'ORU', triggerEvent: 'R01', messageStructure: 'ORU_R01' };

/** MSH-10: 1 to 20 printable ASCII characters, not all spaces, without `| ^ ~ \\ &` (one scan, no regular expressions). */
function isControlId(controlId: string): boolean {
  if (typeof controlId !== 'string' || controlId.length < 1 || controlId.length > 20) {
    return false;
  }
  let allSpaces = true;
  for (let index = 0; index < controlId.length; index += 1) {
    const code = controlId.charCodeAt(index);
    if (code < 0x20 || code > 0x7e || code === 0x7c || code === 0x5e || code === 0x7e || code === 0x5c || code === 0x26) {
      return false;
    }
    allSpaces &&= code === 0x20;
  }
  return !allSpaces;
}

// MSH values that never change, escaped and checked once
const PROCESSING_ID = Segment.checkedField(escapeText(PROCESSING_ID_PRODUCTION));
const VERSION_ID = Segment.checkedField(escapeText(HL7_VERSION));
const NEVER = Segment.checkedField(escapeText(ACKNOWLEDGMENT_NEVER));

/** MSH-9 of each message type, escaped and checked once (a message type is a constant: {@link MDM_T02}...). */
const MESSAGE_TYPE_FIELDS = new Map<MessageType, CheckedField>(
  [MDM_T02, ADT_A08, ORU_R01].map((type) => [
    type,
    Segment.checkedField([escapeText(type.messageCode), escapeText(type.triggerEvent), escapeText(type.messageStructure)]),
  ]),
);

/** Builds MSH-1..MSH-12 (MSH-18 is decided by {@link encodeMessage} once the message is complete). */
export function buildMessageHeader(context: MessageHeaderContext, messageType: MessageType): Segment {
  if (!isControlId(context.controlId)) {
    throw new Hl7EncodingError('header.controlId', 'must be 1 to 20 printable ASCII characters without | ^ ~ \\ &');
  }
  const header = new Segment('MSH')
    .setText(3, context.sendingApplication) // HD-1 alone
    .setText(4, context.sendingFacility)
    .setText(5, context.receivingApplication)
    .setText(6, context.receivingFacility)
    .set(7, tsFromDateTime(context.timestamp, 'header.timestamp'));
  const messageTypeField = MESSAGE_TYPE_FIELDS.get(messageType);
  if (messageTypeField) header.setChecked(9, messageTypeField);
  else header.setTextComponents(9, [messageType.messageCode, messageType.triggerEvent, messageType.messageStructure]);
  return header.setText(10, context.controlId).setChecked(11, PROCESSING_ID).setChecked(12, VERSION_ID).setChecked(15, NEVER).setChecked(16, NEVER);
}

/**
 * Serializes a finished message. MSH-18 is decided here, after every segment has been built, so that
 * any value anywhere in the message that is not ASCII makes the message declare `UNICODE UTF-8`.
 * The segments note non-ASCII text while their values are checked, so this needs no pass over the text,
 * and the message is serialized once, with its final MSH-18.
 */
export function encodeMessage(message: Hl7Message, context: MessageHeaderContext): string {
  const declareUnicode = context.characterSet === UNICODE_UTF8_CHARACTER_SET || message.hasNonAsciiText();
  message.header.setText(18, declareUnicode ? UNICODE_UTF8_CHARACTER_SET : undefined);
  return message.toString();
}
