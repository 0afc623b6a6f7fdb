/**
 * Round-trip checks: values read back from an encoded message by two independent parsers must equal
 * the chart values, modulo the transforms hl7-notes.md and lib/hl7/escape.ts document:
 * - outside TX/FT: each line break (CRLF, CR, LF, NEL U+0085, U+2028 or U+2029) becomes one space;
 * - inside TX/FT: each line break comes back as one line break (`\.br\`);
 * - TAB becomes a space; other C0 control characters (but CR and LF), DEL and C1 controls (but NEL) are dropped, before line
 *   breaks are looked for (so CR NUL LF is one CRLF break);
 * - an unpaired UTF-16 surrogate becomes U+FFFD.
 * These transforms are written here again, independently of the encoder.
 */
import { parseWithHl7v2, parseWithMedplum, type ParsedMessage, type ValueAddress, describeAddress } from './parsers';

/**
 * `text`: any non-formatted value; `formatted`: an FT value (`\.br\` line breaks); `lines`: a TX value
 * written one repetition per line (read back as every repetition of the field joined by line breaks);
 * `timestamp`: a TS value (hl7v2 reads a TS
 * as a date and writes it back with the least precision that keeps it, e.g. `202404301720` for
 * `20240430172000`, so its answer is padded back to 14 digits before comparing).
 */
export type ValueKind = 'text' | 'formatted' | 'timestamp' | 'lines';

export interface ExpectedValue {
  at: ValueAddress;
  /** the chart value as handed to the builder */
  value: string;
  /** default `text` */
  kind?: ValueKind;
}

function wellFormed(value: string): string {
  let out = '';
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += value[index] + value[index + 1];
        index += 1;
        continue;
      }
      out += '\uFFFD';
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      out += '\uFFFD';
    } else {
      out += value[index];
    }
  }
  return out;
}

/** The value a receiver should read back. */
export function expectedReadBack(value: string, kind: ValueKind = 'text'): string {
  const withoutControls = wellFormed(value)
    .split('\t')
    .join(' ')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u0080-\u0084\u0086-\u009F]/g, '');
  return withoutControls.split(/\r\n|\r|\n|\u0085|\u2028|\u2029/).join(kind === 'formatted' || kind === 'lines' ? '\n' : ' ');
}

export interface RoundTripFailure {
  parser: 'medplum' | 'hl7v2';
  at: string;
  expected: string;
  actual: string;
}

/** Parses with @medplum/core and hl7v2 and lists every value that does not come back as expected. */
export function roundTripFailures(message: string, expectations: readonly ExpectedValue[]): RoundTripFailure[] {
  const parsers: Array<[RoundTripFailure['parser'], ParsedMessage]> = [
    ['medplum', parseWithMedplum(message)],
    ['hl7v2', parseWithHl7v2(message)],
  ];
  const failures: RoundTripFailure[] = [];
  for (const { at, value, kind = 'text' } of expectations) {
    const expected = expectedReadBack(value, kind);
    for (const [name, parsed] of parsers) {
      const want = expected;
      const read = kind === 'lines' ? readLines(parsed, at, expected.split('\n').length) : parsed.value(at);
      const actual = name === 'hl7v2' && kind === 'timestamp' ? hl7v2Timestamp(read, want) : read;
      // hl7v2 reads a value of exactly `""` as HL7's explicit null (delete the value), as many receivers
      // do; the encoder writes such a value as it is (see notes/issue-13.md, "Noticed")
      const explicitNull = name === 'hl7v2' && want === '""' && actual === '';
      if (actual !== want && !explicitNull) {
        failures.push({ parser: name, at: describeAddress(at), expected: want, actual });
      }
    }
  }
  return failures;
}

/**
 * A TS as hl7v2 1.8.0 gives it back, in the form written: it drops trailing zero minutes and seconds
 * (`202404301720` for `20240430172000`: padded back to 14 digits), and after a fraction it loses the
 * sign of a negative offset (`20240430172000.5-0800` comes back `20240430172000.50800`, a positive
 * offset stays). Both are the peer's reading, not the message: medplum compares the value exactly.
 */
function hl7v2Timestamp(read: string, want: string): string {
  if (/^\d{8,13}$/.test(read)) return read.padEnd(14, '0');
  const negativeAfterFraction = /^(\d{14}\.\d+)-(\d{4})$/.exec(want);
  return negativeAfterFraction && read === `${negativeAfterFraction[1]}${negativeAfterFraction[2]}` ? want : read;
}

/** Every repetition of a field (one more than expected, to see that there is no extra one), joined by LF. */
function readLines(parsed: ParsedMessage, at: ValueAddress, expectedLines: number): string {
  const lines: string[] = [];
  for (let repetition = 0; repetition < expectedLines; repetition += 1) {
    lines.push(parsed.value({ ...at, repetition }));
  }
  const extra = parsed.value({ ...at, repetition: expectedLines });
  return extra === '' ? lines.join('\n') : `${lines.join('\n')}\n<extra repetition ${extra}>`;
}

/** The segment names each parser sees. */
export function parsedSegmentNames(message: string): { medplum: string[]; hl7v2: string[] } {
  return { medplum: parseWithMedplum(message).segmentNames, hl7v2: parseWithHl7v2(message).segmentNames };
}
