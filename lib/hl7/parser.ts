/**
 * HL7 v2 (ER7, "pipe and hat") parser. Pure: bytes in, values out; no I/O.
 *
 * - Segments end with CR; CRLF and LF are accepted too (a value never holds a raw line break).
 *   MLLP framing bytes (0x0B at the start, 0x1C at the end) are ignored.
 * - The delimiters are read from MSH-1 and MSH-2 of each message, never assumed.
 * - Every value is split into repetitions, components and subcomponents and then unescaped:
 *   `\F\ \S\ \T\ \R\ \E\` give the delimiters, `\Xhh..\` the bytes hh.. in the message's character set,
 *   `\.br\` a line break (`\n`), `\.sp\` / `\.sp n\` n line breaks, `\H\ \N\` and the other formatting
 *   commands (`\.fi\ \.nf\ \.in n\ \.ti n\ \.sk n\ \.ce\`) are dropped, `\Cxxyy\ \Mxxyyzz\ \Zxx..\` dropped.
 *   An unterminated or unknown escape is a {@link Hl7ParseError} (table 0357 code 102) with its location.
 * - Character set: UTF-8 unless MSH-18 says `8859/1` (ISO-8859-1) or `ASCII`; invalid UTF-8 is an error.
 * - A batch (`FHS`/`BHS` ... `BTS`/`FTS`) of up to {@link MAX_BATCH_MESSAGES} messages; each message is
 *   parsed on its own, so one bad message does not spoil the others.
 *
 * The only error that leaves this module is {@link Hl7ParseError}.
 */
import { ErrorCodes, Hl7ParseError, type ErrorLocation } from './parse-error';

export const MAX_BATCH_MESSAGES = 100;

export interface Delimiters {
  field: string;
  component: string;
  repetition: string;
  /** '' when the message declares none (then nothing is unescaped) */
  escape: string;
  subcomponent: string;
}

/** A field: its repetitions; a repetition: its components; a component: its subcomponents (decoded text). */
export type ParsedField = string[][][];

export interface ParsedSegment {
  /** segment id, e.g. `PID` */
  name: string;
  /** 1-based count of this segment id in the message (PID 1, OBX 1, OBX 2...) */
  sequence: number;
  /** `fields[n]` is field n (for MSH, `fields[1]` is the field separator and `fields[2]` the encoding characters) */
  fields: ParsedField[];
}

export interface ParsedMessage {
  delimiters: Delimiters;
  /** `utf-8` or `latin1` */
  characterSet: 'utf-8' | 'latin1';
  segments: ParsedSegment[];
}

export type BatchEntry = { ok: true; message: ParsedMessage } | { ok: false; error: Hl7ParseError; header?: ParsedSegment };

export interface ParsedBatch {
  /** the FHS segment, when there is one */
  fileHeader?: ParsedSegment;
  /** the BHS segment, when there is one */
  batchHeader?: ParsedSegment;
  /** each MSH..next MSH, parsed on its own */
  messages: BatchEntry[];
}

export type ParsedInput = { kind: 'message'; message: ParsedMessage } | { kind: 'batch'; batch: ParsedBatch };

const SEGMENT_ID = /^[A-Z][A-Z0-9]{2}$/;
const BATCH_SEGMENTS = new Set(['FHS', 'FTS', 'BHS', 'BTS']);

// ---- accessors ----

/** The decoded text of field `n`, repetition `r`, component `c`, subcomponent `s` (all 1-based); '' when absent. */
export function valueAt(segment: ParsedSegment | undefined, field: number, component = 1, subcomponent = 1, repetition = 1): string {
  return segment?.fields[field]?.[repetition - 1]?.[component - 1]?.[subcomponent - 1] ?? '';
}

/** The repetitions of a field (empty array when the field is empty). */
export function repetitionsOf(segment: ParsedSegment | undefined, field: number): string[][][] {
  const value = segment?.fields[field];
  if (!value) return [];
  return value.filter((rep) => rep.some((component) => component.some((sub) => sub !== '')));
}

/** First segment with this id. */
export function firstSegment(message: ParsedMessage, name: string): ParsedSegment | undefined {
  return message.segments.find((segment) => segment.name === name);
}

// ---- entry points ----

/** Parses one message or a batch. Throws only {@link Hl7ParseError} (for a batch: only when its frame is broken). */
export function parseHl7(input: Uint8Array | string): ParsedInput {
  try {
    return parseUnchecked(input);
  } catch (error) {
    if (error instanceof Hl7ParseError) throw error;
    // defensive: nothing below should throw anything else, but no other error may leave the parser
    throw new Hl7ParseError(ErrorCodes.applicationInternalError, 'the message could not be parsed');
  }
}

/** Parses exactly one message (a batch is an error). */
export function parseHl7Message(input: Uint8Array | string): ParsedMessage {
  const parsed = parseHl7(input);
  if (parsed.kind !== 'message') throw new Hl7ParseError(ErrorCodes.segmentSequence, 'expected one message, found a batch', { segmentId: 'MSH' });
  return parsed.message;
}

/** Lines of the input as latin1 text (one char per byte, so byte offsets survive), framing and blank lines removed. */
function linesOf(input: Uint8Array | string): string[] {
  const text = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('latin1');
  return text
    .replace(/^[\x0b\s]+/, '')
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(/\x1c$/, ''))
    .filter((line) => line.trim() !== '' && line !== '\x1c');
}

function parseUnchecked(input: Uint8Array | string): ParsedInput {
  const fromString = typeof input === 'string';
  const lines = linesOf(input);
  if (lines.length === 0) throw new Hl7ParseError(ErrorCodes.requiredFieldMissing, 'the body holds no segment', { segmentId: 'MSH' });
  const firstId = lines[0]!.slice(0, 3);
  if (firstId === 'MSH') {
    const messageLines = lines;
    if (messageLines.slice(1).some((line) => line.startsWith('MSH'))) {
      // several messages without a batch header: treated as a batch of their own
      return { kind: 'batch', batch: parseBatch(lines, fromString) };
    }
    return { kind: 'message', message: parseMessageLines(messageLines, fromString) };
  }
  if (firstId === 'FHS' || firstId === 'BHS') return { kind: 'batch', batch: parseBatch(lines, fromString) };
  throw new Hl7ParseError(ErrorCodes.segmentSequence, 'the message does not start with MSH (or FHS/BHS for a batch)', {
    segmentId: safeSegmentId(firstId),
    segmentSequence: 1,
  });
}

function safeSegmentId(id: string): string {
  return SEGMENT_ID.test(id) ? id : 'MSH';
}

function parseBatch(lines: string[], fromString: boolean): ParsedBatch {
  const batch: ParsedBatch = { messages: [] };
  let current: string[] | undefined;
  const groups: string[][] = [];
  for (const line of lines) {
    const id = line.slice(0, 3);
    if (BATCH_SEGMENTS.has(id)) {
      if (current) groups.push(current);
      current = undefined;
      if (id === 'FHS' || id === 'BHS') {
        const header = parseHeaderLikeSegment(line, id);
        if (id === 'FHS') batch.fileHeader = header;
        else batch.batchHeader = header;
      }
      continue;
    }
    if (id === 'MSH') {
      if (current) groups.push(current);
      current = [line];
      continue;
    }
    if (!current) throw new Hl7ParseError(ErrorCodes.segmentSequence, 'a segment in the batch stands outside any message', { segmentId: safeSegmentId(id) });
    current.push(line);
  }
  if (current) groups.push(current);
  if (groups.length === 0) throw new Hl7ParseError(ErrorCodes.requiredFieldMissing, 'the batch holds no message', { segmentId: 'MSH' });
  if (groups.length > MAX_BATCH_MESSAGES) {
    throw new Hl7ParseError(ErrorCodes.valueTooLong, `a batch holds at most ${MAX_BATCH_MESSAGES} messages`, { segmentId: batch.batchHeader ? 'BHS' : 'MSH' });
  }
  for (const group of groups) {
    try {
      batch.messages.push({ ok: true, message: parseMessageLines(group, fromString) });
    } catch (error) {
      if (!(error instanceof Hl7ParseError)) throw error;
      batch.messages.push({ ok: false, error, header: headerForAck(group[0]!) });
    }
  }
  return batch;
}

/** FHS/BHS use the MSH layout (field 1 separator, field 2 encoding characters). */
function parseHeaderLikeSegment(line: string, id: string): ParsedSegment {
  const delimiters = readDelimiters(line, id);
  const segment = splitSegment(line, delimiters, 'utf-8', 1, true);
  return segment;
}

/**
 * Best effort MSH of a message that failed to parse, so its ACK can still echo MSH-10 and swap
 * the addresses: the fields split on the declared separator, values left as written when they do
 * not unescape.
 */
export function headerForAck(line: string): ParsedSegment | undefined {
  try {
    const delimiters = readDelimiters(line, 'MSH');
    return splitSegment(line, delimiters, 'latin1', 1, true, true);
  } catch {
    // the encoding characters are broken: split on the field separator alone, values left whole
    const field = line[3];
    if (!line.startsWith('MSH') || field === undefined || isForbiddenDelimiter(field)) return undefined;
    const none = '\u0000';
    return splitSegment(line, { field, component: none, repetition: none, escape: '', subcomponent: none }, 'latin1', 1, true, true);
  }
}

function readDelimiters(line: string, id: string): Delimiters {
  const location: ErrorLocation = { segmentId: id, segmentSequence: 1, field: 1 };
  if (line.length < 8) throw new Hl7ParseError(ErrorCodes.requiredFieldMissing, `${id} is too short to hold the delimiters`, location);
  const field = line[3]!;
  if (isForbiddenDelimiter(field)) throw new Hl7ParseError(ErrorCodes.dataType, `${id}-1 is not a valid field separator`, location);
  const end = line.indexOf(field, 4);
  const encoding = end === -1 ? line.slice(4) : line.slice(4, end);
  const location2 = { ...location, field: 2 };
  if (encoding.length < 4 || encoding.length > 5) throw new Hl7ParseError(ErrorCodes.dataType, `${id}-2 must hold 4 encoding characters`, location2);
  const chars = encoding.slice(0, 4).split('');
  const all = [field, ...chars];
  if (chars.some(isForbiddenDelimiter) || new Set(all).size !== all.length) {
    throw new Hl7ParseError(ErrorCodes.dataType, `${id}-2 encoding characters must be distinct punctuation`, location2);
  }
  const [component, repetition, escape, subcomponent] = chars as [string, string, string, string];
  return { field, component, repetition, escape, subcomponent };
}

function isForbiddenDelimiter(char: string): boolean {
  return /[A-Za-z0-9\s\x00-\x1f\x7f-\uffff]/.test(char);
}

function parseMessageLines(lines: string[], fromString: boolean): ParsedMessage {
  const headerLine = lines[0]!;
  if (!headerLine.startsWith('MSH'))
    throw new Hl7ParseError(ErrorCodes.segmentSequence, 'the message does not start with MSH', { segmentId: 'MSH', segmentSequence: 1 });
  const delimiters = readDelimiters(headerLine, 'MSH');
  const rawHeader = splitSegment(headerLine, delimiters, 'latin1', 1, true, true);
  const declared = valueAt(rawHeader, 18).trim().toUpperCase();
  const characterSet: ParsedMessage['characterSet'] = declared === '8859/1' || declared === 'ISO-8859-1' || declared === 'ISO IR100' ? 'latin1' : 'utf-8';
  const counts = new Map<string, number>();
  const segments: ParsedSegment[] = [];
  for (const latinLine of lines) {
    const name = latinLine.slice(0, 3);
    const sequence = (counts.get(name) ?? 0) + 1;
    counts.set(name, sequence);
    if (!SEGMENT_ID.test(name) || (latinLine.length > 3 && latinLine[3] !== delimiters.field)) {
      throw new Hl7ParseError(ErrorCodes.segmentSequence, 'a segment does not start with a valid segment id', {
        segmentId: safeSegmentId(name),
        segmentSequence: sequence,
      });
    }
    if (name === 'MSH' && sequence > 1)
      throw new Hl7ParseError(ErrorCodes.segmentSequence, 'a message holds one MSH', { segmentId: 'MSH', segmentSequence: sequence });
    const line = fromString || characterSet === 'latin1' ? latinLine : decodeUtf8(latinLine, name, sequence);
    segments.push(splitSegment(line, delimiters, characterSet, sequence, name === 'MSH'));
  }
  return { delimiters, characterSet, segments };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(latinLine: string, segmentId: string, sequence: number): string {
  if (!/[\x80-\xff]/.test(latinLine)) return latinLine;
  try {
    return UTF8.decode(Buffer.from(latinLine, 'latin1'));
  } catch {
    throw new Hl7ParseError(ErrorCodes.dataType, 'the segment is not valid UTF-8 (declare MSH-18 8859/1 for ISO-8859-1)', {
      segmentId,
      segmentSequence: sequence,
    });
  }
}

function splitSegment(
  line: string,
  d: Delimiters,
  charset: ParsedMessage['characterSet'],
  sequence: number,
  headerLayout: boolean,
  lenient = false,
): ParsedSegment {
  const name = line.slice(0, 3);
  const fields: ParsedField[] = [[[[name]]]];
  let rest: string[];
  if (headerLayout) {
    const afterSeparator = line.slice(4);
    const end = afterSeparator.indexOf(d.field);
    const encoding = end === -1 ? afterSeparator : afterSeparator.slice(0, end);
    fields[1] = [[[d.field]]];
    fields[2] = [[[encoding]]];
    rest = end === -1 ? [] : afterSeparator.slice(end + 1).split(d.field);
    rest.forEach(
      (text, index) => (fields[index + 3] = splitField(text, d, charset, { segmentId: name, segmentSequence: sequence, field: index + 3 }, lenient)),
    );
  } else {
    rest = line.length > 3 ? line.slice(4).split(d.field) : [];
    rest.forEach(
      (text, index) => (fields[index + 1] = splitField(text, d, charset, { segmentId: name, segmentSequence: sequence, field: index + 1 }, lenient)),
    );
  }
  return { name, sequence, fields };
}

function splitField(text: string, d: Delimiters, charset: ParsedMessage['characterSet'], location: ErrorLocation, lenient: boolean): ParsedField {
  if (text === '') return [];
  return text.split(d.repetition).map((repetition, r) =>
    repetition.split(d.component).map((component, c) =>
      component.split(d.subcomponent).map((sub, s) => {
        try {
          return unescapeValue(sub, d, charset);
        } catch (error) {
          if (lenient) return sub;
          const problem = error instanceof Hl7ParseError ? error.message : 'bad escape sequence';
          throw new Hl7ParseError(ErrorCodes.dataType, problem, { ...location, fieldRepetition: r + 1, component: c + 1, subcomponent: s + 1 });
        }
      }),
    ),
  );
}

/** Decodes the escape sequences of one value (see the module comment). */
export function unescapeValue(value: string, d: Delimiters, charset: ParsedMessage['characterSet'] = 'utf-8'): string {
  if (d.escape === '' || !value.includes(d.escape)) return value;
  let out = '';
  let index = 0;
  while (index < value.length) {
    const start = value.indexOf(d.escape, index);
    if (start === -1) {
      out += value.slice(index);
      break;
    }
    out += value.slice(index, start);
    const end = value.indexOf(d.escape, start + 1);
    if (end === -1) throw new Hl7ParseError(ErrorCodes.dataType, 'an escape sequence is not terminated');
    out += decodeEscape(value.slice(start + 1, end), d, charset);
    index = end + 1;
  }
  return out;
}

function decodeEscape(body: string, d: Delimiters, charset: ParsedMessage['characterSet']): string {
  switch (body) {
    case 'F':
      return d.field;
    case 'S':
      return d.component;
    case 'T':
      return d.subcomponent;
    case 'R':
      return d.repetition;
    case 'E':
      return d.escape;
    case 'H':
    case 'N':
    case '.fi':
    case '.nf':
    case '.ce':
      return '';
    case '.br':
      return '\n';
    default:
      break;
  }
  const lead = body[0];
  if (lead === 'X') {
    const hex = body.slice(1);
    if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9A-Fa-f]+$/.test(hex))
      throw new Hl7ParseError(ErrorCodes.dataType, 'a \\X..\\ escape must hold pairs of hexadecimal digits');
    const bytes = Buffer.from(hex, 'hex');
    if (charset === 'latin1') return bytes.toString('latin1');
    try {
      return UTF8.decode(bytes);
    } catch {
      throw new Hl7ParseError(ErrorCodes.dataType, 'a \\X..\\ escape is not valid UTF-8');
    }
  }
  if (/^\.sp( ?\+?\d{1,3})?$/.test(body)) {
    const count = Number(body.slice(3).replace(/[ +]/g, '') || '1');
    return '\n'.repeat(Math.min(count, 100));
  }
  if (/^\.(in|ti) ?[+-]?\d{1,3}$/.test(body) || /^\.sk ?\+?\d{1,3}$/.test(body)) return '';
  if (/^[CM][0-9A-Fa-f]{4,6}$/.test(body) || /^Z[\x20-\x7e]{0,64}$/.test(body)) return '';
  throw new Hl7ParseError(ErrorCodes.dataType, 'an escape sequence is not one HL7 defines');
}
