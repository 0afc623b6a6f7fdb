import { hdFromNamespace, tsFromDateTime } from './datatypes';
import { Hl7EncodingError } from './errors';
import { escapeText } from './escape';
import type { MessageHeaderContext } from './header';
import { SEGMENT_TERMINATOR, Segment } from './segment';

/*
 * HL7 batch file (v2.5.1 chapter 2, "Batch protocol"): FHS BHS {MSH ...} BTS FTS.
 *
 *   FHS  FHS-3..6 sending / receiving application and facility (as MSH-3..6), FHS-7 file time,
 *        FHS-11 file control id (the request's control id)
 *   BHS  the same for the one batch, BHS-11 batch control id (the same id)
 *   ...  the messages, each a complete message with its own MSH; MSH-10 of message n is
 *        {@link batchMessageControlId}
 *   BTS  BTS-1 the number of messages in the batch
 *   FTS  FTS-1 the number of batches in the file: 1
 */

const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const INDEX_DIGITS = 4;

/**
 * MSH-10 of the message at `index` (0-based) of a batch: the first 16 characters of the request's
 * control id and the index in 4 base-32 digits: 20 characters, distinct within the batch, and distinct
 * across requests as long as the first 16 characters of the control ids are (they are time and random).
 */
export function batchMessageControlId(controlId: string, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= BASE32.length ** INDEX_DIGITS) {
    throw new Hl7EncodingError('batch', `cannot hold more than ${BASE32.length ** INDEX_DIGITS} messages`);
  }
  let digits = '';
  let rest = index;
  for (let position = 0; position < INDEX_DIGITS; position += 1) {
    digits = BASE32[rest % 32] + digits;
    rest = Math.floor(rest / 32);
  }
  return controlId.slice(0, 20 - INDEX_DIGITS) + digits;
}

function batchHeaderSegment(name: 'FHS' | 'BHS', context: MessageHeaderContext): Segment {
  return new Segment(name)
    .set(3, hdFromNamespace(context.sendingApplication))
    .set(4, hdFromNamespace(context.sendingFacility))
    .set(5, hdFromNamespace(context.receivingApplication))
    .set(6, hdFromNamespace(context.receivingFacility))
    .set(7, tsFromDateTime(context.timestamp, 'header.timestamp'))
    .set(11, escapeText(context.controlId));
}

/** The segments before the messages (FHS, BHS), as text with their terminators. */
export function batchOpening(context: MessageHeaderContext): string {
  return batchHeaderSegment('FHS', context).toString() + SEGMENT_TERMINATOR + batchHeaderSegment('BHS', context).toString() + SEGMENT_TERMINATOR;
}

/** The segments after the messages (BTS with the message count, FTS with the batch count). */
export function batchClosing(messageCount: number): string {
  return (
    new Segment('BTS').set(1, escapeText(String(messageCount))).toString() +
    SEGMENT_TERMINATOR +
    new Segment('FTS').set(1, escapeText('1')).toString() +
    SEGMENT_TERMINATOR
  );
}

/** A batch file of encoded messages (each ends with its CR). */
export function encodeBatch(context: MessageHeaderContext, messages: readonly string[]): string {
  return batchOpening(context) + messages.join('') + batchClosing(messages.length);
}
