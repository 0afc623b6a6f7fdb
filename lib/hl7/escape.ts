/**
 * Escaping of data values for HL7 v2.5.1 (hl7-notes.md, "Escaping").
 *
 * Every data value of every field, component and subcomponent goes through one of the two functions
 * below before it reaches a segment; the segment refuses anything else (see {@link isEscapedText}).
 *
 * - Delimiters: `\` -> `\E\`, `|` -> `\F\`, `^` -> `\S\`, `&` -> `\T\`, `~` -> `\R\`. The replacement is a
 *   single left-to-right pass, which is the same as escaping `\` first: an escape sequence we write is
 *   never escaped again, and escapes never nest.
 * - Line breaks (CRLF, CR or LF, each counted as one break):
 *   - TX/FT values ({@link escapeFormattedText}): written as the formatting escape `\.br\`.
 *   - every other value ({@link escapeText}): replaced by one space. A CR inside a value would end the
 *     segment; several partner parsers also split on LF.
 * - TAB becomes one space (stripping it would glue words together).
 * - Every other C0 control character (U+0000-U+001F) and DEL (U+007F) is removed.
 * - Unpaired UTF-16 surrogates (which cannot be written as UTF-8) become U+FFFD.
 */

declare const escapedTextBrand: unique symbol;

/** A string that is safe to place in one HL7 field, component or subcomponent. */
export type EscapedText = string & { readonly [escapedTextBrand]: true };

const DELIMITER_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\E\\',
  '|': '\\F\\',
  '^': '\\S\\',
  '&': '\\T\\',
  '~': '\\R\\',
};

const DELIMITERS = /[\\|^&~]/g;
const LINE_BREAK = /\r\n|\r|\n/g;
const TAB = /\t/g;
// C0 controls except TAB (handled above), LF and CR (line breaks, handled separately), plus DEL.
const OTHER_CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The line-break escape of formatted text (TX, FT). */
export const FORMATTED_LINE_BREAK = '\\.br\\';

function removeControlCharacters(value: string): string {
  return value.replace(LONE_SURROGATE, '\uFFFD').replace(TAB, ' ').replace(OTHER_CONTROL_CHARACTERS, '');
}

function escapeDelimiters(value: string): string {
  return value.replace(DELIMITERS, (delimiter) => DELIMITER_ESCAPES[delimiter] ?? delimiter);
}

/**
 * Escapes a value of any non-formatted data type (ST, ID, IS, NM, names, codes, identifiers...).
 * Line breaks become a single space. `undefined` gives the empty value.
 */
export function escapeText(value: string | undefined): EscapedText {
  if (value === undefined || value === '') {
    return '' as EscapedText;
  }
  const cleaned = removeControlCharacters(value).replace(LINE_BREAK, ' ');
  return escapeDelimiters(cleaned) as EscapedText;
}

/**
 * Escapes a TX or FT value: delimiters as in {@link escapeText}; each line break becomes `\.br\`.
 */
export function escapeFormattedText(value: string | undefined): EscapedText {
  if (value === undefined || value === '') {
    return '' as EscapedText;
  }
  const lines = removeControlCharacters(value).split(LINE_BREAK);
  return lines.map(escapeDelimiters).join(FORMATTED_LINE_BREAK) as EscapedText;
}

/** True when the value contains a line break (CR or LF), i.e. when a text value needs TX rather than ST. */
export function hasLineBreak(value: string): boolean {
  return /[\r\n]/.test(value);
}

// Anything but delimiters, CR/LF and other C0 controls; a backslash only as one of the escapes we write.
const ESCAPED_TEXT = /^(?:[^\\|^&~\u0000-\u001F\u007F]|\\[FSTRE]\\|\\\.br\\)*$/;

/**
 * True when `value` could have come out of {@link escapeText} or {@link escapeFormattedText}: it holds no
 * delimiter, no line break, no control character and only well-formed escape sequences. The segment
 * checks every value with this, so no value can ever add a field, component or segment.
 */
export function isEscapedText(value: string): value is EscapedText {
  return ESCAPED_TEXT.test(value);
}
