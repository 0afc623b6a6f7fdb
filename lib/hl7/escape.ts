/**
 * Escaping of data values for HL7 v2.5.1 (hl7-notes.md, "Escaping").
 *
 * Every data value of every field, component and subcomponent goes through one of the two functions
 * below before it reaches a segment, or is given raw to the segment, which escapes it with
 * {@link escapeText} itself (Segment.setText; TX lines: Segment.setTextLines); the segment refuses
 * anything else (see {@link isEscapedText}).
 *
 * - Delimiters: `\` -> `\E\`, `|` -> `\F\`, `^` -> `\S\`, `&` -> `\T\`, `~` -> `\R\`. The replacement is a
 *   single left-to-right pass, which is the same as escaping `\` first: an escape sequence we write is
 *   never escaped again, and escapes never nest.
 * - Line breaks (CRLF, CR, LF, and the Unicode line separators NEL U+0085, LINE SEPARATOR U+2028 and
 *   PARAGRAPH SEPARATOR U+2029, each counted as one break; a consumer splitting lines on any of them
 *   must never see a segment split in two):
 *   - TX/FT values ({@link escapeFormattedText}): written as the formatting escape `\.br\`.
 *   - every other value ({@link escapeText}): replaced by one space. A CR inside a value would end the
 *     segment; several partner parsers also split on LF.
 * - TAB becomes one space (stripping it would glue words together).
 * - Every other C0 control character (U+0000-U+001F), DEL (U+007F) and every other C1 control character
 *   (U+0080-U+009F) is removed.
 * - Unpaired UTF-16 surrogates (which cannot be written as UTF-8) become U+FFFD.
 *
 * The rules apply in this order: surrogates and control characters first, then line breaks, then
 * delimiters. So a CR and an LF separated only by removed control characters are one CRLF break.
 *
 * Performance: every value of every message passes through here, so both functions are one hand-written
 * left-to-right scan (no regular expressions, no intermediate strings), and a value that needs no change
 * at all (by far the most common case) is returned as it is after a single read of its characters.
 */

import { jsonStringBytes } from './json-string-bytes';

declare const escapedTextBrand: unique symbol;

/** A string that is safe to place in one HL7 field, component or subcomponent. */
export type EscapedText = string & { readonly [escapedTextBrand]: true };

/** The line-break escape of formatted text (TX, FT). */
export const FORMATTED_LINE_BREAK = '\\.br\\';

// What escaping does with each ASCII character (index = char code).
const KEEP = 0;
const DELIMITER = 1; // written as its escape sequence (DELIMITER_ESCAPES)
const REMOVE = 2; // C0 control other than TAB, CR, LF; and DEL
const SPACE = 3; // TAB
const CR = 4;
const LF = 5;

const ASCII_ACTION = new Uint8Array(128);
for (let code = 0; code < 0x20; code += 1) {
  ASCII_ACTION[code] = REMOVE;
}
ASCII_ACTION[0x7f] = REMOVE;
ASCII_ACTION[0x09] = SPACE;
ASCII_ACTION[0x0d] = CR;
ASCII_ACTION[0x0a] = LF;

/** Escape sequence by char code, for the five delimiters. */
const DELIMITER_ESCAPES: string[] = [];
for (const [delimiter, escape] of [
  ['\\', '\\E\\'],
  ['|', '\\F\\'],
  ['^', '\\S\\'],
  ['&', '\\T\\'],
  ['~', '\\R\\'],
] as const) {
  const code = delimiter.charCodeAt(0);
  ASCII_ACTION[code] = DELIMITER;
  DELIMITER_ESCAPES[code] = escape;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR: line breaks outside ASCII. */
function isUnicodeLineBreak(code: number): boolean {
  return code === 0x85 || code === 0x2028 || code === 0x2029;
}

/** C1 control characters (U+0080-U+009F); NEL among them is a line break, the rest are removed. */
function isC1Control(code: number): boolean {
  return code >= 0x80 && code <= 0x9f;
}

/**
 * True for a character escaping changes (for non-ASCII: any surrogate, paired or not, for simplicity;
 * C1 controls; U+2028 and U+2029).
 */
function needsWork(code: number): boolean {
  if (code < 0x80) return ASCII_ACTION[code] !== KEEP;
  return (code & 0xf800) === 0xd800 || code <= 0x9f || code === 0x2028 || code === 0x2029;
}

/**
 * Index just past the line break that starts with the CR at `index`: a CR followed by LF is one break,
 * even with characters that are removed (REMOVE) between them, as those are gone before line breaks are
 * looked at.
 */
function endOfCarriageReturn(value: string, index: number): number {
  for (let next = index + 1; next < value.length; next += 1) {
    const code = value.charCodeAt(next);
    if (code === 0x0a) {
      return next + 1;
    }
    if (code >= 0x80 || ASCII_ACTION[code] !== REMOVE) {
      break;
    }
  }
  return index + 1;
}

/** A line break after `out`: `lineBreak` written, or with `lines` given, `out` is the end of a line (the text goes on from ''). */
function breakLine(out: string, lineBreak: string, lines: string[] | undefined): string {
  if (lines === undefined) {
    return out + lineBreak;
  }
  lines.push(out);
  return '';
}

/**
 * The escaping itself, from `start` (the first character that {@link needsWork}); `lineBreak` is what a
 * line break becomes. Untouched runs of characters are copied with one `slice` each.
 */
function escapeFrom(value: string, start: number, lineBreak: string, lines?: string[]): string {
  let out = value.slice(0, start);
  let copyFrom = start; // start of the run of kept characters not yet copied to `out`
  let index = start;
  while (index < value.length) {
    const code = value.charCodeAt(index);
    if (!needsWork(code)) {
      index += 1;
      continue;
    }
    out += value.slice(copyFrom, index);
    let next = index + 1;
    if (isUnicodeLineBreak(code)) {
      out = breakLine(out, lineBreak, lines);
    } else if (isC1Control(code)) {
      // removed, like the C0 controls
    } else if (code >= 0x80) {
      // a surrogate: kept when it is half of a pair (the regex-free form of "high not followed by low,
      // or low not preceded by high"), U+FFFD otherwise
      const paired = isHighSurrogate(code) ? isLowSurrogate(value.charCodeAt(next)) : isHighSurrogate(value.charCodeAt(index - 1));
      out += paired ? value[index] : '\uFFFD';
    } else {
      switch (ASCII_ACTION[code]) {
        case DELIMITER:
          out += DELIMITER_ESCAPES[code];
          break;
        case SPACE:
          out += ' ';
          break;
        case CR:
          next = endOfCarriageReturn(value, index);
          out = breakLine(out, lineBreak, lines);
          break;
        case LF:
          out = breakLine(out, lineBreak, lines);
          break;
        default: // REMOVE
          break;
      }
    }
    index = next;
    copyFrom = next;
  }
  return out + value.slice(copyFrom);
}

function escapeWith(value: string | undefined, lineBreak: string): EscapedText {
  if (typeof value !== 'string') {
    if (value === undefined) {
      return '' as EscapedText;
    }
    // data that bypassed the types (a number, null...) is refused, never written as it is
    throw new TypeError('an HL7 value must be a string');
  }
  for (let index = 0; index < value.length; index += 1) {
    if (needsWork(value.charCodeAt(index))) {
      return escapeFrom(value, index, lineBreak) as EscapedText;
    }
  }
  // fast path: nothing to escape, the value is its own escaped form
  return value as EscapedText;
}

/**
 * Escapes a value of any non-formatted data type (ST, ID, IS, NM, names, codes, identifiers...).
 * Line breaks become a single space. `undefined` gives the empty value.
 */
export function escapeText(value: string | undefined): EscapedText {
  return escapeWith(value, ' ');
}

/**
 * Escapes a TX or FT value: delimiters as in {@link escapeText}; each line break becomes `\.br\`.
 */
export function escapeFormattedText(value: string | undefined): EscapedText {
  return escapeWith(value, FORMATTED_LINE_BREAK);
}

/**
 * Escapes a TX value line by line: one escaped value per line, for a field whose repetitions are the
 * lines (in TX the repetition separator is the line break; formatting commands such as `\.br\` belong
 * to FT). The lines are the ones {@link escapeFormattedText} would separate with `\.br\` (CRLF, CR or
 * LF, each one break); empty lines are kept.
 */
export function escapeTextLines(value: string | undefined): EscapedText[] {
  if (typeof value !== 'string') {
    return [escapeWith(value, FORMATTED_LINE_BREAK)]; // '' for undefined; anything else is refused
  }
  const start = firstToEscape(value);
  if (start === value.length) {
    return [value as EscapedText]; // nothing to escape: one line
  }
  // escaped line by line: each line break ends a line (no text built with breaks and split again)
  const lines: string[] = [];
  const lastLine = escapeFrom(value, start, '', lines);
  lines.push(lastLine);
  return lines as EscapedText[];
}

/** What {@link escapeAsciiTextLines} measured besides the text. */
export interface TextLinesMeasure {
  /** what the lines take inside a JSON string beyond their length (`"` one byte, each escape's two `\\`) */
  extraJsonBytes: number;
  /** whether any line holds a character (else every line is empty) */
  hasText: boolean;
}

/**
 * {@link escapeTextLines} joined by `separator`, for an ASCII value, escaped and measured in ONE scan of
 * the raw value; `undefined` as soon as a character outside ASCII is met (then escape, then check).
 *
 * Why the lines need no second check ({@link scanEscapedText}): for ASCII every character written is
 * either one escaping keeps (ASCII_ACTION KEEP: no delimiter, no backslash, no control character, so
 * valid as it is, and `"` the only one counted, one byte), a delimiter's escape `\F\ \S\ \T\ \R\ \E\`
 * (valid, two bytes for its backslashes), or the space a TAB becomes; a line break only ever ends a line
 * (written as `separator`, between values); removed characters write nothing. That is exactly what the
 * scan would accept and measure, and the equivalence is tested over a corpus (escape.test.ts).
 */
export function escapeAsciiTextLines(value: string, separator: string, measure: TextLinesMeasure): string | undefined {
  let out = '';
  let copyFrom = 0; // start of the run of kept characters not yet copied to `out`
  let extra = 0;
  let lineBreaks = 0;
  const length = value.length;
  // runs of plain characters (kept as they are, nothing to count) are skipped at once when long
  let index = length >= REGEX_SCAN_MIN_LENGTH ? firstNotPlain(value, 0) : 0;
  while (index < length) {
    const code = value.charCodeAt(index);
    if (code >= 0x80) return undefined;
    const action = ASCII_ACTION[code];
    if (action === KEEP) {
      if (code === QUOTE) extra += 1;
      index += 1;
      continue;
    }
    if (copyFrom < index) out += value.slice(copyFrom, index);
    let next = index + 1;
    switch (action) {
      case DELIMITER:
        out += DELIMITER_ESCAPES[code];
        extra += 2;
        break;
      case SPACE:
        out += ' ';
        break;
      case CR:
        next = endOfCarriageReturn(value, index);
        out += separator;
        lineBreaks += 1;
        break;
      case LF:
        out += separator;
        lineBreaks += 1;
        break;
      default: // REMOVE
        break;
    }
    copyFrom = next;
    index = length - next >= REGEX_SCAN_MIN_LENGTH ? firstNotPlain(value, next) : next;
  }
  const text = copyFrom === 0 ? value : out + value.slice(copyFrom);
  measure.extraJsonBytes = extra;
  // every character written is text, but the separators the line breaks became
  measure.hasText = text.length !== lineBreaks * separator.length;
  return text;
}

/** Index of the first character that {@link needsWork}, or the length when none does. */
function firstToEscape(value: string): number {
  let index = 0;
  while (index < value.length && !needsWork(value.charCodeAt(index))) {
    index += 1;
  }
  return index;
}

/**
 * True when the value contains a line break (CR, LF, NEL, U+2028 or U+2029), i.e. when a text value
 * needs TX rather than ST.
 */
export function hasLineBreak(value: string): boolean {
  return /[\r\n\u0085\u2028\u2029]/.test(value);
}

/**
 * What {@link checkEscapedText} found: not escaped text, escaped ASCII text, or escaped text holding at
 * least one character outside ASCII. (String literals rather than exported constants: under CommonJS
 * every read of an imported constant is a getter call, and this is read for every value of a message.)
 */
export type EscapedTextCheck = 'not escaped' | 'ascii' | 'non-ascii';

const BACKSLASH = 0x5c;
const QUOTE = 0x22;

/**
 * Finds the first character that is not PLAIN: plain = ASCII that escaping keeps (ASCII_ACTION KEEP) other
 * than `"`, i.e. a character that is its own escaped text and takes one byte in a JSON string. Built from
 * ASCII_ACTION, so it cannot disagree with it. A regular expression scans a long run of plain text about
 * twice as fast as a loop over char codes, but costs more to call: the scans below use it for values of
 * {@link REGEX_SCAN_MIN_LENGTH} characters or more, then go on from the character it found.
 */
const NOT_PLAIN = new RegExp(
  `[^${Array.from({ length: 0x80 }, (_, code) => code)
    .filter((code) => ASCII_ACTION[code] === KEEP && code !== QUOTE)
    .map((code) => `\\x${code.toString(16).padStart(2, '0')}`)
    .join('')}]`,
  'g',
);
const REGEX_SCAN_MIN_LENGTH = 24;

/** Index of the first character of `value` at or after `from` that is not plain (see {@link NOT_PLAIN}), or the length. */
function firstNotPlain(value: string, from: number): number {
  NOT_PLAIN.lastIndex = from;
  return NOT_PLAIN.test(value) ? NOT_PLAIN.lastIndex - 1 : value.length;
}
/** The letters of the delimiter escapes `\F\ \S\ \T\ \R\ \E\`, by char code. */
const IS_ESCAPE_LETTER = new Uint8Array(128);
for (const letter of ['F', 'S', 'T', 'R', 'E']) {
  IS_ESCAPE_LETTER[letter.charCodeAt(0)] = 1;
}

/** {@link scanEscapedText}: the value is not escaped text. */
export const NOT_ESCAPED_TEXT = -1;

/**
 * One scan that validates a value (see {@link isEscapedText}) and measures it, so a segment learns what
 * MSH-18 and the size budgets need without another pass over the message. Returns
 * {@link NOT_ESCAPED_TEXT}, or for valid text `2 * extra + (non-ASCII ? 1 : 0)`, where `extra` is what the
 * value takes inside a JSON string beyond its length ({@link jsonStringBytes}: `\` and `"` two bytes,
 * text outside ASCII its UTF-8 bytes). `extra` is NaN (so is the result) when only the whole text can tell:
 * a value ending in a high surrogate, which {@link jsonStringBytes} counts together with whatever follows.
 *
 * Valid: anything but delimiters, CR/LF and other C0 controls and DEL, C1 controls (NEL among them),
 * U+2028 and U+2029; a backslash only as one of the escapes we write (`\F\ \S\ \T\ \R\ \E\ \.br\`). A
 * lone surrogate is accepted here (escaping already replaced it), as the original regular expression did.
 */
export function scanEscapedText(value: string): number {
  let extra = 0;
  let nonAscii = false;
  const length = value.length;
  // a long value: its plain start (valid, nothing to count) skipped at once
  for (let index = length >= REGEX_SCAN_MIN_LENGTH ? firstNotPlain(value, 0) : 0; index < length; index += 1) {
    const code = value.charCodeAt(index);
    if (code >= 0x80) {
      if (code <= 0x9f || code === 0x2028 || code === 0x2029) return NOT_ESCAPED_TEXT;
      nonAscii = true;
    } else if (code === BACKSLASH) {
      if (IS_ESCAPE_LETTER[value.charCodeAt(index + 1)] === 1 && value.charCodeAt(index + 2) === BACKSLASH) {
        index += 2;
      } else if (value.startsWith(FORMATTED_LINE_BREAK, index)) {
        index += FORMATTED_LINE_BREAK.length - 1;
      } else {
        return NOT_ESCAPED_TEXT;
      }
      extra += 2; // the two backslashes of the escape
    } else if (ASCII_ACTION[code] !== KEEP) {
      return NOT_ESCAPED_TEXT;
    } else if (code === QUOTE) {
      extra += 1;
    }
  }
  if (!nonAscii) {
    return 2 * extra;
  }
  // rare: text outside ASCII is measured by the function that defines the size
  const last = value.charCodeAt(length - 1);
  return isHighSurrogate(last) ? NaN : 2 * (jsonStringBytes(value) - 2 - length) + 1;
}

/**
 * For a RAW value (before escaping): what it takes inside a JSON string beyond its length (its `"`), when
 * it is ASCII and escaping ({@link escapeText}, {@link escapeFormattedText}) leaves it as it is; then the
 * value is its own escaped text and passes {@link scanEscapedText} with this measure (`2 * result`). -1
 * otherwise: the value must be escaped, then checked. One scan that is both the escaping's and the
 * segment's, for the common value (Segment.setText).
 */
export function plainAsciiExtraJsonBytes(value: string): number {
  let quotes = 0;
  const length = value.length;
  // a long value: its plain start skipped at once
  for (let index = length >= REGEX_SCAN_MIN_LENGTH ? firstNotPlain(value, 0) : 0; index < length; index += 1) {
    const code = value.charCodeAt(index);
    if (code >= 0x80 || ASCII_ACTION[code] !== KEEP) return -1;
    if (code === QUOTE) quotes += 1;
  }
  return quotes;
}

/**
 * True when escaping ({@link escapeText}, {@link escapeFormattedText}) gives the empty value: `undefined`,
 * `''`, or only characters escaping removes (C0 controls other than TAB, CR and LF; DEL; C1 controls other
 * than NEL). Stops at the first character escaping keeps: a required value is checked without a scan.
 */
export function isEmptyOnceEscaped(value: string | undefined): boolean {
  if (typeof value !== 'string') return escapeText(value) === ''; // undefined; anything else is refused as escaping refuses it
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    const removed = code < 0x80 ? ASCII_ACTION[code] === REMOVE : isC1Control(code) && code !== 0x85;
    if (!removed) return false;
  }
  return true;
}

/** True when a {@link scanEscapedText} result of a valid value says it holds text outside ASCII. */
export function scanFoundNonAscii(scan: number): boolean {
  return scan !== scan || (scan & 1) === 1; // NaN only comes with a surrogate
}

/**
 * One scan that both validates a value (see {@link isEscapedText}) and tells whether it holds non-ASCII
 * text ({@link scanEscapedText}).
 */
export function checkEscapedText(value: string): EscapedTextCheck {
  const scan = scanEscapedText(value);
  if (scan === NOT_ESCAPED_TEXT) return 'not escaped';
  return scanFoundNonAscii(scan) ? 'non-ascii' : 'ascii';
}

/**
 * True when `value` could have come out of {@link escapeText} or {@link escapeFormattedText}: it holds no
 * delimiter, no line break, no control character and only well-formed escape sequences. The segment
 * checks every value with this, so no value can ever add a field, component or segment.
 */
export function isEscapedText(value: string): value is EscapedText {
  return checkEscapedText(value) !== 'not escaped';
}
